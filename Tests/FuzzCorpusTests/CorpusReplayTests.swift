import Foundation
import FuzzChecks
import Testing

/// Every committed fuzz input — the seeds and each input that once found a bug —
/// replayed through the checks the fuzz targets run, on every test run.
@Suite("Fuzz corpus replay: every saved input still handled as promised", .serialized)
struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    static func inputs(_ target: String) throws -> [Data] {
        let folder = corpus.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        return try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
    }

    @Test("storage requests", arguments: ["storage-request"])
    func storageRequests(target: String) throws {
        let inputs = try Self.inputs(target)
        #expect(inputs.count >= 20, "the seed corpus holds a request for every operation")
        for input in inputs { FuzzChecks.storageRequest(input) }
    }

    @Test("web pages")
    func pages() throws {
        let inputs = try Self.inputs("page")
        #expect(!inputs.isEmpty)
        for input in inputs { FuzzChecks.page(input) }
    }

    @Test("durations and ingredient lines")
    func parsers() throws {
        let inputs = try Self.inputs("parsers")
        #expect(!inputs.isEmpty)
        for input in inputs { FuzzChecks.parsers(input) }
    }

    @Test("photos for the photo intake")
    func photoIntake() throws {
        let inputs = try Self.inputs("photo-intake")
        #expect(inputs.count >= 5, "the seed corpus holds a small JPEG, PNG, WebP, HEIC and AVIF")
        for input in inputs { FuzzChecks.photoIntake(input) }
    }

    @Test("entries of other apps' exports")
    func migration() throws {
        let inputs = try Self.inputs("migration")
        #expect(inputs.count >= 6, "the seed corpus holds an entry of each format")
        for input in inputs { FuzzChecks.migration(input) }
    }

    @Test("sync.apply records")
    func syncApply() throws {
        let inputs = try Self.inputs("sync-apply")
        #expect(!inputs.isEmpty)
        for input in inputs { FuzzChecks.syncApply(input) }
    }

    @Test("database snapshots from a peer")
    func snapshotInstall() throws {
        let inputs = try Self.inputs("snapshot-install")
        #expect(!inputs.isEmpty, "the seed corpus holds a real snapshot")
        for input in inputs { FuzzChecks.snapshotInstall(input) }
    }
}
