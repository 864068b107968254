import Foundation
import Messaging
import RecipeProtocol
import ZeroMQ

/// Everything `recipe-storage` is told at start-up.
public struct StorageConfiguration: Sendable {
    /// Where requests are answered.
    public var bindEndpoint = RecipeVault.defaultStorageEndpoint
    /// Where change notices are published.
    public var publishEndpoint = RecipeVault.defaultStoragePublishEndpoint
    /// The data folder holding `Recipes.sqlite` and `photos/`.
    public var dataFolder = URL(fileURLWithPath: RecipeVault.defaultDataFolder)
    /// The largest frame a client may send.
    public var maxFrameBytes = WireProtocol.defaultMaxFrameBytes
    /// The largest request, all frames together.
    public var maxMessageBytes = WireProtocol.defaultMaxMessageBytes
    /// Client connections held at once before new ones wait (the request and change-notice endpoints together); `nil`
    /// in a process shared with other servers (see `MessageServer.Configuration.maxConnections`).
    public var maxConnections: Int?
    /// Resident bytes past which quiet connections are shut; `nil` in a process shared with other servers (see
    /// `MessageServer.Configuration.maxResidentBytes`).
    public var maxResidentBytes: Int?
    /// Requests handled at once before `busy`.
    public var maxRequestsInFlight = WireProtocol.defaultMaxRequestsInFlight
    /// Bytes of the requests handled at once, all together, before `busy`.
    public var maxBytesInFlight = WireProtocol.defaultMaxBytesInFlight
    /// Bytes of answered writes remembered for retries.
    public var replyCacheBytes = WireProtocol.defaultReplyCacheBytes
    /// Load the sample collection when the database is empty.
    public var seedSamples = false
    /// The only folder `storage.backup` writes into; `nil`: any folder outside the data folder.
    public var backupFolder: URL?
    /// CURVE keys and the clients allowed in, for requests and change notices; `nil` is no security.
    public var security: CurveServerSecurity?

    public init() {}

    /// The server loop's configuration.
    public var server: MessageServer.Configuration {
        var configuration = MessageServer.Configuration(endpoint: bindEndpoint, serviceName: "recipe-storage")
        configuration.maxFrameBytes = maxFrameBytes
        configuration.maxMessageBytes = maxMessageBytes
        configuration.maxConnections = maxConnections
        configuration.maxResidentBytes = maxResidentBytes
        configuration.maxRequestsInFlight = maxRequestsInFlight
        configuration.maxBytesInFlight = maxBytesInFlight
        configuration.replyCacheBytes = replyCacheBytes
        configuration.security = security
        return configuration
    }
}
