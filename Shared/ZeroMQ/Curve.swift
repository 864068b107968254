import CZeroMQ
import Foundation

/// A CURVE key pair in Z85 text form (40 characters each).
public struct CurveKeyPair: Sendable, Equatable {
    /// The public key, safe to share.
    public let publicKey: String
    /// The secret key; whoever has it is this peer.
    public let secretKey: String

    /// A fresh random key pair.
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        try zmqCheck("zmq_curve_keypair") { zmq_curve_keypair(&publicKey, &secretKey) }
        return CurveKeyPair(publicKey: text(publicKey), secretKey: text(secretKey))
    }

    /// The pair belonging to `secretKey` (the public key is derived from it).
    public init(secretKey: String) throws {
        guard Self.isValidKey(secretKey) else {
            throw ZMQError(errno: EINVAL, operation: "CURVE secret key must be 40 Z85 characters")
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        try zmqCheck("zmq_curve_public") { zmq_curve_public(&publicKey, secretKey) }
        self.init(publicKey: text(publicKey), secretKey: secretKey)
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// `true` when `key` is 40 characters of Z85 that decode to 32 bytes.
    public static func isValidKey(_ key: String) -> Bool {
        guard key.utf8.count == 40 else { return false }
        var decoded = [UInt8](repeating: 0, count: 32)
        return zmq_z85_decode(&decoded, key) != nil
    }

    /// `true` when this libzmq was built with CURVE support.
    public static var isSupported: Bool { zmq_has("curve") != 0 }
}

extension Socket {
    /// Makes this socket a CURVE server with `secretKey`; clients must know its public key.
    /// Pair it with a ZAP handler that checks client keys: libzmq alone accepts any client key.
    public func setCurveServer(secretKey: String) throws {
        try setOption(ZMQ_CURVE_SERVER, Int32(1), "ZMQ_CURVE_SERVER")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(secretKey.utf8) + [0], "ZMQ_CURVE_SECRETKEY")
    }

    /// Makes this socket a CURVE client with its own key pair, talking to the server with `serverKey`.
    public func setCurveClient(keys: CurveKeyPair, serverKey: String) throws {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: Array(serverKey.utf8) + [0], "ZMQ_CURVE_SERVERKEY")
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: Array(keys.publicKey.utf8) + [0], "ZMQ_CURVE_PUBLICKEY")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(keys.secretKey.utf8) + [0], "ZMQ_CURVE_SECRETKEY")
    }

    /// The ZAP domain this socket's connections are authenticated in.
    public func setZAPDomain(_ domain: String) throws {
        try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8), "ZMQ_ZAP_DOMAIN")
    }
}

/// The text of a NUL-terminated C buffer.
private func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
