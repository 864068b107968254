import CZeroMQ

/// How a listening socket is protected: CURVE with this key pair, and only the
/// clients whose public keys are listed may talk to it.
public struct CurveServerSecurity: Sendable, Equatable {
    /// The service's own key pair; clients connect with its public key.
    public var keys: CurveKeyPair
    /// The public keys of the clients allowed in (Z85). The service's own public key
    /// is always allowed: whoever holds its secret key is the service itself (its health check).
    public var allowedClientKeys: Set<String>
    /// The public keys of replication peers (Z85): let in too, and the only clients that may
    /// call replication operations.
    public var peerKeys: Set<String>

    public init(keys: CurveKeyPair, allowedClientKeys: Set<String>, peerKeys: Set<String> = []) {
        self.keys = keys
        self.allowedClientKeys = allowedClientKeys
        self.peerKeys = peerKeys
    }

    /// The keys the service's authenticator lets in: the listed ones, the peers and the service's own.
    public var allowList: Set<String> { allowedClientKeys.union(peerKeys).union([keys.publicKey]) }

    /// Whether the client authenticated as `key` is a replication peer (or the service itself).
    public func isPeer(_ key: String?) -> Bool {
        guard let key else { return false }
        return peerKeys.contains(key) || key == keys.publicKey
    }
}

/// How a connecting socket proves who it is and checks whom it talks to.
public struct CurveClientSecurity: Sendable, Equatable {
    /// The client's own key pair; its public key must be on the service's allow-list.
    public var keys: CurveKeyPair
    /// The service's public key (Z85); a service without the matching secret key cannot answer.
    public var serverKey: String

    public init(keys: CurveKeyPair, serverKey: String) {
        self.keys = keys
        self.serverKey = serverKey
    }
}

extension Socket {
    /// Makes this socket a CURVE server for `security`, authenticated in ZAP domain `domain`.
    /// A `ZAPAuthenticator` must serve the socket's context before the socket binds.
    public func apply(_ security: CurveServerSecurity, domain: String) throws {
        try setCurveServer(secretKey: security.keys.secretKey)
        try setZAPDomain(domain)
    }

    /// Makes this socket a CURVE client for `security`; applies to later `connect` calls.
    public func apply(_ security: CurveClientSecurity) throws {
        try setCurveClient(keys: security.keys, serverKey: security.serverKey)
    }
}

extension CurveKeyPair {
    /// The 32 bytes a Z85 key stands for, or `nil` when `key` is not 40 Z85 characters.
    public static func keyBytes(_ key: String) -> [UInt8]? {
        guard key.utf8.count == 40 else { return nil }
        var decoded = [UInt8](repeating: 0, count: 32)
        return zmq_z85_decode(&decoded, key) == nil ? nil : decoded
    }

    /// The Z85 text of a 32-byte key.
    public static func keyText(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 32 else { return nil }
        var encoded = [CChar](repeating: 0, count: 41)
        guard zmq_z85_encode(&encoded, bytes, 32) != nil else { return nil }
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
