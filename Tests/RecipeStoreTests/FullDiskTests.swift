import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import Testing

@Suite("A full disk: said as such, and nothing stored is lost")
struct FullDiskTests {
    /// A recipe of about 60 KB: its steps need pages a full database does not have.
    static func bulky(_ name: String) -> RecipeDraft {
        RecipeDraft(name: name, ingredients: [.init(text: "1 cup flour")],
                    instructions: (0..<6).map { .init(text: "Stir \($0) " + String(repeating: "and stir again ", count: 650)) })
    }

    @Test("SQLite's, a photo file's and Foundation's ways of saying the disk is full are storage_full; other failures are not")
    func recognised() {
        var photo = PhotoStorageError.system("cannot write a photo", errno: ENOSPC)
        #expect(photo.description.hasPrefix("cannot write a photo: ") && photo.errno == ENOSPC)
        let full: [any Error] = [
            DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full"),
            photo,
            PhotoStorageError.system("cannot sync a photo to disk", errno: EDQUOT),
            CocoaError(.fileWriteOutOfSpace),
            POSIXError(.ENOSPC),
            NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC)),
        ]
        for error in full {
            let reply = RecipeStore.reply(for: error, during: "recipe.create")
            #expect(reply?.code == .storageFull, "\(error)")
            #expect(reply?.message.contains("recipe.create was not done: the disk recipe-storage writes to is full") == true)
            #expect(reply?.message.contains("Free some space") == true)
        }
        photo.errno = EACCES
        let other: [any Error] = [photo, PhotoStorageError("photo x is missing", kind: .missing), CocoaError(.fileWriteNoPermission), POSIXError(.EIO)]
        for error in other { #expect(RecipeStore.reply(for: error, during: "recipe.create") == nil, "\(error)") }
        // A disk that fails a read or write is said as such, in SQLite's words and without the statement.
        let failing = DatabaseError(resultCode: .SQLITE_IOERR_WRITE, message: "disk I/O error", sql: "INSERT INTO recipes (id) VALUES (?)")
        let reply = RecipeStore.reply(for: failing, during: "recipe.create")
        #expect(reply?.code == .internalError)
        #expect(reply?.message == "recipe.create was not done: the disk under recipe-storage's data folder failed a read or a write "
                + "(SQLite said \"disk I/O error\", code 778); nothing of it was kept. The system's log (dmesg) says more about the disk")
        // SQLite says a full disk met while sizing its shared-memory index as an I/O error: told by the disk's room. A
        // folder on a disk with room (this test's) keeps it an I/O error; the full-disk end-to-end tests meet the other side.
        let shm = DatabaseError(resultCode: .SQLITE_IOERR_SHMSIZE, message: "disk I/O error")
        let roomy = URL(fileURLWithPath: NSTemporaryDirectory())
        #expect(RecipeStore.hasRoom(roomy))
        #expect(!RecipeStore.isOutOfSpace(shm, on: roomy) && RecipeStore.isOutOfSpace(DatabaseError(resultCode: .SQLITE_FULL), on: roomy))
        #expect(!RecipeStore.isOutOfSpace(DatabaseError(resultCode: .SQLITE_CORRUPT), on: roomy))
    }

    @Test("no file descriptor left, said by a photo's file, POSIX or Foundation, is busy with what to do; SQLite's \"cannot open\" is only while the process holds nearly every descriptor")
    func descriptorsUsedUp() {
        let exhausted: [any Error] = [
            PhotoStorageError.system("cannot read a photo", errno: EMFILE),
            PhotoStorageError.system("cannot write a photo", errno: ENFILE),
            POSIXError(.EMFILE),
            NSError(domain: NSPOSIXErrorDomain, code: Int(EMFILE)),
            NSError(domain: NSCocoaErrorDomain, code: CocoaError.fileReadUnknown.rawValue,
                    userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENFILE))]),
        ]
        for error in exhausted {
            let reply = RecipeStore.reply(for: error, during: "photo.get")
            #expect(reply?.code == .busy, "\(error)")
            #expect(reply?.message.hasPrefix("photo.get was not done: recipe-storage has every file it may open in use") == true, "\(reply?.message ?? "")")
            #expect(reply?.message.contains("raise recipe-storage's open-file limit (ulimit -n") == true)
        }
        // While the process holds few of the descriptors it may (the usual case for this test process: checked, as
        // parallel tests hold some), a database that cannot be opened is not that.
        let cannotOpen = DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "unable to open database file")
        if !RecipeStore.descriptorsNearlyUsedUp() {
            #expect(RecipeStore.reply(for: cannotOpen, during: "recipe.list")
                    == ServiceError(.internalError, "recipe.list failed inside recipe-storage's database (SQLite said \"unable to open database file\", code 14)"))
        }
        // A full disk said through Foundation's wrapped POSIX error is still a full disk.
        let wrapped = NSError(domain: NSCocoaErrorDomain, code: CocoaError.fileWriteUnknown.rawValue,
                              userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))])
        #expect(RecipeStore.reply(for: wrapped, during: "photo.add")?.code == .storageFull)
    }

    @Test("a create the full database cannot hold keeps nothing and loses nothing; once there is room, writes land again")
    func fullDatabase() async throws {
        try await withStore { store async throws in
            var kept: [UUID] = []
            for index in 0..<3 { kept.append(try await store.createRecipe(id: UUID(), Self.bulky("Kept \(index)")).recipe.id) }
            // The file may not grow past the pages it has: SQLite answers as it does on a full disk.
            try await store.pool.writeWithoutTransaction { db in
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                try db.execute(sql: "PRAGMA max_page_count = \(pages)")
            }
            let refused = UUID()
            let error = await #expect(throws: DatabaseError.self) { try await store.createRecipe(id: refused, Self.bulky("Refused")) }
            #expect(error.map { RecipeStore.reply(for: $0, during: "recipe.create")?.code } == .storageFull)
            await #expect(throws: ServiceError.self) { try await store.recipe(refused) }
            let page = try await store.listRecipes(RecipeListQuery(limit: 200))
            #expect(Set(page.recipes.map(\.id)).isSuperset(of: kept))
            #expect(!page.recipes.contains { $0.name == "Refused" }, "the refused recipe is not half there")
            for id in kept { #expect(try await store.recipe(id).instructions.count == 6) }
            #expect(try await store.searchRecipes("Refused", limit: 10).isEmpty, "nor in the search index")
            #expect(try store.integrityCheck() == "ok")

            try await store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
            let after = try await store.createRecipe(id: refused, Self.bulky("Refused"))
            #expect(after.created && after.recipe.instructions.count == 6)
        }
    }
}

@Suite("The database's files as the writer checks them before each commit")
struct DatabaseFileIdentityTests {
    @Test("a file gone is nil; one that cannot be looked at is the system's error (refused all the same, said as such)")
    func lookedAt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Recipes.sqlite").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let identity = DatabaseFileIdentity(path: file)
        #expect(identity.database != nil && identity.problem() == nil)
        #expect(try DatabaseFileIdentity.look(file + "/below").get() == nil, "a path through a file: gone")
        #expect(try DatabaseFileIdentity.look(folder.appendingPathComponent("missing").path).get() == nil)
        #expect(throws: POSIXError.self) { try DatabaseFileIdentity.look(String(repeating: "a/", count: 3_000)).get() }
        // Replaced by another file at the same path (made beside it first, so it cannot take the old one's inode): said so.
        try Data("y".utf8).write(to: URL(fileURLWithPath: file + ".new"))
        #expect(rename(file + ".new", file) == 0)
        #expect(identity.problem()?.hasPrefix("Recipes.sqlite was replaced in recipe-storage's data folder (\(folder.path)) while it ran") == true,
                "\(identity.problem() ?? "")")
    }
}
