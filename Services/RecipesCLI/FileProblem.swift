import Foundation
import RecipeModel
#if canImport(Glibc)
import Glibc
#endif

/// A failure of the local file system (a folder that is a file, no space left, no permission) as one plain line: the
/// path and the system's own reason ("No space left on device"), never Foundation's error dump.
struct FileProblem {
    let sentence: String
    let status: Int32

    /// Nil when `error` is not a file system error.
    init?(_ error: any Error) {
        guard FileErrorText.isFileError(error) else { return nil }
        let code = (error as NSError).code
        let reading = (error as NSError).domain == NSCocoaErrorDomain && (256..<512).contains(code)
        sentence = "cannot \(reading ? "read" : "write") \(FileErrorText.path(error) ?? "a file"): \(FileErrorText.reason(error))"
        let posix = FileErrorText.posixCode(error)
        status = posix == ENOSPC || posix == EDQUOT || posix == EIO ? ExitStatus.ioError : ExitStatus.cannotWrite
    }
}
