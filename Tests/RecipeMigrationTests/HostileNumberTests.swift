import Foundation
@testable import RecipeMigration
import RecipeProtocol
import TestThreads
import Testing

/// Numbers no recipe holds, as an export could still write them: past every whole-number type, infinite, not a
/// number, and as text (the readers take "4" and 4 alike). Each once made `Int(_:)` stop the worker.
private nonisolated(unsafe) let hostileNumbers: [Any] = [
    1e300, -1e300, 9.3e18, -9.3e18, 1.8e19, 1e-300, -0.0,
    "1e300", "-1e300", "inf", "-inf", "nan", "Infinity", "9223372036854775808", "1e18/0.1", "99999999999999999999 1/2",
]

@Suite("Numbers no recipe holds, in other apps' exports")
struct HostileNumberTests {
    @Test("every number, numeric text and empty value of the Paprika, Mealie and Tandoor fixtures, made huge, infinite or not a number, gives a recipe storage accepts or a sentence")
    func everyNumber() throws {
        let exports: [(String, MigrationFormat)] = [
            ("paprika/Recipes.paprikarecipes", .paprika), ("mealie/mealie-export.zip", .mealie),
            ("mealie/mealie-backup.zip", .mealie), ("tandoor/tandoor-export.zip", .tandoor),
        ]
        var tried = 0
        var read = 0
        for (path, format) in exports {
            let source = try MigrationSource.open(path: fixtures.appendingPathComponent(path).path, format: format)
            for item in source.items {
                guard let entry = try? item.entry(), let json = PlainJSON(entry) else { continue }
                for place in json.numberPlaces {
                    for value in hostileNumbers {
                        let changed = json.entry(with: value, at: place)
                        tried += 1
                        do {
                            let recipe = try MigrationReader.read(changed)
                            read += 1
                            do { try recipe.draft.validate() } catch {
                                Issue.record("\(entry.label) with \(value) at \(place): storage would refuse it: \(error.message)")
                            }
                        } catch {
                            #expect(!error.message.isEmpty, "\(entry.label) with \(value) at \(place) refused without a reason")
                        }
                    }
                }
            }
        }
        // Every format reached, and most changes still give a recipe (a number is read, not the whole entry refused).
        #expect(tried > 500 && read > tried / 2, "tried \(tried), read \(read)")
    }

    @Test("Cooklang quantities that add up past any whole number, and fractions over a tiny divisor, are kept as written")
    func cooklangQuantities() throws {
        let lines = (0..<4).map { _ in "Add @flour{99999999%g} and @sugar{1e18/0.1%g}." }.joined(separator: "\n")
        for text in [lines, "Add @salt{1e300/1e-300}.", "Add @salt{9e18 9e18}.", "Add @salt{inf}."] {
            let entry = MigrationEntry(label: "a.cook", format: .cooklang, files: [.init(name: "a.cook", data: Data(text.utf8))])
            let recipe = try MigrationReader.read(entry)
            try recipe.draft.validate()
            #expect(!recipe.draft.ingredients.isEmpty)
        }
    }
}

/// An entry's recipe JSON as plain (not gzip, not in an inner zip) data, with the places in it that hold a
/// number, numeric text or null, and the entry again with one of them changed.
private struct PlainJSON {
    enum Step: CustomStringConvertible {
        case key(String), index(Int)
        var description: String { switch self { case .key(let key): key; case .index(let index): "[\(index)]" } }
    }

    let original: MigrationEntry
    let files: [MigrationEntry.File]
    let jsonIndex: Int
    let root: Any

    init?(_ entry: MigrationEntry) {
        var files = entry.files
        if entry.format == .tandoor, files.count == 1, ZipArchive.looksLikeZip(files[0].data),
           let archive = try? ZipArchive(files[0].data),
           let inner = try? archive.files.map({ try MigrationEntry.File(name: $0.name, data: archive.read($0)) }) {
            files = inner
        }
        guard let index = files.firstIndex(where: { $0.name.hasSuffix(".json") || entry.format == .paprika }) else { return nil }
        var data = files[index].data
        if Compression.isGzip(data) { guard let plain = try? Compression.inflate(data, wrapping: .gzipOrZlib, limit: 1 << 24) else { return nil }; data = plain }
        guard let root = try? JSONSerialization.jsonObject(with: data) else { return nil }
        files[index] = .init(name: entry.format == .paprika ? files[index].name : "recipe.json", data: data)
        (original, self.files, jsonIndex, self.root) = (entry, files, index, root)
    }

    var numberPlaces: [[Step]] {
        var places: [[Step]] = []
        func walk(_ value: Any, _ path: [Step]) {
            switch value {
            case let object as [String: Any]: for (key, child) in object.sorted(by: { $0.key < $1.key }) { walk(child, path + [.key(key)]) }
            case let list as [Any]: for (index, child) in list.enumerated() { walk(child, path + [.index(index)]) }
            case is NSNumber, is NSNull: places.append(path)
            case let text as String where Double(text.trimmingCharacters(in: .whitespaces)) != nil || text.isEmpty: places.append(path)
            default: break
            }
        }
        walk(root, [])
        return places
    }

    func entry(with value: Any, at place: [Step]) -> MigrationEntry {
        func put(_ tree: Any, _ path: ArraySlice<Step>) -> Any {
            guard let step = path.first else { return value }
            switch (step, tree) {
            case (.key(let key), var object as [String: Any]): object[key] = put(object[key] as Any, path.dropFirst()); return object
            case (.index(let index), var list as [Any]): list[index] = put(list[index], path.dropFirst()); return list
            default: return tree
            }
        }
        var changed = files
        let tree = put(root, place[...])
        // JSONSerialization writes no infinite or NaN number: those go in as the text a writer would print.
        let data = (try? JSONSerialization.data(withJSONObject: tree)) ?? Data()
        changed[jsonIndex] = .init(name: files[jsonIndex].name, data: data)
        return MigrationEntry(label: original.label, format: original.format, files: changed)
    }
}
