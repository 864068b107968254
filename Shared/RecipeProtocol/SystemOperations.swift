/// Operations every RecipeVault service answers.
public enum System {
    /// `system.health`: who is answering, and that it is alive.
    public enum Health: WireOperation {
        public static let name = "system.health"
        public static let isWrite = false
        public typealias Request = Empty

        /// What a service says about itself.
        public struct Response: Codable, Sendable, Equatable {
            /// The executable answering, such as `recipe-storage`.
            public var service: String
            /// The product version.
            public var version: String
            /// The protocol version the service speaks.
            public var protocolVersion: Int
            /// Seconds since the service started.
            public var uptimeSeconds: Double
            /// The sync rules it merges or syncs replicas by (`SyncRules`): two replicas sync only when every storage and
            /// worker between them says the same. Absent from a release before they were numbered.
            public var syncRules: Int?

            /// A health report.
            public init(service: String, version: String, protocolVersion: Int, uptimeSeconds: Double, syncRules: Int? = SyncRules.current) {
                self.syncRules = syncRules
                self.service = service
                self.version = version
                self.protocolVersion = protocolVersion
                self.uptimeSeconds = uptimeSeconds
            }
        }
    }

    /// `system.echo`: sends back the text and binary frames it was given
    /// (connection checks and the latency benchmark).
    public enum Echo: WireOperation {
        public static let name = "system.echo"
        public static let isWrite = false

        /// The text to send back, and the binary frames to send back after it.
        public struct Request: Codable, Sendable, Equatable {
            /// Any text.
            public var text: String
            /// Frames of the request to return, in this order.
            public var frames: [FrameReference]

            /// An echo request.
            public init(text: String, frames: [FrameReference] = []) {
                self.text = text
                self.frames = frames
            }
        }

        /// The same text, and references to the returned frames.
        public typealias Response = Request
    }
}
