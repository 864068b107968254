import Foundation
import RecipeModel

// MARK: Storage: imported recipes and import jobs

extension RecipeOps {
    /// `recipe.saveImported`: stores a recipe read from a web page. When a recipe
    /// from the same page exists (its `website` is one of `sameAs`), that recipe is
    /// updated instead — keeping the user's notes, rating, favourite, book and photos.
    public enum SaveImported: WireOperation {
        public static let name = "recipe.saveImported"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            /// The id for a new recipe (chosen by the client, so a retry lands once).
            public var id: UUID?
            public var recipe: RecipeDraft
            /// The addresses that name the same page (as asked, after redirects, canonical): at most `maxSameAs`,
            /// each at most a line's length (`RecipeDraft.Limits.lineLength`), as `website` is.
            public var sameAs: [String]
            public static let maxSameAs = 16
            public init(id: UUID? = nil, recipe: RecipeDraft, sameAs: [String]) {
                self.id = id
                self.recipe = recipe
                self.sameAs = sameAs
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var recipe: Recipe
            public var outcome: ImportOutcome
            public init(recipe: Recipe, outcome: ImportOutcome) {
                self.recipe = recipe
                self.outcome = outcome
            }
        }
    }
}

/// What importing a page did to the collection.
public enum ImportOutcome: String, Codable, Sendable, Equatable {
    /// A new recipe.
    case created
    /// The recipe from the same page was brought up to date.
    case updated
    /// The recipe from the same page already said the same.
    case unchanged
    /// Nothing was stored (a dry run).
    case dryRun
}

/// A batch import: URLs the worker imports one by one, with each one's result.
public struct ImportJob: Codable, Sendable, Equatable {
    /// Where a job stands.
    public enum State: String, Codable, Sendable {
        /// No URL finished yet.
        case queued
        /// Some URLs finished, some wait.
        case running
        /// Every URL finished (imported or failed).
        case done
    }

    /// One URL of a job.
    public struct Item: Codable, Sendable, Equatable {
        /// Where one URL stands.
        public enum State: String, Codable, Sendable {
            case pending, imported, failed
        }
        /// 0-based, in the order given.
        public var position: Int
        /// The URL; for a migration, the entry's name in the export.
        public var url: String
        public var state: State
        /// What the import did (imported items).
        public var outcome: ImportOutcome?
        public var recipeID: UUID?
        public var recipeName: String?
        /// Why it failed (failed items).
        public var error: ServiceError?
        /// What happened to the page's photo, when it was not added.
        public var photoNote: String?
        public var finishedAt: Date?

        public init(position: Int, url: String, state: State = .pending, outcome: ImportOutcome? = nil, recipeID: UUID? = nil,
                    recipeName: String? = nil, error: ServiceError? = nil, photoNote: String? = nil, finishedAt: Date? = nil) {
            self.position = position
            self.url = url
            self.state = state
            self.outcome = outcome
            self.recipeID = recipeID
            self.recipeName = recipeName
            self.error = error
            self.photoNote = photoNote
            self.finishedAt = finishedAt
        }
    }

    public var id: UUID
    public var createdAt: Date
    public var updatedAt: Date
    public var state: State
    public var total: Int
    public var imported: Int
    public var failed: Int
    /// The URLs (in `job.get`; left out of `job.list`).
    public var items: [Item]?
    /// For a migration: the app it came from and what was migrated (absent for URL jobs).
    public var migration: Origin?

    /// Where a migration's entries came from.
    public struct Origin: Codable, Sendable, Equatable {
        public var format: MigrationFormat
        public var source: String
        public init(format: MigrationFormat, source: String) {
            self.format = format
            self.source = source
        }
    }

    /// URLs not finished yet (none when the counts say more finished than the job holds; read without trapping).
    public var pending: Int {
        let (left, overflow) = total.subtractingReportingOverflow(finished)
        return overflow ? 0 : max(0, left)
    }

    /// Where a job of `total` items stands with `imported` and `failed` of them finished.
    public static func state(total: Int, imported: Int, failed: Int) -> State {
        let finished = finished(imported: imported, failed: failed)
        return finished == total ? .done : finished == 0 ? .queued : .running
    }

    /// URLs finished, imported or failed. Counts come in replies too, so they are added without trapping: a count
    /// below zero reads as none, and a sum past `Int.max` stays there.
    public var finished: Int { Self.finished(imported: imported, failed: failed) }

