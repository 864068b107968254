import Foundation
import Testing

/// docker-compose.yml's services run as processes on loopback, with the environment, commands,
/// secrets and health checks the compose file gives them (secrets become key files made by
/// `recipes keys generate`, service names become loopback endpoints): CURVE on everywhere,
/// as in the containers.
@Suite("docker-compose.yml's services as processes: CURVE on, as the containers run them", .serialized)
struct ComposeMirrorTests {
    @Test("storage, replica and worker start with the compose settings; health checks pass; the cli service works; the replica is kept in step; strangers are refused")
    func composeServices() async throws {
        let compose = try ComposeFile(contentsOf: projectFolder.appendingPathComponent("docker-compose.yml"))
        let image = try Dockerfile(contentsOf: projectFolder.appendingPathComponent("deploy/Dockerfile")).environment
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-compose-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = folder.appendingPathComponent("keys")

        // The keys, as deploy/make-keys makes them.
        for name in ["storage", "replica", "worker", "cli", "stranger"] {
            let made = try await recipes(["keys", "generate", name, "--dir", keys.path], storage: "tcp://127.0.0.1:1")
            #expect(made.status == 0, "\(made.output)")
        }

        var endpoints: [String: String] = [:]
        var publish: [String: String] = [:]
        for name in ["storage", "replica", "worker"] {
            endpoints[name] = "tcp://127.0.0.1:\(try freeLoopbackPort())"
            publish[name] = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        }
        /// A service's environment: the image's, then the compose file's, mapped onto this machine.
        func environment(_ name: String) throws -> [String: String] {
            let service = try #require(compose.services[name])
            var values = image.merging(service.environment) { $1 }
            for (variable, value) in values {
                var mapped = value
                for (secret, file) in compose.secrets {
                    mapped = mapped.replacingOccurrences(of: "/run/secrets/\(secret)",
                                                         with: keys.appendingPathComponent(URL(fileURLWithPath: file).lastPathComponent).path)
                }
                mapped = mapped.replacingOccurrences(of: "tcp://storage:5555", with: endpoints["storage"]!)
                    .replacingOccurrences(of: "tcp://replica:5555", with: endpoints["replica"]!)
                    .replacingOccurrences(of: "tcp://worker:5556", with: endpoints["worker"]!)
                values[variable] = mapped
            }
            values["RECIPES_DATA"] = folder.appendingPathComponent(name).path
            if values["RECIPES_BACKUP_FOLDER"] != nil { values["RECIPES_BACKUP_FOLDER"] = folder.appendingPathComponent("\(name)-backups").path }
            values["RECIPES_STORAGE_BIND"] = endpoints[name]
            values["RECIPES_WORKER_BIND"] = endpoints[name]
            values["RECIPES_STORAGE_PUBLISH"] = publish[name]
            if name != "cli" && name != "worker" { values["RECIPES_STORAGE"] = endpoints[name] }
            if name == "worker" { values["RECIPES_WORKER"] = endpoints[name] }
            values["NO_COLOR"] = "1"
            return values
        }
        func start(_ name: String) throws -> ServiceProcess {
            let command = try #require(compose.services[name]?.command)
            return try ServiceProcess(command[0], Array(command.dropFirst()), environment: try environment(name))
        }
        /// Runs the compose health check of `name` with its environment.
        func healthCheck(_ name: String) async throws -> (status: Int32, output: String) {
            let test = try #require(compose.services[name]?.healthcheck)
            #expect(test.prefix(2) == ["CMD", "recipes"])
            let env = try environment(name)
            return try await recipes(Array(test.dropFirst(2)), storage: env["RECIPES_STORAGE"] ?? "", environment: env)
        }

        let storage = try start("storage")
        let replica = try start("replica")
        var running = [storage, replica]
        do {
            for service in running { _ = try await service.waitForOutput("CURVE security on") }
            let worker = try start("worker")
            running.append(worker)
            _ = try await worker.waitForOutput("listening")
            for name in ["storage", "replica", "worker"] {
                let health = try await healthCheck(name)
                #expect(health.status == 0, "\(name) health check: \(health.output)")
            }

            // The cli service: its key, the storage's and the worker's public keys.
            let cli = try environment("cli")
            let list = try await recipes(["list"], storage: cli["RECIPES_STORAGE"]!, environment: cli)
            #expect(list.status == 0 && list.output.contains("Caesar Salad"), "\(list.output)")
            let status = try await recipes(["status"], storage: cli["RECIPES_STORAGE"]!, environment: cli)
            #expect(status.status == 0 && status.output.contains("recipe-worker: up"), "\(status.output)")

            // The worker syncs the replica over CURVE (requests and change notices).
            var onReplica = cli
            onReplica["RECIPES_STORAGE_KEY_FILE"] = keys.appendingPathComponent("replica.pub").path
            onReplica["RECIPES_STORAGE"] = endpoints["replica"]
            let added = try await recipes(["add", "--name", "Harbour Chowder", "--ingredient", "1 l milk", "--favorite"],
                                          storage: cli["RECIPES_STORAGE"]!, environment: cli)
            #expect(added.status == 0, "\(added.output)")
            let synced = try await eventually(within: 30) {
                let shown = try await recipes(["show", "Harbour Chowder"], storage: endpoints["replica"]!, environment: onReplica)
                return shown.status == 0 && shown.output.contains("♥")
            }
            #expect(synced, "the new recipe reached the replica; the worker printed:\n\(worker.printed)")

            // A stranger's key, and no key at all: refused, exit 78; the cli keeps being served.
            var stranger = cli
            stranger["RECIPES_KEY_FILE"] = keys.appendingPathComponent("stranger.key").path
            let refused = try await recipes(["list"], storage: cli["RECIPES_STORAGE"]!, environment: stranger)
            #expect(refused.status == 78 && refused.output.contains("does not allow this client's public key"), "\(refused.output)")
            let keyless = try await recipes(["list"], storage: cli["RECIPES_STORAGE"]!,
                                            environment: ["RECIPES_KEY_FILE": "", "RECIPES_STORAGE_KEY_FILE": ""])
            #expect(keyless.status == 78 && keyless.output.contains("requires CURVE"), "\(keyless.output)")
            #expect(try await recipes(["list"], storage: cli["RECIPES_STORAGE"]!, environment: cli).status == 0)
            #expect(storage.printed.contains("refused a client"), "the storage logs the stranger")

            // A backup, as the README says to take one: by name, into the backup volume; anywhere else is refused.
            let backupFolder = try #require(try environment("storage")["RECIPES_BACKUP_FOLDER"], "the image sets the backup folder")
            let backup = try await recipes(["backup", "2026-12-02"], storage: cli["RECIPES_STORAGE"]!, environment: cli)
            #expect(backup.status == 0 && backup.output.contains("to \(backupFolder)/2026-12-02."), "\(backup.output)")
            let elsewhere = folder.appendingPathComponent("elsewhere").path
            let refusedBackup = try await recipes(["backup", elsewhere], storage: cli["RECIPES_STORAGE"]!, environment: cli)
            #expect(refusedBackup.status != 0 && refusedBackup.output.contains("is outside the backup folder \(backupFolder)"), "\(refusedBackup.output)")
            #expect(!FileManager.default.fileExists(atPath: elsewhere))
        } catch {
            for service in running { _ = try? await service.stop() }
            throw error
        }
        for service in running.reversed() { #expect(try await service.stop() == 0) }
    }
}
