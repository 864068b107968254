import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

// MARK: Recipes read from web pages

extension RecipeStore {
    /// Stores a recipe read from a web page. A recipe already imported from the
    /// same page (its `website` is one of `sameAs`) is updated instead of
    /// duplicated, keeping what the user added: notes, rating, favourite, book,
    /// page number and photos. Re-importing an unchanged page changes nothing.
    public func saveImported(id: UUID, _ draft: RecipeDraft, sameAs: [String]) async throws -> (recipe: Recipe, outcome: ImportOutcome) {
        try draft.validate()
        // Each is a value of a lookup's statement: a list without end was SQLite's "too many SQL variables".
        guard sameAs.count <= RecipeOps.SaveImported.Request.maxSameAs else {
            throw ServiceError(.invalidArgument, "sameAs names \(sameAs.count) addresses; it may name at most \(RecipeOps.SaveImported.Request.maxSameAs) (the page as asked, after its redirects, and its canonical address)")
        }
        if let index = sameAs.firstIndex(where: { $0.count > RecipeDraft.Limits.lineLength }) {
            throw ServiceError(.invalidArgument, "sameAs[\(index)] is \(sameAs[index].count) characters long (\"\(sameAs[index].prefix(60))…\"); an address may be at most \(RecipeDraft.Limits.lineLength), as a recipe's website")
        }
        let addresses = Array(Set((sameAs + [draft.website].compactMap { $0 }).filter { !$0.isEmpty }))
        guard !addresses.isEmpty else {
            throw ServiceError(.invalidBody, "an imported recipe needs the page it came from: set recipe.website or sameAs")
        }
        return try await write { db in
            if let existing = try Row.fetchOne(db.cachedStatement(sql: "SELECT id FROM recipes WHERE id = ?"), arguments: [id.databaseText]) {
                // The same request again (its reply was lost): answer as before, change nothing.
                let stored = try Self.fetchRecipe(existing["id"], in: db)
                return (stored, .unchanged)
            }
            // Only a recipe an import made is updated: a person's own (typed, or a duplicate that kept the address it
            // came from) is theirs, and a page imported again never overwrites it.
            let marks = databaseQuestionMarks(count: addresses.count)
            let found = try String.fetchOne(db, sql: """
                SELECT id FROM recipes WHERE website IN (\(marks)) AND origin = 'imported'
                ORDER BY createdAt, id LIMIT 1
                """, arguments: StatementArguments(addresses))
            guard let found, let foundID = UUID(uuidString: found) else {
                let now = Self.now()
                var fresh = draft
                fresh.origin = .imported
                try Self.checkBook(fresh.bookID, in: db)
                return (try Self.insertRecipe(id, fresh, createdAt: now, updatedAt: now, in: db), .created)
            }
            let current = try Self.fetchRecipe(foundID, in: db)
            var merged = draft
            merged.notes = current.notes
            merged.rating = current.rating
            merged.isFavorite = current.isFavorite
            merged.bookID = current.bookID
            merged.sourcePageNumber = current.sourcePageNumber
            merged.origin = current.origin
            if Self.sameContent(RecipeDraft(current), merged) { return (current, .unchanged) }
            // The page's text beside the notes kept from before: the two together are held to a recipe's bytes too.
            if let problem = merged.textBytesProblem(had: RecipeDraft(current).textBytes) { throw ServiceError(.invalidArgument, problem) }
            try Self.writeFields(of: merged, to: foundID, in: db)
            try db.execute(sql: "UPDATE recipes SET version = version + 1, updatedAt = ? WHERE id = ?",
                           arguments: [Self.now(), foundID.databaseText])
            return (try Self.fetchRecipe(foundID, in: db), .updated)
        }
    }

