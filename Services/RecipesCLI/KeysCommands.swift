import ArgumentParser
import Foundation
import Messaging
import ZeroMQ

/// `recipes keys`: CURVE key pairs for the services and clients.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "CURVE key pairs that secure the connections between RecipeVault parts.",
        discussion: """
            Each part gets a key pair: a service is started with its secret key and the public keys of \
            the clients it lets in; a client connects with its secret key and the service's public key.
            """,
        subcommands: [GenerateKeys.self, ShowKey.self])
}

struct GenerateKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write a new key pair: NAME.key (secret, owner-only) and NAME.pub (public).")
    @Argument(help: "Whose keys these are: storage, replica, worker, cli… (letters, digits, - and _).")
    var name: String
    @Option(help: ArgumentHelp("Folder to write them to.", valueName: "folder"))
    var dir: String = "."
    @Flag(help: "Replace an existing pair (clients that know the old public key will be refused).")
    var force = false
    @Flag(help: "Print the paths and public key as JSON.")
    var json = false

    func validate() throws {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ValidationError("\"\(name)\" cannot name a key: use letters, digits, - and _ (up to 64), such as storage or cli")
        }
    }

    func run() async throws {
        try await reportingFailures {
            guard CurveKeyPair.isSupported else { throw CLIError("this libzmq was built without CURVE; install libzmq5 from Debian", status: ExitStatus.internalFailure) }
            let pair = try CurveKeyPair.generate()
            let written: (secret: URL, public: URL)
            do {
                written = try KeyFiles.write(pair, name: name, in: URL(fileURLWithPath: dir), replacing: force)
            } catch let error as KeyFileError {
                throw CLIError(error.description, status: ExitStatus.cannotWrite)
            }
            let publicKey = pair.publicKey
            if json {
                return try Output.json(["secretKeyFile": written.secret.path, "publicKeyFile": written.public.path, "publicKey": publicKey])
            }
            print("Wrote \(written.secret.path) (secret: keep it with \(name) only) and \(written.public.path) (public).")
            print("Public key: \(publicKey)")
        }
    }
}

struct ShowKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the public key of a key file (a .pub file, or the public half of a .key file).")
    @Argument(help: "A key file.") var file: String
    @Flag(help: "The file is a secret key file (NAME.key).") var secret = false

    func run() async throws {
        try await reportingFailures {
            do {
                print(secret ? try KeyFiles.keyPair(secretKeyFile: file).publicKey : try KeyFiles.publicKey(file: file))
            } catch let error as KeyFileError {
                throw CLIError(error.description, status: ExitStatus.usage)
            }
        }
    }
}
