import TestThreads
import Testing
@testable import WebFetch

@Suite("Which addresses are public", .onOwnThread)
struct AddressTests {
    @Test("non-public ranges are named", arguments: [
        ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"), ("0.0.0.0", "unspecified"),
        ("::", "unspecified"), ("10.0.0.1", "private"), ("172.16.5.4", "private"), ("192.168.1.20", "private"),
        ("169.254.169.254", "link-local"), ("100.64.0.1", "carrier-grade NAT"), ("fd00::1", "unique-local"),
        ("fc12::5", "unique-local"), ("fe80::1", "link-local"), ("ff02::1", "multicast"), ("224.0.0.251", "multicast"),
        ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"), ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.1.2.3", "private"), ("64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"), ("2002:7f00:1::", "6to4 form"),
        ("240.0.0.1", "reserved"), ("255.255.255.255", "reserved"), ("192.0.2.1", "documentation"),
        ("2001:db8::1", "documentation"), ("198.18.0.1", "benchmarking"),
    ])
    func blocked(address: String, reason: String) throws {
        let parsed = try #require(IPAddress(address))
        let found = try #require(parsed.nonPublicReason, "\(address) should not count as public")
        #expect(found.contains(reason), "\(address): \(found)")
    }

    @Test("public addresses pass", arguments: ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "172.32.0.1"])
    func open(address: String) throws {
        let parsed = try #require(IPAddress(address))
        #expect(parsed.nonPublicReason == nil)
    }

    @Test("an allow-list takes names, addresses and networks")
    func allowList() throws {
        let list = try AllowList(["127.0.0.1", "192.168.1.0/24,nas.local", " ::1 "])
        #expect(list.allows(host: "x", address: IPAddress("127.0.0.1")!))
        #expect(list.allows(host: "x", address: IPAddress("::ffff:127.0.0.1")!))
        #expect(!list.allows(host: "x", address: IPAddress("127.0.0.2")!))
        #expect(list.allows(host: "x", address: IPAddress("192.168.1.77")!))
        #expect(!list.allows(host: "x", address: IPAddress("192.168.2.1")!))
        #expect(list.allows(host: "NAS.local", address: IPAddress("10.9.9.9")!))
        #expect(list.allows(host: "x", address: IPAddress("::1")!))
        #expect(throws: AllowListError.self) { try AllowList(["http://nas.local/"]) }
        #expect(throws: AllowListError.self) { try AllowList(["10.0.0.0/40"]) }
    }
}
