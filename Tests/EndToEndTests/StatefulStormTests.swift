import Foundation
import RecipeProtocol
import TestImages
import TestRandom
import TestThreads
import Testing
import ZeroMQ

/// The corpus storm replays requests that name records of their own. Here six clients work on the same few recipes
/// at once, as people and a stranger's scripts would: edits with stale versions, photos added, moved and removed
/// under each other, recipes filed into books another client deletes, cook-log entries, duplicates and deletes and
/// re-creations under the same id, checks and snapshots among them; some clients leave without reading their reply
/// or in the middle of a frame. Afterwards the storage's own check finds its database and every photo whole, and
/// every recipe it lists reads, with its photos.
@Suite("A storage under several clients changing the same recipes at once")
struct StatefulStormTests {
    struct Tally: Sendable {
        var answered = 0
        var unanswered: [String] = []
        var failures: [String] = []
        /// Operations answered ok, by name.
        var done: [String: Int] = [:]
    }

    @Test("six clients editing, filing, photographing, deleting and re-creating the same recipes, some leaving mid-request: every request answered without an internal error, and the storage whole afterwards")
    func sixClientsOnTheSameRecipes() async throws {
        let folder = temporaryDataFolder()
        let (storage, endpoint) = try await startStorage(samples: true, folder: folder)
        defer { _ = Task { try? await storage.stop(signal: SIGKILL) } }
        let port = try #require(endpoint.split(separator: ":").last.flatMap { UInt16($0) })
        let recipeIDs = (0..<5).map { _ in UUID().uuidString }
        let setup = try StrangerSocket(endpoint)
        for (index, id) in recipeIDs.enumerated() {
            #expect(try await setup.code("recipe.create", ["id": id, "recipe": ["name": "Shared \(index)", "ingredients": ["1 egg"]]]) == "ok")
        }
        let photos = (0..<4).map { TestImages.picture(width: 40 + $0 * 8, height: 30, as: .jpeg(quality: 80)) }

        let tallies = try await withThrowingTaskGroup(of: Tally.self) { group in
            for client in 0..<6 {
                group.addTask {
                    try await onOwnThread(named: "stateful storm \(client)") {
                        try Self.work(on: recipeIDs, photos: photos, endpoint: endpoint, port: port, seed: 7_000 + UInt64(client), requests: 250)
                    }
                }
            }
            var all: [Tally] = []
            for try await tally in group { all.append(tally) }
            return all
        }
        #expect(tallies.flatMap(\.unanswered).isEmpty, "no reply within a minute to: \(tallies.flatMap(\.unanswered).prefix(3))")
        #expect(tallies.flatMap(\.failures).isEmpty, "\(tallies.flatMap(\.failures).prefix(3))")
        #expect(tallies.map(\.answered).reduce(0, +) > 1_000, "most requests were sent and answered")
        // The storm did what it is for: every kind of change went through, many times.
        let done = tallies.reduce(into: [String: Int]()) { all, tally in all.merge(tally.done, uniquingKeysWith: +) }
        for op in ["recipe.update", "photo.add", "photo.move", "photo.remove", "book.create", "book.delete", "cooklog.add",
                   "recipe.delete", "recipe.create", "recipe.duplicate", "recipe.favorite", "recipe.rate", "storage.check", "sync.snapshot"] {
            #expect(done[op, default: 0] >= 1, "\(op) went through \(done[op, default: 0]) times: \(done)")
        }

        // The storage's own check: the database and every photo it names are whole.
        let checker = try StrangerSocket(endpoint)
        let check = try #require(try await checker.request("storage.check", ["full": true])?["body"] as? [String: Any])
        #expect(check["database"] as? [String] == ["ok"], "\(check)")
        #expect((check["missingPhotos"] as? [Any])?.isEmpty == true && (check["damagedPhotos"] as? [Any])?.isEmpty == true, "\(check)")
        // Every recipe listed reads, with at most ten photos, each of which reads too.
        var after: String?
        var listed = 0
        repeat {
            var query: [String: Any] = ["limit": 200]
            if let after { query["cursor"] = after }
            let page = try #require(try await checker.request("recipe.list", query)?["body"] as? [String: Any])
            for summary in page["recipes"] as? [[String: Any]] ?? [] {
                listed += 1
                let id = summary["id"] as? String ?? ""
                let recipe = try #require((try await checker.request("recipe.get", ["id": id])?["body"] as? [String: Any])?["recipe"] as? [String: Any],
                                          "recipe \(id) is listed and reads")
                let photoCount = (recipe["photos"] as? [Any])?.count ?? 0
                #expect(photoCount <= 10)
                for position in 0..<photoCount {
                    #expect(try await checker.code("photo.get", ["recipeID": id, "position": position]) == "ok", "photo \(position) of \(id) reads")
                }
            }
            after = page["nextCursor"] as? String
        } while after != nil && listed < 5_000
        #expect(listed >= 8, "the starters at least are listed")
        #expect(try await storage.stop() == 0, "it stops cleanly afterwards")
    }

    /// One client's `requests` operations on `recipeIDs`, learning photo, book and cook-log ids from the replies.
    static func work(on recipeIDs: [String], photos: [Data], endpoint: String, port: UInt16, seed: UInt64, requests: Int) throws -> Tally {
        var random = SplitMix(seed: seed)
        let context = try Context()
        defer { context.shutdown() }
        var socket: Socket?
        var tally = Tally()
        var books: [String] = [], entries: [String] = [], photoIDs: [String: [String]] = [:], versions: [String: Int] = [:]
        for _ in 0..<requests {
            if socket == nil {
                let fresh = try Socket(context, .dealer)
                try fresh.setReceiveTimeout(.seconds(60))
                try fresh.connect(endpoint)
                socket = fresh
            }
            let recipe = recipeIDs.randomElement(using: &random)!
            let roll = Int.random(in: 0..<100, using: &random)
            var frames: [Data] = []
            let (op, body): (String, [String: Any])
            switch roll {
            case 0..<16:
                let name = ["Soup", "Stew", "Pie", "", String(repeating: "x", count: 201)].randomElement(using: &random)!
                var draft: [String: Any] = ["name": name, "ingredients": ["200 g flour", "1 egg"].shuffled(using: &random)]
                if let book = books.randomElement(using: &random), Bool.random(using: &random) {
                    draft["bookID"] = book
                    draft["sourceType"] = "book"
                    draft["sourcePageNumber"] = Int.random(in: 1...300, using: &random)
                }
                (op, body) = ("recipe.update", ["id": recipe, "expectedVersion": versions[recipe] ?? 1, "recipe": draft])
            case 16..<30:
                frames = [photos.randomElement(using: &random)!]
                var request: [String: Any] = ["recipeID": recipe, "photo": ["frame": 1]]
                if Bool.random(using: &random) { request["position"] = Int.random(in: 0...11, using: &random) }
                (op, body) = ("photo.add", request)
            case 30..<38:
                (op, body) = ("photo.move", ["recipeID": recipe, "photoID": photoIDs[recipe]?.randomElement(using: &random) ?? UUID().uuidString,
                                             "position": Int.random(in: 0...10, using: &random)])
            case 38..<46:
                (op, body) = ("photo.remove", ["recipeID": recipe, "photoID": photoIDs[recipe]?.randomElement(using: &random) ?? UUID().uuidString])
            case 46..<52:
                (op, body) = ("book.create", ["title": "Book \(Int.random(in: 0..<5, using: &random))"])
            case 52..<56:
                (op, body) = ("book.delete", ["id": books.randomElement(using: &random) ?? UUID().uuidString])
            case 56..<62:
                (op, body) = ("cooklog.add", ["recipeID": recipe, "rating": Int.random(in: 1...5, using: &random), "note": "fine"])
            case 62..<65:
                (op, body) = ("cooklog.delete", ["id": entries.randomElement(using: &random) ?? UUID().uuidString])
            case 65..<68:
                (op, body) = ("recipe.delete", ["id": recipe])
            case 68..<74:
                (op, body) = ("recipe.create", ["id": recipe, "recipe": ["name": "Shared again", "ingredients": ["1 egg"]]])
            case 74..<78:
                (op, body) = ("recipe.duplicate", ["id": recipe])
            case 78..<80:
                (op, body) = ("recipe.favorite", ["id": recipe, "isFavorite": Bool.random(using: &random)])
            case 80..<82:
                (op, body) = ("recipe.rate", ["id": recipe, "rating": Int.random(in: 0...5, using: &random)])
            case 82..<86:
                (op, body) = ("recipe.get", ["id": recipe])
            case 86..<89:
                (op, body) = ("book.get", ["id": books.randomElement(using: &random) ?? UUID().uuidString])
            case 89..<91:
                (op, body) = ("storage.check", [:])
            case 91..<93:
                (op, body) = ("sync.snapshot", [:])
            case 93..<96:
                (op, body) = ("recipe.search", ["text": ["shared", "soup OR stew", "pie -soup", "sha"].randomElement(using: &random)!, "limit": 20])
            default:
                // A client that leaves: with its request unanswered, or in the middle of a frame.
                if Bool.random(using: &random) {
                    _ = try socket!.send(Message([Data(), try StrangerSocket.envelope("photo.add", ["recipeID": recipe, "photo": ["frame": 1]]),
                                                  photos[0]]))
                } else {
                    let raw = try RawZeroMQConnection(port: port)
                    try raw.sendPartOfFrame(declared: 4_096, sent: 1_000)
                }
                socket?.close()
                socket = nil
                continue
            }
            let request = try StrangerSocket.envelope(op, body)
            _ = try socket!.send(Message([Data(), request] + frames))
            guard let reply = try socket!.receive(), reply.frames.count >= 2,
                  let envelope = try JSONSerialization.jsonObject(with: reply.frames[1]) as? [String: Any] else {
                tally.unanswered.append(op)
                socket?.close()
                socket = nil
                continue
            }
            tally.answered += 1
            if let error = envelope["error"] as? [String: Any] {
                let code = error["code"] as? String ?? "?"
                if [ErrorCode.internalError.rawValue, ErrorCode.storageDamaged.rawValue, "unreadable"].contains(code) {
                    tally.failures.append("\(op) \(body) → \(code): \(error["message"] ?? "")")
                }
                continue
            }
            tally.done[op, default: 0] += 1
            let answer = envelope["body"] as? [String: Any] ?? [:]
            switch op {
            case "recipe.update", "recipe.favorite", "recipe.rate":
                if let version = answer["version"] as? Int { versions[recipe] = version }
            case "recipe.get", "recipe.create":
                if let stored = answer["recipe"] as? [String: Any], let version = stored["version"] as? Int { versions[recipe] = version }
            case "photo.add", "photo.move", "photo.remove":
                photoIDs[recipe] = (answer["photos"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            case "book.create":
                if let id = answer["id"] as? String { books.append(id) }
            case "cooklog.add":
                if let id = answer["id"] as? String { entries.append(id) }
            case "sync.snapshot":
                if let id = answer["snapshot"] as? String {
                    _ = try socket!.send(Message([Data(), try StrangerSocket.envelope("sync.snapshotDone", ["snapshot": id])]))
                    _ = try socket!.receive()
                }
            default:
                break
            }
        }
        socket?.close()
        return tally
    }
}
