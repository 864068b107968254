import Foundation
import Messaging
import RecipeProtocol
import TestImages
import TestRandom
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fuzzer hands the photo intake one file at a time, in process, with the pixel limit at its default. A
/// stranger sends a real worker photo after photo, damaged every way at once, with the limits as an operator set
/// them: here the photo-intake seeds (among them files that crashed or exhausted the decoders), real phone-like
/// photos and a memory-heavy WebP, most of them cut, flipped, spliced or swollen, to a worker whose photos may take
/// 256 MiB and up to 1,000 megapixels. Every photo must be answered with a fitted photo or a refusal that is the
/// photo's (never an internal error), the worker must keep running and answering, and stop cleanly.
@Suite("A worker under a stranger's photos")
struct PhotoStormTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/photo-intake")

    struct Tally: Sendable {
        var fitted = 0
        var refused: [String: Int] = [:]
        var unanswered: [String] = []
        var wrong: [String] = []
    }

    @Test("hundreds of damaged, hostile and heavy photos to photo.fit: each fitted or refused as the photo's fault, the worker unharmed; it stops cleanly")
    func photoStorm() async throws {
        var seeds = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { try Data(contentsOf: $0) }
        #expect(seeds.count >= 10, "the committed seeds are there")
        seeds += [TestImages.picture(width: 640, height: 480, grain: 12, as: .jpeg(quality: 85)),
                  TestImages.picture(width: 320, height: 240, grain: 4, alpha: true, as: .png),
                  TestImages.picture(width: 320, height: 240, as: .heic(quality: 50)),
                  TestImages.picture(width: 320, height: 240, as: .avif(quality: 50)),
                  TestImages.picture(width: 320, height: 240, as: .webp(quality: 70)),
                  TestImages.blankWebP(width: 8_000, height: 8_000)]
        let services = try await Services()
        let (worker, endpoint) = try await services.startWorker(extra: ["--max-photo-megapixels", "1000", "--photo-memory", "256",
                                                                        "--photo-timeout", "20"])
        // RECIPES_PHOTO_STORM=N SEED for a longer run (a fresh seed each time finds what the fixed one does not).
        let asked = ProcessInfo.processInfo.environment["RECIPES_PHOTO_STORM"]?.split(separator: " ").compactMap { UInt64($0) } ?? []
        let requests = Int(asked.first ?? 240), seed = asked.count > 1 ? asked[1] : 7_001
        let tally = try await Self.storm(seeds, to: endpoint, seed: seed, requests: requests)
        let refusals = tally.refused.values.reduce(0, +)
        let crashes = worker.printed.components(separatedBy: "a photo stopped the image decoder").count - 1
        let endings = Set(worker.printed.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /ended=(.*?) memory-limit=/).map { String($0.1) }
        })
        print("photo storm (seed \(seed)): \(tally.fitted) fitted, refused \(tally.refused), \(crashes) helpers replaced (\(endings.sorted()))")
        #expect(tally.fitted + refusals == requests, "every photo was answered: \(tally.fitted) fitted, \(tally.refused)")
        #expect(tally.unanswered.isEmpty, "no reply within 60 s to: \(tally.unanswered.prefix(3))")
        #expect(tally.wrong.isEmpty, "\(tally.wrong.prefix(3))")
        #expect(tally.fitted >= requests / 12 && refusals >= requests / 12, "both kinds of photo came: \(tally.fitted) fitted, \(tally.refused)")
        #expect(kill(worker.pid, 0) == 0, "the worker is still running")
        let client = try services.client(endpoint)
        #expect(try await client.call(System.Health.self, Empty()).service == "recipe-worker")
        #expect(try await worker.stop() == 0, "it stops cleanly afterwards")
        await services.stop()
    }

    /// Photos in a random order, three in four changed: bytes flipped, cut short, spliced with another seed, a
    /// run of bytes set to 0xFF (sizes and counts swollen) or repeated; each waited for (60 s at most).
    static func storm(_ seeds: [Data], to endpoint: String, seed: UInt64, requests: Int) async throws -> Tally {
        var random = SplitMix(seed: seed)
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "recipe-worker")
        configuration.timeout = .seconds(60)
        configuration.attempts = 1
        let client = try MessageClient(configuration: configuration)
        var tally = Tally()
        let photoFaults: Set<ErrorCode> = [.unsupportedImage, .unreadableImage, .photoTooLarge]
        for round in 0..<requests {
            var photo = seeds.randomElement(using: &random)!
            var change = "as it is"
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                break
            case 2, 3:
                let flips = Int.random(in: 1...16, using: &random)
                for _ in 0..<flips where !photo.isEmpty {
                    photo[photo.startIndex + Int.random(in: 0..<photo.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                change = "\(flips) bytes flipped"
            case 4:
                let keep = Int.random(in: 0...photo.count, using: &random)
                photo = photo.prefix(keep)
                change = "cut to \(keep) bytes"
            case 5:
                let other = seeds.randomElement(using: &random)!
                let cut = Int.random(in: 0...photo.count, using: &random), from = Int.random(in: 0...other.count, using: &random)
                photo = photo.prefix(cut) + other.suffix(from: other.startIndex + from)
                change = "spliced at \(cut)"
            case 6:
                guard photo.count > 8 else { break }
                let at = Int.random(in: 0..<(photo.count - 4), using: &random)
                photo.replaceSubrange((photo.startIndex + at)..<(photo.startIndex + at + 4), with: [0xFF, 0xFF, 0xFF, 0xFF])
                change = "0xFFFFFFFF at \(at)"
            default:
                guard !photo.isEmpty else { break }
                let start = Int.random(in: 0..<photo.count, using: &random)
                let piece = photo[(photo.startIndex + start)..<(photo.startIndex + min(photo.count, start + 256))]
                photo.insert(contentsOf: Data(Array(piece) + Array(piece)), at: photo.startIndex + start)
                change = "a piece repeated at \(start)"
            }
            let what = "photo \(round) (\(photo.count) bytes, \(change))"
            do {
                let fitted = try await client.send(PhotoOps.Fit.self, .init(), frames: [Data(photo)])
                if fitted.frames.first?.isEmpty == false { tally.fitted += 1 } else { tally.wrong.append("\(what): fitted without bytes") }
            } catch let error as ServiceError {
                if photoFaults.contains(error.code) {
                    tally.refused[error.code.rawValue, default: 0] += 1
                } else {
                    tally.wrong.append("\(what) → \(error.code.rawValue): \(error.message)")
                }
            } catch {
                tally.unanswered.append("\(what): \(error)")
                break // a late reply would answer the next request: this client stops here
            }
        }
        return tally
    }
}
