import Foundation
import Logging
import Messaging
import RecipeProtocol
import RecipeStore
import ServiceLifecycle

/// The storage service: the store, opened and migrated, behind the message server.
public struct StorageService: Sendable {
    public let store: RecipeStore
    public let server: MessageServer
    public let publisher: ChangePublisher
    /// Held while the service runs, so no second storage starts on its data folder.
    public let folderLock: DataFolderLock
    /// Beside a storage that started read-only on a full disk: finds room, and has it start again in full.
    public let roomWatch: RoomWatch?

    /// Opens the store in the configured data folder, loads the samples when asked
    /// and the database is empty, and prepares the server (nothing is bound yet).
    public init(configuration: StorageConfiguration, logger: Logger) async throws {
        do {
            folderLock = try DataFolderLock(folder: configuration.dataFolder)
            store = try Self.open(configuration.dataFolder, logger: logger)
        } catch let error as DataFolderInUse {
            throw error
        } catch let error as DataFolderLockIsLink {
            throw error // what to do is its own: no other folder is needed
        } catch let error as ServiceError {
            throw error
        } catch {
            throw DataFolderError(folder: configuration.dataFolder, underlying: error)
        }
        if let backupFolder = configuration.backupFolder {
            do {
                try store.confineBackups(to: backupFolder)
            } catch let error as ServiceError {
                throw BackupFolderRefused(reason: error.message)
            }
            logger.info("backups written only inside the backup folder", metadata: ["folder": "\(backupFolder.path)"])
        }
        let settings = try store.durabilitySettings()
        logger.info("database open", metadata: [
            "path": "\(configuration.dataFolder.appendingPathComponent(RecipeVault.databaseFileName).path)",
            "journal": "\(settings.journalMode)", "synchronous": "\(settings.synchronous == 2 ? "full" : String(settings.synchronous))",
        ])
        if let note = folderLock.unlockedNote {
            logger.warning("data folder not locked", metadata: ["why": "\(note)"])
        }
        Self.logOpenNotes(of: store, logger: logger)
        // The same, when it happens while the storage runs.
        store.onSyncNotice { [logger] what, why in logger.notice("\(what)", metadata: ["why": "\(why)"]) }
        if configuration.seedSamples && store.readOnlyReason == nil {
            if try await store.isEmpty() {
                let result = try await store.loadSamples()
                logger.info("sample recipes loaded", metadata: ["recipes": "\(result.recipes)", "books": "\(result.books)"])
            } else {
                logger.info("sample recipes not loaded: the database already holds data")
            }
        }
        let publisher = try ChangePublisher(endpoint: configuration.publishEndpoint, security: configuration.security, logger: logger)
        self.publisher = publisher
        logger.info("publishing change notices", metadata: ["endpoint": "\(publisher.endpoint)"])
        var routes = Routes()
        routes.observeWrites { op in publisher.announce(op) }
        routes.translateFailures { [store] error, op in store.reply(for: error, during: op) }
        routes.addSystemOperations(service: "recipe-storage")
        routes.addStorageOperations(store: store, publishEndpoint: publisher.endpoint, announce: { op in publisher.announce(op) })
        if let reason = store.readOnlyReason {
            // Every change, and every sync (a peer's reads included: the open's checks of a restored file were not made).
            // A backup stays: it only reads this store, and copies it to a disk that may have room.
            let folder = configuration.dataFolder
            let roomWatch = RoomWatch(folder: folder, logger: logger)
            self.roomWatch = roomWatch
            routes.refuse(where: { op, isWrite, role in (isWrite || role == .peer) && op != BackupOps.Backup.name }) { op in
                let what = RecipeStore.hasRoom(folder) ? "There is room on that disk now: it starts again to take changes within seconds"
                    : "Free some space on the disk of its data folder: it starts again to take changes within seconds of it"
                return ServiceError(.storageFull, "\(op) was not done: recipe-storage runs read-only (\(reason)): recipes can be read and "
                                    + "backed up, nothing can be changed or synced. \(what)")
            }
            if store.readsFileAlone {
                // Read as the file alone, the store must not be read while the watch's trial open writes the file: until
                // the trial fails, or the storage has started again, every request but the service's own waits outside.
                routes.gate(where: { op, _, _ in !op.hasPrefix("system.") }) { _ in
                    roomWatch.isOpeningInFull
                        ? ServiceError(.shuttingDown, "recipe-storage is starting again in full (there is room on the disk of its data folder again); retry in a few seconds")
                        : nil
                }
            }
        } else {
            roomWatch = nil
        }
        var serverConfiguration = configuration.server
        serverConfiguration.heldBackWith = [publisher.endpoint]
        server = try MessageServer(configuration: serverConfiguration, routes: routes, logger: logger)
    }
}

extension StorageService {
    /// Logs what opening `store` did once (a stale log set aside, a new incarnation, a clock restarted): at start, and
    /// for the trial open of a storage running read-only (`RoomWatch`), which the start after it finds done.
    static func logOpenNotes(of store: RecipeStore, logger: Logger) {
        if let note = store.setAsideLogNote { logger.warning("stale write-ahead log set aside", metadata: ["why": "\(note)"]) }
        if let note = store.incarnationNote { logger.notice("new replica incarnation", metadata: ["why": "\(note)"]) }
        if let note = store.clockNote { logger.notice("replica clock restarted", metadata: ["why": "\(note)"]) }
    }

    /// The store in `folder`, opened in full; or, when its disk is too full for the open's own writes, for reading
    /// only (said in the log), so the recipes can still be read — and backed up to another disk — until there is room.
    static func open(_ folder: URL, logger: Logger) throws -> RecipeStore {
        do {
            return try RecipeStore(folder: folder)
        } catch where RecipeStore.isOutOfSpace(error, on: folder) {
            let reason = "the disk of its data folder was full when it started"
            guard let store = try? RecipeStore(readingOnly: folder, because: reason) else { throw error }
            logger.warning("the disk is full: started read-only; recipes can be read and backed up, nothing can be changed or synced until there is room (it then starts again in full by itself)",
                           metadata: ["folder": "\(folder.path)", "error": "\(error)"])
            return store
        }
    }
}

/// The configured backup folder cannot be one (`--backup-folder`): the storage does not start.
public struct BackupFolderRefused: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
