import Foundation
import RecipeProtocol

/// One storage replica as sync sees it: its change feed, its photo blobs, and applying changes.
/// `RemoteReplica` reaches a `recipe-storage` over ZeroMQ; tests also use a store in process.
public protocol SyncEndpoint: Sendable {
    /// What to call it in reports and errors (its endpoint).
    var name: String { get }
    func info() async throws -> SyncOps.Info.Response
    func changes(since: Int, exclude: String?, limit: Int) async throws -> SyncOps.Changes.Response
    func pendingCount(since: Int, exclude: String?) async throws -> Int
    func missingPhotos(_ hashes: [String]) async throws -> [String]
    func photo(sha256: String) async throws -> Data
    func putPhoto(sha256: String, bytes: Data) async throws -> Bool
    func apply(from: String, records: [SyncRecord], cursor: Int?) async throws -> SyncOps.Apply.Response
    func cursor(peer: String) async throws -> SyncOps.Cursor.Response
}

/// What one direction of a sync did.
public struct PullReport: Codable, Sendable, Equatable {
    /// Records looked at and records that changed on the receiving side.
    public var received = 0
    public var changed = 0
    /// Photo blobs sent, and their bytes.
    public var photos = 0
    public var photoBytes = 0
    /// Conflicted copies made on the receiving side.
    public var conflicts = 0
    public init() {}

    static func + (a: PullReport, b: PullReport) -> PullReport {
        var sum = a
        sum.received += b.received
        sum.changed += b.changed
        sum.photos += b.photos
        sum.photoBytes += b.photoBytes
        sum.conflicts += b.conflicts
        return sum
    }
}

/// Moves changes between replicas. A pull reads the target's cursor for the source,
/// reads the source's feed from there a page at a time, sends the photo blobs the
/// target lacks (one at a time: memory stays bounded), and applies the page, which
/// saves the cursor in the same transaction. Cut off anywhere, it resumes from the
/// last applied page; applying a page twice changes nothing.
public enum SyncEngine {
    /// Pulls everything `target` has not seen from `source`. `maxPages` stops early (partial syncs, in tests).
    public static func pull(from source: any SyncEndpoint, to target: any SyncEndpoint, pageSize: Int = 200,
                            maxPages: Int = .max) async throws -> PullReport {
        let sourceInfo = try await source.info()
        let targetInfo = try await target.info()
        let sourceID = sourceInfo.replicaID
        let targetID = targetInfo.replicaID
        guard sourceID != targetID else {
            throw ServiceError(.conflict, "\(source.name) and \(target.name) both call themselves replica \(sourceID): one data folder is a copy of the other's "
                               + "that has not started as a new incarnation; restart the copied one (it takes a new replica id when its database file was copied)")
        }
        var cursor = try await target.cursor(peer: sourceID).seq
        // The source's feed is shorter than what the target applied of it: it was restored from an older
        // copy. Read it all again (merging what is already here changes nothing).
        if cursor > sourceInfo.latestSeq { cursor = 0 }
        var report = PullReport()
        var pages = 0
        var retries = 0
        // The next page is read from the source while the target applies this one (reading is all the
        // source does; if this page fails, the read-ahead is dropped and the sync resumes from the cursor).
        var readAhead: Task<SyncOps.Changes.Response, any Error>?
        defer { readAhead?.cancel() }
        while pages < maxPages {
            let page: SyncOps.Changes.Response
            if let readAhead, let ahead = try? await readAhead.value {
                page = ahead
            } else {
                page = try await source.changes(since: cursor, exclude: targetID, limit: pageSize)
            }
            readAhead = nil
            if page.records.isEmpty && page.next == cursor { break }
            if page.more && pages + 1 < maxPages {
                let since = page.next
                readAhead = Task { try await source.changes(since: since, exclude: targetID, limit: pageSize) }
            }
            let sent = try await sendPhotos(page.records.flatMap(\.photoHashes), from: source, to: target)
            if sent.unavailable > 0 && retries < 2 {
                // The source dropped a photo after the page was read: read the page again, now current.
                readAhead?.cancel()
                readAhead = nil
                retries += 1
                continue
            }
            // A record whose photo is still unavailable is held by the target (and named in its status), not fatal.
            report = report + sent.report
            let applied = try await target.apply(from: sourceID, records: page.records, cursor: page.next)
            report.received += page.records.count
            report.changed += applied.changed
            report.conflicts += applied.conflicts
            cursor = page.next
            pages += 1
            retries = 0
            if !page.more { break }
        }
        // Records the target holds for want of a photo: send those the source has, and let the target retry.
        let waiting = (targetInfo.held ?? []).flatMap(\.missingPhotos)
        if !waiting.isEmpty {
            let sent = try await sendPhotos(waiting, from: source, to: target)
            if sent.report.photos > 0 {
                report = report + sent.report
                let applied = try await target.apply(from: sourceID, records: [], cursor: nil)
                report.changed += applied.changed
                report.conflicts += applied.conflicts
            }
        }
        return report
    }

    /// Both directions: after it, both replicas hold the same content (when nothing else writes meanwhile).
    public static func sync(_ a: any SyncEndpoint, _ b: any SyncEndpoint, pageSize: Int = 200) async throws -> (aToB: PullReport, bToA: PullReport) {
        var aToB = try await pull(from: a, to: b, pageSize: pageSize)
        let bToA = try await pull(from: b, to: a, pageSize: pageSize)
        // What b made while merging (conflicted copies, merged versions) goes back once more.
        if bToA.changed > 0 || aToB.conflicts > 0 { aToB = aToB + (try await pull(from: a, to: b, pageSize: pageSize)) }
        return (aToB, bToA)
    }

    /// Sends the blobs among `hashes` that the target lacks, one at a time. A blob the source does not hold
    /// (any more) is counted, not fatal: the record naming it waits at the target until it arrives.
    private static func sendPhotos(_ hashes: [String], from source: any SyncEndpoint, to target: any SyncEndpoint) async throws
        -> (report: PullReport, unavailable: Int) {
        var report = PullReport()
        var unavailable = 0
        guard !hashes.isEmpty else { return (report, 0) }
        let missing = try await target.missingPhotos(Array(Set(hashes)).sorted())
        // One blob is read from the source while the one before it is written (and synced to disk) at the target.
        func fetch(_ index: Int) -> Task<Data?, any Error>? {
            guard index < missing.count else { return nil }
            let hash = missing[index]
            return Task {
                do {
                    return try await source.photo(sha256: hash)
                } catch let error as ServiceError where error.code == .notFound {
                    return nil
                }
            }
        }
        var next = fetch(0)
        defer { next?.cancel() }
        for index in missing.indices {
            let current = next
            next = fetch(index + 1)
            guard let bytes = try await current?.value else {
                unavailable += 1
                continue
            }
            _ = try await target.putPhoto(sha256: missing[index], bytes: bytes)
            report.photos += 1
            report.photoBytes += bytes.count
        }
        return (report, unavailable)
    }
}
