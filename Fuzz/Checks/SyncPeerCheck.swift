import Foundation
import Messaging
import RecipeProtocol
import ReplicaSync
import Synchronization
import ZeroMQ

extension FuzzChecks {
    /// A replica that answers anything: the worker's sync (`SyncEngine` over `RemoteReplica`, the code recipe-worker
    /// runs) against a ZeroMQ server whose replies are the input, with the fuzzing process's real recipe-storage
    /// server on the other side. The first byte says what runs — a pull from the stranger, a pull to it, or both
    /// ways, with or without a snapshot — and the rest are the stranger's replies, one per request in the order they
    /// come, framed as for `storageSocket` (at most 32; `\n==\n` between replies, `\n--\n` between a reply's frames; a reply
    /// without an `id` answers whatever was asked). Once they run out it answers `internal_error`.
    ///
    /// Promise: the sync ends — done, or with an error — and never traps (a trap is recipe-worker ended, and
    /// restarted into the same replica: a crash loop); the real storage answers and reads back after.
    public static func syncPeer(_ data: Data) {
        _ = syncWithStranger(data)
    }

    /// Runs `syncPeer`'s sync and checks; returns how the sync ended (nil: done, else its error).
    @discardableResult
    static func syncWithStranger(_ data: Data) -> (any Error)?? {
        guard let mode = data.first else { return nil }
        let (them, us) = (Stranger.replica, Stranger.storage) // made outside `blocking`, which they use
        Stranger.asReplica.load(conversation(data.dropFirst(), limit: 32))
        return blocking { () -> (any Error)?? in
            let snapshotAbove = mode & 4 == 0 ? SyncEngine.snapshotThreshold : 0
            var ended: (any Error)?
            do {
                switch mode & 3 {
                case 0: _ = try await SyncEngine.pull(from: them, to: us, pageSize: 3, maxPages: 4, snapshotAbove: snapshotAbove)
                case 1: _ = try await SyncEngine.pull(from: us, to: them, pageSize: 3, maxPages: 4, snapshotAbove: snapshotAbove)
                default: _ = try await SyncEngine.sync(them, us, pageSize: 3, snapshotAbove: snapshotAbove)
                }
                if traceSync { FileHandle.standardError.write(Data("sync mode \(mode): done\n".utf8)) }
            } catch {
                // Any error is an answer: the worker logs it and tries again at the next pass.
                if traceSync { FileHandle.standardError.write(Data("sync mode \(mode): \(error)\n".utf8)) }
                ended = error
            }
            do {
                let info = try await us.info()
                _ = try await us.changes(since: max(0, info.latestSeq - 3), exclude: nil, limit: 10)
            } catch {
                broken("the storage does not answer after a sync with a stranger: \(error)")
            }
            return .some(ended)
        }
    }

    /// `RECIPES_FUZZ_TRACE=1`: how each sync ended, on standard error.
    static let traceSync = ProcessInfo.processInfo.environment["RECIPES_FUZZ_TRACE"] == "1"

    /// A ZeroMQ server that answers with the input, and the clients the worker's sync reaches both sides with.
    final class Stranger: Sendable {
        /// The stranger the worker's sync takes for a replica.
        static let asReplica = Stranger(name: "stranger")
        /// The stranger the worker's batch jobs take for their storage (`workerJobs`).
        static let asStorage = Stranger(name: "stranger-storage")

        /// The fuzzing process's real storage server, with the sample recipes (a feed, photos to ask about), as a replica.
        static let storage: RemoteReplica = {
            _ = FuzzChecks.blocking { try? await FuzzChecks.storage.store.loadSamples() }
            return try! RemoteReplica(endpoint: SocketPeer.storage.endpoint, timeout: .seconds(5), attempts: 1, logger: FuzzChecks.quiet)
        }()

        /// The worker's client for the stranger replica: one try each, and a short wait (a reply with another id is not ours).
        static let replica = try! RemoteReplica(endpoint: asReplica.endpoint, timeout: .milliseconds(300), attempts: 1, logger: FuzzChecks.quiet)

        let endpoint: String
        private let replies = Mutex<[[Data]]>([])

        private init(name: String) {
            let endpoint = "ipc://\(SocketPeer.folder.path)/\(name)"
            self.endpoint = endpoint
            try! FileManager.default.createDirectory(at: SocketPeer.folder, withIntermediateDirectories: true)
            let bound = DispatchSemaphore(value: 0)
            // The socket lives on this thread alone.
            let thread = Thread {
                let socket = try! Socket(SocketPeer.context, .router)
                _ = try! socket.bind(endpoint)
                try! socket.setReceiveTimeout(.milliseconds(100))
                bound.signal()
                let exhausted = Data(#"{"v":1,"ok":false,"error":{"code":"internal_error","message":"the stranger has nothing more to say"}}"#.utf8)
                while true {
                    guard let request = try? socket.receive(), request.frames.count >= 2 else { continue }
                    let delimited = request.frames.count >= 3 && request.frames[1].isEmpty
                    let reply = self.replies.withLock { $0.isEmpty ? [exhausted] : $0.removeFirst() }
                    if FuzzChecks.traceSync {
                        let asked = String(decoding: request.frames[delimited ? 2 : 1].prefix(160), as: UTF8.self)
                        FileHandle.standardError.write(Data("  asked \(asked)\n  → \(String(decoding: reply[0].prefix(100), as: UTF8.self))\n".utf8))
                    }
                    _ = try? socket.send(Message([request.frames[0]] + (delimited ? [Data()] : []) + reply), dontWait: true)
                }
            }
            thread.name = "fuzz \(name)"
            thread.start()
            bound.wait()
        }

        /// The replies for the next sync, in order; what the last sync left is dropped.
        func load(_ next: [[Data]]) {
            replies.withLock { $0 = next }
        }
    }
}
