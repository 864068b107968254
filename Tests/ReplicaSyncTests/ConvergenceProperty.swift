import Foundation
import PropertyBased
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// Random histories on 2–3 replicas with random partial syncs in between, then full syncs.
/// A failure prints the seed; `@Test(.fixedSeed("…"))` on this test replays exactly that case.
/// `RECIPES_SYNC_CASES` sets how many cases run (default 200).
@Suite("Replica sync: convergence property")
struct ConvergenceProperty {
    static let cases = ProcessInfo.processInfo.environment["RECIPES_SYNC_CASES"].flatMap(Int.init) ?? 200

    // A seed does not shrink into a smaller history, so shrinking is off: the failing seed is the case.
    @Test("any edits and partial syncs end, after full syncs, in identical replicas that lost no edit", .shrinking(false))
    func converges() async {
        await propertyCheck(count: Self.cases, input: Gen.uint64(in: 0 ... .max)) { seed in
            var history = History(seed: seed)
            try await history.run()
        }
    }
}

/// An edit a replica made: the field's value and version right after, and the version it replaced.
struct MadeEdit {
    var recipe: UUID
    var field: String
    var value: JSONValue
    var clock: SyncClock
    var replaced: SyncField?
}

struct History {
    var random: SplitMix
    let seed: UInt64
    /// `RECIPES_SYNC_TRACE=1` prints every step (to follow a failing seed).
    let tracing = ProcessInfo.processInfo.environment["RECIPES_SYNC_TRACE"] != nil
    func trace(_ line: @autoclosure () -> String) { if tracing { print("[sync \(seed)] \(line())") } }

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix(seed: seed)
    }

    /// An id from the seed, so a replayed case names the same recipes.
    mutating func newID() -> UUID {
        let a = random.next(), b = random.next()
        return UUID(uuidString: String(format: "%08X-%04X-4%03X-8%03X-%012llX", UInt32(truncatingIfNeeded: a), UInt16(truncatingIfNeeded: a >> 32),
                                       UInt16(truncatingIfNeeded: a >> 48) & 0xFFF, UInt16(truncatingIfNeeded: b) & 0xFFF, b >> 16))!
    }

    mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

    mutating func run() async throws {
        let count = chance(50) ? 2 : 3
        try await withReplicas(count) { replicas in
            var edits: [MadeEdit] = []
            var deletions: [SyncRecord] = []
            // A few shared recipes, so replicas edit the same ones.
            for index in 0..<3 {
                _ = try await replicas[0].store.createRecipe(id: newID(), RecipeDraft(name: "Recipe \(index)", notes: "start"))
            }
            try await syncAll(replicas)
            let steps = 20 + Int(random.next() % 20)
            for _ in 0..<steps {
                let replica = pick(replicas)
                if chance(25) {
                    let other = pick(replicas.filter { $0.name != replica.name })
                    let report = try await SyncEngine.pull(from: replica, to: other, pageSize: 1 + Int(random.next() % 3),
                                                           maxPages: 1 + Int(random.next() % 3))
                    trace("pull \(replica.name) → \(other.name): \(report.received) received, \(report.changed) changed, \(report.conflicts) copies")
                    continue
                }
                try await act(on: replica, edits: &edits, deletions: &deletions)
            }
            try await syncAll(replicas)
            for other in replicas.dropFirst() { try await expectSameContent(replicas[0], other) }
            #expect(try await syncAll(replicas) == 0, "a further sync changed something (seed \(seed))")
            try await expectNoEditLost(edits, deletions: deletions, in: replicas[0])
        }
    }

    /// One random user action on `replica`; edits are remembered with their versions.
    mutating func act(on replica: LocalReplica, edits: inout [MadeEdit], deletions: inout [SyncRecord]) async throws {
        let store = replica.store
        // Conflicted copies are left alone: an edit to one would replace the very value it keeps.
        let recipes = try await store.listRecipes(.init(limit: 200)).recipes.filter { $0.origin != .conflictedCopy }.map(\.id)
        var before: SyncRecord?
        func remember(_ id: UUID, _ fields: [String]) async throws {
            guard let record = try await store.syncRecord(.recipe, id: id.uuidString) else { return }
            for field in fields {
                trace("\(replica.name) \(id.uuidString.prefix(8)) \(field) = \(record.states[field]?.value.canonicalText.prefix(60) ?? "-") \(record.states[field]?.clock.vv ?? [:])")
                guard let state = record.states[field], state != before?.states[field] else { continue }
                edits.append(MadeEdit(recipe: id, field: field, value: state.value, clock: state.clock, replaced: before?.states[field]))
            }
        }
        switch random.next() % 10 {
        case 0:
            let id = newID()
            _ = try await store.createRecipe(id: id, RecipeDraft(name: pick(["Soup", "Stew", "Salad"]), notes: pick(["x", "y", nil])))
            try await remember(id, ["name", "notes"])
        case 1 where !recipes.isEmpty:
            let id = pick(recipes)
            if let record = try await store.syncRecord(.recipe, id: id.uuidString) { deletions.append(record) }
            trace("\(replica.name) deletes \(id.uuidString.prefix(8))")
            try await store.deleteRecipe(id: id)
        case 2 where !recipes.isEmpty, 3 where !recipes.isEmpty:
            let id = pick(recipes)
            before = try await store.syncRecord(.recipe, id: id.uuidString)
            let bytes = jpegBytes(seed: random.next() % 4) // a small pool: the same photo turns up on several replicas
            if try await store.recipe(id).photos.count < RecipeVault.maxPhotosPerRecipe {
                _ = try await store.addPhoto(recipeID: id, bytes: bytes, position: nil)
                try await remember(id, ["photos"])
            }
        case 4 where !recipes.isEmpty:
            let id = pick(recipes)
            before = try await store.syncRecord(.recipe, id: id.uuidString)
            let photos = try await store.recipe(id).photos
            if !photos.isEmpty {
                _ = try await store.removePhoto(recipeID: id, photoID: pick(photos).id)
                try await remember(id, ["photos"])
            }
        default:
            guard !recipes.isEmpty else { return }
            let id = pick(recipes)
            before = try await store.syncRecord(.recipe, id: id.uuidString)
            let current = try await store.recipe(id)
            var draft = RecipeDraft(current)
            draft.origin = current.origin
            let field = pick(["name", "notes", "description", "rating", "keywords", "ingredients"])
            switch field {
            case "name": draft.name = pick(["Soup", "Stew", "Salad", "Bread"]) + " \(random.next() % 5)"
            case "notes": draft.notes = pick(["less salt", "more salt", "double it", nil])
            case "description": draft.description = pick(["quick", "slow", "spicy"])
            case "rating": draft.rating = Int(random.next() % 6)
            case "keywords": draft.keywords = [pick(["easy", "weeknight", "party"])]
            default: draft.ingredients = [.init(text: "\(1 + random.next() % 4) eggs"), .init(text: pick(["salt", "pepper"]))]
            }
            _ = try await store.updateRecipe(id: id, expectedVersion: current.version, draft)
            try await remember(id, [field])
        }
    }

    /// Every edit is in the final state: as the winner, in a conflicted copy, replaced
    /// by a later edit made on top of it, or deleted by a delete made while it showed.
    /// A write is known by its stamp (a merge may widen the version vector of the value it keeps),
    /// or by its value (two replicas writing the same value concurrently merge into one).
    func expectNoEditLost(_ edits: [MadeEdit], deletions: [SyncRecord], in replica: LocalReplica) async throws {
        let store = replica.store
        var copies: [Recipe] = []
        for summary in try await store.listRecipes(.init(origin: .conflictedCopy, limit: 200)).recipes {
            copies.append(try await store.recipe(summary.id))
        }
        let copyValues = copies.map { SyncLogView.values(of: $0) }
        for edit in edits {
            let record = try await store.syncRecord(.recipe, id: edit.recipe.uuidString)
            if let record, record.isLive, record.states[edit.field]?.value == edit.value { continue }
            if copyValues.contains(where: { SyncLogView.matches($0[edit.field], edit.value, field: edit.field) }) { continue }
            if edits.contains(where: { $0.recipe == edit.recipe && $0.field == edit.field && $0.replaced.map { shows(edit, $0) } == true }) { continue }
            if deletions.contains(where: { $0.id == edit.recipe.uuidString && $0.states[edit.field].map { shows(edit, $0) } == true }) { continue }
            Issue.record("edit lost (seed \(seed)): \(edit.field) = \(edit.value.canonicalText) on recipe \(edit.recipe)")
        }
    }
}

/// Whether `state` is the value `edit` wrote.
func shows(_ edit: MadeEdit, _ state: SyncField) -> Bool {
    state.clock.stamp == edit.clock.stamp || state.value == edit.value
}

/// A recipe's values as sync compares them (lines and photos without ids: copies get ids of their own).
enum SyncLogView {
    static func values(of recipe: Recipe) -> [String: JSONValue] {
        [
            "name": .string(recipe.name), "notes": JSONValue(recipe.notes), "description": JSONValue(recipe.description),
            "rating": JSONValue(recipe.rating), "keywords": .array(recipe.keywords.map(JSONValue.string)),
            "ingredients": .array(recipe.ingredients.map { .string($0.text) }),
            "photos": .array(recipe.photos.map { .string($0.sha256) }),
        ]
    }

    static func matches(_ copy: JSONValue?, _ edited: JSONValue, field: String) -> Bool {
        guard let copy else { return false }
        switch field {
        case "name": return copy == .string((edited.string ?? "") + " (conflicted copy)")
        case "ingredients": return copy == .array((edited.array ?? []).map { $0.object?["text"] ?? .null })
        case "photos": return copy == .array((edited.array ?? []).map { $0.object?["sha256"] ?? .null })
        default: return copy == edited
        }
    }
}
