import Foundation
import Logging
import Messaging
import RecipeModel
import RecipeProtocol
import RecipeStore
import StorageService
import TestImages
import TestRandom
import TestScratch
import Testing

/// Every request the fuzz seeds hold, sent in a random order with every id in it drawn from a pool of four: so a
/// request meets the records the others made (an ingredient given the id of another, a book made with a recipe's id,
/// a cook-log entry for a recipe deleted the request before). One request at a time never finds what depends on
/// what is stored already; the fuzzer, fed one request per input, never did.
@Suite("Requests whose ids meet each other's records")
struct SharedIDTests {
    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/storage-request")
    static let pool = ["6B0C2F1E-4A8E-4C55-9A86-1F0F2F9F3C11", "0C6E9F5B-2F43-4A43-9A86-6E2C2B7A1D11",
                       "5A3F0001-0000-4000-8000-000000000000", "5A3B0002-0000-4000-8000-000000000000"]

    @Test("3,000 seed requests with ids from a pool of four: each answered with a code that says what was wrong, never internal_error; the store checks clean and its feed agrees with its tables",
          arguments: [UInt64(1), 2, 3, 4])
    func poolOfIDs(seed: UInt64) async throws {
        let requests = try Self.seedRequests()
        #expect(requests.count >= 60)
        let store = try RecipeStore(folder: Scratch.url("rv-shared-ids"))
        try store.confineBackups(to: Scratch.url("rv-shared-ids-backups"))
        var routes = Routes()
        routes.translateFailures(RecipeStore.reply(for:during:))
        routes.addSystemOperations(service: "recipe-storage")
        routes.addStorageOperations(store: store)
        let logger = Logger(label: "shared-ids")
        let photo = TestImages.picture(width: 64, height: 48, as: .jpeg(quality: 80))
        var random = SplitMix(seed: seed)
        var answered: [String: Int] = [:]
        for _ in 0..<3_000 {
            var request = requests[random.below(requests.count)]
            request["body"] = Self.drawingIDs(request["body"] as Any, &random)
            let payload = try JSONSerialization.data(withJSONObject: request)
            let reply = await routes.reply(to: payload, frames: [photo], logger: logger)
            let header = try WireCodec.decodeReplyHeader(reply[0], using: WireCodec.makeDecoder())
            guard let error = header.error else {
                answered["ok", default: 0] += 1
                continue
            }
            answered[error.code.rawValue, default: 0] += 1
            if error.code == .internalError || error.code == .storageDamaged {
                Issue.record("\(error.code.rawValue): \(error.message) — \(String(decoding: payload.prefix(400), as: UTF8.self))")
            }
        }
        // Most went through: the pool makes requests meet, not fail.
        #expect(answered["ok", default: 0] > 1_200, "\(answered)")
        let check = try await store.check(photos: true, full: true)
        // Missing only what a sync said no replica could send (`sync.apply` `unavailablePhotos`): taken without it.
        let unavailable = Set(requests.flatMap { (($0["body"] as? [String: Any])?["unavailablePhotos"] as? [String]) ?? [] })
        #expect(check.database == ["ok"] && Set(check.missingPhotos).isSubset(of: unavailable) && check.damagedPhotos.isEmpty,
                "\(check)")
        #expect(try await store.feedDisagreements().isEmpty)
        try store.close()
    }

    /// The seed requests, each a JSON object with an `op`.
    static func seedRequests() throws -> [[String: Any]] {
        var requests: [[String: Any]] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: seeds.path).sorted() {
            guard let data = FileManager.default.contents(atPath: seeds.appendingPathComponent(name).path),
                  let parsed = try? JSONSerialization.jsonObject(with: data), let object = parsed as? [String: Any], object["op"] is String else { continue }
            requests.append(object)
        }
        return requests
    }

    /// `value` with every UUID in it replaced, nine times in ten, by one of the pool's.
    static func drawingIDs(_ value: Any, _ random: inout SplitMix) -> Any {
        switch value {
        case let object as [String: Any]: return object.mapValues { drawingIDs($0, &random) }
        case let list as [Any]: return list.map { drawingIDs($0, &random) }
        case let text as String where UUID(uuidString: text) != nil && random.below(10) < 9: return pool[random.below(pool.count)]
        default: return value
        }
    }
}
