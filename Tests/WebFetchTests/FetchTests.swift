import Foundation
import RecipeProtocol
import TestHTTPServer
import Testing
import TestThreads
@testable import WebFetch

/// The code of the `ServiceError` `body` throws (nil when it does not throw one).
func errorCode(_ body: () async throws -> Void) async -> ErrorCode? {
    do {
        try await body()
        return nil
    } catch let error as ServiceError {
        return error.code
    } catch {
        Issue.record("expected a ServiceError, got \(error)")
        return nil
    }
}

@Suite("Guarded fetching", .onOwnThread)
struct FetchTests {
    static let loopbackOnly = try! AllowList(["127.0.0.1"])

    @Test("addresses that point inside are refused before any connection")
    func ssrf() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        let port = server.port
        let fetcher = GuardedFetcher(policy: FetchPolicy(overallTimeout: 5))
        let cases: [(String, ErrorCode)] = [
            ("http://127.0.0.1:\(port)/", .blockedAddress),
            ("http://[::1]:\(port)/", .blockedAddress),
            ("http://[::ffff:127.0.0.1]:\(port)/", .blockedAddress),
            ("http://localhost:\(port)/", .blockedAddress),
            ("http://LOCALHOST:\(port)/", .blockedAddress),
            ("http://0.0.0.0:\(port)/", .blockedAddress),
            ("http://169.254.169.254/latest/meta-data/", .blockedAddress),
            ("http://10.0.0.1/", .blockedAddress),
            ("http://2130706433:\(port)/", .blockedAddress),
            ("http://0x7f000001:\(port)/", .blockedAddress),
            ("http://127.1:\(port)/", .blockedAddress),
            ("http://[fd00::1]/", .blockedAddress),
            ("http://[fe80::1]/", .blockedAddress),
            ("http://100.64.0.1/", .blockedAddress),
            ("http://224.0.0.1/", .blockedAddress),
            ("https://127.0.0.1:\(port)/", .blockedAddress),
            ("http://a@127.0.0.1:\(port)/", .unsupportedURL),
            ("http://user:secret@example.com/", .unsupportedURL),
            ("file:///etc/passwd", .unsupportedURL),
            ("http+unix://%2Fvar%2Frun%2Fdocker.sock/info", .unsupportedURL),
            ("ftp://example.com/recipe", .unsupportedURL),
            ("gopher://127.0.0.1:\(port)/", .unsupportedURL),
            ("not a url", .unsupportedURL),
        ]
        for (url, expected) in cases {
            let code = await errorCode { _ = try await fetcher.fetch(url) }
            #expect(code == expected, "\(url)")
        }
        #expect(server.connectionCount == 0, "a refused address was connected to")
    }

    @Test("an address that is no page's says what is wrong with it: empty, another scheme, a port past 65535")
    func unsupportedSaid() throws {
        let cases: [(String, String)] = [
            ("", "the address is empty; write it like https://example.com/recipe"),
            ("  ", "the address is empty; write it like https://example.com/recipe"),
            ("javascript:alert(1)", "javascript:alert(1) is not a web page's address (it starts javascript:); only http:// and https:// pages can be imported"),
            ("ftp://example.com/recipe", "ftp://example.com/recipe is not a web page's address (it starts ftp:); only http:// and https:// pages can be imported"),
            ("http://example.com:99999/soup", "http://example.com:99999/soup names port 99999; a port is 1 to 65535"),
        ]
        for (address, said) in cases {
            do {
                _ = try GuardedFetcher.parse(address)
                Issue.record("\(address) was taken")
            } catch let error as ServiceError {
                #expect(error.code == .unsupportedURL && error.message.hasPrefix(said), "\(error.message)")
            }
        }
    }

    @Test("the refusal says what the address is, and how to allow a LAN host (never cloud metadata)")
    func refusalMessage() async throws {
        let fetcher = GuardedFetcher(policy: FetchPolicy())
        do {
            _ = try await fetcher.check("http://169.254.169.254/latest/meta-data/")
            Issue.record("metadata address was allowed")
        } catch let error as ServiceError {
            #expect(error.code == .blockedAddress)
            #expect(error.message.contains("link-local"))
            #expect(!error.message.contains("--allow-host"), "allowing cloud metadata is never the advice")
            #expect(error.message.contains("--html"))
        }
        do {
            _ = try await fetcher.check("http://10.0.0.1/recipes/1")
            Issue.record("a private address was allowed")
        } catch let error as ServiceError {
            #expect(error.code == .blockedAddress)
            #expect(error.message.contains("private") && error.message.contains("--allow-host 10.0.0.1"))
        }
    }

    @Test("an allow-listed loopback server is fetched, pinned to the checked address")
    func allowListed() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/hello", .html("<p>hello</p>"))
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly))
        let page = try await fetcher.fetch("\(server.baseURL)/hello#fragment")
        #expect(page.text == "<p>hello</p>")
        #expect(page.status == 200)
        #expect(page.url.absoluteString == "\(server.baseURL)/hello")
        // With the name allowed, whatever localhost resolves to is allowed; an IPv4 address is pinned first.
        let byName = GuardedFetcher(policy: FetchPolicy(allowList: try AllowList(["localhost"])))
        let target = try await byName.check("http://localhost:\(server.port)/hello")
        #expect(target.pinned.description == "127.0.0.1")
        #expect(try await byName.fetch("http://localhost:\(server.port)/hello").text == "<p>hello</p>")
    }

    @Test("every redirect hop is checked again")
    func redirectToLoopback() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/to-v6-loopback", .redirect("http://[::1]:\(server.port)/secret"))
        server.route("/to-other-loopback", .redirect("http://127.0.0.2:\(server.port)/secret"))
        server.route("/to-metadata", .redirect("http://169.254.169.254/latest/meta-data/", status: 301))
        server.route("/to-file", .redirect("file:///etc/passwd"))
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly))
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/to-v6-loopback") } == .blockedAddress)
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/to-other-loopback") } == .blockedAddress)
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/to-metadata") } == .blockedAddress)
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/to-file") } == .unsupportedURL)
        #expect(server.requests(to: "/secret") == 0)
    }

    @Test("five redirects are followed, the sixth is refused")
    func redirectLimit() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly))
        let five = try await fetcher.fetch("\(server.baseURL)/redirect/5")
        #expect(five.hops.count == 6)
        #expect(five.text.contains("arrived"))
        let before = server.requestPaths.count
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/redirect/6") } == .tooManyRedirects)
        #expect(server.requestPaths.count - before == 6, "the sixth redirect was followed")
        #expect(server.requests(to: "/redirect/0") == 1)
    }

    @Test("a server sending one byte a second is cut off at the overall limit")
    func slowServer() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/slow", .drip(total: 600, interval: .seconds(1)))
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly, readTimeout: 5, overallTimeout: 2))
        // On a thread of its own: the time measured is the fetch's, not the wait for a busy pool.
        let (code, took) = await onOwnExecutor {
            let started = ContinuousClock.now
            let code = await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/slow") }
            return (code, ContinuousClock.now - started)
        }
        #expect(code == .fetchTimeout)
        #expect(took < .seconds(30), "took \(took)")
    }

    @Test("a server that goes quiet is cut off at the read limit")
    func silentServer() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/silent", .delayed(.seconds(60), .html("late")))
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly, readTimeout: 1, overallTimeout: 20))
        #expect(await onOwnExecutor { await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/silent") } } == .fetchTimeout)
    }

    @Test("a 20 MB body is cut off, with and without a declared length")
    func hugeBody() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/huge", .stream(total: 20_000_000, declareLength: false))
        server.route("/huge-declared", .stream(total: 20_000_000, declareLength: true))
        server.route("/big-image", .stream(total: 3_000_000, declareLength: false))
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly))
        // On a thread of its own: read chunk by chunk on a busy pool, the fetch's 30 s deadline could pass first.
        try await onOwnExecutor { () async throws in
            #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/huge") } == .pageTooLarge)
            #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/huge-declared") } == .pageTooLarge)
            #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/big-image", for: .image) } == .pageTooLarge)
            #expect(try await fetcher.fetch("\(server.baseURL)/big-image", for: .page).body.count == 3_000_000)
        }
    }

    @Test("bot walls and missing pages get their own codes")
    func refusals() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/forbidden", .html("<html><title>Access denied</title></html>", status: 403))
        server.route("/challenge", .html("<html><title>Just a moment...</title><script src=/cdn-cgi/challenge-platform/x></script></html>", status: 503))
        server.route("/down", .html("maintenance", status: 503))
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly))
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/forbidden") } == .blockedBySite)
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/challenge") } == .blockedBySite)
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/down") } == .fetchFailed)
        #expect(await errorCode { _ = try await fetcher.fetch("\(server.baseURL)/missing") } == .fetchFailed)
    }

    @Test("fetching only from the allow-list: other hosts are refused before any lookup, listed ones are fetched")
    func onlyAllowList() async throws {
        let server = try await TestHTTPServer()
        defer { Task { await server.shutdown() } }
        server.route("/hello", .html("<p>hello</p>"))
        let lookups = LookUpLog()
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly, onlyAllowList: true), lookUp: { host in
            lookups.add(host)
            return try await Resolver.addresses(of: host)
        })
        #expect(try await fetcher.fetch("\(server.baseURL)/hello").text == "<p>hello</p>")
        for url in ["http://recipes.example.com/pie", "http://localhost:\(server.port)/hello", "http://93.184.216.34/", "http://[::1]:\(server.port)/hello"] {
            do {
                _ = try await fetcher.fetch(url)
                Issue.record("\(url) was fetched")
            } catch let error as ServiceError {
                #expect(error.code == .blockedAddress)
                #expect(error.message.contains("--fetch-only-allowed") && error.message.contains("--allow-host"), "\(error.message)")
            }
        }
        #expect(lookups.hosts == ["127.0.0.1"], "only the listed host was looked up")
        #expect(server.requests(to: "/hello") == 1)
    }

    @Test("a name that does not exist is said so; a resolver that never answers is given up at the connect limit")
    func unknownHosts() async throws {
        // .invalid names are answered without asking the network (RFC 6761), so this test stays on the machine.
        let fetcher = GuardedFetcher(policy: FetchPolicy())
        do {
            _ = try await fetcher.fetch("http://no-such-host.invalid/")
            Issue.record("a .invalid name was fetched")
        } catch let error as ServiceError {
            #expect(error.code == .fetchFailed)
            #expect(error.message.contains("could not find no-such-host.invalid") && error.message.contains("--html"), "\(error.message)")
        }
        let hanging = GuardedFetcher(policy: FetchPolicy(connectTimeout: 0.3, overallTimeout: 20), lookUp: { _ in
            try await Task.sleep(for: .seconds(60))
            return []
        })
        do {
            _ = try await hanging.fetch("http://recipes.example.com/pie")
            Issue.record("a lookup that never answered was waited out")
        } catch let error as ServiceError {
            #expect(error.code == .fetchTimeout)
            #expect(error.message.contains("looking up recipes.example.com took longer than"), "\(error.message)")
        }
    }
}

/// The hosts a test's resolver was asked for.
final class LookUpLog: @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [String] = []
    func add(_ host: String) { lock.withLock { asked.append(host) } }
    var hosts: [String] { lock.withLock { asked } }
}
