import Foundation
import RecipeModel

/// The apps whose exports `recipes migrate` reads (docs/MIGRATE.md).
public enum MigrationFormat: String, Codable, Sendable, CaseIterable, WireChoice {
    /// Paprika 3: a `.paprikarecipes` zip of gzip-compressed JSON recipes, or a folder of `.paprikarecipe` files.
    case paprika
    /// Mealie 1.x: its recipe export zip, or its backup zip (`database.json` and `data/`).
    case mealie
    /// Tandoor: its export zip, one inner zip per recipe with `recipe.json` and its image.
    case tandoor
    /// Cooklang: `.cook` files, each with its photo beside it.
    case cooklang
    /// Chowdown: Markdown files with YAML front matter.
    case chowdown
    /// Nextcloud Cookbook folders (and what `recipes export` writes).
    case nextcloud
    /// schema.org Recipe files: JSON-LD, or saved web pages.
    case schema

    /// The app's name, for messages.
    public var appName: String {
        switch self {
        case .paprika: "Paprika"
        case .mealie: "Mealie"
        case .tandoor: "Tandoor"
        case .cooklang: "Cooklang"
        case .chowdown: "Chowdown"
        case .nextcloud: "Nextcloud Cookbook"
        case .schema: "schema.org"
        }
    }
}

/// One entry of a migration as the job is created: its name in the export, and, when the
/// CLI could not even cut it out (too large, unreadable in the archive), why.
public struct MigrationEntryInfo: Codable, Sendable, Equatable {
    public var label: String
    /// Set when the entry is failed from the start; the rest of the migration goes on.
    public var refusal: String?
    public init(label: String, refusal: String? = nil) {
        self.label = label
        self.refusal = refusal
    }
}

/// What makes an import job a migration.
public struct MigrationPlan: Codable, Sendable, Equatable {
    public var format: MigrationFormat
    /// What was migrated, as the user named it ("Paprika export My Recipes.paprikarecipes").
    public var source: String
    public var entries: [MigrationEntryInfo]
    public init(format: MigrationFormat, source: String, entries: [MigrationEntryInfo]) {
        self.format = format
        self.source = source
        self.entries = entries
    }
}

extension JobOps {
    /// The most entries one migration may hold.
    public static let maxEntries = 50_000

    /// `job.stage`: one entry of a migration that is about to be created, its bytes in frame 1
    /// (as `recipes migrate` cut it out of the export). Staged entries wait for `job.create`;
    /// each is dropped once its result is recorded, and unclaimed ones after a day.
    public enum Stage: WireOperation {
        public static let name = "job.stage"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var jobID: UUID
            public var position: Int
            /// The frame holding the entry (usually `{"frame": 1}`).
            public var entry: FrameReference
            public init(jobID: UUID, position: Int, entry: FrameReference = FrameReference(frame: 1)) {
                self.jobID = jobID
                self.position = position
                self.entry = entry
            }
        }
        public typealias Response = Empty
    }

    /// `job.entry`: a migration entry's bytes (frame 1 of the reply), for the worker to read.
    public enum Entry: WireOperation {
        public static let name = "job.entry"
        public static let isWrite = false
        /// `jobID` and `position`, as `job.start`'s.
        public typealias Request = Start.Request
        public struct Response: Codable, Sendable, Equatable {
            public var entry: FrameReference
            public init(entry: FrameReference) { self.entry = entry }
        }
    }
}

/// Migration operations of `recipe-worker`.
public enum MigrateOps {
    /// `migrate.stage`: passed on to the worker's recipe-storage as `job.stage` (frame 1: the entry).
    public enum Stage: WireOperation {
        public static let name = "migrate.stage"
        public static let isWrite = true
        public typealias Request = JobOps.Stage.Request
        public typealias Response = Empty
    }

    /// `migrate.start`: creates the migration job (every entry staged before) and runs it; replies at once.
    public enum Start: WireOperation {
        public static let name = "migrate.start"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            public var plan: MigrationPlan
            public init(id: UUID, plan: MigrationPlan) {
                self.id = id
                self.plan = plan
            }
        }
        public typealias Response = ImportJob
    }
}
