import CZeroMQ

/// The ZeroMQ socket patterns the product uses.
public enum SocketType: Sendable, CaseIterable, CustomStringConvertible {
    case request, reply, dealer, router, publish, subscribe, push, pull, pair

    var rawValue: Int32 {
        switch self {
        case .request: ZMQ_REQ
        case .reply: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .publish: ZMQ_PUB
        case .subscribe: ZMQ_SUB
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        }
    }

    public var description: String {
        switch self {
        case .request: "REQ"
        case .reply: "REP"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        case .publish: "PUB"
        case .subscribe: "SUB"
        case .push: "PUSH"
        case .pull: "PULL"
        case .pair: "PAIR"
        }
    }
}
