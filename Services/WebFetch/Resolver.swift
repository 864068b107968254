import Dispatch
import RecipeProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Turns a host name into the addresses the system would connect to — once, so
/// the addresses checked are the addresses used.
enum Resolver {
    /// Every address `host` resolves to (IPv4 and IPv6), in the resolver's order.
    static func addresses(of host: String) async throws -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        // RFC 6761 §6.4: names under .invalid never exist, and resolvers should say so at once
        // rather than ask the network (which, on a machine with no DNS server, answers only by timing out).
        if host == "invalid" || host.hasSuffix(".invalid") || host.hasSuffix(".invalid.") {
            throw noSuchHost(host, reason: "no such host: .invalid names never exist")
        }
        return try await withCheckedThrowingContinuation { continuation in
            // getaddrinfo blocks; keep it off the cooperative pool.
            DispatchQueue.global().async {
                continuation.resume(with: Result { try lookUp(host) })
            }
        }
    }

    private static func noSuchHost(_ host: String, reason: String) -> ServiceError {
        ServiceError(.fetchFailed, "could not find \(host) (\(reason)); check the address, or save the page and import it with --html")
    }

    private static func lookUp(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_NONAME || status == -5 /* EAI_NODATA */ ? "no such host" : String(cString: gai_strerror(status))
            throw noSuchHost(host, reason: reason)
        }
        defer { freeaddrinfo(first) }
        var found: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr {
                switch Int32(raw.pointee.sa_family) {
                case AF_INET:
                    let bytes = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                    }
                    if let address = IPAddress(bytes: bytes), !found.contains(address) { found.append(address) }
                case AF_INET6:
                    let bytes = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    if let address = IPAddress(bytes: bytes), !found.contains(address) { found.append(address) }
                default:
                    break
                }
            }
            cursor = entry.pointee.ai_next
        }
        guard !found.isEmpty else {
            throw ServiceError(.fetchFailed, "\(host) has no internet address; check the address, or save the page and import it with --html")
        }
        return found
    }
}
