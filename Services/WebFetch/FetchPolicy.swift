/// What the worker may fetch and how much of it: the limits every outbound
/// request obeys.
public struct FetchPolicy: Sendable {
    /// Hosts and networks the user lets the worker reach even though they are not
    /// on the public internet (a NAS on the LAN, the tests' loopback server).
    public var allowList: AllowList
    /// The largest page read, in bytes (after decompression).
    public var maxPageBytes: Int
    /// The largest image read, in bytes, before photo intake judges it.
    public var maxImageBytes: Int
    /// Seconds to open a connection.
    public var connectTimeout: Double
    /// Seconds without a byte from the server before giving up.
    public var readTimeout: Double
    /// Seconds for one whole fetch, redirects and body included.
    public var overallTimeout: Double
    /// Redirects followed before giving up.
    public var maxRedirects: Int
    /// What the worker calls itself to web servers: a current desktop browser,
    /// because many recipe sites turn away anything else.
    public var userAgent: String
    /// Fetch only from what the allow-list names: any other host is refused before it is looked up
    /// (a worker on a closed network that may reach its own mirror and nothing else).
    public var onlyAllowList: Bool

    public static let defaultUserAgent =
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

    public init(
        allowList: AllowList = AllowList(), maxPageBytes: Int = 10_000_000, maxImageBytes: Int = 2_000_000,
        connectTimeout: Double = 10, readTimeout: Double = 15, overallTimeout: Double = 30, maxRedirects: Int = 5,
        userAgent: String = FetchPolicy.defaultUserAgent, onlyAllowList: Bool = false
    ) {
        self.onlyAllowList = onlyAllowList
        self.allowList = allowList
        self.maxPageBytes = maxPageBytes
        self.maxImageBytes = maxImageBytes
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.overallTimeout = overallTimeout
        self.maxRedirects = maxRedirects
        self.userAgent = userAgent
    }
}

/// The user's explicit exceptions to "public internet only": host names
/// (`nas.local`) and networks (`192.168.1.0/24`, `127.0.0.1`, `::1`).
public struct AllowList: Sendable, Equatable, CustomStringConvertible {
    public private(set) var hosts: Set<String> = []
    public private(set) var networks: [IPNetwork] = []

    public init() {}

    /// Reads entries such as `127.0.0.1`, `10.0.0.0/8`, `[::1]`, `nas.local`.
    public init(_ entries: [String]) throws(AllowListError) {
        for raw in entries.flatMap({ $0.split(separator: ",") }) {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { continue }
            if let network = IPNetwork(entry) {
                networks.append(network)
            } else if entry.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }) && !entry.contains("/") {
                hosts.insert(entry.lowercased())
            } else {
                throw AllowListError(entry: entry)
            }
        }
    }

    public var isEmpty: Bool { hosts.isEmpty && networks.isEmpty }

    /// Whether a connection to `address`, reached through `host`, was allowed by the user.
    /// A listed network allows any address in it. A listed host name allows the addresses
    /// of a home network (private, loopback, unique-local, carrier-grade NAT) and public
    /// ones, never link-local (cloud metadata), multicast or reserved ones: a name can be
    /// made to resolve anywhere, so those need their range listed explicitly.
    public func allows(host: String, address: IPAddress) -> Bool {
        if networks.contains(where: { $0.contains(address) }) { return true }
        guard hosts.contains(host.lowercased()) else { return false }
        guard let reason = address.nonPublicReason else { return true }
        return AllowList.homeNetworkReasons.contains { reason.contains($0) }
    }

    /// Whether `host` is named by the list: the name itself, or an address literal inside a listed network.
    public func names(host: String) -> Bool {
        if let address = IPAddress(host) { return networks.contains { $0.contains(address) } }
        return hosts.contains(host.lowercased())
    }

    /// The kinds of non-public address a listed host name may reach: those of a home network.
    static let homeNetworkReasons = ["a private address", "a loopback address", "a unique-local address", "a carrier-grade NAT address"]

    public var description: String {
        isEmpty ? "nothing" : (hosts.sorted() + networks.map(\.description)).joined(separator: ", ")
    }
}

/// An allow-list entry that is neither a host name nor a network.
public struct AllowListError: Error, CustomStringConvertible {
    public let entry: String
    public var description: String {
        "\(entry) is not a host name or network; write a name (nas.local), an address (192.168.1.20, ::1) or a network (192.168.1.0/24)"
    }
}

import Foundation
