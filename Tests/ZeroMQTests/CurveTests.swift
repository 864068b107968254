import Foundation
import Testing
import TestThreads
@testable import ZeroMQ

@Suite("CURVE keys and encryption")
struct CurveTests {
    @Test("generated keys are 40 Z85 characters and the public key derives from the secret")
    func keyPairs() throws {
        #expect(CurveKeyPair.isSupported)
        let pair = try CurveKeyPair.generate()
        #expect(pair.publicKey.count == 40)
        #expect(pair.secretKey.count == 40)
        #expect(CurveKeyPair.isValidKey(pair.publicKey))
        #expect(try CurveKeyPair(secretKey: pair.secretKey) == pair)
        #expect(try CurveKeyPair.generate() != pair)
        #expect(!CurveKeyPair.isValidKey("too short"))
        #expect(throws: ZMQError.self) { try CurveKeyPair(secretKey: String(repeating: "~", count: 41)) }
    }

    @Test("a client that knows the server key is served; one with the wrong server key gets nothing")
    func curveHandshake() async throws {
        let (good, bad) = try await onOwnThread {
            let context = try Context()
            let serverKeys = try CurveKeyPair.generate()
            let server = try Socket(context, .router)
            try server.setCurveServer(secretKey: serverKeys.secretKey)
            try server.setReceiveTimeout(.milliseconds(500))
            let endpoint = try server.bind("tcp://127.0.0.1:*")

            func exchange(serverKey: String) throws -> Message? {
                let client = try Socket(context, .dealer)
                try client.setCurveClient(keys: try CurveKeyPair.generate(), serverKey: serverKey)
                try client.setReceiveTimeout(.milliseconds(500))
                try client.connect(endpoint)
                try client.send(Message(Data("secret recipe".utf8)))
                guard let request = try server.receive() else { return nil }
                try server.send(request)
                return try client.receive()
            }
            return (try exchange(serverKey: serverKeys.publicKey),
                    try exchange(serverKey: try CurveKeyPair.generate().publicKey))
        }
        #expect(good == Message(Data("secret recipe".utf8)))
        #expect(bad == nil)
    }
}
