import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `recipes import`: recipes from web pages, through recipe-worker.
struct ImportRecipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import recipes from web pages (one URL, several, a file of URLs, or a saved page).",
        discussion: """
            One URL is imported at once and the recipe printed. Several URLs, or --file, start a batch job \
            that recipe-worker runs in the background; the command follows it with a progress bar \
            (--no-wait returns at once; `recipes jobs` shows it later). Importing a page again updates \
            its recipe and keeps your notes, rating, favourite and photos.
            Sites that turn the worker away can still be imported: save the page in a browser and use \
            --html FILE --url URL.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Web addresses of recipe pages.") var urls: [String] = []
    @Option(help: ArgumentHelp("A file with one URL per line (# starts a comment); - reads standard input.", valueName: "file"))
    var file: String?
    @Option(help: ArgumentHelp("A saved web page to import instead of fetching one (needs --url).", valueName: "file"))
    var html: String?
    @Option(name: .customLong("url"), help: ArgumentHelp("Where the saved page (--html) came from.", valueName: "url"))
    var pageURL: String?
    @Flag(help: "Read the recipe and show it (schema.org JSON with --json) without storing anything.")
    var dryRun = false
    @Flag(help: "Start the batch job and return at once.")
    var noWait = false
    @Option(help: ArgumentHelp("Seconds to wait for one page to be fetched and imported.", valueName: "seconds"))
    var importTimeout: Double = 90

    func validate() throws {
        let sources = [!urls.isEmpty, file != nil, html != nil].filter { $0 }.count
        guard sources == 1 else {
            throw ValidationError(sources == 0
                ? "give a URL, several URLs, --file FILE, or --html FILE --url URL"
                : "give URLs, --file or --html, not more than one of them")
        }
        if html != nil && pageURL == nil { throw ValidationError("--html needs --url: the address the saved page came from") }
        if pageURL != nil && html == nil { throw ValidationError("--url goes with --html; to fetch a page, give its URL as an argument") }
        if dryRun && (file != nil || urls.count > 1) { throw ValidationError("--dry-run reads one page; give one URL or --html") }
        if noWait && !(file != nil || urls.count > 1) { throw ValidationError("--no-wait is for batch imports (several URLs or --file)") }
        try NumberOptions.seconds(importTimeout, option: "--import-timeout", most: 3_600)
    }

    func run() async throws {
        try await reportingFailures {
            if let html, let pageURL {
                // As a browser saved it: in the page's own encoding, which it names or its bytes show (PageText).
                let text = PageText.decode([UInt8](try readFile(html, what: "the saved page", standardInput: true)))
                let worker = try await connection.patientWorkerClient(seconds: importTimeout)
                let result = try await worker.call(ImportOps.FromHTML.self, .init(html: text, url: pageURL, dryRun: dryRun, id: UUID.timeOrdered()))
                return try show(result)
            }
            if file == nil && urls.count == 1 {
                let worker = try await connection.patientWorkerClient(seconds: importTimeout)
                let result = try await worker.call(ImportOps.FromURL.self, .init(url: urls[0], dryRun: dryRun, id: UUID.timeOrdered()))
                return try show(result)
            }
            let list = try file.map { try Self.urls(in: readText($0, what: "URL list"), source: $0 == "-" ? "standard input" : $0) } ?? urls
            guard !list.isEmpty else { throw CLIError("\(file ?? "the list") holds no URLs (one per line; # starts a comment)") }
            let job = try await connection.workerClient().call(ImportOps.Batch.self, .init(id: UUID.timeOrdered(), urls: list))
            if noWait {
                if connection.json { return try Output.json(job) }
                return print("Started import job \(Output.shortID(job.id)) for \(Output.count(job.total, "URL")); follow it with `recipes jobs \(Output.shortID(job.id)) --wait`.")
            }
            let finished = try await JobProgress(connection: connection).follow(job)
            if connection.json { return try Output.json(finished) }
            JobProgress.summary(finished)
        }
    }

    /// The addresses of a URL list: one per line, `#` starts a comment. A line holding a control character, or bytes
    /// that are not UTF-8 (a binary file given by mistake), is refused by its number before anything is sent.
    static func urls(in text: String, source: String) throws -> [String] {
        var found: [String] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let address = String(line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimmingCharacters(in: .whitespaces)
            guard !address.isEmpty else { continue }
            if address.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{FFFD}" }) {
                throw CLIError("\(source) line \(index + 1) is not a web address: it holds a control character or bytes that are not "
                               + "UTF-8 text; a URL list is text, one address per line (# starts a comment)")
            }
            found.append(address)
        }
        return found
    }

    private func readText(_ path: String, what: String) throws -> String {
        String(decoding: try readFile(path, what: "the \(what)", standardInput: true), as: UTF8.self)
    }

    private func show(_ result: ImportResult) throws {
        if result.outcome == .dryRun {
            guard let recipe = result.schemaOrg else { throw CLIError("the worker sent no recipe for the dry run", status: ExitStatus.internalFailure) }
            if connection.json { return try Output.json(recipe) }
            print(Output.bold(recipe.name) + Output.dim("  (dry run: nothing stored)"))
            var facts: [String] = []
            if let yield = recipe.recipeYield?.first { facts.append("makes \(yield)") }
            if let total = recipe.totalTime.flatMap(ISODuration.minutes) { facts.append(Output.minutes(total)) }
            if let author = recipe.author?.name { facts.append("by \(author)") }
            if !facts.isEmpty { print(facts.joined(separator: " · ")) }
            print("\(Output.count(recipe.recipeIngredient.count, "ingredient")), \(Output.count(recipe.recipeInstructions.reduce(0) { $0 + $1.stepCount }, "step"))")
            for line in recipe.recipeIngredient.prefix(5) { print("  • \(line)") }
            if recipe.recipeIngredient.count > 5 { print("  …") }
            if let image = recipe.image?.first { print("image: \(image)") }
            if result.readWithoutStructuredData == true { print("read from the page's headings and lists (it has no schema.org recipe): check it") }
            print("source: \(result.source)")
            return
        }
        if connection.json { return try Output.json(result) }
        guard let recipe = result.recipe else { throw CLIError("the worker sent no recipe", status: ExitStatus.internalFailure) }
        let name = "\"\(recipe.name)\" (\(Output.shortID(recipe.id)))"
        switch result.outcome {
        case .created: print("Imported \(name) from \(result.source).")
        case .updated: print("Updated \(name) from \(result.source); your notes, rating, favourite and photos were kept.")
        case .unchanged, .dryRun: print("\(name) is already up to date with \(result.source).")
        }
        print("\(Output.count(recipe.ingredients.count, "ingredient")), \(Output.count(recipe.instructions.count, "step")), \(Output.count(recipe.photos.count, "photo")).")
        if result.photo.added {
            print("The page's image is the first photo.")
        } else if let note = result.photo.note {
            print(Output.dim("Photo: \(note)."))
        }
        for item in result.leftOut ?? [] { print(Output.dim("Left out: \(item).")) }
        if result.readWithoutStructuredData == true {
            print("The page has no schema.org recipe: it was read from its headings and lists. Check it with recipes show \(Output.shortID(recipe.id)).")
        }
    }
}

/// `recipes jobs`: batch imports and how far they got.
struct Jobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs", abstract: "Batch imports: all of them, or one with every URL's result.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "A job id or its first characters (all jobs when left out).") var job: String?
    @Flag(help: "Follow the job with a progress bar until every URL is done.") var wait = false
    @Flag(help: "Only jobs with URLs still to import.") var unfinished = false

    func validate() throws {
        if wait && job == nil { throw ValidationError("--wait follows one job; give its id") }
    }

    func run() async throws {
        try await reportingFailures {
            let storage = try connection.storageClient()
            guard let job else {
                let jobs = try await storage.call(JobOps.List.self, .init(unfinished: unfinished, limit: 100)).jobs
                if connection.json { return try Output.json(JobOps.List.Response(jobs: jobs)) }
                if jobs.isEmpty { return print(unfinished ? "No import job is running." : "No import jobs yet; start one with `recipes import --file urls.txt`.") }
                return Output.table(["ID", "STARTED", "STATE", "DONE", "IMPORTED", "FAILED"], jobs.map {
                    [Output.shortID($0.id), $0.createdAt.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)),
                     $0.state.rawValue, "\($0.finished)/\($0.total)", "\($0.imported)", "\($0.failed)"]
                })
            }
            let id = try await Self.resolve(job, using: storage)
            var found = try await JobProgress.wholeJob(id, using: storage)
            if wait && found.state != .done { found = try await JobProgress(connection: connection).follow(found) }
            if connection.json { return try Output.json(found) }
            print(Output.bold("Job \(Output.shortID(found.id))") + "  \(found.state.rawValue), \(found.finished) of \(found.total) done")
            if let migration = found.migration { print("Migration from \(migration.format.appName): \(migration.source)") }
            Output.table(["#", "STATE", "RECIPE / PROBLEM", found.migration == nil ? "URL" : "ENTRY"], (found.items ?? []).map { item in
                let detail = switch item.state {
                case .imported: (item.recipeName ?? "") + (item.recipeID.map { " (\(Output.shortID($0)))" } ?? "")
                    + (item.outcome == .updated ? ", updated" : item.outcome == .unchanged ? ", unchanged" : "")
                case .failed: item.error.map { "\($0.code.rawValue): \($0.message)" } ?? "failed"
                case .pending: "waiting"
                }
                return ["\(item.position + 1)", item.state.rawValue, detail, item.url]
            })
        }
    }

    static func resolve(_ reference: String, using storage: MessageClient) async throws -> UUID {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        if let id = UUID(uuidString: trimmed) { return id }
        let matches = try await storage.call(JobOps.List.self, .init(limit: 1_000)).jobs.filter { Output.isShortID(trimmed, of: $0.id) }
        return try Output.onlyMatch(matches, none: "no import job id starts or ends with \"\(trimmed)\"; `recipes jobs` lists them") {
            "\"\(trimmed)\" is part of \($0) job ids; give more of it"
        }.id
    }
}

/// Follows a job in storage until every URL is done: a live bar on a terminal,
/// a line per finished URL otherwise.
struct JobProgress {
    let connection: ConnectionOptions
    private let terminal = isatty(STDERR_FILENO) == 1

    init(connection: ConnectionOptions) { self.connection = connection }

    /// Follows `job` until it is done; returns it with every item. Each look reads only what finished since the
    /// one before (`job.items`, view finished): a migration of 50,000 entries is never read whole again and again.
    func follow(_ job: ImportJob) async throws -> ImportJob {
        let storage = try connection.storageClient()
        var finishedItems: [ImportJob.Item] = []
        var cursor = 0
        var current = job
        var lastProgress = ContinuousClock.now
        var warned = false
        while true {
            let page = try await storage.call(JobOps.Items.self, .init(jobID: job.id, view: .finished, from: cursor, limit: JobOps.Items.maxLimit))
            current = page.job
            let movedOn = page.next > cursor
            cursor = max(cursor, page.next)
            finishedItems += page.items
            if !page.items.isEmpty { lastProgress = .now }
            for item in page.items {
                guard !connection.json else { continue }
                clearBar()
                switch item.state {
                case .imported: write("✓ \(item.recipeName ?? item.url)" + (item.outcome == .updated ? " (updated)" : "") + "  \(item.url)")
                case .failed: write("✗ \(item.url): \(item.error?.message ?? "failed")")
                case .pending: break
                }
            }
            // The rest of what finished is read before the job counts as done or the bar is drawn.
            if page.more && movedOn { continue }
            if current.state == .done {
                clearBar()
                current.items = finishedItems.sorted { $0.position < $1.position }
                return current
            }
            if !warned && ContinuousClock.now - lastProgress > .seconds(60) {
                warned = true
                clearBar()
                write("Nothing finished in the last minute; is recipe-worker running at \(connection.workerEndpoint)? The job resumes when it is.")
            }
            drawBar(current)
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// A job with every item, read a page at a time (one reply could not carry a large migration's).
    static func wholeJob(_ id: UUID, using storage: MessageClient) async throws -> ImportJob {
        var items: [ImportJob.Item] = []
        var from = 0
        while true {
            let page = try await storage.call(JobOps.Items.self, .init(jobID: id, view: .all, from: from, limit: JobOps.Items.maxLimit))
            items += page.items
            let movedOn = page.next > from
            from = page.next
            guard page.more && movedOn else {
                // The counts are those of the items shown: some may have finished while the pages were read.
                var job = page.job
                job.imported = items.count { $0.state == .imported }
                job.failed = items.count { $0.state == .failed }
                job.total = items.count
                job.state = ImportJob.state(total: job.total, imported: job.imported, failed: job.failed)
                job.items = items
                return job
            }
        }
    }

    private func write(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.safe(line) + "\n").utf8))
    }

    private func drawBar(_ job: ImportJob) {
        guard terminal, !connection.json else { return }
        let width = 30
        let filled = Int((Double(width) * job.progress).rounded(.down))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        FileHandle.standardError.write(Data("\r\(bar) \(job.finished)/\(job.total)  ✓ \(job.imported)  ✗ \(job.failed) ".utf8))
    }

    private func clearBar() {
        guard terminal else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }

    static func summary(_ job: ImportJob) {
        print("Job \(Output.shortID(job.id)) done: \(job.imported) imported, \(job.failed) failed, of \(job.total).")
        if job.failed > 0 { print("See every URL's result with `recipes jobs \(Output.shortID(job.id))`.") }
    }
}
