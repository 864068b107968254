import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOSSL
import RecipeProtocol
import TestHTTPServer
import Testing
import TestThreads
@testable import WebFetch

#if canImport(Glibc)
import Glibc
#endif

@Suite("Replies that are not HTTP a page comes in", .onOwnThread)
struct RawReplyTests {
    static let loopbackOnly = try! AllowList(["127.0.0.1"])

    func refusal(_ reply: [UInt8], reset: Bool = false, scheme: String = "http") async throws -> ServiceError? {
        let server = try RawReplyServer(reply: reply, reset: reset)
        let fetcher = GuardedFetcher(policy: FetchPolicy(allowList: Self.loopbackOnly, readTimeout: 5, overallTimeout: 10))
        do {
            _ = try await fetcher.fetch("\(scheme)://127.0.0.1:\(server.port)/page")
            return nil
        } catch let error as ServiceError {
            return error
        }
    }

    @Test("a header that never ends is cut off at 80 KB and said so in the product's words")
    func endlessHeader() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Long: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        let error = try #require(try await refusal(reply))
        #expect(error.code == .fetchFailed)
        #expect(error.message.contains("its reply's headers ran past 80 KB"), "\(error.message)")
        #expect(!error.message.contains("overflow detected"), "\(error.message)")
    }

    @Test("a server that speaks another protocol is refused as not HTTP")
    func anotherProtocol() async throws {
        let error = try #require(try await refusal(Array("SSH-2.0-OpenSSH_9.6\r\n\r\n".utf8)))
        #expect(error.code == .fetchFailed)
        #expect(error.message.contains("is not the HTTP a web page is sent in"), "\(error.message)")
    }

    /// The libraries' own words reached the person importing: "read(descriptor:pointer:size:): Connection reset by
    /// peer) (errno: 104)", "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268435703 error:100000f7:SSL
    /// routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /…/tls_record.cc:127]))", "inflationError(-3)". And a
    /// connection that could not be made was tried again until the 10 s connect timeout, then said as the last try's
    /// error: this server answers one connection only, so a second try would be "refused", not the TLS failure.
    @Test("a connection that fails is said at once in the product's words: reset, cut short, not TLS, a damaged compressed body")
    func failuresInPlainWords() async throws {
        let page = Array("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><head><title>Half".utf8)
        let cases: [(reply: [UInt8], reset: Bool, scheme: String, said: String)] = [
            (page, true, "http", "the site reset the connection before its reply was whole"),
            (page, false, "http", "the site closed the connection before its reply was whole"),
            (Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8), false, "https",
             "a secure connection (TLS) could not be made: the site does not speak TLS on that port (is the address http:// rather than https://?)"),
            (Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n".utf8) + [0x1F, 0x8B, 0x08, 0x00] + Array("garbagegarbage12".utf8),
             false, "http", "its body is compressed (Content-Encoding) but damaged, so it could not be unpacked"),
        ]
        for item in cases {
            let error = try #require(try await refusal(item.reply, reset: item.reset, scheme: item.scheme))
            #expect(error.code == .fetchFailed)
            #expect(error.message.hasPrefix("could not fetch \(item.scheme)://127.0.0.1:") && error.message.hasSuffix("/page from 127.0.0.1: \(item.said)"),
                    "\(error.message)")
        }
    }

    @Test("every kind of failure the fetch can meet is said without a library's internals; one not met before by its kind alone")
    func describedKinds() {
        struct Unforeseen: Error, CustomStringConvertible { var description: String { "Unforeseen(internal: /build/path.swift:12)" } }
        let said: [(any Error, String)] = [
            (IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"), "the site reset the connection before its reply was whole"),
            (IOError(errnoCode: EACCES, reason: "connect"), "the connection failed: permission denied"),
            (NIOSSLError.uncleanShutdown, "the site ended the secure connection before its reply was whole"),
            (NIOSSLExtraError.failedToValidateHostname, "its certificate is for another name than the site's, so the secure connection (TLS) was not trusted"),
            (NIOHTTPDecompression.DecompressionError.inflationError(-3), "its body is compressed (Content-Encoding) but damaged, so it could not be unpacked"),
            (HTTPParserError.invalidEOFState, "the site closed the connection before its reply was whole"),
            (ChannelError.eof, "the site closed the connection before its reply was whole"),
            (Unforeseen(), "the exchange with the site failed (Unforeseen)"),
        ]
        for (error, expected) in said { #expect(FetchErrorText.describe(error) == expected, "\(error)") }
    }
}

@Suite("Compressed pages", .onOwnThread)
struct CompressedPageTests {
    /// `text` gzip-compressed, by Python's gzip (not by code of ours).
    static func gzip(_ text: String, repeated count: Int) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import gzip, sys; sys.stdout.buffer.write(gzip.compress(sys.argv[1].encode() * int(sys.argv[2]), 9))",
                             text, "\(count)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](bytes)
    }

    func fetch(_ body: [UInt8], cap: Int) async throws -> Result<String, ServiceError> {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n"
        let server = try RawReplyServer(reply: Array(head.utf8) + body)
        var policy = FetchPolicy(allowList: RawReplyTests.loopbackOnly, readTimeout: 5, overallTimeout: 10)
        policy.maxPageBytes = cap
        do {
            return .success(try await GuardedFetcher(policy: policy).fetch("http://127.0.0.1:\(server.port)/page").text)
        } catch let error as ServiceError {
            return .failure(error)
        }
    }

    @Test("a gzip-compressed page is read unpacked")
    func compressedPage() async throws {
        let page = "<html><body><h1>Lentil soup</h1></body></html>"
        #expect(try await fetch(try Self.gzip(page, repeated: 3), cap: 1_000_000) == .success(page + page + page))
    }

    @Test("a small compressed body that unpacks past the page limit is stopped there, as too large")
    func decompressionBomb() async throws {
        // 64 MB of one letter is 64 KB compressed; the limit is 1 MB unpacked.
        let bomb = try Self.gzip("a", repeated: 64_000_000)
        #expect(bomb.count < 200_000)
        guard case .failure(let error) = try await fetch(bomb, cap: 1_000_000) else {
            Issue.record("the page was read whole")
            return
        }
        #expect(error.code == .pageTooLarge, "\(error)")
        #expect(error.message.contains("1 MB"), "\(error.message)")
    }
}
