import Foundation
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
        let error = error as NSError
        let posix: Int32?
        if error.domain == NSPOSIXErrorDomain {
            posix = Int32(error.code)
        } else if error.domain == NSCocoaErrorDomain {
            let underlying = (error.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
            posix = underlying.flatMap { $0.domain == NSPOSIXErrorDomain ? Int32($0.code) : nil } ?? Self.posixCode(cocoa: error.code)
        } else {
            return nil
        }
        let path = error.userInfo[NSFilePathErrorKey] as? String ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        let reason = posix.map { String(cString: strerror($0)) } ?? "the file system refused it (code \(error.code))"
        let reading = error.domain == NSCocoaErrorDomain && (256..<512).contains(error.code)
        sentence = "cannot \(reading ? "read" : "write") \(path ?? "a file"): \(reason)"
        status = posix == ENOSPC || posix == EDQUOT || posix == EIO ? ExitStatus.ioError : ExitStatus.cannotWrite
    }

    /// The POSIX error a Cocoa file error stands for, when it came without one.
    private static func posixCode(cocoa code: Int) -> Int32? {
        switch code {
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue: ENOENT
        case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue: EACCES
        case CocoaError.fileWriteFileExists.rawValue: EEXIST
        case CocoaError.fileWriteOutOfSpace.rawValue: ENOSPC
        case CocoaError.fileWriteVolumeReadOnly.rawValue: EROFS
        default: nil
        }
    }
}