    private static func finished(imported: Int, failed: Int) -> Int { max(0, imported).addingSaturated(max(0, failed)) }

    /// How much of the job is finished, from 0 to 1 (1 for a job of no URLs; never past 1, whatever the counts say).
    public var progress: Double {
        total <= 0 ? 1 : min(1, Double(finished) / Double(total))
    }


    public init(id: UUID, createdAt: Date, updatedAt: Date, state: State, total: Int, imported: Int, failed: Int, items: [Item]?,
                migration: Origin? = nil) {
        self.migration = migration
        self.id = id
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.state = state
        self.total = total
        self.imported = imported
        self.failed = failed
        self.items = items
    }
}

/// Import-job operations of `recipe-storage` (the worker runs the jobs; storage remembers them).
public enum JobOps {
    /// The most URLs one job may hold.
    public static let maxURLs = 1_000
    /// The longest URL accepted.
    public static let maxURLLength = 2_048

    /// `job.create`: a job for `urls` (blank lines and repeats dropped), every URL pending;
    /// or, with `migration` (and no URLs), a migration of entries staged before with `job.stage`.
    public enum Create: WireOperation {
        public static let name = "job.create"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID?
            public var urls: [String]
            public var migration: MigrationPlan?
            public init(id: UUID? = nil, urls: [String], migration: MigrationPlan? = nil) {
                self.id = id
                self.urls = urls
                self.migration = migration
            }
        }
        public typealias Response = ImportJob
    }

    /// `job.get`: a job with every URL's result, in one reply (a large migration's is too large for one:
    /// `job.items` reads it in pages).
    public enum Get: WireOperation {
        public static let name = "job.get"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        public typealias Request = ByID
        public typealias Response = ImportJob
    }

    /// `job.items`: one page of a job's items, with the job's counts. A job may hold 50,000 items, too many for
    /// one reply, and a follower needs only what finished since it last looked: `all` and `pending` page by
    /// position, `finished` in the order the items finished (each finished item has a finish number, 1, 2, …).
    public enum Items: WireOperation {
        public static let name = "job.items"
        public static let isWrite = false
        /// The most items one page may hold.
        public static let maxLimit = 1_000
        /// Which items, in which order.
        public enum View: String, Codable, Sendable, CaseIterable, WireChoice {
            /// Every item, by position.
            case all
            /// Items with no result yet, by position.
            case pending
            /// Items with a result, in the order they got it (by finish number).
            case finished
        }
        public struct Request: Codable, Sendable, Equatable {
            public var jobID: UUID
            /// `all` when left out.
            public var view: View?
            /// The first position (`all`, `pending`) or finish number (`finished`) to include; 0 when left out.
            public var from: Int?
            /// 1 to 1000; 500 when left out.
            public var limit: Int?
            public init(jobID: UUID, view: View? = nil, from: Int? = nil, limit: Int? = nil) {
                self.jobID = jobID
                self.view = view
                self.from = from
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// The job's state and counts, without items.
            public var job: ImportJob
            public var items: [ImportJob.Item]
            /// The `from` of the page after this one (for `finished`, also once more items finish).
            public var next: Int
            /// Whether the view held more items after this page when it was read.
            public var more: Bool
            public init(job: ImportJob, items: [ImportJob.Item], next: Int, more: Bool) {
                self.job = job
                self.items = items
                self.next = next
                self.more = more
            }
        }
    }

    /// `job.list`: jobs, newest first, without their items.
    public enum List: WireOperation {
        public static let name = "job.list"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            /// Only jobs with URLs still pending.
            public var unfinished: Bool?
            public var limit: Int?
            public init(unfinished: Bool? = nil, limit: Int? = nil) {
                self.unfinished = unfinished
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var jobs: [ImportJob]
            public init(jobs: [ImportJob]) { self.jobs = jobs }
        }
    }

    /// `job.start`: the worker begins a URL of a job (before fetching it). `proceed` is `false`
    /// when the URL already has a result, or was begun by two runs of the worker before without one (each stopped
    /// before it finished): it is then failed.
    public enum Start: WireOperation {
        public static let name = "job.start"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var jobID: UUID
            public var position: Int
            /// Which run of the worker begins it (an id the worker makes when it starts, at most `maxRunLength`
            /// characters). A run beginning again a URL it began itself (the storage was away or full meanwhile) is
            /// not counted again: only a run that stopped without a result counts. Left out, every begin counts.
            public var run: String?
            public static let maxRunLength = 64
            public init(jobID: UUID, position: Int, run: String? = nil) {
                self.jobID = jobID
                self.position = position
                self.run = run
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var proceed: Bool
            public init(proceed: Bool) { self.proceed = proceed }
        }
    }

    /// `job.record`: the result of one URL. A URL that already has a result keeps it.
    public enum Record: WireOperation {
        public static let name = "job.record"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var jobID: UUID
            public var position: Int
            /// `imported` or `failed`, with what goes with it.
            public var result: ImportJob.Item
            public init(jobID: UUID, position: Int, result: ImportJob.Item) {
                self.jobID = jobID
                self.position = position
                self.result = result
            }
        }
        /// The job, without items.
        public typealias Response = ImportJob
    }
}