    /// Whether two drafts say the same, line ids aside.
    private static func sameContent(_ a: RecipeDraft, _ b: RecipeDraft) -> Bool {
        func plain(_ draft: RecipeDraft) -> RecipeDraft {
            var copy = draft
            copy.ingredients = draft.ingredients.map { .init(text: $0.text.trimmingCharacters(in: .whitespacesAndNewlines)) }
            copy.instructions = draft.instructions.map {
                .init(text: $0.text.trimmingCharacters(in: .whitespacesAndNewlines), section: $0.section, title: $0.title)
            }
            copy.name = draft.name.trimmingCharacters(in: .whitespacesAndNewlines)
            copy.keywords = draft.keywords.map { $0.trimmingCharacters(in: .whitespaces) }
            copy.origin = .imported
            return copy
        }
        return plain(a) == plain(b)
    }
}

// MARK: Import jobs

extension RecipeStore {
    /// Creates a job for `urls` (trimmed; blank lines and repeats dropped), every URL pending.
    /// Creating an id that exists returns that job unchanged.
    public func createJob(id: UUID, urls: [String]) async throws -> ImportJob {
        var seen = Set<String>()
        let cleaned = urls.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty && seen.insert($0).inserted }
        guard !cleaned.isEmpty else { throw ServiceError(.invalidArgument, "the job has no URLs; give at least one web address") }
        guard cleaned.count <= JobOps.maxURLs else {
            throw ServiceError(.invalidArgument, "the job has \(cleaned.count) URLs; one job takes at most \(JobOps.maxURLs), so split the list")
        }
        if let long = cleaned.firstIndex(where: { $0.count > JobOps.maxURLLength }) {
            throw ServiceError(.invalidArgument,
                "URL \(long + 1) is \(cleaned[long].count) characters long; the most allowed is \(JobOps.maxURLLength)")
        }
        // Characters of many bytes each (the job's reply and pages carry every URL): four bytes a character at most.
        if let long = cleaned.firstIndex(where: { $0.utf8.count > String.bytesPerCharacter * JobOps.maxURLLength }) {
            throw ServiceError(.invalidArgument,
                "URL \(long + 1) is \(cleaned[long].utf8.count) bytes of UTF-8; the most allowed is \(String.bytesPerCharacter * JobOps.maxURLLength)")
        }
        return try await write { db in
            if try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM import_jobs WHERE id = ?"), arguments: [id.databaseText]) == nil {
                let now = Self.now()
                try db.execute(sql: "INSERT INTO import_jobs (id, createdAt, updatedAt, total) VALUES (?, ?, ?, ?)",
                               arguments: [id.databaseText, now, now, cleaned.count])
                for (position, url) in cleaned.enumerated() {
                    try db.cachedStatement(sql: "INSERT INTO import_job_items (jobId, position, url) VALUES (?, ?, ?)")
                        .execute(arguments: [id.databaseText, position, url])
                }
            }
            return try Self.fetchJob(id, items: true, in: db)
        }
    }

    /// How long a staged migration entry waits for its job before it is dropped.
    public static let stagedEntryLifetime: TimeInterval = 24 * 3_600

    /// Keeps one entry of a migration about to be created (`job.stage`). Staging the same
    /// position again replaces it; entries of a job that already exists are refused.
    public func stageJobEntry(jobID: UUID, position: Int, bytes: Data) async throws {
        guard (0..<JobOps.maxEntries).contains(position) else {
            throw ServiceError(.invalidArgument, "position is \(position); a migration has entries 0 to \(JobOps.maxEntries - 1)")
        }
        guard !bytes.isEmpty else { throw ServiceError(.invalidArgument, "the entry in frame 1 is empty") }
        try await write { db in
            if try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM import_jobs WHERE id = ?"), arguments: [jobID.databaseText]) != nil {
                throw ServiceError(.conflict, "job \(jobID.uuidString) already exists; entries are staged before the job is created")
            }
            let now = Self.now()
            // Entries of migrations that never started (the CLI was stopped while sending them) do not stay forever.
            try db.execute(sql: "DELETE FROM import_job_entries WHERE stagedAt < ? AND jobId NOT IN (SELECT id FROM import_jobs)",
                           arguments: [now.addingTimeInterval(-Self.stagedEntryLifetime)])
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO import_job_entries (jobId, position, bytes, stagedAt) VALUES (?, ?, ?, ?)")
                .execute(arguments: [jobID.databaseText, position, bytes, now])
        }
    }

    /// A staged migration entry, for the worker to read.
    public func jobEntry(jobID: UUID, position: Int) async throws -> Data {
        try await pool.read { db in
            guard let bytes = try Data.fetchOne(db.cachedStatement(sql: "SELECT bytes FROM import_job_entries WHERE jobId = ? AND position = ?"),
                                                arguments: [jobID.databaseText, position]) else {
                _ = try Self.fetchJob(jobID, items: false, in: db)
                throw ServiceError(.notFound, "job \(jobID.uuidString) holds no entry at position \(position) (it was never sent, or its result is recorded)")
            }
            return bytes
        }
    }

    /// Creates a migration: one item per entry, each pending with its staged bytes, or failed at once
    /// with the reason the CLI gave. Creating an id that exists returns that job unchanged.
    public func createMigration(id: UUID, plan: MigrationPlan) async throws -> ImportJob {
        guard !plan.entries.isEmpty else {
            throw ServiceError(.invalidArgument, "the migration has no entries; the export held no recipes")
        }
        guard plan.entries.count <= JobOps.maxEntries else {
            throw ServiceError(.invalidArgument, "the migration has \(plan.entries.count) entries; one migration takes at most \(JobOps.maxEntries)")
        }
        if let problem = plan.source.sizeProblem("source", characters: JobOps.maxURLLength) { throw ServiceError(.invalidArgument, problem) }
        if let long = plan.entries.firstIndex(where: { !$0.label.isWithin(characters: JobOps.maxURLLength) || !($0.refusal ?? "").isWithin(characters: 2_000) }) {
            throw ServiceError(.invalidArgument, "entry \(long + 1)'s name or reason is too long; names may have \(JobOps.maxURLLength) characters, "
                               + "reasons 2000 (and \(String.bytesPerCharacter) bytes of UTF-8 a character)")
        }
        return try await write { db in
            if try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM import_jobs WHERE id = ?"), arguments: [id.databaseText]) == nil {
                let staged = Set(try Int.fetchAll(db.cachedStatement(sql: "SELECT position FROM import_job_entries WHERE jobId = ?"),
                                                  arguments: [id.databaseText]))
                let missing = plan.entries.indices.filter { plan.entries[$0].refusal == nil && !staged.contains($0) }
                guard missing.isEmpty else {
                    throw ServiceError(.invalidArgument, "\(missing.count) of the migration's entries were not staged (the first is entry \(missing[0] + 1), \"\(plan.entries[missing[0]].label.prefix(80))\"); send each entry with job.stage before job.create")
                }
                let now = Self.now()
                try db.execute(sql: """
                    INSERT INTO import_jobs (id, createdAt, updatedAt, migrationFormat, migrationSource, total, failed) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [id.databaseText, now, now, plan.format.rawValue, plan.source, plan.entries.count,
                                     plan.entries.count { $0.refusal != nil }])
                var finishNumber = 0
                for (position, entry) in plan.entries.enumerated() {
                    if let refusal = entry.refusal {
                        finishNumber += 1
                        try db.cachedStatement(sql: """
                            INSERT INTO import_job_items (jobId, position, url, state, errorCode, errorMessage, finishedAt, finishNumber)
                            VALUES (?, ?, ?, 'failed', ?, ?, ?, ?)
                            """).execute(arguments: [id.databaseText, position, entry.label, ErrorCode.unreadableEntry.rawValue, refusal, now,
                                                     finishNumber])
                        // An entry a stranger staged where the plan says refused belongs to nothing. Only those are
                        // deleted: a statement prepared for each of 50,000 refused entries took seconds (a worker's
                        // request for the migration timed out waiting).
                        if staged.contains(position) {
                            try db.cachedStatement(sql: "DELETE FROM import_job_entries WHERE jobId = ? AND position = ?")
                                .execute(arguments: [id.databaseText, position])
                        }
                    } else {
                        try db.cachedStatement(sql: "INSERT INTO import_job_items (jobId, position, url) VALUES (?, ?, ?)")
                            .execute(arguments: [id.databaseText, position, entry.label])
                    }
                }
                // Entries staged beyond the plan belong to nothing.
                try db.execute(sql: "DELETE FROM import_job_entries WHERE jobId = ? AND position >= ?", arguments: [id.databaseText, plan.entries.count])
            }
            // Without its items: a migration may have 50,000, more than one reply should carry (job.items pages them).
            return try Self.fetchJob(id, items: false, in: db)
        }
    }

    /// A job with every URL's result.
    public func job(_ id: UUID) async throws -> ImportJob {
        try await pool.read { db in try Self.fetchJob(id, items: true, in: db) }
    }

    /// Jobs, newest first, without their items; only those with pending URLs when `unfinished`.
    public func jobs(unfinished: Bool, limit: Int) async throws -> [ImportJob] {
        guard (1...1_000).contains(limit) else { throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to 1000") }
        return try await pool.read { db in
            let filter = unfinished
                ? "WHERE EXISTS (SELECT 1 FROM import_job_items i WHERE i.jobId = import_jobs.id AND i.state = 'pending')" : ""
            let ids = try String.fetchAll(db, sql: "SELECT id FROM import_jobs \(filter) ORDER BY createdAt DESC, id LIMIT ?",
                                          arguments: [limit])
            return try ids.compactMap(UUID.init(uuidString:)).map { try Self.fetchJob($0, items: false, in: db) }
        }
    }

    /// How many times a URL may be begun without a result before it is given up.
    public static let maxImportAttempts = 2

    /// Notes that a worker begins importing a URL of a job, before it fetches anything.
    /// `true` when it should go ahead; `false` when the URL already has a result, or was
    /// begun `maxImportAttempts` times before without one (the worker stopped each time) —
    /// then it is recorded as failed, so one page can never stop the worker over and over.
    /// `run` names the worker's run: one beginning again what it began itself (its storage was away or full
    /// meanwhile, so nothing was recorded) is not counted again, since that run did not stop.
    public func startJobItem(jobID: UUID, position: Int, run: String? = nil) async throws -> Bool {
        if let run, !(1...JobOps.Start.Request.maxRunLength).contains(run.count) {
            throw ServiceError(.invalidArgument, "run is \(run.count) characters; it must be 1 to \(JobOps.Start.Request.maxRunLength), or left out")
        }
        return try await write { db in
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT state, attempts, url, startedBy FROM import_job_items WHERE jobId = ? AND position = ?"),
                arguments: [jobID.databaseText, position]) else {
                _ = try Self.fetchJob(jobID, items: false, in: db)
                throw ServiceError(.notFound, "job \(jobID.uuidString) has no URL at position \(position)")
            }
            guard row["state"] as String == "pending" else { return false }
            if let run, row["startedBy"] as String? == run { return true }
            let attempts: Int = row["attempts"]
            guard attempts < Self.maxImportAttempts else {
                let now = Self.now()
                let migrating = try String.fetchOne(db, sql: "SELECT migrationFormat FROM import_jobs WHERE id = ?", arguments: [jobID.databaseText]) != nil
                let reason = migrating
                    ? "the worker stopped \(attempts) times while migrating this entry and never finished it, so it was given up and the rest of the migration went on"
                    : "the worker stopped \(attempts) times while importing this address and never finished it, so it was given up and the rest of the batch went on; try it alone with `recipes import`, or save the page and use --html"
                try db.execute(sql: """
                    UPDATE import_job_items SET state = 'failed', errorCode = ?, errorMessage = ?, finishedAt = ?, finishNumber = ?
                    WHERE jobId = ? AND position = ?
                    """, arguments: [ErrorCode.internalError.rawValue, reason, now, try Self.countFinished(jobID, as: .failed, at: now, in: db),
                                     jobID.databaseText, position])
                try db.execute(sql: "DELETE FROM import_job_entries WHERE jobId = ? AND position = ?", arguments: [jobID.databaseText, position])
                return false
            }
            try db.execute(sql: "UPDATE import_job_items SET attempts = attempts + 1, startedBy = ? WHERE jobId = ? AND position = ?",
                           arguments: [run, jobID.databaseText, position])
            return true
        }
    }

    /// Records one URL's result. A URL that already has a result keeps it, so a
    /// worker that restarts and imports it again cannot count it twice.
    public func recordJobItem(jobID: UUID, position: Int, result: ImportJob.Item) async throws -> ImportJob {
        guard result.state != .pending else {
            throw ServiceError(.invalidArgument, "result.state is pending; record imported or failed")
        }
        return try await write { db in
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT state FROM import_job_items WHERE jobId = ? AND position = ?"),
                arguments: [jobID.databaseText, position]) else {
                _ = try Self.fetchJob(jobID, items: false, in: db)
                throw ServiceError(.notFound, "job \(jobID.uuidString) has no URL at position \(position)")
            }
            if row["state"] as String == "pending" {
                // What a worker says of a URL is kept to a bounded size (a name as long as a recipe's, a reason or a
                // note of 2,000 characters and 8 KiB), so no result makes a job's pages too large to read.
                let result = result.keptToSize
                let now = Self.now()
                try db.cachedStatement(sql: """
                    UPDATE import_job_items SET state = ?, outcome = ?, recipeId = ?, recipeName = ?, errorCode = ?, errorMessage = ?,
                        photoNote = ?, finishedAt = ?, finishNumber = ? WHERE jobId = ? AND position = ?
                    """).execute(arguments: [result.state.rawValue, result.outcome?.rawValue, result.recipeID?.databaseText, result.recipeName,
                                             result.error?.code.rawValue, result.error?.message, result.photoNote, now,
                                             try Self.countFinished(jobID, as: result.state, at: now, in: db), jobID.databaseText, position])
                // A migration entry's bytes are needed no more once it has a result.
                try db.cachedStatement(sql: "DELETE FROM import_job_entries WHERE jobId = ? AND position = ?")
                    .execute(arguments: [jobID.databaseText, position])
            }
            return try Self.fetchJob(jobID, items: false, in: db)
        }
    }

    /// One page of a job's items (`job.items`): by position, or in the order they finished.
    public func jobItems(jobID: UUID, view: JobOps.Items.View, from: Int, limit: Int) async throws -> JobOps.Items.Response {
        guard (1...JobOps.Items.maxLimit).contains(limit) else {
            throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to \(JobOps.Items.maxLimit)")
        }
        guard from >= 0 else {
            throw ServiceError(.invalidArgument, "from is \(from); it must be 0 or more (a position, or for view finished a finish number)")
        }
        return try await pool.read { db in
            let job = try Self.fetchJob(jobID, items: false, in: db)
            let (key, condition) = switch view {
            case .all: ("position", "position >= ?")
            case .pending: ("position", "state = 'pending' AND position >= ?")
            case .finished: ("finishNumber", "finishNumber >= ?")
            }
            // One row past the page tells whether more follow; a page also ends before the item that would take it
            // past `PageMark.pageBytes` (its first item always goes), read one row at a time.
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT * FROM import_job_items WHERE jobId = ? AND \(condition) ORDER BY \(key) LIMIT ?
                """), arguments: [jobID.databaseText, from, limit + 1])
            var fill = PageFill<ImportJob.Item, Int>(limit: limit)
            while let row = try rows.next(), try fill.add(Self.jobItem(row), at: (row[key] as Int) + 1) {}
            return .init(job: job, items: fill.items, next: fill.last ?? from, more: fill.more)
        }
    }

    /// Counts one more item of `jobID` finished as `state` (its counts are kept with the job); returns the item's
    /// finish number: 1 for the first of the job to get its result, and so on.
    static func countFinished(_ jobID: UUID, as state: ImportJob.Item.State, at now: Date, in db: Database) throws -> Int {
        let imported = state == .imported ? 1 : 0
        guard let number = try Int.fetchOne(db.cachedStatement(sql: """
            UPDATE import_jobs SET imported = imported + ?, failed = failed + ?, updatedAt = ? WHERE id = ? RETURNING imported + failed
            """), arguments: [imported, 1 - imported, now, jobID.databaseText]) else {
            throw ServiceError(.notFound, "no import job has id \(jobID.uuidString); `recipes jobs` lists them")
        }
        return number
    }

    static func jobItem(_ item: Row) -> ImportJob.Item {
        let code = (item["errorCode"] as String?).map { ErrorCode(rawValue: $0) ?? .internalError }
        return ImportJob.Item(
            position: item["position"], url: item["url"],
            state: ImportJob.Item.State(rawValue: item["state"]) ?? .pending,
            outcome: (item["outcome"] as String?).flatMap(ImportOutcome.init(rawValue:)),
            recipeID: item.uuid("recipeId"), recipeName: item["recipeName"],
            error: code.map { ServiceError($0, item["errorMessage"] ?? "") }, photoNote: item["photoNote"],
            finishedAt: item["finishedAt"])
    }

    static func fetchJob(_ id: UUID, items: Bool, in db: Database) throws -> ImportJob {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT createdAt, updatedAt, migrationFormat, migrationSource, total, imported, failed FROM import_jobs WHERE id = ?
            """), arguments: [id.databaseText]) else {
            throw ServiceError(.notFound, "no import job has id \(id.uuidString); `recipes jobs` lists them")
        }
        let total: Int = row["total"], imported: Int = row["imported"], failed: Int = row["failed"]
        let state = ImportJob.state(total: total, imported: imported, failed: failed)
        var list: [ImportJob.Item]?
        if items {
            list = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM import_job_items WHERE jobId = ? ORDER BY position"),
                                    arguments: [id.databaseText]).map(jobItem)
        }
        let migration = (row["migrationFormat"] as String?).flatMap(MigrationFormat.init(rawValue:)).map {
            ImportJob.Origin(format: $0, source: row["migrationSource"] ?? "")
        }
        return ImportJob(id: id, createdAt: row["createdAt"], updatedAt: row["updatedAt"], state: state, total: total,
                         imported: imported, failed: failed, items: list, migration: migration)
    }
}

extension ImportJob.Item {
    /// The most characters of an error's message or a photo note kept with a job's item (the rest is cut, marked "…").
    static let maxNoteLength = 2_000

    /// The item with its texts cut to what a job keeps: a recipe's name to `RecipeDraft.Limits.nameLength` characters,
    /// a message and a note to `maxNoteLength`, each also to four bytes of UTF-8 a character.
    var keptToSize: ImportJob.Item {
        func cut(_ text: String?, _ limit: Int) -> String? {
            guard let text, !text.isWithin(characters: limit) else { return text }
            return text.cut(toCharacters: limit - 1) + "…" // "…" is one character of 3 bytes
        }
        var copy = self
        copy.recipeName = cut(recipeName, RecipeDraft.Limits.nameLength)
        copy.photoNote = cut(photoNote, Self.maxNoteLength)
        if let error { copy.error = ServiceError(error.code, cut(error.message, Self.maxNoteLength) ?? "") }
        return copy
    }
}
