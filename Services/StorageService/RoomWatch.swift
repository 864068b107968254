import Foundation
import Logging
import RecipeStore
import ServiceLifecycle
import Synchronization

/// Beside a storage that started read-only on a full disk: looks for room every `interval`, and once the store opens in
/// full there (tried for real, then closed), ends — which shuts the service group down gracefully, and the storage's
/// executable starts itself again, in full (`RecipeStorageCommand`). Nobody has to restart it once space is freed.
///
/// A look that finds the disk's free space past `RecipeStore.hasRoom` tries the open only when the free space grew
/// since the last open that found no room, so a disk whose free space looks like room, but is not for the open's own
/// writes, is not opened again and again.
public final class RoomWatch: Service, Sendable {
    let folder: URL
    let interval: Duration
    let logger: Logger
    private let found = Mutex(false)
    private let opening = Mutex(false)

    /// How often a storage running read-only looks for room: `RECIPES_STORAGE_ROOM_CHECK_SECONDS`, else 5 s.
    public static var defaultInterval: Duration {
        let seconds = ProcessInfo.processInfo.environment["RECIPES_STORAGE_ROOM_CHECK_SECONDS"].flatMap(Double.init) ?? 5
        return .milliseconds(Int((min(max(seconds, 0.1), 3_600) * 1_000).rounded()))
    }

    init(folder: URL, interval: Duration = RoomWatch.defaultInterval, logger: Logger) {
        self.folder = folder
        self.interval = interval
        self.logger = logger
    }

    /// Whether it found room: the storage then starts again to take changes.
    public var foundRoom: Bool { found.withLock { $0 } }

    /// Whether it is opening the store in full for a trial, or found room and the storage is about to start again: the
    /// database file may be written meanwhile (the trial's own writes, and its close moving them into the file).
    public var isOpeningInFull: Bool { opening.withLock { $0 } }

    public func run() async throws {
        var freeWhenRefused: UInt64?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
            } catch {
                return // shut down, or cancelled: not a find
            }
            guard !Task.isShuttingDownGracefully, RecipeStore.hasRoom(folder), let free = RecipeStore.diskSpace(of: folder)?.free else { continue }
            if let refused = freeWhenRefused, free <= refused { continue }
            opening.withLock { $0 = true }
            do {
                let store = try RecipeStore(folder: folder)
                StorageService.logOpenNotes(of: store, logger: logger)
                try store.close()
            } catch where RecipeStore.isOutOfSpace(error, on: folder) {
                opening.withLock { $0 = false }
                freeWhenRefused = free
                logger.info("room on the disk, but not yet enough to open the database in full", metadata: ["error": "\(error)"])
                continue
            } catch {
                opening.withLock { $0 = false }
                // Not the disk: the storage goes on read-only (a restart by hand says why, as a start does).
                logger.warning("the database could not be opened in full; recipe-storage goes on read-only",
                               metadata: ["error": "\(error)"])
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(86_400 * 365)) }
                return
            }
            logger.notice("there is room on the disk of the data folder again: recipe-storage starts again to take changes",
                          metadata: ["folder": "\(folder.path)"])
            found.withLock { $0 = true }
            return
        }
    }
}
