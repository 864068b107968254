import Foundation
import Logging
import Messaging
import RecipeProtocol
import Synchronization
import ZeroMQ

/// Announces every committed change on a PUB socket, so a syncing worker can act
/// at once instead of polling: frames `["storage.changed", {"v":1,"seq":…,"op":…,"at":…}]`.
public actor ChangePublisher {
    /// The topic frame of every notice.
    public static let topic = "storage.changed"

    private let executor = ThreadExecutor(name: "recipe-storage publisher")
    private let context: Context
    private let socket: Socket
    /// Lets in only the allowed subscribers when the storage runs with CURVE.
    private let authenticator: ZAPAuthenticator?
    private let encoder = WireCodec.makeEncoder()
    private var sequence = 0
    /// The endpoint actually bound.
    public nonisolated let endpoint: String

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Binds the PUB socket at `endpoint` (`tcp://127.0.0.1:*` picks a port), with the
    /// storage's CURVE `security` when given (subscribers need an allowed key, as requests do).
    public init(endpoint: String, security: CurveServerSecurity? = nil, logger: Logger) throws {
        context = try Context()
        socket = try Socket(context, .publish)
        if endpoint.contains("[") { try socket.setIPv6(true) }
        if let security {
            authenticator = try ZAPAuthenticator(serving: security, in: context, logger: logger)
            try socket.apply(security, domain: ZAPAuthenticator.recipeVaultDomain)
        } else {
            authenticator = nil
        }
        do {
            self.endpoint = try socket.bind(endpoint)
        } catch {
            throw ServerStartError(endpoint: endpoint, underlying: error)
        }
    }

    deinit { executor.shutdown() }

    /// Queues a notice for `op`; never blocks the caller (a slow subscriber loses notices, not the service).
    public nonisolated func announce(_ op: String) {
        Task { await self.publish(op) }
    }

    private func publish(_ op: String) {
        sequence += 1
        let notice = ChangeNotice(v: WireProtocol.version, seq: sequence, op: op, at: Date())
        guard let json = try? encoder.encode(notice) else { return }
        _ = try? socket.send(Message([Data(Self.topic.utf8), json]), dontWait: true)
    }

    public func close() {
        socket.close()
        authenticator?.stop()
    }
}

/// What a change notice says: which write committed, and its number since the service started.
public struct ChangeNotice: Codable, Sendable, Equatable {
    public var v: Int
    /// 1, 2, 3… since the service started; a gap means notices were dropped (sync anyway).
    public var seq: Int
    /// The write operation that committed.
    public var op: String
    public var at: Date
}
