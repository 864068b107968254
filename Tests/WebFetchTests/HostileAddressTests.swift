import Foundation
import TestThreads
import Testing
@testable import WebFetch

@Suite("Hostile addresses: one host spelling, embedded IPv4 forms, allow-listed names", .onOwnThread)
struct HostileAddressTests {
    @Test("the host is checked, pinned and requested in one spelling: lower case, as the HTTP client reads it")
    func oneSpelling() throws {
        for text in ["http://RB2.Example.TEST/recipe", "HTTP://rb2.EXAMPLE.test:8080/a?b=C"] {
            let (url, host) = try GuardedFetcher.parse(text)
            #expect(host == "rb2.example.test")
            #expect(GuardedFetcher.requestHost(of: url) == host, "the request goes out to the host that was checked and pinned: \(url)")
        }
        let (url, host) = try GuardedFetcher.parse("http://[::FFFF:0:7F00:1]:81/")
        #expect(GuardedFetcher.requestHost(of: url) == host)
        // A percent-escaped name is decoded once, and that one spelling is what is checked and requested.
        let (escaped, escapedHost) = try GuardedFetcher.parse("http://RB2%2Eexample.test/")
        #expect(escapedHost == "rb2.example.test" && GuardedFetcher.requestHost(of: escaped) == escapedHost)
    }

    @Test("host names with other characters are refused rather than spelled two ways", arguments: [
        "http://exämple.test/", "http://ex%C3%A4mple.test/", "http://a_b.test/",
    ])
    func oddHostNames(text: String) {
        #expect(throws: (any Error).self) { _ = try GuardedFetcher.parse(text) }
    }

    @Test("IPv4-translated and other embedded forms of non-public addresses are refused", arguments: [
        "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "::ffff:0:c0a8:0101", "::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::",
    ])
    func embeddedForms(text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.nonPublicReason != nil, "\(text) must not count as public")
    }

    @Test("an allow-listed host name reaches a home network, never link-local metadata, multicast or reserved addresses")
    func allowListedNames() throws {
        let list = try AllowList(["nas.local"])
        #expect(list.allows(host: "NAS.local", address: IPAddress("192.168.1.20")!))
        #expect(list.allows(host: "nas.local", address: IPAddress("127.0.0.1")!))
        #expect(!list.allows(host: "nas.local", address: IPAddress("169.254.169.254")!))
        #expect(!list.allows(host: "nas.local", address: IPAddress("::ffff:0:a9fe:a9fe")!))
        #expect(!list.allows(host: "nas.local", address: IPAddress("224.0.0.251")!))
        #expect(!list.allows(host: "other.local", address: IPAddress("192.168.1.20")!))
        // Listing the range itself is the explicit way to reach it.
        #expect(try AllowList(["169.254.0.0/16"]).allows(host: "metadata.test", address: IPAddress("169.254.169.254")!))
    }
}
