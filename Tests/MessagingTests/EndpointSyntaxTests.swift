import Messaging
import TestRandom
import Testing

@Suite("Endpoints checked as written, before any socket sees them")
struct EndpointSyntaxTests {
    @Test("what the services and the CLI are given in practice is taken", arguments: [
        ("tcp://127.0.0.1:5555", EndpointSyntax.Use.connect), ("tcp://storage:5555", .connect), ("tcp://home-server.local:5555", .connect),
        ("tcp://[::1]:5555", .connect), ("tcp://[fe80::1%eth0]:5555", .connect), ("tcp://192.168.1.2;nas.local:5555", .connect),
        ("ipc:///run/recipevault/storage.sock", .connect), ("ipc://@recipes", .connect),
        ("tcp://*:5555", .bind), ("tcp://127.0.0.1:*", .bind), ("tcp://0.0.0.0:5557", .bind), ("tcp://[::]:5555", .bind),
        ("tcp://eth0:5555", .bind), ("ipc://*", .bind),
    ])
    func taken(endpoint: String, use: EndpointSyntax.Use) {
        #expect(EndpointSyntax.problem(endpoint, for: use) == nil)
    }

    /// Each of these reached libzmq before: refused there as "Invalid argument", or (a port past 65535, an unclosed
    /// bracket) taken by a connect that then waited for ever.
    @Test("what cannot work is refused, saying why", arguments: [
        ("tcp://", EndpointSyntax.Use.connect, "it has no port"),
        ("garbage", .connect, "it has no transport (tcp:// or ipc://)"),
        ("tcp://127.0.0.1:abc", .connect, "its port \"abc\" must be a number from 1 to 65535"),
        ("tcp://127.0.0.1:99999", .connect, "its port \"99999\" must be a number from 1 to 65535"),
        ("tcp://127.0.0.1:99999", .bind, "its port \"99999\" must be a number from 0 to 65535 (or * for any free one)"),
        ("tcp://127.0.0.1:*", .connect, "its port \"*\" must be a number from 1 to 65535"),
        ("tcp://127.0.0.1:0", .connect, "its port \"0\" must be a number from 1 to 65535"),
        ("tcp://[::1", .connect, "its [ has no closing ]"),
        ("tcp://[::1]5555", .connect, "a port must follow the ]"),
        ("tcp://::1:5555", .connect, "an IPv6 address goes in brackets"),
        ("tcp://*:5555", .connect, "* (every interface) is for listening; to connect, name the host"),
        ("tcp://:5555", .connect, "it has no host before the port"),
        ("tcp://127.0.0.1:5555 ", .connect, "it holds a space or a control character"),
        ("tcp://nas\n.local:5555", .connect, "it holds a space or a control character"),
        ("tcp://nas/x:5555", .connect, "its host holds \"/\"; a host is a name, an IPv4 address or an IPv6 one in brackets"),
        ("tcp://-nas:5555", .connect, "its host starts with \"-\"; a host starts with a letter or a digit"),
        ("tcp://café.local:5555", .connect, "its host holds \"é\"; a host is a name, an IPv4 address or an IPv6 one in brackets"),
        ("tcp://*;nas:5555", .connect, "its source address: * (every interface) is for listening; to connect, name the host"),
        ("udp://nas:5555", .connect, "RecipeVault's processes talk over tcp:// or ipc://, not udp://"),
        ("ipc://", .bind, "an ipc:// endpoint needs the path of its socket file"),
        ("ipc:///tmp/" + String(repeating: "a", count: 103), .bind, "its path is 108 bytes; a socket file's path may have 107"),
    ])
    func refused(endpoint: String, use: EndpointSyntax.Use, problem: String) {
        #expect(EndpointSyntax.problem(endpoint, for: use) == problem)
    }

    /// The checks cut the text at `://`, `;`, `[`, `]` and `:`: strings made of those pieces, in any order, never trap.
    @Test("random strings of endpoint pieces are answered, never a trap")
    func randomPieces() {
        var random = SplitMix(seed: .random(in: .min ... .max))
        let seed = random.state
        let pieces = ["tcp://", "ipc://", "://", "[", "]", ":", ";", "*", "!", "%", ".", "-", "_", "/", " ", "é", "1", "65535", "99999",
                      "127.0.0.1", "::1", "nas", "", "@", "\u{0}", "tcp:/", "ipc:"]
        for _ in 0..<20_000 {
            let endpoint = (0..<random.below(9)).map { _ in pieces[random.below(pieces.count)] }.joined()
            for use in [EndpointSyntax.Use.bind, .connect] {
                if let problem = EndpointSyntax.problem(endpoint, for: use) {
                    #expect(!problem.isEmpty, "seed \(seed): \(endpoint)")
                }
            }
        }
    }

    @Test("a refusal names where the endpoint came from, what is wrong and how one is written")
    func refusal() {
        #expect(EndpointSyntax.refusal("tcp://nas", named: "RECIPES_STORAGE", for: .connect)
                == "RECIPES_STORAGE \"tcp://nas\" is not an endpoint: it has no port; " + EndpointSyntax.example)
        #expect(EndpointSyntax.refusal("tcp://nas:5555", named: "--storage", for: .connect) == nil)
    }
}
