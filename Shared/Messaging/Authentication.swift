import Foundation
import Logging
import ZeroMQ

extension ZAPAuthenticator {
    /// The ZAP domain every RecipeVault server socket is authenticated in.
    public static let recipeVaultDomain = "recipevault"

    /// An authenticator for `security` in `context` that logs the clients it refuses: each key or address at most
    /// once a minute, so a client retrying does not flood the log, and ten lines a minute in all, so neither do
    /// strangers making a new key for each try.
    public convenience init(serving security: CurveServerSecurity, in context: Context, logger: Logger) throws {
        let refusals = RefusalLog()
        try self.init(context: context, domain: Self.recipeVaultDomain, allowing: security.allowList) { decision in
            guard !decision.allowed, let leftOut = refusals.admit(decision.clientKey ?? decision.address) else { return }
            logger.warning("refused a client: its key is not on the allow-list", metadata: [
                "client_key": "\(decision.clientKey ?? "none")", "address": "\(decision.address)",
                "mechanism": "\(decision.mechanism)",
            ].merging(LogThrottle.metadata(leftOut: leftOut)) { $1 })
        }
    }
}

/// Logs whether a service runs with CURVE, and warns when it listens beyond this machine without it.
public func warnIfExposed(_ security: CurveServerSecurity?, endpoints: [String], logger: Logger) {
    if let security {
        logger.info("CURVE security on", metadata: [
            "public_key": "\(security.keys.publicKey)", "client_keys": "\(security.allowedClientKeys.count)",
        ])
        return
    }
    let local = ["tcp://127.", "tcp://localhost:", "tcp://[::1]:", "ipc://", "inproc://"]
    let exposed = endpoints.filter { endpoint in !local.contains { endpoint.hasPrefix($0) } }
    if exposed.isEmpty {
        logger.info("CURVE security off: listening on this machine only")
    } else {
        logger.warning("CURVE security off on an endpoint other machines can reach: anyone who can connect can read and change recipes; start with --secret-key and --client-keys", metadata: [
            "endpoints": "\(exposed.joined(separator: " "))",
        ])
    }
}
