import Foundation
import Messaging
import RecipeProtocol
import TestImages
import TestRandom
import TestThreads
import Testing
import ZeroMQ

/// The fuzzer hands the storage one request at a time, in process. A stranger's clients send many at once, over
/// the socket, to a storage whose reads, writes, photo files and snapshots then run side by side: the deadlock of
/// stop 38 and the backup that silenced the storage were of that kind. So the fuzz seeds are replayed here by four
/// clients at once against a storage process, ids made fresh and some bytes flipped, and the storage must answer
/// every one, never with an internal error, keep answering, and stop cleanly after.
@Suite("A storage under a stranger's requests from several clients at once")
struct CorpusStormTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/storage-request")

    struct Tally: Sendable {
        var answered = 0
        var unanswered: [String] = []
        var internalErrors: [String] = []
    }

    @Test("four clients replaying the fuzz seeds at once: every request answered, none with an internal error; it stops cleanly")
    func seedsFromFourClients() async throws {
        let seeds = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { try Data(contentsOf: $0) }
        #expect(seeds.count >= 50, "the committed seeds are there")
        let photo = TestImages.picture(width: 64, height: 48, as: .jpeg(quality: 80))
        let (storage, endpoint) = try await startStorage(samples: true)
        defer { _ = Task { try? await storage.stop(signal: SIGKILL) } }

        let tallies = try await withThrowingTaskGroup(of: Tally.self) { group in
            for client in 0..<4 {
                group.addTask {
                    try await onOwnThread(named: "storm \(client)") {
                        try Self.replay(seeds, photo: photo, to: endpoint, seed: 2_000 + UInt64(client), requests: 300)
                    }
                }
            }
            var all: [Tally] = []
            for try await tally in group { all.append(tally) }
            return all
        }
        #expect(tallies.map(\.answered).reduce(0, +) == 1_200, "every request was answered")
        #expect(tallies.flatMap(\.unanswered).isEmpty, "no reply within 20 s to: \(tallies.flatMap(\.unanswered).prefix(3))")
        #expect(tallies.flatMap(\.internalErrors).isEmpty, "\(tallies.flatMap(\.internalErrors).prefix(3))")

        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        configuration.timeout = .seconds(10)
        configuration.attempts = 1
        #expect(try await MessageClient(configuration: configuration).call(System.Health.self, Empty()).service == "recipe-storage")
        #expect(try await storage.stop() == 0, "it stops cleanly afterwards")
    }

    /// One client: `requests` seeds in a random order, most with a fresh id, one in eight with a byte changed,
    /// half with a photo as frame 1, each waited for (20 s at most).
    static func replay(_ seeds: [Data], photo: Data, to endpoint: String, seed: UInt64, requests: Int) throws -> Tally {
        var random = SplitMix(seed: seed)
        let context = try Context()
        let socket = try Socket(context, .dealer)
        try socket.setReceiveTimeout(.seconds(20))
        try socket.connect(endpoint)
        var tally = Tally()
        for round in 0..<requests {
            var request = seeds.randomElement(using: &random)!
            if Int.random(in: 0..<4, using: &random) != 0, let text = String(data: request, encoding: .utf8),
               let id = text.firstMatch(of: #/"id"\s*:\s*"[^"]*"/#) {
                request = Data(text.replacingCharacters(in: id.range, with: "\"id\": \"\(UUID().uuidString)\"").utf8)
            }
            if Int.random(in: 0..<8, using: &random) == 0, !request.isEmpty {
                request[Int.random(in: 0..<request.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            try socket.send(Message([Data(), request] + (round % 2 == 0 ? [photo] : [])))
            let what = String(decoding: request.prefix(120), as: UTF8.self)
            guard let reply = try socket.receive(), reply.frames.count >= 2 else {
                tally.unanswered.append(what)
                break // a late reply would answer the next request: this client stops here
            }
            tally.answered += 1
            if let envelope = try? JSONSerialization.jsonObject(with: reply.frames[1]) as? [String: Any],
               let error = envelope["error"] as? [String: Any], error["code"] as? String == ErrorCode.internalError.rawValue {
                tally.internalErrors.append("\(what) → \(error["message"] ?? "")")
            }
        }
        return tally
    }
}
