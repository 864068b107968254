import ArgumentParser
import Foundation
import RecipeProtocol

/// `recipes sync` and `recipes sync status`: the worker's replica sync.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Keep the replicas in step: sync now, or see where they stand.",
        discussion: "recipe-worker syncs its storage with every --replica by itself (after each change, and every --sync-interval); `recipes sync` does it now and waits.",
        subcommands: [SyncNow.self, SyncStatus.self], defaultSubcommand: SyncNow.self)
}

struct SyncNow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "now", abstract: "Sync every replica now and say what moved.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: ArgumentHelp("Seconds to wait for the sync to finish, at most 86400.", valueName: "seconds")) var syncTimeout: Double = 600

    func validate() throws { try NumberOptions.seconds(syncTimeout, option: "--sync-timeout", most: 86_400) }

    func run() async throws {
        try await connection.show {
            let worker = try await connection.patientWorkerClient(seconds: syncTimeout)
            return try await worker.call(WorkerSyncOps.Run.self, Empty())
        } text: { reply in
            for pair in reply.pairs {
                let moved = pair.toReplica == 0 && pair.toStorage == 0 ? "already in step"
                    : "\(Output.count(pair.toReplica, "change")) to the replica, \(pair.toStorage) back"
                if let error = pair.error {
                    // What moved before it stopped stays moved: the next sync goes on from there.
                    var parts: [String] = []
                    if pair.toReplica > 0 || pair.toStorage > 0 { parts.append(moved) }
                    if pair.photos > 0 { parts.append(Output.count(pair.photos, "photo")) }
                    let before = parts.isEmpty ? "" : parts.joined(separator: ", ") + ", then "
                    print("\(pair.storage) ⇄ \(pair.replica): \(before)not synced: \(error)")
                    continue
                }
                var line = "\(pair.storage) ⇄ \(pair.replica): \(moved)"
                if pair.photos > 0 { line += ", \(Output.count(pair.photos, "photo")) (\(Self.size(pair.photoBytes)))" }
                if pair.conflicts > 0 { line += ", \(pair.conflicts) conflicted cop\(pair.conflicts == 1 ? "y" : "ies") kept (recipes conflicts)" }
                if let unavailable = pair.unavailablePhotos, unavailable > 0 {
                    line += ", \(Output.count(unavailable, "photo")) neither side holds (recipes came without \(unavailable == 1 ? "it" : "them"); recipes sync status)"
                }
                // In step but for records one side would not take: not quite in step, and the person is told where to look.
                let held = [(pair.heldAtStorage ?? 0, pair.storage), (pair.heldAtReplica ?? 0, pair.replica)].filter { $0.0 > 0 }
                if !held.isEmpty {
                    line += "; " + held.map { "\(Output.count($0.0, "record")) held back at \($0.1)" }.joined(separator: ", ")
                        + " (recipes sync status says why)"
                }
                print(line)
            }
            if let status = Self.exitStatus(reply.pairs) { throw ExitCode(status) }
        }
    }

    /// A pair not synced: 74 when a storage's disk is full or its database damaged (as for any change refused so),
    /// otherwise 69. Nil when every pair was synced.
    static func exitStatus(_ pairs: [PairSync]) -> Int32? {
        let codes = pairs.filter { $0.error != nil }.map { $0.errorCode.flatMap(ErrorCode.init(rawValue:)) }
        guard !codes.isEmpty else { return nil }
        return codes.contains { $0 == .storageFull || $0 == .storageDamaged } ? ExitStatus.ioError : ExitStatus.unavailable
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1_000_000 ? String(format: "%.1f MB", Double(bytes) / 1_000_000) : String(format: "%.0f KB", Double(bytes) / 1_000)
    }
}

struct SyncStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Last sync, changes waiting and conflicts, for every replica.")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await connection.show {
            // A replica that is down takes the worker a couple of seconds to give up on.
            return try await connection.patientWorkerClient(seconds: 20).call(WorkerSyncOps.Status.self, Empty())
        } text: { reply in
            if reply.pairs.isEmpty {
                return print("This worker keeps no replicas; start recipe-worker with --replica ENDPOINT (or RECIPES_WORKER_REPLICAS).")
            }
            Output.table(["STORAGE", "REPLICA", "LAST SYNC", "WAITING →", "WAITING ←", "CONFLICTS", "PROBLEM"], reply.pairs.map { pair in
                [pair.storage, pair.replica,
                 pair.lastSyncAt.map { $0.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)) } ?? "never",
                 pair.pendingToReplica.map(String.init) ?? "?", pair.pendingToStorage.map(String.init) ?? "?",
                 pair.conflictsCreated.map(String.init) ?? "?", pair.reachable ? (pair.lastError ?? "") : "unreachable: \(pair.lastError ?? "")"]
            })
            let held = reply.pairs.flatMap { $0.held ?? [] }
            if !held.isEmpty {
                print("Held back (received, not applied yet; retried once what each waits for is there):")
                for record in held {
                    let photos = record.missingPhotos.isEmpty ? "" : " [photos: \(record.missingPhotos.map { String($0.prefix(12)) }.joined(separator: ", "))]"
                    print("  \(record.kind.rawValue) \(record.id) from replica \(record.from): \(record.reason)\(photos)")
                }
            }
            var lost: [String: Set<String>] = [:]
            for pair in reply.pairs {
                lost[pair.storage, default: []].formUnion(pair.lostAtStorage ?? [])
                lost[pair.replica, default: []].formUnion(pair.lostAtReplica ?? [])
            }
            for (name, hashes) in lost.sorted(by: { $0.key < $1.key }) where !hashes.isEmpty {
                print("Photos missing on \(name) (removed or damaged on its disk, or no replica could send them; the next sync brings back those another replica holds): "
                      + hashes.sorted().prefix(5).map { String($0.prefix(12)) }.joined(separator: ", ") + (hashes.count > 5 ? ", … (\(hashes.count))" : ""))
            }
            // A pair whose last sync failed waits before the worker tries it again (at most a minute, or the interval).
            let retry = Int(min(reply.intervalSeconds, 60).rounded(.up))
            let failing = reply.pairs.contains { $0.lastError != nil }
            print(reply.onRequestOnly == true ? "Synced only when asked (recipes sync)."
                  : "Synced after every change, and every \(Int(reply.intervalSeconds)) s otherwise"
                    + (failing ? "; a replica whose last sync failed is tried again within \(retry) s (recipes sync tries it now)." : "."))
        }
    }
}
