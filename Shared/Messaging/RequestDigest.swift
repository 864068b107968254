import Crypto
import Foundation

/// The SHA-256 of a request's frames (its JSON and binary frames, each with its length),
/// so a retried request can be told apart from another request under the same id.
enum RequestDigest {
    static func of(_ frames: ArraySlice<Data>) -> Data {
        var hasher = SHA256()
        for frame in frames {
            withUnsafeBytes(of: UInt64(frame.count).littleEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: frame)
        }
        return Data(hasher.finalize())
    }
}
