import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import RecipeModel
import RecipeProtocol

/// A web address the fetcher checked: where it points and the one address the
/// connection will be pinned to.
public struct CheckedTarget: Sendable, Equatable {
    /// The address as it will be requested (scheme, host, port, path, query; no fragment).
    public let url: URL
    /// The host name as written in the address (no brackets).
    public let host: String
    /// Every address the host resolved to, each one checked.
    public let addresses: [IPAddress]
    /// The address the connection goes to.
    public var pinned: IPAddress { addresses.first { $0.isIPv4 } ?? addresses[0] }
}

/// What a fetch brought back.
public struct FetchedResource: Sendable {
    /// The address the body came from, after redirects.
    public let url: URL
    /// The HTTP status of the final response (2xx).
    public let status: Int
    /// The `Content-Type` header, if the server sent one.
    public let contentType: String?
    /// The body, decompressed.
    public let body: [UInt8]
    /// The addresses visited, the first one first (one more per redirect).
    public let hops: [URL]

    /// The body as text, in the encoding a browser would read it in: the one the server or the page names, else
    /// UTF-8 or Windows-1252 by what the bytes are (`PageText`).
    public var text: String { PageText.decode(body, contentType: contentType) }
}

/// The worker's only way out to the web. Every page, image and redirect goes
/// through `fetch`: http/https only; the host resolved once and every address
/// checked against non-public ranges (unless the user allow-listed it); the
/// connection pinned to the checked address; redirects followed by hand, each
/// hop checked again; bytes and time capped.
public struct GuardedFetcher: Sendable {
    /// What a fetch is for: it decides the byte cap and what the server is asked for.
    public enum Purpose: Sendable {
        case page
        case image

        var accept: String {
            switch self {
            case .page: "text/html,application/xhtml+xml,application/xml;q=0.9,application/ld+json;q=0.8,*/*;q=0.5"
            case .image: "image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8,*/*;q=0.5"
            }
        }
    }

    public let policy: FetchPolicy
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    /// How a host name becomes addresses: the system's resolver, or a test's stand-in (one that never answers, say).
    private let lookUp: @Sendable (String) async throws -> [IPAddress]

    public init(policy: FetchPolicy, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                logger: Logger = Logger(label: "recipe-worker.fetch")) {
        self.init(policy: policy, eventLoopGroup: eventLoopGroup, logger: logger, lookUp: Resolver.addresses(of:))
    }

    init(policy: FetchPolicy, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
         logger: Logger = Logger(label: "recipe-worker.fetch"), lookUp: @escaping @Sendable (String) async throws -> [IPAddress]) {
        self.policy = policy
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.lookUp = lookUp
    }

    // MARK: Checking an address

