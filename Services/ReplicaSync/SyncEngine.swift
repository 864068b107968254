import Foundation
import RecipeProtocol
import Synchronization

/// One storage replica as sync sees it: its change feed, its photo blobs, and applying changes.
/// `RemoteReplica` reaches a `recipe-storage` over ZeroMQ; tests also use a store in process.
public protocol SyncEndpoint: Sendable {
    /// What to call it in reports and errors (its endpoint).
    var name: String { get }
    func info() async throws -> SyncOps.Info.Response
    /// Records changed after `since` (`sync.changes`). `seen` is the reading side's newest write of this endpoint's
    /// replica (`sync.cursor` `seen`): one this replica never made, or made with another stamp, shows it was rolled
    /// back, and it takes a new incarnation and answers `sync_restart`.
    /// `sinceMark` is what the feed held at `since` when the reading side took it (`sync.cursor` `mark`): another record
    /// there shows this replica was rolled back and placed new changes where the lost ones were.
    /// `seenWrites` is the reading side's newest write of every replica (`sync.cursor` `seenWrites`): an echo holding a
    /// write it has not seen is sent all the same (it was rolled back and lost it).
    func changes(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite?, sinceMark: String?,
                 seenWrites: [SyncOps.SeenWrite]?) async throws -> SyncOps.Changes.Response
    func pendingCount(since: Int, exclude: String?) async throws -> Int
    func missingPhotos(_ hashes: [String]) async throws -> [String]
    func photo(sha256: String) async throws -> Data
    /// The blobs among `hashes` this endpoint holds, in order, and those it does not (`sync.photos`).
    func photos(_ hashes: [String]) async throws -> PhotoBatch
    func putPhoto(sha256: String, bytes: Data) async throws -> Bool
    /// Stores several blobs together (at most `SyncOps.PutPhotos.maxPhotos` and `.maxBytes`); returns how many were new.
    func putPhotos(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int
    /// Applies a page of `from`'s feed and remembers `cursor` for it. `to` is the replica id this endpoint gave
    /// when the sync started and `after` the cursor the page continues from: when either is no longer so (the
    /// storage was restored behind the same endpoint, or its cursor moved back), the page is refused with
    /// `sync_restart` and nothing is applied. `seen` is the source's newest write of this endpoint's replica
    /// (`sync.changes` `seen`): one this replica never made, or made with another stamp, shows it was rolled back.
    /// `cursorMark` is what `from`'s feed holds at `cursor` (the page's `nextMark`), kept with it.
    /// `unavailablePhotos` are blobs `from` was asked for and does not hold: a record whose only obstacle is one of them
    /// is applied without it (the blob noted lost there, for a sync with any replica that holds it to bring back).
    func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
               cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response
    /// Tells the endpoint that the replicas `ids` have ended (`sync.retire`): it re-dates and applies what it held of
    /// theirs for being stamped too far ahead.
    func retire(_ ids: [String]) async throws -> SyncOps.Apply.Response
    func cursor(peer: String) async throws -> SyncOps.Cursor.Response

    // Snapshots, for a replica that holds nothing yet (`sync.snapshot`, `sync.install` and the calls between).
    func snapshot() async throws -> SyncOps.Snapshot.Response
    func snapshotPhotos(_ id: UUID, after: String?) async throws -> SyncOps.SnapshotPhotos.Response
    func readSnapshot(_ id: UUID, offset: Int) async throws -> Data
    func snapshotDone(_ id: UUID) async throws
    /// Writes `bytes` at `offset` of snapshot `id`, which is `total` bytes in all.
    func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int) async throws
    func install(_ request: SyncOps.Install.Request) async throws -> SyncOps.Install.Response
}

extension SyncEndpoint {
    /// Records changed after `since`, with no `seen`.
    public func changes(since: Int, exclude: String?, limit: Int) async throws -> SyncOps.Changes.Response {
        try await changes(since: since, exclude: exclude, limit: limit, seen: nil, sinceMark: nil, seenWrites: nil)
    }

