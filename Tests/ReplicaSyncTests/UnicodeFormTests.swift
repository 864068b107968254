import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// Swift compares text by canonical equivalence ("é" as one character equals "e" with a combining accent); SQLite and
/// exports compare bytes. Replicas must end with the same bytes, not only with text Swift calls equal.
@Suite("Replica sync: text that differs only in Unicode form")
struct UnicodeFormTests {
    static let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"

    @Test("an edit to the other form of the same text leaves both replicas with the same bytes")
    func editToOtherForm() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "\(Self.composed) soup", keywords: [Self.composed]))
            try await syncAll([a, b])
            let there = try await b.store.recipe(recipe.id)
            var edit = RecipeDraft(there)
            edit.name = "\(Self.decomposed) soup"
            edit.keywords = [Self.decomposed]
            _ = try await b.store.updateRecipe(id: recipe.id, expectedVersion: there.version, edit)
            try await syncAll([a, b])
            try await expectSameContent(a, b) // by bytes
        }
    }

    @Test("the same keyword added in each form on two replicas at once ends the same on both")
    func concurrentForms() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            try await syncAll([a, b])
            for (replica, keyword) in [(a, Self.composed), (b, Self.decomposed)] {
                let current = try await replica.store.recipe(recipe.id)
                var edit = RecipeDraft(current)
                edit.keywords = [keyword]
                _ = try await replica.store.updateRecipe(id: recipe.id, expectedVersion: current.version, edit)
            }
            try await syncAll([a, b])
            try await expectSameContent(a, b) // by bytes
        }
    }

    @Test("a record an older or foreign peer sent in decomposed form is stored composed, and the sender's next edit still lands")
    func decomposedRecordArrives() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", keywords: ["plain"]))
            var record = try #require(try await a.store.syncRecord(.recipe, id: recipe.id.uuidString))
            // As a peer that never composed its text would send it: the name's value and a keyword element's name.
            record.fields["name"] = .string("\(Self.decomposed) soup")
            let keyword = try #require(record.fields.keys.first { $0.hasPrefix("keyword:") })
            record.fields["keyword:\(Self.decomposed)"] = record.fields.removeValue(forKey: keyword)
            record.fieldClocks["keyword:\(Self.decomposed)"] = record.fieldClocks.removeValue(forKey: keyword)
            _ = try await b.store.applySync(from: "0ldpeer00001", records: [record], cursor: nil)
            let stored = try await b.store.recipe(recipe.id)
            #expect(Array(stored.name.utf8) == Array("\(Self.composed) soup".utf8))
            #expect(stored.keywords.map { Array($0.utf8) } == [Array(Self.composed.utf8)])
            #expect(try await b.store.heldRecords().isEmpty)
        }
    }
}