    /// Reads `text` as a web address the worker may fetch, or says why not.
    public static func parse(_ text: String) throws -> (url: URL, host: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = trimmed.count > 200 ? String(trimmed.prefix(200)) + "…" : trimmed
        guard !trimmed.isEmpty else {
            throw ServiceError(.unsupportedURL, "the address is empty; write it like https://example.com/recipe")
        }
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased() else {
            throw ServiceError(.unsupportedURL, "\(shown) is not a web address; write it like https://example.com/recipe")
        }
        guard scheme == "http" || scheme == "https" else {
            throw ServiceError(.unsupportedURL,
                "\(shown) is not a web page's address (it starts \(scheme.prefix(40)):); only http:// and https:// pages can be imported (for a saved page use --html FILE --url URL)")
        }
        guard components.user == nil && components.password == nil else {
            throw ServiceError(.unsupportedURL,
                "\(shown) carries a user name or password before the host; recipe pages are public, so write the address without it")
        }
        guard var host = components.host, !host.isEmpty else {
            throw ServiceError(.unsupportedURL, "\(shown) has no host; write it like https://example.com/recipe")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw ServiceError(.unsupportedURL, "\(shown) names port \(port); a port is 1 to 65535 (most pages need none: https://example.com/recipe)")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.lowercased()
        // One spelling of the host for the check, the pin and the request: plain ASCII names
        // and address literals only, in lower case, so the pinned name is the name requested.
        let literal = IPAddress(host) != nil
        guard literal || Self.isPlainHostName(host) else {
            throw ServiceError(.unsupportedURL,
                "\(shown) has a host name with characters other than letters, digits, dots and dashes; write internationalized names in their xn-- form")
        }
        var clean = components
        clean.fragment = nil
        clean.scheme = scheme
        clean.percentEncodedHost = literal && host.contains(":") ? "[\(host)]" : host
        guard let url = clean.url, Self.requestHost(of: url) == host else {
            throw ServiceError(.unsupportedURL, "\(shown) is not a web address; write it like https://example.com/recipe")
        }
        return (url, host)
    }

    /// Letters, digits, dots and dashes: a host name with one spelling.
    static func isPlainHostName(_ host: String) -> Bool {
        host.utf8.count <= 253 && host.utf8.allSatisfy { byte in
            (97...122).contains(byte) || (48...57).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
    }

    /// The host the HTTP client will look up for `url`, as it reads it (no brackets).
    static func requestHost(of url: URL) -> String? {
        guard var host = URL(string: url.absoluteString)?.host else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// Parses, resolves and checks `text` without connecting: the address the
    /// connection would be pinned to, or the reason it is refused.
    public func check(_ text: String) async throws -> CheckedTarget {
        let (url, host) = try Self.parse(text)
        if policy.onlyAllowList && !policy.allowList.names(host: host) {
            throw ServiceError(.blockedAddress, "\(host) is not among the hosts this worker may fetch from (\(policy.allowList)): it was started "
                               + "with --fetch-only-allowed. Add the host with --allow-host, or save the page in a browser and use --html")
        }
        let addresses = try await resolve(host)
        for address in addresses where !policy.allowList.allows(host: host, address: address) {
            guard let reason = address.nonPublicReason else { continue }
            let shownHost = host == address.description ? host : "\(host) (\(address))"
            // Only a home network is worth allowing; metadata, multicast and reserved ranges never are.
            let lan = AllowList.homeNetworkReasons.contains { reason.contains($0) }
            let advice = lan ? "To import from your own network, start recipe-worker with --allow-host \(host), or save the page and use --html"
                             : "Save the page in a browser and use --html instead"
            throw ServiceError(.blockedAddress, "\(shownHost) is \(reason); the worker only fetches pages on the public internet. \(advice)")
        }
        return CheckedTarget(url: url, host: host, addresses: addresses)
    }

    /// The host's addresses, within the connect time limit (a resolver that hangs is a site that does not answer).
    private func resolve(_ host: String) async throws -> [IPAddress] {
        let limit = policy.connectTimeout
        return try await withThrowingTaskGroup(of: [IPAddress]?.self) { group in
            group.addTask { try await lookUp(host) }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int(limit * 1_000)))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let addresses = first else {
                throw ServiceError(.fetchTimeout, "looking up \(host) took longer than \(seconds(limit)); check the address or try again later")
            }
            return addresses
        }
    }

    // MARK: Fetching

    /// Fetches `text`, following at most `policy.maxRedirects` redirects, each checked again.
    public func fetch(_ text: String, for purpose: Purpose = .page) async throws -> FetchedResource {
        let cap = purpose == .page ? policy.maxPageBytes : policy.maxImageBytes
        let deadline = NIODeadline.now() + .milliseconds(Int64(policy.overallTimeout * 1_000))
        var hops: [URL] = []
        var next = text
        while true {
            let target = try await check(next)
            hops.append(target.url)
            let response = try await request(target, purpose: purpose, cap: cap, deadline: deadline)
            switch response {
            case .body(let status, let contentType, let body):
                return FetchedResource(url: target.url, status: status, contentType: contentType, body: body, hops: hops)
            case .redirect(let location):
                guard let resolved = URL(string: location, relativeTo: target.url)?.absoluteURL else {
                    throw ServiceError(.fetchFailed, "\(target.url.absoluteString) redirected to \(location), which is not a web address")
                }
                guard hops.count <= policy.maxRedirects else {
                    throw ServiceError(.tooManyRedirects,
                        "\(hops[0].absoluteString) redirected more than \(policy.maxRedirects) times (the limit; the last hop pointed to \(resolved.absoluteString)); open it in a browser, save the page and import it with --html")
                }
                next = resolved.absoluteString
            }
        }
    }

    private enum HopResult {
        case body(status: Int, contentType: String?, body: [UInt8])
        case redirect(String)
    }

    /// One request to a checked target, on a client whose only route to the host
    /// is the checked address.
    private func request(_ target: CheckedTarget, purpose: Purpose, cap: Int, deadline: NIODeadline) async throws -> HopResult {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(policy.connectTimeout * 1_000)),
                           read: .milliseconds(Int64(policy.readTimeout * 1_000))),
            proxy: nil,
            decompression: .enabled(limit: .size(cap + 1)))
        let pinned = target.pinned.description
        configuration.dnsOverride = [target.host: pinned, "[\(target.host)]": pinned]
        configuration.connectionPool = .init(idleTimeout: .seconds(1))
        // A connection that could not be made is said at once, as a browser does: the client's own retries (with a
        // backoff, until the connect timeout) made every refused connection, every certificate that could not be
        // verified and every site not speaking TLS take the whole 10 s, and then said only the last attempt's
        // error. A lost packet is the system's to send again within the connect timeout, as before.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        do {
            let result = try await perform(client, target: target, purpose: purpose, cap: cap, deadline: deadline)
            try? await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw translate(error, target: target, cap: cap)
        }
    }

    private func perform(_ client: HTTPClient, target: CheckedTarget, purpose: Purpose, cap: Int,
                         deadline: NIODeadline) async throws -> HopResult {
        var request = HTTPClientRequest(url: target.url.absoluteString)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: policy.userAgent)
        request.headers.add(name: "Accept", value: purpose.accept)
        request.headers.add(name: "Accept-Language", value: "en-US,en;q=0.9")
        logger.debug("fetching", metadata: ["url": "\(target.url.absoluteString)", "address": "\(target.pinned)"])
        let response = try await client.execute(request, deadline: deadline, logger: logger)
        let status = Int(response.status.code)
        if (300..<400).contains(status), status != 304 {
            guard let location = response.headers.first(name: "location"), !location.isEmpty else {
                throw ServiceError(.fetchFailed, "\(target.url.absoluteString) answered HTTP \(status) without saying where to go")
            }
            return .redirect(location)
        }
        let contentType = response.headers.first(name: "content-type")
        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > cap {
            throw tooLarge(target, cap: cap, seen: declared)
        }
        var body: [UInt8] = []
        for try await chunk in response.body {
            guard body.count + chunk.readableBytes <= cap else { throw tooLarge(target, cap: cap, seen: nil) }
            body.append(contentsOf: chunk.readableBytesView)
            if NIODeadline.now() > deadline { throw timedOut(target) }
        }
        guard (200..<300).contains(status) else { throw refusal(status: status, target: target, body: body) }
        return .body(status: status, contentType: contentType, body: body)
    }

    // MARK: Errors a person can act on

    private func tooLarge(_ target: CheckedTarget, cap: Int, seen: Int?) -> ServiceError {
        let size = seen.map { "is \(megabytes($0))" } ?? "is larger than \(megabytes(cap))"
        return ServiceError(.pageTooLarge,
            "\(target.url.absoluteString) \(size); the worker reads at most \(megabytes(cap)), so save the page and import it with --html")
    }

    private func timedOut(_ target: CheckedTarget) -> ServiceError {
        ServiceError(.fetchTimeout,
            "\(target.host) did not finish sending \(target.url.absoluteString) within \(seconds(policy.overallTimeout)) (the limit for one fetch); try again later, or save the page and import it with --html")
    }

    private func refusal(status: Int, target: CheckedTarget, body: [UInt8]) -> ServiceError {
        let challenge = Self.looksLikeChallenge(body)
        let turnedAway = [401, 403, 429].contains(status) || (status == 503 && challenge)
        switch status {
        case _ where turnedAway:
            return ServiceError(.blockedBySite,
                "\(target.host) turned the request away (HTTP \(status)\(challenge ? ", a bot check" : "")); open the page in a browser, save it and import it with --html FILE --url URL")
        case 404, 410:
            return ServiceError(.fetchFailed, "\(target.url.absoluteString) does not exist (HTTP \(status)); check the address")
        default:
            return ServiceError(.fetchFailed, "\(target.host) answered HTTP \(status) for \(target.url.absoluteString); try again later, or save the page and import it with --html")
        }
    }

    /// Whether a body is a bot check rather than content (Cloudflare, captchas).
    public static func looksLikeChallenge(_ body: [UInt8]) -> Bool {
        let head = String(decoding: body.prefix(64 * 1024), as: UTF8.self).lowercased()
        // Strong signs only: plenty of real recipe pages load a captcha for their comment form.
        return ["cf-challenge", "challenge-platform", "cf_chl_", "<title>just a moment", "<title>attention required",
                "are you a robot", "verify you are human", "<title>access denied", "px-captcha", "g-recaptcha-response\" required",
                "captcha-delivery.com"].contains { head.contains($0) }
    }

    private func translate(_ error: any Error, target: CheckedTarget, cap: Int) -> any Error {
        if error is ServiceError { return error }
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded:
                return timedOut(target)
            case .readTimeout:
                return ServiceError(.fetchTimeout,
                    "\(target.host) sent no more of \(target.url.absoluteString) for \(seconds(policy.readTimeout)) (the most the worker waits for the next part of a page); try again later, or save the page and import it with --html")
            case .connectTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout:
                return ServiceError(.fetchTimeout,
                    "could not connect to \(target.host) (\(target.pinned)) within \(seconds(policy.connectTimeout)); check the address or try again later")
            case .cancelled:
                return ServiceError(.fetchTimeout, "fetching \(target.url.absoluteString) was stopped before it finished")
            default:
                break
            }
        }
        if Self.isOutOfDescriptors(error) {
            // This worker's own want, not the site's: said so, as `busy`, which the reference client retries.
            return OpenFiles.allInUse("\(target.url.absoluteString) was not fetched", service: "recipe-worker", kept: "nothing was stored")
        }
        if let decompression = error as? NIOHTTPDecompression.DecompressionError, decompression == .limit {
            // A compressed body that unpacks beyond the cap.
            return tooLarge(target, cap: cap, seen: nil)
        }
        return ServiceError(.fetchFailed, "could not fetch \(target.url.absoluteString) from \(target.pinned): \(FetchErrorText.describe(error))")
    }

    /// Whether `error` is the system refusing this process a socket for want of a file descriptor (as SwiftNIO says
    /// it, alone or for each address it tried).
    static func isOutOfDescriptors(_ error: any Error) -> Bool {
        if let io = error as? IOError { return OpenFiles.isExhaustion(errno: io.errnoCode) }
        if let connection = error as? NIOConnectionError {
            return !connection.connectionErrors.isEmpty && connection.connectionErrors.allSatisfy { isOutOfDescriptors($0.error) }
        }
        return false
    }

    private func megabytes(_ bytes: Int) -> String {
        let value = Double(bytes) / 1_000_000
        return value >= 10 || value == value.rounded() ? "\(Int(value.rounded())) MB" : String(format: "%.1f MB", value)
    }

    private func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}
