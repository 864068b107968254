import Foundation
@testable import RecipeMigration
import RecipeProtocol
import TestThreads
import Testing

@Suite("Zip, gzip and entry frames: what a stranger's export can hold", .onOwnThread)
struct ArchiveTests {
    @Test("a zip written here reads back; every entry checked against its CRC")
    func roundTrip() throws {
        let files: [(path: String, data: Data)] = [("a/Crème.paprikarecipe", Data("one".utf8)), ("b.txt", Data(repeating: 7, count: 70_000))]
        let archive = try ZipArchive(ZipArchive.write(files))
        #expect(archive.files.map(\.path) == ["a/Crème.paprikarecipe", "b.txt"])
        #expect(try archive.files.map { try archive.read($0) } == files.map(\.data))
        var damaged = ZipArchive.write(files)
        damaged[30 + "a/Crème.paprikarecipe".utf8.count] ^= 0xFF // the first byte of the first entry's data
        let reread = try ZipArchive(damaged)
        #expect(throws: ZipArchive.Failure.damaged("the entry a/Crème.paprikarecipe does not match its checksum")) { try reread.read(reread.files[0]) }
    }

    @Test("a deflate bomb stops at the cap; gzip past its cap or cut short is refused, not read")
    func bombs() throws {
        let huge = Data(repeating: 0, count: 8 * 1_024 * 1_024)
        let gzip = Compression.deflate(huge, gzip: true)
        #expect(gzip.count < 20_000, "eight megabytes of zeros pack small")
        #expect(throws: Compression.Failure.tooLarge(limit: 1_000_000)) { try Compression.inflate(gzip, wrapping: .gzipOrZlib, limit: 1_000_000) }
        #expect(try Compression.inflate(gzip, wrapping: .gzipOrZlib, limit: huge.count) == huge)
        #expect(throws: Compression.Failure.self) { try Compression.inflate(gzip.prefix(gzip.count / 2), wrapping: .gzipOrZlib, limit: huge.count) }
        #expect(throws: Compression.Failure.self) { try Compression.inflate(Data("plain text".utf8), wrapping: .gzipOrZlib, limit: 100) }

        // A zip entry that claims to be small but inflates to megabytes: refused at the cap, whatever its header says.
        let raw = Compression.deflate(huge, gzip: false)
        var zip = ZipArchive.write([("bomb.bin", raw)])
        // Mark it deflated (method 8) with a small stated size, in the local header and the directory.
        let name = "bomb.bin".utf8.count
        let central = 30 + name + raw.count
        for offset in [8, central + 10] { zip[offset] = 8; zip[offset + 1] = 0 }
        for offset in [22, central + 24] { zip.replaceSubrange(offset..<(offset + 4), with: [0x10, 0, 0, 0]) }
        let archive = try ZipArchive(zip)
        #expect(throws: ZipArchive.Failure.self) { try archive.read(archive.files[0], limit: 1_000_000) }
        do {
            _ = try archive.read(archive.files[0], limit: 1_000_000)
        } catch {
            #expect(error == .tooLarge("bomb.bin", limit: 1_000_000) || error == .damaged("the entry bomb.bin does not match its checksum"))
        }
    }

    @Test("names that climb out of the archive, a directory past the end, and not-a-zip are refused with a sentence")
    func hostileDirectories() throws {
        #expect(throws: ZipArchive.Failure.self) { try ZipArchive(ZipArchive.write([("../../etc/passwd", Data("x".utf8))])) }
        #expect(throws: ZipArchive.Failure.self) { try ZipArchive(ZipArchive.write([("/abs", Data("x".utf8))])) }
        #expect(throws: ZipArchive.Failure.notAZip) { try ZipArchive(Data("PK but not really a zip at all, just text".utf8)) }
        var cut = ZipArchive.write([("a", Data("x".utf8))])
        let end = cut.count - 22
        cut.replaceSubrange((end + 16)..<(end + 20), with: [0xFF, 0xFF, 0xFF, 0x7F]) // directory offset far past the end
        #expect(throws: ZipArchive.Failure.self) { try ZipArchive(cut) }
        // Every prefix of a valid zip: refused or read, never a trap.
        let whole = ZipArchive.write([("a.json", Data("{}".utf8)), ("b.json", Data("[]".utf8))])
        for length in 0..<whole.count {
            if let archive = try? ZipArchive(whole.prefix(length)) {
                for entry in archive.entries { _ = try? archive.read(entry) }
            }
        }
    }

