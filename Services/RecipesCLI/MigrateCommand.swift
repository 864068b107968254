import ArgumentParser
import Foundation
import Messaging
import RecipeMigration
import RecipeModel
import RecipeProtocol

#if canImport(Glibc)
import Glibc
#endif

extension MigrationFormat: ExpressibleByArgument {}

/// `recipes migrate`: a collection from another app, as a batch job in recipe-worker.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Bring recipes from another app: Paprika, Mealie, Tandoor, Cooklang, Chowdown, Nextcloud Cookbook or schema.org files.",
        discussion: """
            PATH is the app's export file or folder; its format is found from what is inside (name it with --from when it \
            is not). Each recipe is sent to recipe-worker, which runs the migration as a batch job: photos go through its \
            photo intake, one bad entry never stops the rest, and a stopped worker carries on where it was. Migrating the \
            same export again adds nothing. --dry-run reads everything and says what would happen without storing anything. \
            See docs/MIGRATE.md for what is kept from each app.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The export: a .paprikarecipes, Mealie or Tandoor zip, or a folder of .paprikarecipe, .cook, .md, recipe.json or .json/.html files.")
    var path: String
    @Option(help: ArgumentHelp("The app the export comes from: \(MigrationFormat.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "app"))
    var from: MigrationFormat?
    @Flag(help: "Read every entry and say what would be migrated; store nothing.")
    var dryRun = false
    @Flag(help: "Start the migration and return at once (`recipes jobs ID` follows it).")
    var noWait = false

    func validate() throws {
        if dryRun && noWait { throw ValidationError("--dry-run stores nothing and starts no job; leave out --no-wait") }
    }

    func run() async throws {
        try await reportingFailures {
            let source: MigrationSource
            do throws(MigrationError) {
                source = try MigrationSource.open(path: path, format: from)
            } catch {
                throw CLIError(error.message, status: FileManager.default.fileExists(atPath: path) ? ExitStatus.refused : ExitStatus.notFound)
            }
            if dryRun { return try await rehearse(source) }
            try await migrate(source)
        }
    }

    // MARK: Migrating

    private func migrate(_ source: MigrationSource) async throws {
        let worker = try connection.workerClient()
        let id = UUID.timeOrdered()
        let meter = SendMeter(total: source.items.count, quiet: connection.json)
        var entries: [MigrationEntryInfo] = []
        for (position, item) in source.items.enumerated() {
            meter.show(position)
            do {
                let encoded = try item.entry().encoded()
                guard encoded.count <= WireProtocol.defaultMaxFrameBytes - 1_024 else {
                    entries.append(.init(label: item.label, refusal: "the entry is \(ImageKind.formatBytes(encoded.count)) with its photos; entries of up to \(ImageKind.formatBytes(WireProtocol.defaultMaxFrameBytes - 1_024)) are migrated"))
                    continue
                }
                _ = try await worker.send(MigrateOps.Stage.self, .init(jobID: id, position: position), frames: [encoded])
                entries.append(.init(label: item.label))
            } catch let error as MigrationError {
                entries.append(.init(label: item.label, refusal: error.message))
            } catch let error as ServiceError where error.code == .messageTooLarge {
                // A worker started with a smaller --max-frame-bytes: this entry alone does not travel.
                entries.append(.init(label: item.label, refusal: "recipe-worker refused the entry: \(error.message)"))
            } catch let error as MessageClientError {
                guard case .frameTooLarge = error else { throw error }
                entries.append(.init(label: item.label, refusal: error.description))
            }
        }
        meter.done()
        let plan = MigrationPlan(format: source.format, source: source.description, entries: entries)
        let job = try await worker.call(MigrateOps.Start.self, .init(id: id, plan: plan))
        if noWait {
            if connection.json { return try Output.json(job) }
            return print("Started migration \(Output.shortID(job.id)) of \(Output.count(job.total, "\(source.format.appName) recipe")); follow it with `recipes jobs \(Output.shortID(job.id)) --wait`.")
        }
        let finished = try await JobProgress(connection: connection).follow(job)
        if connection.json { return try Output.json(finished) }
        Self.report(finished, ignored: source.ignored)
    }

    /// The end of a migration: counts, then each entry that failed or lost a photo.
    static func report(_ job: ImportJob, ignored: [String] = []) {
        let items = job.items ?? []
        let created = items.filter { $0.outcome == .created }.count
        let updated = items.filter { $0.outcome == .updated }.count
        let unchanged = items.filter { $0.outcome == .unchanged }.count
        let app = job.migration?.format.appName ?? "the export"
        print("Migration \(Output.shortID(job.id)) from \(app) done: \(Output.count(created, "new recipe")), \(unchanged) already there"
              + (updated > 0 ? ", \(updated) given their missing photos" : "") + ", \(job.failed) could not be read, of \(job.total).")
        for item in items where item.state == .failed {
            print("  ✗ \(item.url): \(item.error?.message ?? "failed")")
        }
        for item in items where item.photoNote != nil {
            print(Output.dim("  photo: \(item.recipeName ?? item.url): \(item.photoNote ?? "")"))
        }
        if !ignored.isEmpty {
            let some = ignored.prefix(3).joined(separator: ", ") + (ignored.count > 3 ? ", …" : "")
            let files = ignored.count == 1 ? "1 other file in the export is" : "\(ignored.count) other files in the export are"
            print(Output.dim("  \(files) not recipes and were left alone (\(some))."))
        }
    }

    // MARK: Dry run

    struct Rehearsal: Codable {
        struct Entry: Codable {
            var entry: String
            /// "new", "alreadyThere" or "unreadable".
            var result: String
            var name: String?
            var id: UUID?
            var photos: Int?
            var problem: String?
        }
        var format: MigrationFormat
        var entries: [Entry]
        var new: Int
        var alreadyThere: Int
        var unreadable: Int
    }

    private func rehearse(_ source: MigrationSource) async throws {
        let storage = try connection.storageClient()
        var report: [Rehearsal.Entry] = []
        var seen = Set<UUID>()
        for item in source.items {
            do {
                let recipe = try MigrationReader.read(try item.entry())
                var there = seen.contains(recipe.id)
                if !there {
                    do {
                        _ = try await storage.call(RecipeOps.Get.self, .init(id: recipe.id))
                        there = true
                    } catch let error as ServiceError where error.code == .notFound {}
                }
                seen.insert(recipe.id)
                report.append(.init(entry: item.label, result: there ? "alreadyThere" : "new", name: recipe.draft.name, id: recipe.id,
                                    photos: recipe.photos.count))
            } catch let error as MigrationError {
                report.append(.init(entry: item.label, result: "unreadable", problem: error.message))
            }
        }
        let summary = Rehearsal(format: source.format, entries: report, new: report.filter { $0.result == "new" }.count,
                                alreadyThere: report.filter { $0.result == "alreadyThere" }.count,
                                unreadable: report.filter { $0.result == "unreadable" }.count)
        if connection.json { return try Output.json(summary) }
        for entry in report {
            switch entry.result {
            case "new": print("+ \(entry.name ?? "")" + ((entry.photos ?? 0) > 0 ? Output.dim("  (\(Output.count(entry.photos ?? 0, "photo")))") : "") + Output.dim("  \(entry.entry)"))
            case "alreadyThere": print("= \(entry.name ?? "")" + Output.dim("  already there  \(entry.entry)"))
            default: print("✗ \(entry.entry): \(entry.problem ?? "")")
            }
        }
        print("Dry run of \(source.description): \(summary.new) would be new, \(summary.alreadyThere) already there, \(summary.unreadable) could not be read. Nothing was stored.")
    }
}

/// "Sending 120/800" on a terminal while the entries travel to the worker.
private struct SendMeter {
    let total: Int
    let quiet: Bool
    private let terminal = isatty(STDERR_FILENO) == 1

    init(total: Int, quiet: Bool) {
        self.total = total
        self.quiet = quiet
    }

    func show(_ done: Int) {
        guard terminal, !quiet, done % 10 == 0 else { return }
        FileHandle.standardError.write(Data("\rSending entries to recipe-worker: \(done)/\(total) ".utf8))
    }

    func done() {
        guard terminal, !quiet else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