// MARK: Worker: importing pages

/// What happened to a page's main image during an import.
public struct PhotoIntake: Codable, Sendable, Equatable {
    /// Whether the image became the recipe's first photo.
    public var added: Bool
    /// The image's address, when the page named one.
    public var source: String?
    /// Why it was not added (not an image, damaged, the recipe is full, already there…).
    public var note: String?
    /// What the photo intake did to the image to make it fit (scaled, re-encoded, metadata removed…).
    public var fitting: PhotoFitting?
    public init(added: Bool, source: String? = nil, note: String? = nil, fitting: PhotoFitting? = nil) {
        self.added = added
        self.source = source
        self.note = note
        self.fitting = fitting
    }
}

/// The reply to an import: the stored recipe (or, for a dry run, the recipe as schema.org JSON).
public struct ImportResult: Codable, Sendable, Equatable {
    public var outcome: ImportOutcome
    /// The stored recipe (not on a dry run).
    public var recipe: Recipe?
    /// What the page said, as a schema.org Recipe (always on a dry run).
    public var schemaOrg: SchemaOrgRecipe?
    /// The page's address after redirects.
    public var source: String
    public var photo: PhotoIntake
    /// What the page said that was out of range and was left out (the rest was imported); absent when nothing was.
    public var leftOut: [String]?
    /// True when the page had no schema.org recipe and it was read from the page's headings and lists (check it); absent otherwise.
    public var readWithoutStructuredData: Bool?
    public init(outcome: ImportOutcome, recipe: Recipe?, schemaOrg: SchemaOrgRecipe?, source: String, photo: PhotoIntake,
                leftOut: [String]? = nil, readWithoutStructuredData: Bool? = nil) {
        self.readWithoutStructuredData = readWithoutStructuredData
        self.outcome = outcome
        self.recipe = recipe
        self.schemaOrg = schemaOrg
        self.source = source
        self.photo = photo
        self.leftOut = leftOut
    }
}

/// Operations of `recipe-worker`.
public enum ImportOps {
    /// `import.url`: fetches a page and stores the recipe on it (or, with `dryRun`, only reads it).
    public enum FromURL: WireOperation {
        public static let name = "import.url"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var url: String
            public var dryRun: Bool?
            /// The id for a new recipe (a retry lands once).
            public var id: UUID?
            public init(url: String, dryRun: Bool? = nil, id: UUID? = nil) {
                self.url = url
                self.dryRun = dryRun
                self.id = id
            }
        }
        public typealias Response = ImportResult
    }

    /// `import.html`: reads a page the user saved (for sites that turn the worker away); `url` is where it came from.
    public enum FromHTML: WireOperation {
        public static let name = "import.html"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var html: String
            public var url: String
            public var dryRun: Bool?
            public var id: UUID?
            public init(html: String, url: String, dryRun: Bool? = nil, id: UUID? = nil) {
                self.html = html
                self.url = url
                self.dryRun = dryRun
                self.id = id
            }
        }
        public typealias Response = ImportResult
    }

    /// `import.batch`: a job for many URLs, stored in recipe-storage and run by the worker; replies at once.
    public enum Batch: WireOperation {
        public static let name = "import.batch"
        public static let isWrite = true
        public typealias Request = JobOps.Create.Request
        public typealias Response = ImportJob
    }
}
