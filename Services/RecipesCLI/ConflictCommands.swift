import ArgumentParser
import Foundation
import Messaging
import RecipeProtocol

/// `recipes conflicts`: what sync kept when two replicas changed the same thing at once.
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "List, resolve or dismiss what sync kept from concurrent edits.",
        discussion: """
            When two replicas change the same field before they sync, one value wins everywhere and the other is kept: \
            as a conflicted copy for a recipe, or on the record for a book, catalogue entry or cook-log entry. \
            Every replica lists the same conflicts once they are in step.
            """,
        subcommands: [ListConflicts.self, ResolveConflict.self, DismissConflict.self], defaultSubcommand: ListConflicts.self)
}

struct ListConflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Every unresolved conflict.")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await connection.show {
            ConflictOps.List.Response(conflicts: try await allConflicts(try connection.storageClient()))
        } text: { reply in
            if reply.conflicts.isEmpty { return print("No conflicts.") }
            Output.table(["ID", "KIND", "OF", "FIELDS", "KEPT"], reply.conflicts.map { conflict in
                [UUID(uuidString: conflict.id).map(Output.shortID) ?? conflict.id, conflict.kind.rawValue, conflict.recordName ?? conflict.recordID, conflict.fields.joined(separator: ", "),
                 conflict.copyID != nil ? "conflicted copy" : Self.kept(conflict)]
            })
            print("`recipes conflicts resolve ID` takes the kept values; `recipes conflicts dismiss ID` drops them.")
        }
    }

    static func kept(_ conflict: SyncConflict) -> String {
        let text = (conflict.lostValues ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value.canonicalText)" }.joined(separator: "; ")
        return text.count > 60 ? String(text.prefix(59)) + "…" : text
    }
}

struct ResolveConflict: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve", abstract: "Take the kept values: a copy's go into the original recipe (and the copy goes), a kept value into its record.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The conflict's id or short id, from `recipes conflicts`.") var id: String

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            return try await client.call(ConflictOps.Resolve.self, .init(id: try await resolveConflict(id, client)))
        } text: { conflict in
            let fields = conflict.fields.joined(separator: ", ")
            print("Resolved: \(fields) of \(conflict.kind.rawValue) \(conflict.recordName ?? conflict.recordID) now \(conflict.fields.count == 1 ? "holds" : "hold") the kept values.")
        }
    }
}

struct DismissConflict: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dismiss", abstract: "Drop the kept values: a conflicted copy is deleted, a kept value forgotten.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The conflict's id or short id, from `recipes conflicts`.") var id: String

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            return try await client.call(ConflictOps.Dismiss.self, .init(id: try await resolveConflict(id, client)))
        } text: { conflict in
            print("Dismissed the conflict on \(conflict.kind.rawValue) \(conflict.recordName ?? conflict.recordID).")
        }
    }
}

/// A conflict by its id, or by the short id `recipes conflicts` shows (or another start or end of its id).
func resolveConflict(_ reference: String, _ client: MessageClient) async throws -> String {
    let trimmed = reference.trimmingCharacters(in: .whitespaces)
    if UUID(uuidString: trimmed) != nil { return trimmed }
    let conflicts = try await allConflicts(client)
    let matches = conflicts.filter { conflict in UUID(uuidString: conflict.id).map { Output.isShortID(trimmed, of: $0) } ?? (conflict.id == trimmed) }
    return try Output.onlyMatch(matches, none: "no unresolved conflict \(trimmed); `recipes conflicts` lists them") {
        "\"\(trimmed)\" is part of \($0) conflict ids; give more of it (or the whole id)"
    }.id
}

/// `recipes backup DIR`: a consistent copy taken while the storage runs.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Copy the database and its photos into a folder, while the storage runs.",
        discussion: """
            DIR is a folder on the storage's machine (inside its container, for Docker: a mounted volume), absolute, \
            new or empty. A storage started with --backup-folder (as in the containers) writes backups only inside that \
            folder, and DIR may be a name alone there ("recipes backup 2026-12-02"). To restore: stop the storage, replace its data folder with DIR's contents, start it. A storage \
            started from a backup continues as a new incarnation of its replica, and sync brings back what its peers have.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("Where to write the copy, on the storage's machine (or its name inside the storage's --backup-folder).", valueName: "DIR")) var folder: String

    func run() async throws {
        try await connection.show {
            let client = try connection.patientStorageClient(seconds: 600)
            return try await client.call(BackupOps.Backup.self, .init(folder: folder))
        } text: { reply in
            print("Backed up \(Output.count(reply.recipes, "recipe")) and \(Output.count(reply.photos, "photo")) (\(SyncNow.size(reply.bytes))) to \(reply.folder).")
            if let lost = reply.lostPhotos {
                print("Left out \(Output.count(lost.count, "photo")) whose file is missing or damaged on the storage's disk "
                      + "(\(lost.prefix(3).map { String($0.prefix(12)) }.joined(separator: ", "))\(lost.count > 3 ? ", …" : "")); "
                      + "a sync with a replica that holds them brings them back, here and to a storage started on this copy.")
            }
        }
    }
}
