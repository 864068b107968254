import Foundation

/// What the tests read from docker-compose.yml and deploy/Dockerfile. The compose file is
/// validated against the Compose specification's schema by `deploy/check`; this reader only
/// needs the parts the tests compare, in the block style the file is written in.
struct ComposeFile {
    struct Service {
        var command: [String] = []
        var environment: [String: String] = [:]
        var secrets: [String] = []
        var healthcheck: [String] = []
        var ports: [String] = []
        var profiles: [String] = []
    }

    var services: [String: Service] = [:]
    /// Secret name → file, relative to the project.
    var secrets: [String: String] = [:]

    init(contentsOf url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        var section = ""
        var service = ""
        var key = ""
        var secret = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = String(raw)
            let content = line.trimmingCharacters(in: .whitespaces)
            if content.isEmpty || content.hasPrefix("#") { continue }
            let indent = line.prefix { $0 == " " }.count
            let (name, value) = Self.split(content)
            switch indent {
            case 0:
                section = name
            case 2 where section == "services":
                service = name
                services[service, default: Service()] = services[service] ?? Service()
            case 2 where section == "secrets":
                secret = name
            case 4 where section == "secrets" && name == "file":
                secrets[secret] = value
            case 4 where section == "services":
                key = name
                let list = Self.list(value)
                switch key {
                case "command": services[service]?.command = list
                case "secrets": services[service]?.secrets = list
                case "profiles": services[service]?.profiles = list
                default: break
                }
            case 6 where section == "services":
                if key == "environment" {
                    services[service]?.environment[name] = value
                } else if key == "healthcheck" && name == "test" {
                    services[service]?.healthcheck = Self.list(value)
                } else if key == "ports" && content.hasPrefix("- ") {
                    services[service]?.ports.append(Self.unquote(String(content.dropFirst(2))))
                }
            default:
                break
            }
        }
    }

    /// `name: value` → (name, value); `- item` → ("- item", "").
    private static func split(_ content: String) -> (String, String) {
        guard !content.hasPrefix("- "), let colon = content.firstIndex(of: ":") else { return (content, "") }
        let name = content[..<colon].trimmingCharacters(in: .whitespaces)
        var value = content[content.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if let comment = value.range(of: " #") { value = String(value[..<comment.lowerBound]) }
        return (name, unquote(value))
    }

    /// `["a", "b"]` or `[a, b]` → ["a", "b"]; anything else → [].
    private static func list(_ value: String) -> [String] {
        guard value.hasPrefix("["), value.hasSuffix("]") else { return [] }
        return value.dropFirst().dropLast().split(separator: ",").map { unquote($0.trimmingCharacters(in: .whitespaces)) }
    }

    private static func unquote(_ value: String) -> String {
        value.count >= 2 && value.first == "\"" && value.last == "\"" ? String(value.dropFirst().dropLast()) : value
    }
}

/// What the tests read from deploy/Dockerfile.
struct Dockerfile {
    /// Every instruction, continuation lines joined: ("COPY", "Shared ./Shared").
    var instructions: [(keyword: String, arguments: String)] = []

    init(contentsOf url: URL) throws {
        var joined = ""
        for raw in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if joined.isEmpty && (line.isEmpty || line.hasPrefix("#")) { continue }
            if line.hasSuffix("\\") {
                joined += line.dropLast() + " "
                continue
            }
            joined += line
            let keyword = joined.prefix { !$0.isWhitespace }.uppercased()
            instructions.append((keyword, joined.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)))
            joined = ""
        }
    }

    func all(_ keyword: String) -> [String] { instructions.filter { $0.keyword == keyword }.map(\.arguments) }

    /// The variables `ENV` sets (`ENV A=1 B=2`).
    var environment: [String: String] {
        var values: [String: String] = [:]
        for arguments in all("ENV") {
            for pair in arguments.split(whereSeparator: \.isWhitespace) {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { values[parts[0]] = parts[1] }
            }
        }
        return values
    }
}

/// The `RECIPES_…` variables the sources under `folder` read from the environment.
func environmentVariablesRead(under folder: URL) throws -> Set<String> {
    let pattern = try NSRegularExpression(pattern: #"(?:ProcessEnvironment\.value|environment|environmentList)\("(RECIPES_[A-Z0-9_]+)"\)"#)
    var names: Set<String> = []
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    while let file = files?.nextObject() as? URL {
        guard file.pathExtension == "swift" else { continue }
        let text = try String(contentsOf: file, encoding: .utf8)
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
        }
    }
    return names
}