    /// Records changed after `since`, with no `sinceMark`.
    public func changes(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite?) async throws -> SyncOps.Changes.Response {
        try await changes(since: since, exclude: exclude, limit: limit, seen: seen, sinceMark: nil, seenWrites: nil)
    }

    /// Applies records with every blob they name sent (or held for it), as before `unavailablePhotos`.
    public func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
                      cursorMark: String?) async throws -> SyncOps.Apply.Response {
        try await apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen, cursorMark: cursorMark, unavailablePhotos: nil)
    }

    /// Applies records on the conditions `to` and `after`, with no `cursorMark`.
    public func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?) async throws -> SyncOps.Apply.Response {
        try await apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen, cursorMark: nil)
    }

    /// Applies records without conditions (the target's id and cursor are not checked).
    public func apply(from: String, records: [SyncRecord], cursor: Int?) async throws -> SyncOps.Apply.Response {
        try await apply(from: from, records: records, cursor: cursor, to: nil, after: nil, seen: nil, cursorMark: nil)
    }

    /// Applies records on the conditions `to` and `after`, with no `seen`.
    public func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?) async throws -> SyncOps.Apply.Response {
        try await apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: nil, cursorMark: nil)
    }

    /// One blob at a time, for an endpoint that has no batch of its own.
    public func photos(_ hashes: [String]) async throws -> PhotoBatch {
        try await photosOneAtATime(hashes)
    }

    /// `photo` for each blob; one the endpoint does not hold is `missing`.
    public func photosOneAtATime(_ hashes: [String]) async throws -> PhotoBatch {
        var batch = PhotoBatch()
        for hash in hashes {
            do {
                batch.found.append((hash, try await photo(sha256: hash)))
            } catch let error as ServiceError where error.code == .notFound {
                batch.missing.append(hash)
            }
        }
        return batch
    }

    /// One blob at a time, for an endpoint that has no batch of its own.
    public func putPhotos(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int {
        try await putPhotosOneAtATime(photos)
    }

    /// `putPhoto` for each blob; how many were new.
    public func putPhotosOneAtATime(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int {
        var stored = 0
        for photo in photos where try await putPhoto(sha256: photo.sha256, bytes: photo.bytes) { stored += 1 }
        return stored
    }
}

/// Photo blobs read from a replica: those it sent, in the order asked, and those it does not hold.
public struct PhotoBatch: Sendable {
    public var found: [(sha256: String, bytes: Data)] = []
    public var missing: [String] = []

    public init(found: [(sha256: String, bytes: Data)] = [], missing: [String] = []) {
        self.found = found
        self.missing = missing
    }

    /// Asks `read` for `hashes` (at most `SyncOps.Photos.maxPhotos` a time) until each was sent or said missing: a
    /// reply may stop at its byte limit. What a reply sends that was not asked for is dropped; a reply that
    /// answers none of what it was asked ends it with an error (the replica is not making progress).
    public static func collect(_ hashes: [String], name: String, _ read: ([String]) async throws -> PhotoBatch) async throws -> PhotoBatch {
        var left = hashes
        var all = PhotoBatch()
        while !left.isEmpty {
            let asked = Array(left.prefix(SyncOps.Photos.maxPhotos))
            let wanted = Set(asked)
            let reply = try await read(asked)
            var answered = Set<String>()
            for blob in reply.found where wanted.contains(blob.sha256) && answered.insert(blob.sha256).inserted { all.found.append(blob) }
            for hash in reply.missing where wanted.contains(hash) && answered.insert(hash).inserted { all.missing.append(hash) }
            guard !answered.isEmpty else {
                throw ServiceError(.internalError, "\(name) answered none of the \(asked.count == 1 ? "1 photo" : "\(asked.count) photos") asked for")
            }
            left.removeAll { answered.contains($0) }
        }
        return all
    }
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
    /// Records the receiving side holds back after the pull, from any sender (`nil` when it did not say): a record
    /// held for its values waits for its sender's next version, and until then the two do not agree on it.
    public var held: Int?
    /// Photo blobs the records named that neither side held (the target lacked them and the source answered it has
    /// none): the target took those records without them and noted them lost, for any replica that holds one to bring.
    public var unavailablePhotos: Set<String> = []
    /// Why the pull started again part way (`sync_restart`: the target restored, or a replica rolled back and taking a
    /// new incarnation), oldest first: each is worth a line in the worker's log.
    public var restarts: [String] = []
    public init() {}

    /// Both summed, each count saturating: counts the other side said (`changed`, `conflicts`) are any `Int` at all.
    public static func + (a: PullReport, b: PullReport) -> PullReport {
        var sum = a
        sum.received = a.received.addingSaturated(b.received)
        sum.changed = a.changed.addingSaturated(b.changed)
        sum.photos = a.photos.addingSaturated(b.photos)
        sum.photoBytes = a.photoBytes.addingSaturated(b.photoBytes)
        sum.conflicts = a.conflicts.addingSaturated(b.conflicts)
        sum.unavailablePhotos = a.unavailablePhotos.union(b.unavailablePhotos)
        sum.held = b.held ?? a.held // a count the target keeps, not one of this pull: the later one stands
        sum.restarts = a.restarts + b.restarts
        return sum
    }

    /// What a target said it did with a page (`sync.apply`).
    mutating func add(_ applied: SyncOps.Apply.Response) {
        changed = changed.addingSaturated(applied.changed)
        conflicts = conflicts.addingSaturated(applied.conflicts)
        held = applied.held
    }
}

/// Moves changes between replicas. A pull reads the target's cursor for the source,
/// reads the source's feed from there a page at a time, sends the photo blobs the
/// target lacks (a batch at a time: memory stays bounded), and applies the page, which
/// saves the cursor in the same transaction. Cut off anywhere, it resumes from the
/// last applied page; applying a page twice changes nothing.
public enum SyncEngine {
    /// A source with at least this many changes in its feed sends an empty target a snapshot of its database
    /// instead of its records.
    public static let snapshotThreshold = 1_000

    /// Pulls everything `target` has not seen from `source`. `maxPages` stops early (partial syncs, in tests).
    /// An empty target (`sync.info`'s `empty`) gets a snapshot of the source first when the source's feed holds
    /// `snapshotAbove` changes or more; the feed's later changes follow as usual.
    ///
    /// Every page is applied on condition that the target is still the replica it was when the pull read its id
    /// and cursor: a storage restored (or started as a new incarnation) behind the same endpoint in the middle
    /// refuses the page (`sync_restart`), and the pull starts again, twice at most, from what the target is now.
    ///
    /// `progress` is told what the pull has moved so far each time it ends, by a failure too: a pull that fails part way
    /// (the target's disk full on a later page) has still moved the pages before it, and a person is told so.
    public static func pull(from source: any SyncEndpoint, to target: any SyncEndpoint, pageSize: Int = 200,
                            maxPages: Int = .max, snapshotAbove: Int = snapshotThreshold,
                            progress: (@Sendable (PullReport) -> Void)? = nil) async throws -> PullReport {
        var attempt = 1
        // What the attempts before this one moved: a pull started again still moved their pages, and says so (the
        // report of one that ended in an error too).
        let moved = Mutex(PullReport())
        while true {
            let before = moved.withLock { $0 }
            do {
                return before + (try await pullOnce(from: source, to: target, pageSize: pageSize, maxPages: maxPages, snapshotAbove: snapshotAbove,
                                                    progress: { report in
                                                        moved.withLock { $0 = before + report }
                                                        progress?(before + report)
                                                    }))
            } catch let error as ServiceError where error.code == .syncRestart && attempt < 3 {
                attempt += 1
                moved.withLock { $0.restarts.append(error.message) }
            }
        }
    }

    private static func pullOnce(from source: any SyncEndpoint, to target: any SyncEndpoint, pageSize: Int,
                                 maxPages: Int, snapshotAbove: Int, progress: (@Sendable (PullReport) -> Void)?) async throws -> PullReport {
        let sourceInfo = try await source.info()
        let targetInfo = try await target.info()
        let sourceID = sourceInfo.replicaID
        let targetID = targetInfo.replicaID
        guard sourceID != targetID else {
            throw ServiceError(.conflict, "\(source.name) and \(target.name) both call themselves replica \(sourceID): they are one storage "
                               + "reached at two addresses (give it to the worker once), or one data folder is a copy of the other's "
                               + "that has not started as a new incarnation; restart the copied one (it takes a new replica id when its database file was copied)")
        }
        // Both replicas must merge by this worker's rules: two merging the same changes differently never converge.
        for (endpoint, info) in [(source, sourceInfo), (target, targetInfo)] {
            if let mismatch = SyncRules.mismatch(info.rules, of: "the recipe-storage at \(endpoint.name)", here: "this recipe-worker") {
                throw ServiceError(.unsupportedVersion, mismatch)
            }
        }
        // The target's newest write of the source goes with every read of the source's feed: a source rolled back since
        // it was made (`SyncSeen`) takes a new incarnation before any of its writes of reused numbers reach the target.
        // Its newest write of every replica goes too: a target rolled back is sent the echoes holding what it lost.
        let atTarget = try await target.cursor(peer: sourceID)
        var cursor = atTarget.seq
        // What the source's feed held at the cursor when the target took it goes with each read from there: a source
        // rolled back since, which placed new changes where the lost ones were, would have them skipped (`sinceMark`).
        var mark = atTarget.mark
        // The source's feed is shorter than what the target applied of it: it was restored from an older
        // copy. Read it all again (merging what is already here changes nothing).
        if cursor > sourceInfo.latestSeq {
            // Set back at the target first: a page continuing from behind the stored cursor leaves it where it is.
            _ = try await target.apply(from: sourceID, records: [], cursor: 0)
            cursor = 0
            mark = nil
        }
        var report = PullReport()
        defer { progress?(report) } // returned or thrown: what was moved until then
        var pages = 0
        let takesUnavailable = targetInfo.takesUnavailablePhotos == true
        // (At most what one apply takes: records naming more wait, as before, for a later pull.)
        func nonEmpty(_ hashes: [String]) -> [String]? {
            hashes.isEmpty ? nil : Array(hashes.prefix(SyncOps.Apply.Request.maxUnavailablePhotos))
        }
        if cursor == 0, targetInfo.empty == true, sourceInfo.latestSeq > 0, sourceInfo.latestSeq >= snapshotAbove,
           let copied = try await copySnapshot(from: source, to: target) {
            cursor = copied.seq
            mark = nil
            report = copied.report
            pages += 1
        }
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
                page = try await source.changes(since: cursor, exclude: targetID, limit: pageSize, seen: atTarget.seen, sinceMark: mark,
                                                seenWrites: atTarget.seenWrites)
            }
            readAhead = nil
            if page.records.isEmpty && page.next == cursor { break }
            try requireProgress(page, after: cursor, limit: pageSize, from: source)
            if page.more && pages + 1 < maxPages {
                let (since, sinceMark) = (page.next, page.nextMark)
                readAhead = Task {
                    try await source.changes(since: since, exclude: targetID, limit: pageSize, seen: atTarget.seen, sinceMark: sinceMark,
                                             seenWrites: atTarget.seenWrites)
                }
            }
            let sent = try await sendPhotos(page.records.flatMap(\.photoHashes), from: source, to: target)
            report = report + sent.report // sent, whether or not the page is read again
            if !sent.unavailable.isEmpty && retries < 2 {
                // The source dropped a photo after the page was read: read the page again, now current.
                readAhead?.cancel()
                readAhead = nil
                retries += 1
                continue
            }
            // A blob the source still does not hold is lost there (or everywhere): the record naming it is applied without
            // it and the blob noted lost at the target, for any replica that holds it to bring back — not held for a blob
            // that may never come (a target of an older release holds it, and names it in its status).
            let applied = try await target.apply(from: sourceID, records: page.records, cursor: page.next, to: targetID, after: cursor, seen: page.seen,
                                                 cursorMark: page.nextMark, unavailablePhotos: takesUnavailable ? nonEmpty(sent.unavailable) : nil)
            report.received = report.received.addingSaturated(page.records.count)
            report.add(applied)
            if takesUnavailable { report.unavailablePhotos.formUnion(sent.unavailable) }
            cursor = page.next
            mark = page.nextMark
            pages += 1
            retries = 0
            if !page.more { break }
        }
        // Replicas the source knows have ended and the target does not: what the target held of theirs for a clock far
        // ahead, no one will stamp again, so it re-dates and applies it. A storage of an older release does not know the
        // operation: it holds such records until their time comes, as it did.
        // (Only ids shaped as ids: a damaged or hostile source's list must not fail the pull.)
        let retired = Set((sourceInfo.retired ?? []).filter(SyncOps.Retire.isReplicaID)).subtracting(targetInfo.retired ?? []).subtracting([targetID])
        if !retired.isEmpty {
            do {
                report.add(try await target.retire(Array(retired.sorted().prefix(SyncOps.Retire.maxIDs))))
            } catch let error as ServiceError where error.code == .unknownOp {}
        }
        // Records the target holds for want of a photo: send those the source has, and let the target retry — taking
        // without their blob those the source lacks too (held by a release before it, or for a blob sent and gone since).
        let waiting = (targetInfo.held ?? []).flatMap(\.missingPhotos)
        if !waiting.isEmpty {
            let sent = try await sendPhotos(waiting, from: source, to: target)
            let unavailable = takesUnavailable ? sent.unavailable : []
            if sent.report.photos > 0 || !unavailable.isEmpty {
                report = report + sent.report
                let applied = try await target.apply(from: sourceID, records: [], cursor: nil, to: nil, after: nil, seen: nil, cursorMark: nil,
                                                     unavailablePhotos: nonEmpty(unavailable))
                report.add(applied)
                report.unavailablePhotos.formUnion(unavailable)
            }
        }
        // Blobs gone from the target's disk that its recipes still name: send those the source holds.
        if let lost = targetInfo.lostPhotos, !lost.isEmpty {
            report = report + (try await sendPhotos(lost, from: source, to: target)).report
        }
        if report.held == nil { report.held = targetInfo.held?.count }
        return report
    }

    /// Both directions: after it, both replicas hold the same content (when nothing else writes meanwhile).
    /// `progress` is told what has moved each way so far as each pull ends, by a failure too (see `pull`).
    public static func sync(_ a: any SyncEndpoint, _ b: any SyncEndpoint, pageSize: Int = 200,
                            snapshotAbove: Int = snapshotThreshold,
                            progress: (@Sendable (_ aToB: PullReport, _ bToA: PullReport) -> Void)? = nil) async throws
        -> (aToB: PullReport, bToA: PullReport) {
        var aToB = try await pull(from: a, to: b, pageSize: pageSize, snapshotAbove: snapshotAbove, progress: { progress?($0, PullReport()) })
        let first = aToB
        let bToA = try await pull(from: b, to: a, pageSize: pageSize, snapshotAbove: snapshotAbove, progress: { progress?(first, $0) })
        // What b made while merging (conflicted copies, merged versions) goes back once more.
        if bToA.changed > 0 || aToB.conflicts > 0 {
            aToB = aToB + (try await pull(from: a, to: b, pageSize: pageSize, snapshotAbove: snapshotAbove,
                                          progress: { progress?(first + $0, bToA) }))
        }
        return (aToB, bToA)
    }

    /// Sends `target` a snapshot of `source`: the photo blobs it names and, at the same time, the database file a
    /// chunk at a time (the next read while the last is written); then `sync.install`, once both are across.
    /// Returns the feed position the target now holds `source`'s changes up to, or nil when no snapshot was
    /// installed (the source makes none, or the target is no longer empty or runs another schema): the records
    /// are then sent as usual.
    /// A page of the feed moves the cursor on: records, or more to come, come with a `next` past the cursor they were
    /// read from. A source whose feed stands still or goes back (a damaged or hostile peer) would otherwise be read
    /// and applied over and over, and the pair never finish; the pull ends with an error that names it. So does a page
    /// of more records than were asked for: passed on, the target refused it as this pull's own request ("send at most
    /// 1000 at a time"), after the photos of all of them had been fetched.
    static func requireProgress(_ page: SyncOps.Changes.Response, after cursor: Int, limit: Int, from source: any SyncEndpoint) throws {
        guard page.records.count <= limit else {
            throw ServiceError(.internalError,
                "\(source.name) answered the changes after \(cursor) with \(page.records.count) records where at most \(limit) were asked for: a page that large is not taken, so this pull stopped (is the replica there damaged, or not a recipe-storage?)")
        }
        guard page.next <= cursor else { return }
        throw ServiceError(.internalError,
            "\(source.name) answered the changes after \(cursor) with \(page.records.count) records and a next position of \(page.next)\(page.more ? ", saying more follow" : ""): its feed does not move on, so this pull stopped (is the replica there damaged, or not a recipe-storage?)")
    }

    static func copySnapshot(from source: any SyncEndpoint, to target: any SyncEndpoint) async throws -> (seq: Int, report: PullReport)? {
        let snapshot: SyncOps.Snapshot.Response
        do {
            snapshot = try await source.snapshot()
        } catch let error as ServiceError where error.code == .unknownOp || error.code == .busy {
            return nil // an older storage, or one busy with other snapshots: records it is
        }
        let id = snapshot.snapshot
        // The database file goes across while the photos do: the two are independent until the install.
        let file = Task {
            func read(_ offset: Int) -> Task<Data, any Error>? {
                offset < snapshot.bytes ? Task { try await source.readSnapshot(id, offset: offset) } : nil
            }
            var offset = 0
            var next = read(0)
            defer { next?.cancel() }
            while let current = next {
                try Task.checkCancellation()
                let chunk = try await current.value
                guard !chunk.isEmpty else { throw ServiceError(.internalError, "\(source.name)'s snapshot ended at \(offset) of \(snapshot.bytes) bytes") }
                next = read(offset + chunk.count)
                do {
                    try await target.writeSnapshot(id, offset: offset, bytes: chunk, total: snapshot.bytes)
                } catch let error as ServiceError where (error.code == .busy && offset == 0) || error.code == .conflict {
                    // Busy with as many snapshots as it takes, or no longer empty (a person wrote there, or another
                    // worker's snapshot went in first): it takes the records instead.
                    throw TargetTakesNoSnapshot()
                }
                offset += chunk.count
            }
        }
        do {
            var report = PullReport()
            var after: String?
            while true {
                let page = try await source.snapshotPhotos(id, after: after)
                guard let last = page.sha256.last else { break }
                // The listing is in order, each page after the last: one that repeats itself or goes back would never end.
                if let after, last <= after {
                    throw ServiceError(.internalError, "\(source.name) listed the photos of snapshot \(id.uuidString) after \(after.prefix(16))… up to \(last.prefix(16))…, not past it: the listing does not move on, so this copy stopped")
                }
                let sent = try await sendPhotos(page.sha256, from: source, to: target)
                report = report + sent.report
                after = last
                if !page.more { break }
            }
            try await file.value
            let installed = try await target.install(.init(snapshot: id, from: snapshot.replicaID, seq: snapshot.seq, bytes: snapshot.bytes,
                                                           sha256: snapshot.sha256))
            try? await source.snapshotDone(id)
            guard installed.installed else { return nil }
            report.received = report.received.addingSaturated(snapshot.records)
            report.changed = report.changed.addingSaturated(snapshot.records)
            // The target's feed now holds the source's own state up to the copy: the source need not read it back.
            _ = try await source.apply(from: installed.replicaID, records: [], cursor: installed.latestSeq)
            return (snapshot.seq, report)
        } catch {
            // Nothing of this copy is sent after it failed: the file's transfer stops before the snapshot is let go.
            file.cancel()
            _ = try? await file.value
            try? await source.snapshotDone(id)
            // A target receiving as many snapshots as it takes at once, or no longer empty, gets the records instead,
            // as from a source that makes none; the photos sent meanwhile are the ones those records name.
            if error is TargetTakesNoSnapshot { return nil }
            throw error
        }
    }

    /// The target answered `busy` to a snapshot's first bytes (it is receiving as many as it takes at once), or
    /// `conflict` to any of them (it holds something now).
    private struct TargetTakesNoSnapshot: Error {}

    /// Sends the blobs among `hashes` that the target lacks, read and written in batches (one request each way,
    /// one flush to disk a batch). Reading and writing overlap: the next batch is read while this one is added,
    /// and written and flushed at the target while the one after fills (at most a few batches are held). A blob the source does not hold (any more) is counted, not fatal: the record naming it waits at
    /// the target until it arrives.
    private static func sendPhotos(_ hashes: [String], from source: any SyncEndpoint, to target: any SyncEndpoint) async throws
        -> (report: PullReport, unavailable: [String]) {
        var report = PullReport()
        var unavailable: [String] = []
        guard !hashes.isEmpty else { return (report, []) }
        let missing = try await target.missingPhotos(Array(Set(hashes)).sorted())
        // Read a batch's worth at a time: one request for what one `sync.putPhotos` takes.
        let groups = stride(from: 0, to: missing.count, by: SyncOps.PutPhotos.maxPhotos).map {
            Array(missing[$0..<min(missing.count, $0 + SyncOps.PutPhotos.maxPhotos)])
        }
        func fetch(_ index: Int) -> Task<PhotoBatch, any Error>? {
            guard index < groups.count else { return nil }
            let group = groups[index]
            return Task { try await source.photos(group) }
        }
        var batch: [(sha256: String, bytes: Data)] = []
        var batchBytes = 0
        // The batch being written at the target, while the next one fills.
        var writing: Task<Void, any Error>?
        func finishWriting() async throws {
            guard let last = writing else { return }
            writing = nil
            try await last.value
        }
        func flush() async throws {
            try await finishWriting()
            guard !batch.isEmpty else { return }
            let sending = batch
            report.photos += sending.count
            report.photoBytes += batchBytes
            batch = []
            batchBytes = 0
            writing = Task { _ = try await target.putPhotos(sending) }
        }
        var next = fetch(0)
        defer {
            next?.cancel()
            writing?.cancel()
        }
        for index in groups.indices {
            let current = next
            next = fetch(index + 1)
            guard let read = try await current?.value else { continue }
            unavailable += read.missing
            for (sha256, bytes) in read.found {
                if batch.count == SyncOps.PutPhotos.maxPhotos || batchBytes + bytes.count > SyncOps.PutPhotos.maxBytes {
                    try await flush()
                }
                batch.append((sha256, bytes))
                batchBytes += bytes.count
            }
        }
        try await flush()
        try await finishWriting()
        return (report, unavailable)
    }
}
