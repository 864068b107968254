import CFileSync
import Crypto
import Foundation
import RecipeModel

#if canImport(Glibc)
import Glibc
#endif

/// Photo bytes as content-addressed files: `photos/ab/abcdef…` named by their
/// SHA-256, so the same photo on two recipes is one file. A blob is written to a
/// temporary file, synced, renamed into place and its folder synced before the
/// row that refers to it commits.
struct PhotoBlobs: Sendable {
    let folder: URL

    init(folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try removeStaleTemporaries()
    }

    /// The blobs in `folder` as they are, for reading only: nothing made or removed.
    init(existing folder: URL) {
        self.folder = folder
    }

    /// Removes temporary files a write left behind when the process was killed mid-write
    /// (nothing refers to them: a blob counts only once it is renamed into place).
    /// Runs at start-up, before any write can be in flight.
    func removeStaleTemporaries() throws {
        for shard in try FileManager.default.contentsOfDirectory(atPath: folder.path) where shard.count == 2 {
            let shardPath = folder.appendingPathComponent(shard).path
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: shardPath) else { continue }
            for name in names where Self.isTemporary(name) { unlink(shardPath + "/" + name) }
        }
    }

    static func isTemporary(_ name: String) -> Bool { name.hasPrefix(".") && name.hasSuffix(".tmp") }

    /// The lowercase hex SHA-256 of `bytes`.
    static func hash(_ bytes: Data) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// The file of `sha256`; only ever asked for a checked 64-hex hash (see `contains`).
    func url(for sha256: String) -> URL {
        folder.appendingPathComponent(String(sha256.prefix(2))).appendingPathComponent(sha256)
    }

    func contains(_ sha256: String) -> Bool {
        // Anything but a hash is never a blob: "../../etc/passwd" must not become a path.
        RecipeStore.isHash(sha256) && Self.entry(at: url(for: sha256)) == .file
    }

    /// What is under a blob's name: nothing, a file (or a link to one), or something else — a folder, a pipe a read
    /// would wait on for ever, a link to nothing — which is never the blob (see `setAside`); or `hidden` when the
    /// system will not say (no permission to search its folder), which a read then says in its own words.
    enum Entry { case missing, file, other, hidden }

    /// What is at `url`: one `lstat`, and a `stat` more only for a link.
    static func entry(at url: URL) -> Entry {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .hidden }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFLNK: return stat(url.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? .file : .other
        default: return .other
        }
    }

    /// Anything but a file in a blob's place is moved aside like damaged bytes (to `.<hash>.damaged`), so the blob
    /// counts as lost and a replica's copy, or the same photo added again, can take its place. Returns what is
    /// there now (never `other`).
    private func setAsideIfNotFile(_ url: URL) -> Entry {
        let entry = Self.entry(at: url)
        guard entry == .other else { return entry }
        _ = setAside(url)
        return .missing
    }

    /// Moves the blob file at `url` aside, to `.<hash>.damaged` beside it: from then on the blob is missing, so
    /// `contains` says so and a replica's intact copy can take its place. Returns the name it was moved to.
    private func setAside(_ url: URL) -> String {
        let aside = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).damaged")
        if rename(url.path, aside.path) != 0 && errno != ENOENT {
            // A folder of that name already aside (a file would have been replaced): this one goes beside it.
            let another = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).damaged")
            _ = rename(url.path, another.path)
            return another.lastPathComponent
        }
        return aside.lastPathComponent
    }

    /// The error of a blob found damaged (and moved aside): lost, so it is noted for a sync to bring back.
    private static func damaged(_ sha256: String, _ what: String) -> PhotoStorageError {
        PhotoStorageError("photo \(sha256) \(what)", kind: .damaged)
    }

    /// Stores `bytes` durably under their hash (a no-op when already there) and returns the hash. `checked`
    /// is the hash when the caller has just computed it from these bytes (a blob is hashed once, not twice).
    @discardableResult
    func store(_ bytes: Data, checked: String? = nil) throws -> String {
        let sha256 = checked ?? Self.hash(bytes)
        let destination = url(for: sha256)
        if setAsideIfNotFile(destination) == .file { return sha256 }
        let shard = destination.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: shard.path) {
            try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
            // The new folder's entry must be durable before a blob inside it is relied on.
            try Self.syncFolder(folder)
        }
        let temporary = shard.appendingPathComponent(".\(sha256).\(UUID().uuidString).tmp")
        do {
            try Self.writeSynced(bytes, to: temporary)
        } catch {
            unlink(temporary.path)
            throw error
        }
        guard rename(temporary.path, destination.path) == 0 else {
            let failure = errno
            unlink(temporary.path)
            throw PhotoStorageError.system("cannot move a photo into place", errno: failure)
        }
        try Self.syncFolder(shard)
        return sha256
    }

    /// Stores blobs already checked against their hashes, durably, with two flushes of the file system for
    /// the lot instead of two `fsync`s per blob: every file is written, flushed together, then moved into
    /// place, and the moves flushed together. Returns how many were new. A crash part way leaves whole blobs
    /// and temporary files, which the next start removes.
    func storeAll(_ blobs: [(sha256: String, bytes: Data)]) throws -> Int {
        var moves: [(temporary: URL, destination: URL)] = []
        defer { for move in moves { unlink(move.temporary.path) } } // whatever is left when this fails
        var seen = Set<String>()
        for blob in blobs where seen.insert(blob.sha256).inserted {
            let destination = url(for: blob.sha256)
            if setAsideIfNotFile(destination) == .file { continue }
            let shard = destination.deletingLastPathComponent()
            if !FileManager.default.fileExists(atPath: shard.path) {
                try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
            }
            let temporary = shard.appendingPathComponent(".\(blob.sha256).\(UUID().uuidString).tmp")
            moves.append((temporary, destination))
            try Self.writeFile(blob.bytes, to: temporary, sync: false)
        }
        guard !moves.isEmpty else { return 0 }
        try Self.syncFileSystem(of: folder)
        for move in moves {
            guard rename(move.temporary.path, move.destination.path) == 0 else {
                throw PhotoStorageError.system("cannot move a photo into place")
            }
        }
        let count = moves.count
        moves = []
        try Self.syncFileSystem(of: folder)
        return count
    }

    /// The bytes stored under `sha256`, checked against the hash. Every failure is a `PhotoStorageError` whose
    /// `kind` says what it was:
    /// - `missing`: no file under the hash;
    /// - `damaged`: bytes that no longer match their hash (a disk fault, a file edited by hand), bytes the disk
    ///   cannot give back (an input/output error), or something that is not a file in its place. It is moved aside to
    ///   `.<hash>.damaged` beside it: from then on it is missing, so `contains` says so and a replica's intact copy
    ///   can take its place;
    /// - `unreadable`: a file the system will not read for a reason that is not the photo's (no permission, no
    ///   descriptors left); it stays where it is.
    func read(_ sha256: String) throws(PhotoStorageError) -> Data {
        guard RecipeStore.isHash(sha256) else { throw PhotoStorageError("\(sha256.prefix(80)) is not a photo hash") }
        let file = url(for: sha256)
        switch Self.entry(at: file) {
        case .missing: throw Self.missing(sha256)
        case .other: throw Self.damaged(sha256, "is not a file in the photo folder (something else has its name; moved aside to \(setAside(file)))")
        case .file, .hidden: break
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: file)
        } catch {
            switch FileErrorText.posixCode(error) {
            case ENOENT?: throw Self.missing(sha256) // removed since it was looked at
            case EIO?:
                // The disk could not give the bytes back: they are as lost as bytes that changed, and a replica's
                // copy can take their place only once this file is out of the way.
                throw Self.damaged(sha256, "could not be read from the disk (\(FileErrorText.reason(error)); moved aside to \(setAside(file)))")
            case let code:
                let reason = FileErrorText.reason(error)
                var failure = PhotoStorageError("photo \(sha256) is in the photo folder but cannot be read (\(reason))", kind: .unreadable(reason: reason))
                failure.errno = code
                throw failure
            }
        }
        guard Self.hash(bytes) == sha256 else {
            throw Self.damaged(sha256, "is damaged on disk (its bytes no longer match their SHA-256; moved aside to \(setAside(file)))")
        }
        return bytes
    }

    private static func missing(_ sha256: String) -> PhotoStorageError {
        PhotoStorageError("photo \(sha256) is missing from the photo folder", kind: .missing)
    }

    /// Every hash stored.
    func allHashes() throws -> Set<String> {
        var hashes = Set<String>()
        for shard in try FileManager.default.contentsOfDirectory(atPath: folder.path) where shard.count == 2 {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(shard).path)
            for name in names where name.count == 64 && !name.hasPrefix(".") { hashes.insert(name) }
        }
        return hashes
    }

    func remove(_ sha256: String) throws {
        guard RecipeStore.isHash(sha256) else { return }
        let file = url(for: sha256)
        guard unlink(file.path) != 0 else { return }
        let failure = errno // the unlink's, before the look below sets its own
        // Something that is not a file under a blob's name (a folder) is moved aside rather than removed.
        if failure != ENOENT && setAsideIfNotFile(file) != .missing {
            throw PhotoStorageError.system("cannot remove photo \(sha256)", errno: failure)
        }
    }

    private static func writeSynced(_ bytes: Data, to url: URL) throws {
        try writeFile(bytes, to: url, sync: true)
    }

    private static func writeFile(_ bytes: Data, to url: URL, sync: Bool) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw PhotoStorageError.system("cannot create \(url.lastPathComponent)") }
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw PhotoStorageError.system("cannot write a photo")
                }
                offset += written
            }
        }
        guard !sync || fsync(descriptor) == 0 else { throw PhotoStorageError.system("cannot sync a photo to disk") }
    }

    /// Flushes everything written to the file system that holds `url` (`syncfs`): one flush for many files.
    static func syncFileSystem(of url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PhotoStorageError.system("cannot open \(url.path) to sync it") }
        defer { close(descriptor) }
        guard recipevault_syncfs(descriptor) == 0 else { throw PhotoStorageError.system("cannot sync \(url.path) to disk") }
    }

    static func syncFolder(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PhotoStorageError.system("cannot open \(url.path) to sync it") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw PhotoStorageError.system("cannot sync \(url.path) to disk") }
    }
}

