import Foundation
import Testing

/// The changes a person makes through the CLI in the chaos runs, drawn at random: recipes added (the name in either
/// Unicode form of "crème" at times), edited, duplicated and deleted, photos added, moved and removed, cook-log
/// entries, books, the samples, conflicts settled.
struct RandomCLIChanges {
    /// Every recipe made (by name), and those deleted since.
    private(set) var names: [String] = []
    private(set) var deleted = Set<String>()
    /// Where photo files are written before they are added.
    let scratch: URL

    /// Makes change `kind` (of a draw of 0 to 24: 0–14 and 20–23 are changes) on `storage` through `recipes` (the CLI's arguments and the storage's endpoint); false when
    /// `kind` is not a change, or is not possible yet (no recipe made).
    mutating func make(_ kind: Int, step: Int, storage: String, random: inout ChaosRandom,
                       recipes: ([String], String) async throws -> (status: Int32, output: String)) async throws -> Bool {
        switch kind {
        case 0..<5:
            let name = "Recipe \(step)"
            var arguments = ["add", "--name", name, "--ingredient", "\(1 + random.below(4)) eggs", "--notes", "n\(random.below(3))"]
            // "crème" in both Unicode forms: the replicas must export the same bytes all the same.
            if random.below(2) == 0 { arguments += ["--keyword", ["easy", "party", "vegan", "cr\u{E8}me", "cre\u{300}me"][random.below(5)]] }
            if try await recipes(arguments, storage).status == 0 { names.append(name) }
        case 5..<9 where !names.isEmpty:
            let name = names[random.below(names.count)]
            let change = [["--notes", "edited \(step)"], ["--keyword", "k\(random.below(3))"], ["--servings", "\(1 + random.below(6))"],
                          ["--ingredient", "\(step) g flour"]][random.below(4)]
            _ = try await recipes(["edit", name] + change, storage)
        case 9..<11 where !names.isEmpty:
            // Photos from a large pool: almost every one distinct, so removed ones are really collected.
            let file = scratch.appendingPathComponent("photo-\(step).jpg")
            try chaosJPEG(seed: random.next()).write(to: file)
            _ = try await recipes(["photo", "add", names[random.below(names.count)], file.path], storage)
        case 11 where !names.isEmpty:
            _ = try await recipes(["photo", "remove", names[random.below(names.count)], "1"], storage)
        case 12 where !names.isEmpty:
            let name = names[random.below(names.count)]
            if try await recipes(["delete", name, "--yes"], storage).status == 0 { deleted.insert(name) }
        case 13 where !names.isEmpty:
            _ = try await recipes(["cooked", names[random.below(names.count)], "--rating", "\(1 + random.below(5))"], storage)
        case 14:
            _ = try await recipes(["books", "add", "Book \(random.below(3))"], storage)
        case 20 where !names.isEmpty:
            let copy = "Copy \(step)"
            if try await recipes(["duplicate", names[random.below(names.count)], "--name", copy], storage).status == 0 { names.append(copy) }
        case 21 where random.below(3) == 0:
            _ = try await recipes(["samples"], storage)
        case 22 where !names.isEmpty:
            _ = try await recipes(["photo", "move", names[random.below(names.count)], "2", "1"], storage)
        case 23:
            // Someone settles the first conflict listed there, either way.
            let listed = try await recipes(["conflicts", "--json"], storage).output
            if let conflicts = try? JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]],
               let id = conflicts.first?["id"] as? String {
                _ = try await recipes(["conflicts", random.below(2) == 0 ? "resolve" : "dismiss", id], storage)
            }
        default:
            return false
        }
        return true
    }
}

/// What the chaos runs compare at the end: each storage's `recipes export` (files by path, with their bytes) and its
/// `recipes conflicts --json`, read through `recipes` (the CLI's arguments, and which storage).
struct ReplicaExports {
    var files: [[String: Data]] = []
    var conflicts: [String] = []

    init(of count: Int, into scratch: URL, recipes: ([String], Int) async throws -> (status: Int32, output: String)) async throws {
        for index in 0..<count {
            let folder = scratch.appendingPathComponent("export-\(index)")
            let exported = try await recipes(["export", folder.path], index)
            #expect(exported.status == 0, "\(exported.output)")
            files.append(try treeContents(folder))
            conflicts.append(try await recipes(["conflicts", "--json"], index).output)
        }
    }

    /// The paths where export `index` differs from export 0, and the first of them (a recipe's JSON when one differs)
    /// as both show it.
    func difference(at index: Int) -> (paths: [String], shown: String) {
        let (first, other) = (files[0], files[index])
        let paths = Set(first.keys).symmetricDifference(other.keys).union(first.keys.filter { other[$0] != nil && other[$0] != first[$0] }).sorted()
        let shown = (paths.first(where: { $0.hasSuffix(".json") }) ?? paths.first).map {
            "\n\($0) on replica 0:\n\(String(decoding: first[$0] ?? Data(), as: UTF8.self))\non replica \(index):\n\(String(decoding: other[$0] ?? Data(), as: UTF8.self))"
        } ?? ""
        return (paths, shown)
    }
}
