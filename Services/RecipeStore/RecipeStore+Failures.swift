import Foundation
import GRDB
import RecipeProtocol
#if canImport(Glibc)
import Glibc
#endif

extension RecipeStore {
    /// The reply for a request whose handler failed with `error`, when the client should hear it as more than an
    /// internal error (nil otherwise). Today: a disk the storage writes to is full, which SQLite, a photo's file
    /// and Foundation's file writes each say in their own way. A write that fails so keeps nothing: SQLite rolls
    /// its transaction back, and a photo's file is written aside and moved into place only once whole.
    public static func reply(for error: any Error, during op: String) -> ServiceError? {
        guard isOutOfSpace(error) else { return nil }
        return ServiceError(.storageFull,
            "\(op) was not done: the disk recipe-storage writes to is full (no space left on the device); nothing of it was kept. Free some space on the disk of the storage's data folder (or of the folder named in the request) and try again")
    }

    /// Whether `error` says that a disk is full, or a quota used up.
    static func isOutOfSpace(_ error: any Error) -> Bool {
        let full: Set<Int32> = [ENOSPC, EDQUOT]
        if let error = error as? DatabaseError { return error.resultCode == .SQLITE_FULL }
        if let error = error as? PhotoStorageError { return error.errno.map(full.contains) ?? false }
        if let error = error as? POSIXError { return full.contains(error.code.rawValue) }
        // Foundation's file writes: a CocoaError (fileWriteOutOfSpace, or wrapping a POSIX error), or an NSError
        // in the POSIX domain.
        let bridged = error as NSError
        if bridged.domain == NSCocoaErrorDomain && bridged.code == CocoaError.fileWriteOutOfSpace.rawValue { return true }
        if bridged.domain == NSPOSIXErrorDomain { return full.contains(Int32(truncatingIfNeeded: bridged.code)) }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return full.contains(Int32(truncatingIfNeeded: underlying.code))
        }
        return false
    }
}
