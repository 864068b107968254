/// One operation of the protocol: its wire name and the bodies it carries.
///
/// Services and clients share these definitions, so both sides agree on the
/// shape of every request and reply.
public protocol WireOperation: Sendable {
    /// The request body.
    associatedtype Request: Codable & Sendable
    /// The reply body.
    associatedtype Response: Codable & Sendable

    /// The wire name, `area.verb` (`recipe.get`, `photo.add`).
    static var name: String { get }
    /// `true` for a person's changes: announced once committed, refused by a storage open for reading only, and run
    /// once per request id (`runsOnce`).
    static var isWrite: Bool { get }
    /// `true` for operations a retry must not run again: the reply is remembered by request id, and a repeat of the
    /// request (a retry after a reply that came too late) waits for it or is given it. Every write; and the replication
    /// steps that change a replica though running them twice would change nothing more (an apply, a photo sent, a
    /// snapshot made or installed): their reply says what *this* run did, and a second run says "nothing" — an apply
    /// retried while its first run committed would answer "no change", or `storage_full` on the disk the first run
    /// filled, for changes that were kept.
    static var runsOnce: Bool { get }
    /// Who may call it when the service has CURVE keys: people's clients, or only replication peers.
    static var role: OperationRole { get }
    /// `true` for operations whose handler reads, writes or syncs photo files: a server runs them off its
    /// I/O thread, so a slow disk never holds up the socket.
    static var touchesFiles: Bool { get }
    /// `true` for reads whose reply grows with the collection and is not bounded by a limit the request
    /// sets (a book's recipes, the catalogue, a job's every URL): a server runs them, and encodes their
    /// reply, off its I/O thread, so a reply of megabytes never holds up the socket.
    static var repliesInBulk: Bool { get }
    /// `true` for reads that answer with one record (a recipe): its size was bounded when it was written, not by the
    /// collection, so it is sent up to what a client takes (`WireProtocol.maxReplyFrameBytes`), where a list that
    /// grew past one request's frame (16 MiB) is answered `message_too_large`.
    static var repliesWithOneRecord: Bool { get }
}

extension WireOperation {
    /// Writes run once; other operations say so when they change state too.
    public static var runsOnce: Bool { isWrite }
    /// Operations are for people's clients unless they say otherwise.
    public static var role: OperationRole { .client }
    /// Operations work in the database only unless they say otherwise.
    public static var touchesFiles: Bool { false }
    /// Replies are small, or bounded by the request's limit, unless they say otherwise.
    public static var repliesInBulk: Bool { false }
    /// A read's reply is a list, or small, unless it says otherwise.
    public static var repliesWithOneRecord: Bool { false }
}

/// The two kinds of caller a service tells apart by their CURVE key (docs/PROTOCOL.md, "Roles").
public enum OperationRole: String, Sendable, Codable {
    /// People's clients (the CLI): everything but replication.
    case client
    /// Replication peers (the worker): `sync.*` of recipe-storage, as well as everything a client may call.
    case peer
}

/// A body with no fields: `{}` (the `body` key may also be left out).
public struct Empty: Codable, Sendable, Equatable {
    /// The empty body.
    public init() {}
}

/// A request for one page of a list that grows with the collection (`book.list`, `conflicts.list`): the first page
/// without `after`, each next one with the `next` of the page before, until a page has none. Without `limit`, every
/// item comes in one reply (as before these lists came in pages), which a large collection can take past what one
/// reply may carry.
public struct PageRequest: Codable, Sendable, Equatable {
    /// At most this many (1 to the operation's `maxLimit`); every item when left out.
    public var limit: Int?
    /// The `next` of the page before.
    public var after: String?
    public init(limit: Int? = nil, after: String? = nil) {
        self.limit = limit
        self.after = after
    }
}

/// A pointer from a JSON body to a binary frame of the same message: frame 1 is
/// the first frame after the JSON.
public struct FrameReference: Codable, Sendable, Equatable, Hashable {
    /// The index of the frame in the message (1 or more).
    public var frame: Int

    /// A reference to frame `frame`.
    public init(frame: Int) { self.frame = frame }

    /// Where the frame is among `count` binary frames (from 0), or `nil` when it names none of them. The number comes
    /// from the other side, any `Int` at all (`frame - 1` of the lowest would trap), so it is only ever read through here.
    public func index(among count: Int) -> Int? {
        frame >= 1 && frame <= count ? frame - 1 : nil
    }
}
