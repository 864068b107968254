import Foundation
@testable import RecipeMigration
import Testing

#if canImport(Glibc)
import Glibc
import TestThreads
#endif

/// Files a person names, or a stranger's export folder holds: only regular files, only up to a size.
@Suite("Reading a local file", .onOwnThread)
struct LocalFileTests {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-localfile-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { scratch.appendingPathComponent(name).path }

    func refusal(_ path: String, limit: Int = 1_048_576) -> LocalFile.Refusal? {
        do {
            _ = try LocalFile.read(path, atMost: limit, what: "a photo")
            return nil
        } catch {
            return error
        }
    }

    @Test("a regular file is read whole, an empty one too")
    func regular() throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Data("soup".utf8).write(to: URL(fileURLWithPath: path("a.txt")))
        #expect(try LocalFile.read(path("a.txt"), atMost: 4, what: "a file") == Data("soup".utf8))
        #expect(FileManager.default.createFile(atPath: path("empty"), contents: Data()))
        #expect(try LocalFile.read(path("empty"), atMost: 4, what: "a file").isEmpty)
    }

    @Test("a device, a link to one, a pipe nobody writes to and a folder are refused at once, saying what they are")
    func notFiles() throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createSymbolicLink(atPath: path("IMG_1.jpg"), withDestinationPath: "/dev/zero")
        #expect(mkfifo(path("pipe.jpg"), 0o600) == 0)
        for name in ["/dev/zero", path("IMG_1.jpg"), path("pipe.jpg")] {
            let refused = try #require(refusal(name), "\(name) was read")
            #expect(refused.message.contains("is not a regular file (a device, pipe or socket); a photo must be a file"), "\(refused)")
            #expect(!refused.missing)
        }
        let folder = try #require(refusal(scratch.path))
        #expect(folder.message.contains("is a folder; a photo must be a file"))
    }

    @Test("a file past the limit is refused with both sizes, whether it was that large when opened or not")
    func tooLarge() throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(FileManager.default.createFile(atPath: path("big.jpg"), contents: nil))
        #expect(truncate(path("big.jpg"), 20 * 1_048_576) == 0) // sparse: 20 MB without writing them
        let refused = try #require(refusal(path("big.jpg")))
        #expect(refused.message.hasSuffix("big.jpg is 20 MB; a photo may be at most 1 MB"), "\(refused)")
        #expect(refusal(path("big.jpg"), limit: 20 * 1_048_576) == nil)
    }

    @Test("a missing file and one that may not be read say so")
    func missing() throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let gone = try #require(refusal(path("nothing.jpg")))
        #expect(gone.missing && gone.message.contains("does not exist"))
        #expect(refusal(path("nothing/inside.jpg"))?.missing == true)
    }

    @Test("an export's photo that is a link to a device, or a pipe beside a single file, is refused, not read for ever")
    func exportFolder() throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let export = scratch.appendingPathComponent("export/Soup")
        try FileManager.default.createDirectory(at: export, withIntermediateDirectories: true)
        try Data(#"{"name": "Soup", "recipeIngredient": ["1 leek"], "recipeInstructions": ["Cook."]}"#.utf8)
            .write(to: export.appendingPathComponent("recipe.json"))
        try FileManager.default.createSymbolicLink(atPath: export.appendingPathComponent("full.jpg").path, withDestinationPath: "/dev/zero")
        let folder = try FolderFiles(scratch.appendingPathComponent("export"))
        #expect(try folder.read("Soup/recipe.json").count > 10)
        do {
            _ = try folder.read("Soup/full.jpg")
            Issue.record("a link to /dev/zero was read")
        } catch {
            #expect(error.message.contains("is not a regular file"), "\(error)")
        }
        // A single Cooklang file with a "photo" beside it that is a pipe.
        try Data(">> servings: 2\nCook @leek{1}.\n".utf8).write(to: scratch.appendingPathComponent("Leek.cook"))
        #expect(mkfifo(path("Leek.jpg"), 0o600) == 0)
        let files = try ArchiveFiles(file: scratch.appendingPathComponent("Leek.cook"))
        #expect(files.paths == ["Leek.cook", "Leek.jpg"])
        do {
            _ = try files.read("Leek.jpg")
            Issue.record("a pipe was read")
        } catch {
            #expect(error.message.contains("is not a regular file"), "\(error)")
        }
        #expect(throws: MigrationError.self) { _ = try ArchiveFiles(file: URL(fileURLWithPath: "/dev/zero")) }
    }
}
