#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as bytes (4 or 16), read from text or a socket address.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Reads the canonical text forms only (`127.0.0.1`, `::1`, `[::1]`); the
    /// legacy shorthand (`2130706433`, `0x7f.1`) is not an address here — it is
    /// a host name, which the resolver turns into what the system would connect to.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(text), &v6) == 1 {
            self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    public var isIPv4: Bool { bytes.count == 4 }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address an IPv6 form carries (IPv4-mapped `::ffff:a.b.c.d`,
    /// IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`).
    var embeddedIPv4: (address: IPAddress, form: String)? {
        guard !isIPv4 else { return nil }
        let b = bytes
        func v4(_ range: Range<Int>) -> IPAddress { IPAddress(bytes: Array(b[range]))! }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { return (v4(12..<16), "IPv4-mapped") }
        // ::ffff:0:a.b.c.d (SIIT, RFC 2765): the same IPv4 address, another spelling.
        if b[0..<8].allSatisfy({ $0 == 0 }) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0 {
            return (v4(12..<16), "IPv4-translated")
        }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return (v4(12..<16), "IPv4-compatible") }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4..<12].allSatisfy({ $0 == 0 }) { return (v4(12..<16), "NAT64") }
        if b[0] == 0x20 && b[1] == 0x02 { return (v4(2..<6), "6to4") }
        return nil
    }

    /// Whether the first `length` bits equal those of `network`.
    func hasPrefix(_ network: [UInt8], length: Int) -> Bool {
        guard network.count == bytes.count, length <= bytes.count * 8 else { return false }
        var bits = length
        var index = 0
        while bits >= 8 {
            if bytes[index] != network[index] { return false }
            bits -= 8
            index += 1
        }
        guard bits > 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
        return bytes[index] & mask == network[index] & mask
    }

    /// Why this address is not on the public internet (`nil` when it is): the
    /// answer to "may the worker connect here on a user's say-so?".
    public var nonPublicReason: String? {
        if isIPv4 { return Self.ipv4Reason(self) }
        if bytes.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return "a loopback address" }
        if let (inner, form) = embeddedIPv4 {
            if let reason = Self.ipv4Reason(inner) { return "an \(form) form of \(inner), \(reason)" }
            // Only the mapped form is a public address when its IPv4 address is; the others are tunnels and translators.
            return form == "IPv4-mapped" ? nil : "an \(form) address (a tunnel to another network)"
        }
        for (network, length, reason) in Self.ipv6Ranges where hasPrefix(network, length: length) { return reason }
        return nil
    }

    private static func ipv4Reason(_ address: IPAddress) -> String? {
        for (network, length, reason) in ipv4Ranges where address.hasPrefix(network, length: length) { return reason }
        return nil
    }

    private static let ipv4Ranges: [([UInt8], Int, String)] = [
        ([0, 0, 0, 0], 8, "the unspecified (\"this network\") range"),
        ([10, 0, 0, 0], 8, "a private address"),
        ([100, 64, 0, 0], 10, "a carrier-grade NAT address"),
        ([127, 0, 0, 0], 8, "a loopback address"),
        ([169, 254, 0, 0], 16, "a link-local address (where cloud metadata services live)"),
        ([172, 16, 0, 0], 12, "a private address"),
        ([192, 0, 0, 0], 24, "a reserved protocol address"),
        ([192, 0, 2, 0], 24, "a documentation address"),
        ([192, 88, 99, 0], 24, "a reserved relay address"),
        ([192, 168, 0, 0], 16, "a private address"),
        ([198, 18, 0, 0], 15, "a benchmarking address"),
        ([198, 51, 100, 0], 24, "a documentation address"),
        ([203, 0, 113, 0], 24, "a documentation address"),
        ([224, 0, 0, 0], 4, "a multicast address"),
        ([240, 0, 0, 0], 4, "a reserved address"),
    ]

    private static let ipv6Ranges: [([UInt8], Int, String)] = [
        (v6([0x00, 0x64, 0xff, 0x9b, 0x00, 0x01]), 48, "a local NAT64 address"),
        (v6([0x01, 0x00]), 64, "a discard-only address"),
        (v6([0x20, 0x01, 0x0d, 0xb8]), 32, "a documentation address"),
        (v6([0x20, 0x01, 0x00, 0x00]), 32, "a Teredo address (a tunnel to another network)"),
        (v6([0xfc]), 7, "a unique-local address"),
        (v6([0xfe, 0x80]), 10, "a link-local address"),
        (v6([0xfe, 0xc0]), 10, "a site-local address"),
        (v6([0xff]), 8, "a multicast address"),
    ]

    private static func v6(_ prefix: [UInt8]) -> [UInt8] { prefix + [UInt8](repeating: 0, count: 16 - prefix.count) }
}

/// A network written as `address/length` (or one address): `192.168.1.0/24`, `::1`.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let length: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let address = IPAddress(parts[0]) else { return nil }
        let maximum = address.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length) else { return nil }
            self.length = length
        } else {
            self.length = maximum
        }
        self.address = address
    }

    public func contains(_ candidate: IPAddress) -> Bool {
        if candidate.bytes.count == address.bytes.count { return candidate.hasPrefix(address.bytes, length: length) }
        // An allowed IPv4 network also covers the IPv4-mapped IPv6 form of its addresses.
        if address.isIPv4, let (inner, form) = candidate.embeddedIPv4, form == "IPv4-mapped" {
            return inner.hasPrefix(address.bytes, length: length)
        }
        return false
    }

    public var description: String { length == address.bytes.count * 8 ? "\(address)" : "\(address)/\(length)" }
}
