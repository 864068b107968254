import Foundation
import Testing

/// Proves nothing reaches the web around the guarded fetcher: outside
/// `Services/WebFetch`, no source of ours names an HTTP client, a socket
/// connector or the resolver.
@Suite("One way out")
struct EgressTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let forbidden = [
        "import AsyncHTTPClient", "import NIOHTTP1", "import NIOPosix", "import NIOSSL", "import FoundationNetworking",
        "URLSession", "HTTPClient(", "ClientBootstrap", "getaddrinfo", "Data(contentsOf: URL(string",
    ]

    @Test("only Services/WebFetch may talk to the web")
    func onlyWebFetch() throws {
        var offenders: [String] = []
        var scanned = 0
        for folder in ["Services", "Shared", "Benchmarks"] {
            let base = Self.root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in walker where file.pathExtension == "swift" {
                let relative = file.path.replacingOccurrences(of: Self.root.path + "/", with: "")
                if relative.hasPrefix("Services/WebFetch/") { continue }
                scanned += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for needle in Self.forbidden where text.contains(needle) { offenders.append("\(relative): \(needle)") }
            }
        }
        #expect(scanned > 50, "the scan found too few sources; is the root right? \(Self.root.path)")
        #expect(offenders.isEmpty, "outbound traffic around WebFetch: \(offenders)")
    }

    @Test("only the WebFetch target depends on the HTTP client")
    func manifest() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let uses = manifest.components(separatedBy: "package: \"async-http-client\"").count - 1
        #expect(uses == 1, "AsyncHTTPClient is a dependency of \(uses) targets; only WebFetch may use it")
    }
}
