/// The endpoints RecipeVault's processes are given (`tcp://host:port`, `ipc://path`), checked as written before any
/// socket sees them. libzmq refuses some only when a socket binds or connects, as "Invalid argument"; a connect to
/// others (a port past 65535, an unclosed `[`) is taken and waited on for ever, so a worker given one retried a storage
/// it could never reach, and a CLI said "not reachable" about a typing mistake.
public enum EndpointSyntax {
    /// Whether the endpoint is to be listened on (a host may be `*`, the port `*` for any free one) or connected to.
    public enum Use: Sendable { case bind, connect }

    /// How a good one is written, for the end of a refusal.
    public static let example = "write it like tcp://127.0.0.1:5555, tcp://[::1]:5555 or ipc:///run/recipevault/storage.sock"

    /// The longest path an `ipc://` endpoint may have: a Unix socket's address holds 107 bytes and a terminating zero.
    public static let maxIPCPathBytes = 107

    /// `name` ("--storage", "RECIPES_STORAGE") and what is wrong with `endpoint`, or nil when it can be used.
    public static func refusal(_ endpoint: String, named name: String, for use: Use) -> String? {
        problem(endpoint, for: use).map { "\(name) \"\(endpoint)\" is not an endpoint: \($0); \(example)" }
    }

    /// The refusal of the endpoint a process is given by an option (`value`) or, without it, by its environment
    /// `variable`, named by whichever gave it; nil when neither gives one or it can be used.
    public static func refusal(option: String, value: String?, variable: String, for use: Use) -> String? {
        guard let endpoint = value ?? ProcessEnvironment.value(variable) else { return nil }
        return refusal(endpoint, named: value == nil ? variable : option, for: use)
    }

    /// What is wrong with `endpoint`, or nil when it can be used.
    public static func problem(_ endpoint: String, for use: Use) -> String? {
        if endpoint.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            return "it holds a space or a control character"
        }
        guard let separator = endpoint.range(of: "://") else { return "it has no transport (tcp:// or ipc://)" }
        let address = endpoint[separator.upperBound...]
        switch endpoint[..<separator.lowerBound] {
        case "tcp": return tcpProblem(address, for: use)
        case "ipc":
            if address.isEmpty { return "an ipc:// endpoint needs the path of its socket file" }
            if address.utf8.count > maxIPCPathBytes { return "its path is \(address.utf8.count) bytes; a socket file's path may have \(maxIPCPathBytes)" }
            return nil
        default:
            return "RecipeVault's processes talk over tcp:// or ipc://, not \(endpoint[..<separator.lowerBound])://"
        }
    }

    private static func tcpProblem(_ address: Substring, for use: Use) -> String? {
        // A connect may name the local address to leave from first: tcp://192.168.1.2;nas.local:5555.
        var rest = address
        if use == .connect, let semicolon = address.lastIndex(of: ";") {
            if let problem = hostProblem(address[..<semicolon], for: .connect) { return "its source address: \(problem)" }
            rest = address[address.index(after: semicolon)...]
        }
        let host: Substring
        let port: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return "its [ has no closing ]" }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { return "a port must follow the ]" }
            port = after.dropFirst()
            // An address, `*` to listen on every one, and a zone after `%` (fe80::1%eth0): what libzmq reads there.
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ":.%*_-".contains($0)) })
            else { return "[\(host)] is not an IPv6 address" }
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return "it has no port" }
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
            if host.contains(":") { return "an IPv6 address goes in brackets" }
            if let problem = hostProblem(host, for: use) { return problem }
        }
        return portProblem(port, for: use)
    }

    private static func hostProblem(_ host: Substring, for use: Use) -> String? {
        if host.isEmpty { return "it has no host before the port" }
        if host == "*" { return use == .bind ? nil : "* (every interface) is for listening; to connect, name the host" }
        if host.utf8.count > 253 { return "its host is \(host.utf8.count) characters; a host name has at most 253" }
        // As libzmq reads a host: ASCII letters, digits, dots, hyphens and underscores, starting with a letter or digit.
        if let odd = host.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_")) }) {
            return "its host holds \"\(odd)\"; a host is a name, an IPv4 address or an IPv6 one in brackets"
        }
        if let first = host.first, !(first.isLetter || first.isNumber) {
            return "its host starts with \"\(first)\"; a host starts with a letter or a digit"
        }
        return nil
    }

    private static func portProblem(_ port: Substring, for use: Use) -> String? {
        if use == .bind && (port == "*" || port == "!") { return nil }
        let lowest = use == .bind ? 0 : 1
        guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port),
              (lowest...65_535).contains(number)
        else {
            return "its port \"\(port)\" must be a number from \(lowest) to 65535" + (use == .bind ? " (or * for any free one)" : "")
        }
        return nil
    }
}
