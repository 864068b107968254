import Foundation
import RecipeModel
import ZeroMQ

/// CURVE key files, as `recipes keys generate` writes them and the services read them:
/// Z85 keys, one per line; blank lines and lines starting with `#` are ignored. A secret
/// key file holds one secret key; a public key file holds one or more public keys
/// (so `cat worker.pub cli.pub > clients.pub` makes an allow-list).
public enum KeyFiles {
    /// The keys in the file at `path`, in order.
    public static func keys(at path: String) throws(KeyFileError) -> [String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw KeyFileError(path: path, problem: "cannot be read (\(FileErrorText.reason(error)))")
        }
        var keys: [String] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard CurveKeyPair.isValidKey(line) else {
                throw KeyFileError(path: path, problem: "line \(number + 1) is not a key: a key is 40 Z85 characters, as `recipes keys generate` writes them")
            }
            keys.append(line)
        }
        return keys
    }

    /// The key pair whose secret key is in the file at `path` (exactly one key).
    public static func keyPair(secretKeyFile path: String) throws(KeyFileError) -> CurveKeyPair {
        let key = try single(at: path, what: "secret key")
        do {
            return try CurveKeyPair(secretKey: key)
        } catch {
            throw KeyFileError(path: path, problem: "does not hold a usable secret key")
        }
    }

    /// The public key in the file at `path` (exactly one key).
    public static func publicKey(file path: String) throws(KeyFileError) -> String {
        try single(at: path, what: "public key")
    }

    /// Every public key in the files at `paths` (at least one).
    public static func publicKeys(files paths: [String]) throws(KeyFileError) -> Set<String> {
        var keys: Set<String> = []
        for path in paths { keys.formUnion(try self.keys(at: path)) }
        guard !keys.isEmpty else {
            throw KeyFileError(path: paths.joined(separator: ", "), problem: "holds no public key; list the clients' .pub files")
        }
        return keys
    }

    private static func single(at path: String, what: String) throws(KeyFileError) -> String {
        let keys = try keys(at: path)
        guard keys.count == 1 else {
            throw KeyFileError(path: path, problem: "holds \(keys.count) keys; a \(what) file holds exactly one")
        }
        return keys[0]
    }

    /// Writes `pair` as `<name>.key` (the secret, readable by its owner only) and `<name>.pub`
    /// in `folder`, and returns both paths. Existing files are kept unless `replacing`.
    public static func write(_ pair: CurveKeyPair, name: String, in folder: URL, replacing: Bool = false) throws(KeyFileError) -> (secret: URL, public: URL) {
        let secret = folder.appendingPathComponent("\(name).key")
        let publicFile = folder.appendingPathComponent("\(name).pub")
        let manager = FileManager.default
        if !replacing {
            for file in [secret, publicFile] where manager.fileExists(atPath: file.path) {
                throw KeyFileError(path: file.path, problem: "already exists; keep it, or pass --force to replace it (clients that know the old public key will be refused)")
            }
        }
        do {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            let created = Date().formatted(.iso8601)
            try? manager.removeItem(at: secret)
            guard manager.createFile(atPath: secret.path, contents: Data("""
                # RecipeVault CURVE secret key "\(name)", made \(created). Keep it private: whoever has it is \(name).
                \(pair.secretKey)

                """.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission)
            }
            try Data("""
                # RecipeVault CURVE public key "\(name)", made \(created). Share it: clients of \(name) connect with it, and services \(name) connects to list it in their client keys.
                \(pair.publicKey)

                """.utf8).write(to: publicFile)
        } catch let error as KeyFileError {
            throw error
        } catch {
            throw KeyFileError(path: folder.path, problem: "cannot be written (\(FileErrorText.reason(error)))")
        }
        return (secret, publicFile)
    }
}

/// A key file that cannot be used, and why.
public struct KeyFileError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var problem: String
    public var description: String { "key file \(path) \(problem)" }
}

/// The CURVE settings a service is started with: its secret key and the clients it lets in.
public enum ServerKeys {
    /// Security for a service from its `--secret-key` file, its `--client-keys` files and
    /// (recipe-storage) its `--peer-keys` files; `nil` when none is given (no security).
    /// `options` names the options in errors.
    public static func security(secretKeyFile: String?, clientKeyFiles: [String], peerKeyFiles: [String] = [],
                                options: (secret: String, clients: String)) throws -> CurveServerSecurity? {
        let listed = clientKeyFiles + peerKeyFiles
        switch (secretKeyFile, listed.isEmpty) {
        case (nil, true):
            return nil
        case (nil, false):
            throw KeyFileError(path: listed.joined(separator: ", "),
                               problem: "is given as allowed keys but no \(options.secret) is: CURVE needs the service's own secret key too")
        case (let secret?, true):
            throw KeyFileError(path: secret, problem: "is given as \(options.secret) but no \(options.clients) are: list the public keys of the clients allowed in")
        case (let secret?, false):
            return CurveServerSecurity(keys: try KeyFiles.keyPair(secretKeyFile: secret),
                                       allowedClientKeys: clientKeyFiles.isEmpty ? [] : try KeyFiles.publicKeys(files: clientKeyFiles),
                                       peerKeys: peerKeyFiles.isEmpty ? [] : try KeyFiles.publicKeys(files: peerKeyFiles))
        }
    }
}
