import Messaging
import RecipeProtocol

/// Everything `recipe-storage` is told at start-up.
struct StorageConfiguration: Sendable {
    /// Where requests are answered.
    var bindEndpoint = RecipeVault.defaultStorageEndpoint
    /// The largest frame a client may send.
    var maxFrameBytes = WireProtocol.defaultMaxFrameBytes

    /// The server loop's configuration.
    var server: MessageServer.Configuration {
        var configuration = MessageServer.Configuration(endpoint: bindEndpoint, serviceName: "recipe-storage")
        configuration.maxFrameBytes = maxFrameBytes
        return configuration
    }
}
