import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The words for a failure of the file system, from a Foundation or POSIX error: the system's own reason ("No space left
/// on device", "Is a directory"), not Foundation's "The operation could not be completed" or its error dump.
public enum FileErrorText {
    /// The POSIX error number behind `error`: its own, the one it wraps, or the one its Cocoa code stands for.
    public static func posixCode(_ error: any Error) -> Int32? {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Int32(error.code) }
        guard error.domain == NSCocoaErrorDomain else { return nil }
        // Foundation on Linux keeps the wrapped error as a Swift error, not always an NSError.
        if let underlying = (error.userInfo[NSUnderlyingErrorKey] as? any Error).map({ $0 as NSError }), underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        switch error.code {
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue: return ENOENT
        case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue: return EACCES
        case CocoaError.fileWriteFileExists.rawValue: return EEXIST
        case CocoaError.fileWriteOutOfSpace.rawValue: return ENOSPC
        case CocoaError.fileWriteVolumeReadOnly.rawValue: return EROFS
        default: return nil
        }
    }

    /// Foundation's file error codes (`NSFileErrorMinimum` to `NSFileErrorMaximum`); its other codes in the same
    /// domain are not the file system's (4864–4866 are a value JSON could not read or write).
    static let cocoaFileCodes = 0...1_023

    /// Whether `error` is a file system error at all (a Foundation file error or a POSIX one).
    public static func isFileError(_ error: any Error) -> Bool {
        let error = error as NSError
        return error.domain == NSPOSIXErrorDomain || (error.domain == NSCocoaErrorDomain && cocoaFileCodes.contains(error.code))
    }

    /// The system's reason for `error`, or a plain description when it has none.
    public static func reason(_ error: any Error) -> String {
        if let code = posixCode(error) { return String(cString: strerror(code)) }
        let error = error as NSError
        if error.domain == NSCocoaErrorDomain { return "the file system refused it (code \(error.code))" }
        return "\(error)"
    }

    /// The path the error names, if it names one.
    public static func path(_ error: any Error) -> String? {
        let info = (error as NSError).userInfo
        return info[NSFilePathErrorKey] as? String ?? (info[NSURLErrorKey] as? URL)?.path
    }
}
