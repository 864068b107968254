import Foundation
import TestThreads
import Testing

/// Static checks of the container files (no container engine runs here): the paths the
/// Dockerfile copies exist, the variables compose and the image set are the ones the
/// executables read, and the deployment is secured the way the README says.
@Suite("deploy/Dockerfile and docker-compose.yml, checked without a container engine", .onOwnThread)
struct DeploymentFilesTests {
    let compose: ComposeFile
    let dockerfile: Dockerfile

    init() throws {
        compose = try ComposeFile(contentsOf: projectFolder.appendingPathComponent("docker-compose.yml"))
        dockerfile = try Dockerfile(contentsOf: projectFolder.appendingPathComponent("deploy/Dockerfile"))
    }

    /// What each executable reads, from its sources.
    func variables(of executable: String) throws -> Set<String> {
        let folder = ["recipe-storage": "Services/RecipeStorage", "recipe-worker": "Services/RecipeWorker", "recipes": "Services/RecipesCLI"][executable]!
        return try environmentVariablesRead(under: projectFolder.appendingPathComponent(folder))
    }

    @Test("every path the Dockerfile copies from the build context exists; copies between stages name a stage")
    func copiedPathsExist() throws {
        let copies = dockerfile.all("COPY")
        #expect(copies.count >= 5)
        let stages = Set(dockerfile.all("FROM").compactMap { $0.components(separatedBy: " AS ").last?.trimmingCharacters(in: .whitespaces) })
        for copy in copies {
            var words = copy.split(whereSeparator: \.isWhitespace).map(String.init)
            if let from = words.first(where: { $0.hasPrefix("--from=") }) {
                #expect(stages.contains(String(from.dropFirst("--from=".count))), "COPY \(copy): no such stage")
                continue
            }
            words.removeAll { $0.hasPrefix("--") }
            for source in words.dropLast() {
                #expect(FileManager.default.fileExists(atPath: projectFolder.appendingPathComponent(source).path),
                        "COPY \(copy): \(source) is not in the project")
            }
        }
        // The manifest names every target folder; the image build needs them all.
        let manifest = try String(contentsOf: projectFolder.appendingPathComponent("Package.swift"), encoding: .utf8)
        let copied = copies.flatMap { $0.split(whereSeparator: \.isWhitespace).dropLast().map(String.init) }
        for top in ["Shared", "Services", "Benchmarks", "Tests"] where manifest.contains("\"\(top)/") || top == "Tests" {
            #expect(copied.contains(top), "the Dockerfile does not copy \(top)/, which the manifest needs")
        }
    }

    @Test("the image: multi-stage, slim runtime with only libzmq5, libsqlite3-0 and libvips42, a non-root user, a data volume, a health check")
    func imageShape() throws {
        let stages = dockerfile.all("FROM")
        #expect(stages.count == 2)
        let runtimeInstall = try #require(dockerfile.all("RUN").first { $0.contains("libzmq5") })
        let packages = Set(runtimeInstall.components(separatedBy: "--no-install-recommends").last!
            .components(separatedBy: "&&").first!.split(whereSeparator: \.isWhitespace).map(String.init))
        #expect(packages == ["libzmq5", "libsqlite3-0", "libvips42", "ca-certificates"], "\(packages)")
        // The build stage has the headers of each library the runtime stage installs.
        let buildInstall = try #require(dockerfile.all("RUN").first { $0.contains("libzmq3-dev") })
        for headers in ["libzmq3-dev", "libsqlite3-dev", "libvips-dev", "zlib1g-dev", "pkg-config"] {
            #expect(buildInstall.contains(headers), "the build stage does not install \(headers)")
        }
        let user = try #require(dockerfile.all("USER").last)
        #expect(!user.hasPrefix("root") && !user.hasPrefix("0"))
        #expect(dockerfile.all("VOLUME").contains { $0.contains("/data") })
        #expect(dockerfile.environment["RECIPES_DATA"] == "/data")
        // Backups go only into their volume: a client cannot have a copy of every recipe written elsewhere in the container.
        #expect(dockerfile.environment["RECIPES_BACKUP_FOLDER"] == "/backups")
        #expect(dockerfile.all("VOLUME").contains { $0.contains("/backups") })
        #expect(try #require(dockerfile.all("HEALTHCHECK").first).contains(#""recipes", "status""#))
        #expect(dockerfile.all("RUN").contains { $0.contains("--static-swift-stdlib") })
    }

    @Test("the variables compose and the image set are the ones the executables read (the CLI runs the health checks)")
    func environmentMatchesExecutables() throws {
        let cli = try variables(of: "recipes")
        let roles = ["storage": "recipe-storage", "replica": "recipe-storage", "worker": "recipe-worker", "cli": "recipes"]
        #expect(Set(compose.services.keys) == Set(roles.keys))
        for (name, service) in compose.services {
            let executable = try #require(roles[name])
            #expect(service.command.first == executable || (name == "cli"), "\(name) runs \(service.command)")
            let read = try variables(of: executable).union(cli)
            #expect(!service.environment.isEmpty)
            for variable in service.environment.keys {
                #expect(read.contains(variable), "compose sets \(variable) for \(name), but \(executable) does not read it")
            }
        }
        let image = try variables(of: "recipe-storage").union(variables(of: "recipe-worker"))
        for variable in dockerfile.environment.keys {
            #expect(image.contains(variable), "the Dockerfile sets \(variable), which no service reads")
        }
        // And the other way: what the services need for CURVE is set.
        #expect(compose.services["storage"]?.environment["RECIPES_STORAGE_SECRET_KEY_FILE"] != nil)
        #expect(compose.services["worker"]?.environment["RECIPES_WORKER_REPLICAS"] == "tcp://replica:5555")
        // Every variable any executable reads is in the README.
        let readme = try String(contentsOf: projectFolder.appendingPathComponent("README.md"), encoding: .utf8)
        for variable in try variables(of: "recipe-storage").union(variables(of: "recipe-worker")).union(cli) {
            #expect(readme.contains("`\(variable)`"), "README does not document \(variable)")
        }
    }

    @Test("CURVE is on for every service, keys come as secrets, and only the storage and worker requests are published")
    func securedDeployment() throws {
        for (name, service) in compose.services {
            for secret in service.secrets {
                let file = try #require(compose.secrets[secret], "\(name) uses secret \(secret), which is not declared")
                #expect(file.hasPrefix("./deploy/keys/"), "\(secret) comes from \(file)")
            }
            for (variable, value) in service.environment where variable.hasSuffix("_FILE") || variable.hasSuffix("_FILES") {
                for path in value.split(separator: ",") {
                    #expect(path.hasPrefix("/run/secrets/") && service.secrets.contains(String(path.dropFirst("/run/secrets/".count))),
                            "\(name): \(variable) names \(path), which is not one of its secrets")
                }
            }
        }
        #expect(compose.services["storage"]?.environment["RECIPES_STORAGE_CLIENT_KEYS_FILE"] != nil)
        #expect(compose.services["replica"]?.environment["RECIPES_STORAGE_CLIENT_KEYS_FILE"] != nil)
        #expect(compose.services["worker"]?.environment["RECIPES_WORKER_CLIENT_KEYS_FILE"] != nil)
        #expect(compose.services["cli"]?.environment["RECIPES_KEY_FILE"] == "/run/secrets/cli_key")
        #expect(compose.services["cli"]?.profiles == ["cli"])
        let published = compose.services.flatMap { name, service in service.ports.map { "\(name) \($0)" } }.sorted()
        #expect(published == ["storage 5555:5555", "worker 5556:5556"], "\(published)")
        for name in ["storage", "replica", "worker"] {
            #expect(compose.services[name]?.healthcheck.prefix(3) == ["CMD", "recipes", "status"], "\(name) has a health check")
        }
    }
}
