import Foundation
import RecipeModel
import RecipeProtocol
import ReplicaSync
import Testing

/// Two replicas that merge the same changes by different rules end up different for ever, each sure it has seen the
/// other's every change; so a sync between a storage and one of another release's rules does not start.
@Suite("Sync rules: replicas of other merge rules are refused before anything moves")
struct SyncRulesTests {
    /// A replica as one of another release would show itself: its `sync.info` says other rules (nil: none at all).
    struct OtherRules: ForwardingEndpoint {
        let base: LocalReplica
        let rules: Int?
        var forwardee: any SyncEndpoint { base }

        func info() async throws -> SyncOps.Info.Response {
            var info = try await base.info()
            info.rules = rules
            return info
        }
    }

    @Test("a pull either way with a replica of older, unnumbered or newer rules is refused, saying which to upgrade; nothing is applied on either side",
          arguments: [nil, 1, SyncRules.current - 1, SyncRules.current + 1] as [Int?])
    func refusedBothWays(rules: Int?) async throws {
        try await withReplicas(2) { replicas in
            let (ours, theirs) = (replicas[0], replicas[1])
            _ = try await ours.store.createRecipe(id: UUID(), RecipeDraft(name: "Ours", ingredients: [.init(text: "2 eggs")]))
            _ = try await theirs.store.createRecipe(id: UUID(), RecipeDraft(name: "Theirs", ingredients: [.init(text: "1 leek")]))
            let other = OtherRules(base: theirs, rules: rules)
            let before = (try await ours.store.syncInfo().latestSeq, try await theirs.store.syncInfo().latestSeq)
            for pull in [{ _ = try await SyncEngine.pull(from: other, to: ours) }, { _ = try await SyncEngine.pull(from: ours, to: other) },
                         { _ = try await SyncEngine.sync(ours, other) }] as [@Sendable () async throws -> Void] {
                let error = await #expect(throws: ServiceError.self) { try await pull() }
                #expect(error?.code == .unsupportedVersion)
                let said = rules ?? 1
                let upgrade = said < SyncRules.current ? "upgrade the recipe-storage at \(other.name)" : "upgrade this recipe-worker"
                #expect(error?.message.hasPrefix("the recipe-storage at \(other.name) syncs by sync rules \(said) (") == true
                        && error?.message.contains("this recipe-worker by \(SyncRules.current)") == true
                        && error?.message.hasSuffix(upgrade) == true, "\(error?.message ?? "")")
            }
            let after = (try await ours.store.syncInfo().latestSeq, try await theirs.store.syncInfo().latestSeq)
            #expect(after == before, "nothing was written on either side")
            #expect(try await ours.store.listRecipes(.init(limit: 10)).recipes.map(\.name) == ["Ours"])
            #expect(try await theirs.store.listRecipes(.init(limit: 10)).recipes.map(\.name) == ["Theirs"])
            let theirID = try await theirs.store.syncInfo().replicaID
            #expect(try await ours.store.syncCursor(peer: theirID).seq == 0)

            // Once both say the same rules (the older one upgraded), the same two sync as ever.
            _ = try await SyncEngine.sync(ours, OtherRules(base: theirs, rules: SyncRules.current))
            #expect(try await ours.store.listRecipes(.init(limit: 10)).recipes.map(\.name).sorted() == ["Ours", "Theirs"])
            #expect(try await theirs.store.listRecipes(.init(limit: 10)).recipes.map(\.name).sorted() == ["Ours", "Theirs"])
        }
    }
}
