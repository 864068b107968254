import ArgumentParser
import BenchmarkSupport
import Foundation
import Logging
import Messaging
import RecipeProtocol
import RecipeStore
import ReplicaSync

/// Replica sync between two real `recipe-storage` processes over ZeroMQ, side by side
/// with copying the data folder (`cp -a`) in the same run.
@main
struct SyncBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-bench",
        abstract: "Initial and incremental replica sync against copying the data folder.")

    @Option(help: "Recipes in the initial sync.") var recipes = 10_000
    @Option(help: "Photos among them (one per recipe).") var photos = 1_000
    @Option(help: "Bytes per photo.") var photoBytes = 300_000
    @Option(help: "Recipes in the store the incremental sync runs in.") var among = 100_000
    @Option(help: "Recipes changed before the incremental sync.") var changed = 10

    func run() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-sync-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        print("Replica sync: \(recipes) recipes with \(photos) photos of \(photoBytes / 1_000) KB; then \(changed) changed among \(among)")

        // Initial sync.
        let source = root.appendingPathComponent("source")
        let made = try await Self.populate(source, count: recipes, photos: photos, photoBytes: photoBytes)
        print(String(format: "  made the source store in %.1f s", made))
        let copy = try Self.copyFolder(source, to: root.appendingPathComponent("copy"))
        // The same copy made durable, as a sync's is: cp -a, then the file system's writes flushed to the disk.
        let durableCopy = try Self.copyFolder(source, to: root.appendingPathComponent("copy-synced"), thenSync: true)
        let initial = try await Self.syncFresh(source, target: root.appendingPathComponent("target"))
        let byRecords = try await Self.syncFresh(source, target: root.appendingPathComponent("target-records"), snapshotAbove: .max)
        print(row("", "time", "bytes", "peak RSS", labelWidth: 28, columnWidth: 14))
        print(row("cp -a of the data folder", Self.seconds(copy.seconds), Self.megabytes(copy.bytes), "—", labelWidth: 28, columnWidth: 14))
        print(row("  then sync -f (on disk)", Self.seconds(durableCopy.seconds), Self.megabytes(durableCopy.bytes), "—", labelWidth: 28, columnWidth: 14))
        print(row("initial sync (snapshot)", Self.seconds(initial.seconds), Self.megabytes(initial.bytes), Self.megabytes(initial.peakRSS),
                  labelWidth: 28, columnWidth: 14))
        print(row("  record by record", Self.seconds(byRecords.seconds), Self.megabytes(byRecords.bytes), Self.megabytes(byRecords.peakRSS),
                  labelWidth: 28, columnWidth: 14))
        print("  initial sync / copy: \(ratio(initial.seconds / copy.seconds)) the time (goal: at most 5×); record by record: "
              + "\(ratio(byRecords.seconds / copy.seconds)); against the copy on disk: \(ratio(initial.seconds / durableCopy.seconds))")

        // Incremental sync among many.
        let big = root.appendingPathComponent("big")
        let madeBig = try await Self.populate(big, count: among, photos: 0, photoBytes: 0)
        print(String(format: "  made the %d-recipe store in %.1f s", among, madeBig))
        let incremental = try await Self.syncIncremental(big, target: root.appendingPathComponent("big-target"), changed: changed)
        print(row("first sync of \(among / 1_000)k", Self.seconds(incremental.first.seconds), Self.megabytes(incremental.first.bytes),
                  Self.megabytes(incremental.first.peakRSS), labelWidth: 28, columnWidth: 14))
        print(row("incremental: \(changed) changed", Self.seconds(incremental.then.seconds), Self.kilobytes(incremental.then.bytes),
                  Self.megabytes(incremental.then.peakRSS), labelWidth: 28, columnWidth: 14))
        print(String(format: "  incremental bytes per changed recipe: %.1f KB; time: %.3f%% of the initial sync (goal: under 1%%)",
                     Double(incremental.then.bytes) / Double(max(changed, 1)) / 1_000, incremental.then.seconds / initial.seconds * 100))
        print(row("after a restore: its feed", Self.seconds(incremental.restoredFeed.seconds), Self.megabytes(incremental.restoredFeed.bytes),
                  Self.megabytes(incremental.restoredFeed.peakRSS), labelWidth: 28, columnWidth: 14))
        print(row("  and the peer's", Self.seconds(incremental.peerFeed.seconds), Self.megabytes(incremental.peerFeed.bytes),
                  Self.megabytes(incremental.peerFeed.peakRSS), labelWidth: 28, columnWidth: 14))
        print(String(format: "  a restore costs %.0f%% of the first sync (the restored store's whole feed read again under its new id)",
                     (incremental.restoredFeed.seconds + incremental.peerFeed.seconds) / incremental.first.seconds * 100))
    }

    struct Figures {
        var seconds: Double
        var bytes: Int
        var peakRSS: Int
    }

    /// A store of `count` generated recipes, the first `photos` with one photo each.
    static func populate(_ folder: URL, count: Int, photos: Int, photoBytes: Int) async throws -> Double {
        let start = ContinuousClock.now
        let store = try RecipeStore(folder: folder)
        var generator = RecipeGenerator(seed: 42)
        var ids: [UUID] = []
        for batchStart in stride(from: 0, to: count, by: 1_000) {
            let batch = (batchStart..<min(count, batchStart + 1_000)).map { index in (id: UUID(), draft: generator.draft(index)) }
            _ = try await store.importRecipes(batch)
            ids += batch.map(\.id)
        }
        for index in 0..<min(photos, ids.count) {
            var bytes = Data([0xFF, 0xD8, 0xFF, 0xE0])
            var state = UInt64(index + 1)
            bytes.append(contentsOf: (4..<photoBytes).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 33)
            })
            _ = try await store.addPhoto(recipeID: ids[index], bytes: bytes, position: nil)
        }
        try store.close()
        return (ContinuousClock.now - start).seconds
    }

    static func copyFolder(_ folder: URL, to destination: URL, thenSync: Bool = false) throws -> Figures {
        if thenSync { try run("/bin/sync", []) } // what earlier steps left unwritten is not this copy's to write
        let start = ContinuousClock.now
        try run("/bin/cp", ["-a", folder.path, destination.path])
        if thenSync { try run("/bin/sync", ["-f", destination.path]) }
        let seconds = (ContinuousClock.now - start).seconds
        return Figures(seconds: seconds, bytes: try folderBytes(folder), peakRSS: 0)
    }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) failed") }
    }

    static func folderBytes(_ folder: URL) throws -> Int {
        var total = 0
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
        while let url = enumerator?.nextObject() as? URL {
            total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }

    /// Starts storages on `source` and an empty `target` and pulls everything across.
    static func syncFresh(_ source: URL, target: URL, snapshotAbove: Int = SyncEngine.snapshotThreshold) async throws -> Figures {
        let a = try ServiceUnderTest(folder: source, benchmark: "sync-bench")
        let b = try ServiceUnderTest(folder: target, benchmark: "sync-bench")
        defer { a.stop(); b.stop() }
        let logger = Logger(label: "sync-bench")
        let from = try RemoteReplica(endpoint: a.endpoint, timeout: .seconds(60), attempts: 1, logger: logger)
        let to = try RemoteReplica(endpoint: b.endpoint, timeout: .seconds(60), attempts: 1, logger: logger)
        let start = ContinuousClock.now
        _ = try await SyncEngine.pull(from: from, to: to, snapshotAbove: snapshotAbove)
        let seconds = (ContinuousClock.now - start).seconds
        try await expectSameCounts(from, to)
        return Figures(seconds: seconds, bytes: await from.client.bytesReceived + to.client.bytesSent,
                       peakRSS: a.peakResidentBytes + b.peakResidentBytes + peakResidentBytes())
    }

    /// The target holds as many recipes and photos as the source after a sync: the figures are of a whole copy.
    static func expectSameCounts(_ from: RemoteReplica, _ to: RemoteReplica) async throws {
        let (a, b) = (try await from.client.call(StorageOps.Stats.self, .init()), try await to.client.call(StorageOps.Stats.self, .init()))
        guard a.recipes == b.recipes, a.photos == b.photos else {
            throw BenchmarkError("after the sync the target holds \(b.recipes) recipes and \(b.photos) photos, the source \(a.recipes) and \(a.photos)")
        }
    }

    /// A first full sync into an empty target, then `changed` edits on the source and a second sync; then the source's
    /// data folder put back from a copy of itself (a restored backup: it starts under a new replica id) and a sync
    /// each way, which reads its whole feed again under the new id, and the target's from where the copy had got to.
    static func syncIncremental(_ source: URL, target: URL, changed: Int) async throws
        -> (first: Figures, then: Figures, restoredFeed: Figures, peerFeed: Figures) {
        var a = try ServiceUnderTest(folder: source, benchmark: "sync-bench")
        let b = try ServiceUnderTest(folder: target, benchmark: "sync-bench")
        defer { a.stop(); b.stop() }
        let logger = Logger(label: "sync-bench")
        let from = try RemoteReplica(endpoint: a.endpoint, timeout: .seconds(120), attempts: 1, logger: logger)
        let to = try RemoteReplica(endpoint: b.endpoint, timeout: .seconds(120), attempts: 1, logger: logger)
        var start = ContinuousClock.now
        _ = try await SyncEngine.pull(from: from, to: to)
        try await expectSameCounts(from, to)
        let first = Figures(seconds: (ContinuousClock.now - start).seconds, bytes: await from.client.bytesReceived + to.client.bytesSent,
                            peakRSS: a.peakResidentBytes + b.peakResidentBytes)
        // Edit `changed` recipes through the source storage, as a user would.
        let editor = from.client
        let page = try await editor.call(RecipeOps.List.self, RecipeListQuery(limit: max(changed, 1)))
        for summary in page.recipes.prefix(changed) {
            let detail = try await editor.call(RecipeOps.Get.self, .init(id: summary.id))
            var draft = RecipeDraft(detail.recipe)
            draft.notes = "changed for the benchmark"
            _ = try await editor.call(RecipeOps.Update.self, .init(id: summary.id, expectedVersion: detail.recipe.version, recipe: draft))
        }
        let (receivedBefore, sentBefore) = (await from.client.bytesReceived, await to.client.bytesSent)
        start = ContinuousClock.now
        let report = try await SyncEngine.pull(from: from, to: to)
        let seconds = (ContinuousClock.now - start).seconds
        guard report.changed == changed else { throw BenchmarkError("the incremental sync changed \(report.changed) records, not \(changed)") }
        let then = Figures(seconds: seconds, bytes: await from.client.bytesReceived - receivedBefore + to.client.bytesSent - sentBefore,
                           peakRSS: a.peakResidentBytes + b.peakResidentBytes)

        // The source restored from a copy of itself.
        let oldID = try await from.info().replicaID
        a.stop()
        let copy = source.deletingLastPathComponent().appendingPathComponent(source.lastPathComponent + "-restored")
        _ = try copyFolder(source, to: copy)
        try FileManager.default.removeItem(at: source)
        try FileManager.default.moveItem(at: copy, to: source)
        a = try ServiceUnderTest(folder: source, benchmark: "sync-bench")
        let restored = try RemoteReplica(endpoint: a.endpoint, timeout: .seconds(120), attempts: 1, logger: logger)
        guard try await restored.info().replicaID != oldID else { throw BenchmarkError("the restored store kept its replica id") }
        var before = (await restored.client.bytesReceived, await to.client.bytesSent)
        start = ContinuousClock.now
        let again = try await SyncEngine.pull(from: restored, to: to)
        let restoredFeed = Figures(seconds: (ContinuousClock.now - start).seconds,
                                   bytes: await restored.client.bytesReceived - before.0 + to.client.bytesSent - before.1,
                                   peakRSS: a.peakResidentBytes + b.peakResidentBytes)
        before = (await to.client.bytesReceived, await restored.client.bytesSent)
        start = ContinuousClock.now
        let back = try await SyncEngine.pull(from: to, to: restored)
        let peerFeed = Figures(seconds: (ContinuousClock.now - start).seconds,
                               bytes: await to.client.bytesReceived - before.0 + restored.client.bytesSent - before.1,
                               peakRSS: a.peakResidentBytes + b.peakResidentBytes)
        guard again.changed == 0, back.changed == 0, again.held ?? 0 == 0, back.held ?? 0 == 0 else {
            throw BenchmarkError("after the restore the syncs changed \(again.changed) and \(back.changed) records and held \(again.held ?? 0) and "
                                 + "\(back.held ?? 0); nothing was lost, so none should change")
        }
        try await expectSameCounts(restored, to)
        return (first, then, restoredFeed, peerFeed)
    }

    static func seconds(_ value: Double) -> String { value < 1 ? String(format: "%.1f ms", value * 1_000) : String(format: "%.2f s", value) }
    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }
    static func kilobytes(_ bytes: Int) -> String { String(format: "%.1f KB", Double(bytes) / 1_000) }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
