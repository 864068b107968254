import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// A peer that answers, but whose answers never move on: the same page of its feed again and again, a position that
/// goes back, a snapshot's photo listing that repeats itself. Each pull ends with an error that names the peer; it
/// never loops. (A wrapper stops a pull that does loop after a few hundred calls, so the test fails, not hangs.)
@Suite("Replica sync: a peer whose answers do not move on ends the pull")
struct StalledPeerTests {
    /// How a wrapped source misbehaves.
    enum Stall: Sendable {
        /// Its first page of changes again at every call, with `next` where the call began and `more`.
        case feedStandsStill
        /// Its pages' `next` one before where the call began.
        case feedGoesBack
        /// The first page of a snapshot's photo listing at every call, with `more`.
        case photoListingRepeats
        /// Pages of more records than were asked for.
        case pageTooLarge
    }

    final class StalledSource: ForwardingEndpoint, @unchecked Sendable {
        let base: LocalReplica
        let stall: Stall
        private let calls = NSLock()
        private var count = 0
        var forwardee: any SyncEndpoint { base }

        init(_ base: LocalReplica, _ stall: Stall) {
            self.base = base
            self.stall = stall
        }

        /// Counts a call that a looping pull would repeat; past a few hundred, the test's own error ends it.
        private func count(_ what: String) throws {
            let n = calls.withLock { count += 1; return count }
            if n > 300 { throw SyncTestError("the pull asked for \(what) \(n) times: it loops") }
        }

        func changes(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite?, sinceMark: String?,
                     seenWrites: [SyncOps.SeenWrite]?) async throws -> SyncOps.Changes.Response {
            try count("changes")
            let page = try await base.changes(since: stall == .feedStandsStill ? 0 : since, exclude: exclude,
                                              limit: stall == .pageTooLarge ? limit * 4 : limit, seen: seen, sinceMark: sinceMark,
                                              seenWrites: seenWrites)
            switch stall {
            case .feedStandsStill: return .init(records: page.records, next: since, more: true)
            case .feedGoesBack: return .init(records: page.records, next: since - 1, more: page.more)
            case .photoListingRepeats, .pageTooLarge: return page
            }
        }

        func snapshotPhotos(_ id: UUID, after: String?) async throws -> SyncOps.SnapshotPhotos.Response {
            try count("a snapshot's photos")
            guard stall == .photoListingRepeats else { return try await base.snapshotPhotos(id, after: after) }
            let first = try await base.snapshotPhotos(id, after: nil)
            return .init(sha256: first.sha256, more: true)
        }
    }

    /// A source with a few recipes, two with photos.
    func fill(_ source: LocalReplica) async throws {
        for index in 0..<5 {
            let (recipe, _) = try await source.store.createRecipe(id: UUID(), RecipeDraft(
                name: "Stalled \(index)", ingredients: [.init(text: "\(index + 1) eggs")], instructions: [.init(text: "Cook.")]))
            if index < 2 { _ = try await source.store.addPhoto(recipeID: recipe.id, bytes: jpegBytes(seed: UInt64(index) + 40), position: nil) }
        }
    }

    @Test("a feed that stands still, or goes back, ends the pull with an error naming the peer; what was applied stays whole",
          arguments: [Stall.feedStandsStill, .feedGoesBack])
    func stalledFeed(stall: Stall) async throws {
        try await withReplicas(2) { replicas in
            let (source, target) = (replicas[0], replicas[1])
            try await fill(source)
            let stalled = StalledSource(source, stall)
            // snapshotAbove: never, so the pull reads the feed page by page.
            let error = await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.pull(from: stalled, to: target, pageSize: 2, snapshotAbove: .max)
            }
            #expect(error?.message.contains("\(source.name) answered the changes after") == true, "\(String(describing: error))")
            #expect(error?.message.contains("its feed does not move on") == true)
            #expect(try target.store.integrityCheck() == "ok")
            // The same source, answering as it should, then brings the target all the way.
            _ = try await SyncEngine.pull(from: source, to: target, snapshotAbove: .max)
            try await expectSameContent(source, target)
        }
    }

    @Test("a page of more records than were asked for ends the pull with an error naming the peer and the sizes, before any of its photos is fetched or anything applied")
    func pageLargerThanAsked() async throws {
        try await withReplicas(2) { replicas in
            let (source, target) = (replicas[0], replicas[1])
            try await fill(source)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.pull(from: StalledSource(source, .pageTooLarge), to: target, pageSize: 2, snapshotAbove: .max)
            }
            #expect(error?.message.contains("\(source.name) answered the changes after 0 with 5 records where at most 2 were asked for") == true,
                    "\(String(describing: error))")
            let photoFiles = FileManager.default.enumerator(atPath: target.store.folder.appendingPathComponent(RecipeVault.photoFolderName).path)?
                .compactMap { $0 as? String }.filter { $0.count > 60 } ?? []
            #expect(try await target.store.stats().recipes == 0 && photoFiles.isEmpty, "nothing of the page was taken: \(photoFiles)")
            _ = try await SyncEngine.pull(from: source, to: target, snapshotAbove: .max)
            try await expectSameContent(source, target)
        }
    }

    @Test("a snapshot whose photo listing repeats itself ends the copy with an error; the new replica stays empty and is filled by a sound pull")
    func repeatingPhotoListing() async throws {
        try await withReplicas(2) { replicas in
            let (source, target) = (replicas[0], replicas[1])
            try await fill(source)
            let stalled = StalledSource(source, .photoListingRepeats)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.pull(from: stalled, to: target, snapshotAbove: 0)
            }
            #expect(error?.message.contains("the listing does not move on") == true, "\(String(describing: error))")
            #expect(try await target.info().empty == true, "nothing of the copy was installed")
            _ = try await SyncEngine.pull(from: source, to: target, snapshotAbove: 0)
            try await expectSameContent(source, target)
        }
    }
}
