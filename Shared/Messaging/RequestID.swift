import Foundation

/// New request ids: random version-4 UUIDs, as the protocol recommends.
public enum RequestID {
    /// A fresh id. Drawn from the system's random source in one call (Foundation's `UUID()` opens,
    /// reads and closes `/dev/urandom` for each one, three system calls on every request).
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var high: UInt64 = generator.next()
        var low: UInt64 = generator.next()
        high = (high & ~0xF000) | 0x4000 // version 4 in bits 12–15 of time_hi_and_version
        low = (low & ~0xC000_0000_0000_0000) | 0x8000_0000_0000_0000 // the RFC 4122 variant
        let bytes = withUnsafeBytes(of: high.bigEndian) { Array($0) } + withUnsafeBytes(of: low.bigEndian) { Array($0) }
        let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return uuid.uuidString
    }
}