/// The photo folder could not be read or written.
struct PhotoStorageError: Error, CustomStringConvertible {
    /// What kind of failure: of a blob read (`PhotoBlobs.read`), or any other (`failed`).
    enum Kind: Equatable, Sendable {
        /// A write, a folder, a request that names no blob.
        case failed
        /// The blob asked for is not in the folder.
        case missing
        /// It was there, damaged, and is moved aside.
        case damaged
        /// It is there, but the system will not give its bytes for a reason that is not the photo's; it stays.
        case unreadable(reason: String)
    }

    let description: String
    var kind: Kind
    /// The system's error number, when a system call failed (`ENOSPC`: the disk is full).
    var errno: Int32?

    /// The blob is gone from this replica (missing, or damaged and moved aside): noted for a sync to bring back.
    var lost: Bool { kind == .missing || kind == .damaged }

    init(_ description: String, kind: Kind = .failed) {
        self.description = description
        self.kind = kind
    }

    /// `what` failed in a system call: the description adds the system's words for `errno`, which is kept.
    static func system(_ what: String, errno code: Int32 = Glibc.errno) -> PhotoStorageError {
        var error = PhotoStorageError("\(what): \(String(cString: strerror(code)))")
        error.errno = code
        return error
    }
}

extension RecipeStore {
    /// Removes blobs no recipe refers to any more. It runs in the writer, as photo
    /// writes do, so a blob stored for a row about to commit is never taken.
    ///
    /// It is housekeeping after a change already committed, so it never fails the request that made the change: a
    /// blob it cannot remove, or a collection that cannot run, is left for the next one. (A failure here used to be
    /// the request's reply — a photo removed, a recipe deleted or a sync's page applied, said to have failed, and the
    /// sync retried the page for ever.)
    func collectUnusedPhotos() async {
        let photos = self.photos
        guard backupRunning.withLock({ $0 }) == nil else { return } // the next collection takes what is unused
        let held = heldPhotos.withLock { held in
            held = held.filter { $0.value > Date(timeIntervalSinceNow: -3_600) }
            return Set(held.keys)
        }
        try? await pool.writeWithoutTransaction { db in
            let used = Set(try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos"))
            // A record held back (a stamp ahead of this clock, a value refused until a newer version comes) keeps the
            // blobs it names: it may apply much later, when the replica that sent them has let them go (restored from
            // an older copy, say) and no replica could send them again. (Each held body is looked at for each unused
            // blob: both are few.)
            let nameInHeld = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sync_held WHERE instr(body, ?) > 0)")
            for hash in try photos.allHashes().subtracting(used).subtracting(held)
            where try Bool.fetchOne(nameInHeld, arguments: [hash]) != true {
                try? photos.remove(hash)
            }
        }
    }
}
