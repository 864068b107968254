import Foundation
import Logging
import RecipeProtocol

extension OpenFiles {
    /// Raises the limit (`raise()`) and says so in the log when it changed (or when it stays low). Throws `LimitTooLow`
    /// when even the raised limit is under `minimum`: a service started so had its start fail at whichever part
    /// first wanted a descriptor, in that part's words ("cannot open the data folder", "zmq_ctx_new"), or stopped at
    /// once inside ZeroMQ or SwiftNIO, which end the process when they cannot make their pollers. Services call this
    /// once, before they bind.
    public static func raise(logger: Logger, serviceName: String, minimum: UInt64) throws {
        guard let (before, after) = raise() else { return }
        if after > before {
            logger.info("open file limit raised", metadata: ["from": "\(before)", "to": "\(after)"])
        }
        if after < minimum {
            throw LimitTooLow(serviceName: serviceName, limit: after, minimum: minimum)
        }
        if after < 1_024 {
            logger.warning("the open file limit is low: each client connection takes a file, so a few hundred connections keep every other client out; raise the hard limit (ulimit -Hn, LimitNOFILE=, docker --ulimit nofile=)",
                           metadata: ["limit": "\(after)"])
        }
    }
}
