/// Constants every part of RecipeVault agrees on, defined once.
public enum RecipeVault {
    /// The product version the services and the CLI report.
    public static let version = "0.1.0"

    /// Where `recipe-storage` answers requests unless told otherwise.
    public static let defaultStorageEndpoint = "tcp://127.0.0.1:5555"
    /// Where `recipe-storage` publishes change notices unless told otherwise.
    public static let defaultStoragePublishEndpoint = "tcp://127.0.0.1:5557"
    /// Where `recipe-worker` answers requests unless told otherwise.
    public static let defaultWorkerEndpoint = "tcp://127.0.0.1:5556"

    /// The services, as each names itself (`system.health`'s `service`, the `unknown_op` reply).
    public static let serviceNames: Set<String> = ["recipe-storage", "recipe-worker"]

    /// The database file inside the storage data folder.
    public static let databaseFileName = "Recipes.sqlite"
    /// The photo blob folder inside the storage data folder.
    public static let photoFolderName = "photos"
    /// The file `recipe-storage` puts first into a backup folder and removes last, once the copy is whole and on
    /// disk: a folder that still holds it is not a copy to restore from, and a storage refuses to start on it.
    public static let unfinishedBackupFileName = "UNFINISHED-BACKUP.txt"
    /// The file a running `recipe-storage` holds locked in its data folder, so a second one refuses to start there.
    public static let storageLockFileName = "recipe-storage.lock"
    /// The storage data folder unless told otherwise.
    public static let defaultDataFolder = "./data"

    /// The most photos one recipe may have.
    public static let maxPhotosPerRecipe = 10
    /// The largest photo accepted, in bytes (2 MB).
    public static let maxPhotoBytes = 2 * 1_000 * 1_000
}

/// The wire protocol's fixed numbers (docs/PROTOCOL.md).
public enum WireProtocol {
    /// The protocol version this build speaks; requests with another `v` are refused.
    public static let version = 1
    /// The deepest JSON nesting accepted in frame 0 (objects and arrays, the envelope included).
    public static let maxNestingDepth = 32
    /// The default cap on any one frame; a peer that sends a larger frame is disconnected.
    public static let defaultMaxFrameBytes = 16 * 1_024 * 1_024
    /// The default cap on one request, all frames together (a saved page or a photo, plus its JSON).
    public static let defaultMaxMessageBytes = 24 * 1_024 * 1_024
    /// The largest reply frame the reference client takes (64 MiB, four times a request's frame): a reply with one
    /// record in it (a recipe) may be larger than the request that wrote it, which it answers with more (each line's food).
    public static let maxReplyFrameBytes = 4 * defaultMaxFrameBytes
    /// The most frames of one request: the JSON and up to 15 binary frames.
    public static let maxFrames = 16
    /// The default number of client connections a service holds at once before it holds new ones back: each costs a
    /// file and about 22 KB of memory, so without a bound a stranger's connections would take as much memory as the
    /// open-file limit allows (a million: over 20 GB).
    public static let defaultMaxConnections = 1_024
    /// The default number of requests a service handles at once before answering `busy`.
    public static let defaultMaxRequestsInFlight = 64
    /// The default bytes of requests a service holds while handling them, all together, before answering `busy`:
    /// four of the largest requests. One request is always taken when none is being handled.
    public static let defaultMaxBytesInFlight = 4 * defaultMaxMessageBytes
    /// The default bytes of answered writes a service remembers for retries.
    public static let defaultReplyCacheBytes = 64 * 1_024 * 1_024
    /// The longest request id accepted.
    public static let maxRequestIDLength = 128
}
