import Foundation
import GRDB
import Messaging
import RecipeProtocol
import TestScratch
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("recipe-storage as a process")
struct StorageProcessTests {
    @Test("starts on an ephemeral port, answers health, and exits cleanly on SIGTERM and SIGINT", arguments: [SIGTERM, SIGINT])
    func startServeStop(signal: Int32) async throws {
        let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        configuration.timeout = .seconds(5)
        let client = try MessageClient(configuration: configuration)
        let health = try await client.call(System.Health.self, Empty())
        #expect(health.service == "recipe-storage")
        #expect(health.version == RecipeVault.version)
        #expect(try await service.stop(signal: signal) == 0, "exit status 0 after a graceful stop; output:\n\(service.printed)")
        #expect(service.printed.contains("stopping"))
    }

    /// `recipes status` said "up" with the counts (exit 0) while every write was refused for a damaged database.
    @Test("recipes status fails with exit 74, naming the damage a request met in the storage's database")
    func statusNamesDamage() async throws {
        let folder = temporaryDataFolder()
        func start() async throws -> (ServiceProcess, String) {
            let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder])
            return (service, try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#))
        }
        var (service, endpoint) = try await start()
        for name in ["Leek soup", "Pea soup"] { #expect(try await recipes(["add", "--name", name], storage: endpoint).status == 0) }
        #expect(try await service.stop() == 0)
        // The change feed's first page overwritten, as a failing disk would: writes record into it, counts do not read it.
        let file = folder + "/" + RecipeVault.databaseFileName
        let (page, size) = try await DatabaseQueue(path: file).read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'sync_records'") ?? 0, try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try handle.seek(toOffset: UInt64((page - 1) * size))
        try handle.write(contentsOf: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }))
        try handle.close()

        (service, endpoint) = try await start()
        #expect(try await recipes(["status", "--only", "storage"], storage: endpoint).status == 0, "no request has met the damage yet")
        let add = try await recipes(["add", "--name", "Bean soup"], storage: endpoint)
        #expect(add.status == 74 && add.output.contains("is damaged where this request needed it"), "\(add.output)")
        let status = try await recipes(["status", "--only", "storage"], storage: endpoint)
        #expect(status.status == 74, "\(status.output)")
        #expect(status.output.contains("recipe-storage: Recipes.sqlite in recipe-storage's data folder is damaged where recipe.create needed it"), "\(status.output)")
        #expect(status.output.contains("2 recipes") && status.output.contains("recipe-storage is up, with a problem (above)"), "\(status.output)")
        #expect(try await service.stop() == 0)
    }

    @Test("RECIPES_STORAGE_BIND and RECIPES_DATA set the endpoint and the data folder")
    func bindFromEnvironment() async throws {
        let service = try ServiceProcess("recipe-storage", [], environment: [
            "RECIPES_STORAGE_BIND": "tcp://127.0.0.1:*", "RECIPES_DATA": temporaryDataFolder(),
            "RECIPES_STORAGE_PUBLISH": "tcp://127.0.0.1:*",
        ])
        let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        #expect(endpoint != RecipeVault.defaultStorageEndpoint)
        #expect(service.printed.contains("rv-data-"), "the database opened in the folder RECIPES_DATA names")
        #expect(try await service.stop() == 0)
    }

    @Test("a data folder it cannot use is named with what is wrong and what to do: a file, a file that is not a database, a read-only disk")
    func unusableDataFolder() async throws {
        func start(_ folder: String, wrapped: [String] = []) async throws -> (status: Int32?, printed: String) {
            let storage = ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder]
            let service = wrapped.isEmpty ? try ServiceProcess("recipe-storage", storage)
                : try ServiceProcess(path: "/usr/bin/unshare", wrapped + [try ServiceProcess.executable("recipe-storage")] + storage)
            let status = try await service.waitForExit(timeout: .seconds(30))
            return (status, service.printed)
        }
        let file = Scratch.path("rv-not-a-folder")
        try Data("notes".utf8).write(to: URL(fileURLWithPath: file))
        let onFile = try await start(file)
        #expect(onFile.status == 1)
        #expect(onFile.printed.contains("cannot open the data folder \(file): it is a file, not a folder; choose another with --data or RECIPES_DATA"), "\(onFile.printed)")

        let damaged = Scratch.path("rv-data")
        try FileManager.default.createDirectory(atPath: damaged, withIntermediateDirectories: true)
        try Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 >> 2) }).write(to: URL(fileURLWithPath: damaged + "/Recipes.sqlite"))
        let onDamaged = try await start(damaged)
        #expect(onDamaged.status == 1)
        #expect(onDamaged.printed.contains("Recipes.sqlite there is not a database recipe-storage can read"), "\(onDamaged.printed)")
        #expect(onDamaged.printed.contains("restore a backup") && onDamaged.printed.contains("SQLite: file is not a database"))

        if FullDiskTests.canMount {
            let readOnly = Scratch.path("rv-read-only")
            try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
            let mount = #"mount -t tmpfs -o size=64k,ro tmpfs "$1" && shift && exec "$@""#
            let onReadOnly = try await start(readOnly + "/data", wrapped: ["--mount", "--map-root-user", "sh", "-c", mount, "sh", readOnly])
            #expect(onReadOnly.status == 1)
            #expect(onReadOnly.printed.contains("it is on a read-only file system"), "\(onReadOnly.printed)")
        }
    }

    @Test("another program holding the database locked: writes are refused with storage_locked and what to do, reads go on, writes work once it lets go")
    func lockedByAnotherProgram() async throws {
        let folder = temporaryDataFolder()
        let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder])
        let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let first = try await recipes(["add", "--name", "Before the lock", "--ingredient", "1 egg"], storage: endpoint)
        #expect(first.status == 0, "\(first.output)")
        // Another program (Python's sqlite3, as a database browser would) begins a write and keeps it open.
        let script = """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE recipes SET title = 'Edited elsewhere'")
            print("holding the lock", flush=True)
            time.sleep(300)
            """
        let holder = try ServiceProcess(path: "/usr/bin/env", ["python3", "-c", script, folder + "/Recipes.sqlite"])
        _ = try await holder.waitForOutput("(holding the lock)")

        let refused = try await recipes(["add", "--name", "During the lock", "--ingredient", "2 eggs"], storage: endpoint)
        #expect(refused.status == 69, "\(refused.output)")
        #expect(refused.output.contains("another program holds Recipes.sqlite locked for writing and did not let go within 5 seconds; nothing of it was kept"),
                "\(refused.output)")
        #expect(refused.output.contains("a database browser with unsaved edits"), "\(refused.output)")
        let during = try await recipes(["list"], storage: endpoint)
        #expect(during.status == 0 && during.output.contains("Before the lock"), "reads go on: \(during.output)")

        _ = try await holder.stop(signal: SIGKILL)
        let after = try await recipes(["add", "--name", "After the lock", "--ingredient", "3 eggs"], storage: endpoint)
        #expect(after.status == 0, "\(after.output)")
        let list = try await recipes(["list"], storage: endpoint)
        #expect(list.output.contains("Before the lock") && list.output.contains("After the lock"), "\(list.output)")
        #expect(!list.output.contains("During the lock") && !list.output.contains("Edited elsewhere"),
                "neither the refused write nor the other program's unfinished one is there: \(list.output)")
        _ = try await service.stop()

        // Started while the other program holds the lock: one line that says so, and exit status 1.
        let again = try ServiceProcess(path: "/usr/bin/env", ["python3", "-c", script, folder + "/Recipes.sqlite"])
        _ = try await again.waitForOutput("(holding the lock)")
        let blocked = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder])
        let status = try await blocked.waitForExit(timeout: .seconds(60))
        _ = try await again.stop(signal: SIGKILL)
        #expect(status == 1, "\(blocked.printed)")
        #expect(blocked.printed.contains("another program holds Recipes.sqlite locked for writing and did not let go within 5 seconds"),
                "\(blocked.printed)")
    }

    @Test("a second recipe-storage on a data folder already in use refuses to start and names the first, which serves on; once the first is killed (-9), a storage starts there; a lock file that links elsewhere is not followed")
    func oneStorageToAFolder() async throws {
        let folder = temporaryDataFolder()
        let arguments = ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder]
        let first = try ServiceProcess("recipe-storage", arguments)
        let endpoint = try await first.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let added = try await recipes(["add", "--name", "Kept by the first", "--ingredient", "1 egg"], storage: endpoint)
        #expect(added.status == 0, "\(added.output)")

        let second = try ServiceProcess("recipe-storage", arguments)
        let status = try await second.waitForExit(timeout: .seconds(60))
        #expect(status == 1, "\(second.printed)")
        #expect(second.printed.contains("another recipe-storage is using the data folder \(folder) (process \(first.pid) on "), "\(second.printed)")
        #expect(second.printed.contains("Stop that one first, or give this one a folder of its own with --data or RECIPES_DATA"), "\(second.printed)")
        #expect(!second.printed.contains("database open"), "it stopped before opening the database: \(second.printed)")
        let list = try await recipes(["list"], storage: endpoint)
        #expect(list.status == 0 && list.output.contains("Kept by the first"), "the first serves on: \(list.output)")

        _ = try await first.stop(signal: SIGKILL)
        let third = try ServiceProcess("recipe-storage", arguments)
        let again = try await third.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let after = try await recipes(["list"], storage: again)
        #expect(after.output.contains("Kept by the first"), "\(after.output)")
        #expect(try await third.stop() == 0)

        // A lock file that is a link elsewhere is not followed (it is truncated and written once locked).
        let linked = temporaryDataFolder(), elsewhere = Scratch.path("rv-elsewhere")
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        try Data("kept as it is".utf8).write(to: URL(fileURLWithPath: elsewhere))
        try FileManager.default.createSymbolicLink(atPath: linked + "/recipe-storage.lock", withDestinationPath: elsewhere)
        let onLink = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", linked])
        #expect(try await onLink.waitForExit(timeout: .seconds(60)) == 1, "\(onLink.printed)")
        #expect(onLink.printed.contains("recipe-storage.lock is a symbolic link; recipe-storage keeps a lock file of its own there: remove the link"), "\(onLink.printed)")
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "kept as it is")
    }

    @Test("an open-file limit too low to start: each service says its limit, what it needs and where to raise it, and exits with status 1 — never ended by a signal inside ZeroMQ or SwiftNIO; at its minimum it starts and answers")
    func openFileLimitTooLow() async throws {
        // Without the check, recipe-storage stopped on SIGABRT at 16 (ZeroMQ could not make its poller) and
        // recipe-worker on SIGILL or SIGABRT at 12, 20 and 24; other limits failed in a part's own words.
        let worker = OpenFiles.workerMinimum
        let runs: [(String, UInt64, UInt64, [String])] = [12, 16, 20, 24, 32, 63].map {
            ("recipe-storage", $0, OpenFiles.serviceMinimum, ["--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        } + [12, 16, 20, 24, 32, worker - 1].map { ("recipe-worker", $0, worker, ["--storage", "tcp://127.0.0.1:9"]) }
        for (name, limit, minimum, arguments) in runs {
            let service = try ServiceProcess(path: "/bin/sh", ["-c", #"ulimit -n \#(limit) && exec "$0" "$@""#,
                                                              try ServiceProcess.executable(name), "--bind", "tcp://127.0.0.1:*"] + arguments)
            let status = try await service.waitForExit(timeout: .seconds(30))
            if status == nil { _ = try await service.stop(signal: SIGKILL) }
            #expect(status == 1, "\(name) under a limit of \(limit): \(service.printed)")
            #expect(service.printed.contains("\(name) cannot start: it may open at most \(limit) files"), "\(service.printed)")
            #expect(service.printed.contains("needs at least \(minimum)") && service.printed.contains("LimitNOFILE="), "\(service.printed)")
        }
        // At the minimum: running, and answering.
        let storage = try ServiceProcess(path: "/bin/sh", ["-c", #"ulimit -n \#(OpenFiles.serviceMinimum) && exec "$0" "$@""#,
                                                          try ServiceProcess.executable("recipe-storage"), "--bind", "tcp://127.0.0.1:*",
                                                          "--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        let endpoint = try await storage.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let started = try ServiceProcess(path: "/bin/sh", ["-c", #"ulimit -n \#(worker) && exec "$0" "$@""#,
                                                          try ServiceProcess.executable("recipe-worker"), "--bind", "tcp://127.0.0.1:*",
                                                          "--storage", endpoint])
        let workerEndpoint = try await started.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        #expect(try await StrangerSocket(endpoint).code("recipe.list", [:] as [String: Any]) == "ok")
        #expect(try await StrangerSocket(workerEndpoint).code("system.health", [:] as [String: Any]) == "ok")
        _ = try await started.stop()
        _ = try await storage.stop()
    }

    @Test("a backup folder that cannot be one stops the storage at start (exit 64), saying why; a good one is made and logged")
    func backupFolderAtStart() async throws {
        let data = temporaryDataFolder()
        for (folder, why) in [(data + "/backups", "is the data folder or inside it"), ("/proc/no-such-folder", "cannot be made")] {
            let refused = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*",
                                                                "--data", data, "--backup-folder", folder])
            #expect(try await refused.waitForExit(timeout: .seconds(30)) == 64, "\(refused.printed)")
            #expect(refused.printed.contains("--backup-folder (or RECIPES_BACKUP_FOLDER): the backup folder \(folder) \(why)"), "\(refused.printed)")
        }
        let backups = temporaryDataFolder() + "/nightly"
        let storage = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", data],
                                         environment: ["RECIPES_BACKUP_FOLDER": backups])
        let endpoint = try await storage.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        #expect(storage.printed.contains("backups written only inside the backup folder") && FileManager.default.fileExists(atPath: backups))
        let backup = try await recipes(["backup", "first"], storage: endpoint)
        #expect(backup.status == 0 && backup.output.contains("to \(backups)/first."), "\(backup.output)")
        _ = try await storage.stop()
    }

    @Test("a flood of idle connections does not keep clients out: started with a low soft limit on open files, the storage raises it to the hard one")
    func connectionFlood() async throws {
        // A soft limit of 64, as a low `ulimit -n` gives a service; the hard limit stays the system's.
        let storage = try ServiceProcess.executable("recipe-storage")
        let service = try ServiceProcess(path: "/bin/sh", ["-c", #"ulimit -Sn 64 && exec "$0" "$@""#, storage, "--bind", "tcp://127.0.0.1:*",
                                                          "--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let limits = try String(contentsOfFile: "/proc/\(service.pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let numbers = line.split(separator: " ").compactMap { UInt64($0) }
        try #require(numbers.count == 2, "\(line)")
        #expect(numbers[0] == min(numbers[1], OpenFiles.ceiling) && numbers[0] > 64, "the soft limit is raised to the hard one: \(line)")
        #expect(numbers[1] <= 64 || service.printed.contains("open file limit raised"), "\(service.printed)")

        // 300 idle connections of a stranger's, held open, then a client's request.
        let port = try #require(UInt16(endpoint.split(separator: ":").last ?? ""))
        var flood: [Int32] = []
        defer { for descriptor in flood { close(descriptor) } }
        for _ in 0..<300 {
            flood.append(try loopbackConnection(port: port))
        }
        let listed = try await recipes(["list"], storage: endpoint)
        #expect(listed.status == 0, "a client is answered beside 300 idle connections: \(listed.output)")
        _ = try await service.stop()
    }

    @Test("an endpoint it cannot bind is a clear error and a non-zero exit")
    func badEndpoint() async throws {
        let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://no-such-interface-xyz:1", "--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        _ = try await service.waitForOutput("cannot listen on tcp://no-such-interface-xyz:1")
        let status = try await service.waitForExit()
        #expect(status != nil && status != 0)
    }
}

/// A fresh data folder path in the temporary folder (the service creates it; removed when the tests exit).
func temporaryDataFolder() -> String {
    Scratch.path("rv-data")
}