    @Test("an entry frame round-trips; truncated or padded frames are not read")
    func entryFrames() {
        let entry = MigrationEntry(label: "Crème brûlée.paprikarecipe", format: .paprika,
                                   files: [.init(name: "r.paprikarecipe", data: Data([1, 2, 3])), .init(name: "photo.jpg", data: Data())])
        let frame = entry.encoded()
        #expect(MigrationEntry.decode(frame) == entry)
        for length in 0..<frame.count { #expect(MigrationEntry.decode(frame.prefix(length)) == nil) }
        #expect(MigrationEntry.decode(frame + Data([0])) == nil)
        #expect(MigrationEntry.decode(Data("RVME1".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF])) == nil, "a length past the end")
    }

    @Test("Cooklang details: comments, modifiers, several words, the same ingredient twice added up, fractions")
    func cooklang() {
        let parsed = CooklangRecipe.parse("""
            >> servings: 4
            Add @?salt and @ground black pepper{} -- seasoning
            then @flour{1/2%cup} and @flour{1/2%cup}, @egg{1}(beaten) and @egg{two}.
            """)
        #expect(parsed.metadata["servings"] as? String == "4")
        #expect(parsed.ingredients == ["salt", "ground black pepper", "1 cup flour", "1 + two egg (beaten)"])
        #expect(parsed.steps.map(\.text) == ["Add salt and ground black pepper then flour and flour, egg and egg."])
    }

    @Test("a created date read from an export keeps its millisecond across the wire (which rounds milliseconds down)")
    func createdDateOnTheWire() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let milliseconds = Int64(state >> 24) % 2_000_000_000_000 // 1970 to 2033
            let text = CookbookFolder.isoDate(Date(timeIntervalSince1970: Double(milliseconds) / 1_000))
            let read = try #require(RecipeSketch.date(text))
            let recipe = MigratedRecipe(sourceID: "x", draft: RecipeDraft(name: "x"), createdAt: read)
            struct Body: Codable { var date: Date? }
            let wire = String(decoding: try WireCodec.makeEncoder().encode(Body(date: recipe.createdAtForWire)), as: UTF8.self)
            #expect(wire == "{\"date\":\"\(text)\"}", "the wire carries the millisecond the export wrote")
        }
    }

    @Test("front matter: quoted values, lists both ways, blocks, nested maps, a colon in a URL")
    func yaml() throws {
        let (fields, body) = try #require(MiniYAML.frontMatter("""
            ---
            title: "Guacamole: the real one"
            tags: [mexican, "dip, green"]
            ingredients:
              - 3 avocados
              - 1 lime
            source:
              url: https://example.org/x
              name: Example
            story: |
              Line one
              Line two
            ---
            Body.
            """))
        #expect(fields["title"] as? String == "Guacamole: the real one")
        #expect(fields["tags"] as? [String] == ["mexican", "dip, green"])
        #expect(fields["ingredients"] as? [String] == ["3 avocados", "1 lime"])
        #expect(fields["source.url"] as? String == "https://example.org/x" && fields["source.name"] as? String == "Example")
        #expect(fields["story"] as? String == "Line one\nLine two")
        #expect(body == "Body.")
        #expect(MiniYAML.frontMatter("---\ntitle: never closed\n") == nil)
    }
}
