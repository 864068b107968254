import Foundation
import Logging
import RecipeProtocol

/// The operations a server answers, each with its handler.
public struct Routes: Sendable {
    struct Route: Sendable {
        /// A person's change (`WireOperation.isWrite`): what `refuse` and `gate` pick by.
        let isWrite: Bool
        /// Run once per request id: its reply is remembered and given to a repeat (`WireOperation.runsOnce`).
        let runsOnce: Bool
        /// Who may call it when the server has CURVE keys.
        let role: OperationRole
        /// Runs off the server's I/O thread (it reads or writes photo files).
        let touchesFiles: Bool
        /// Runs, and encodes its reply, off the server's I/O thread (a reply that grows with the collection).
        let repliesInBulk: Bool
        /// Decodes the body, runs the handler, encodes the reply frames (JSON first).
        let run: @Sendable (_ frame: Data, _ context: RequestContext) async -> Answer
    }

    /// A route's reply frames, and whether a write's retry may be given them again (`remember`). Not when the request did
    /// nothing and asks to be sent again (`busy`), nor when it was refused before running (`refuse`): the retry would
    /// get the refusal back, never run.
    struct Answer: Sendable {
        var frames: [Data]
        var remember = true
    }

    private(set) var table: [String: Route] = [:]
    /// The largest JSON frame a read's reply may be: the frame size a request may have (16 MiB).
    public static let maxReplyJSONBytes = WireProtocol.defaultMaxFrameBytes
    private var writeObserver: (@Sendable (_ op: String) -> Void)?

    /// Calls `observer` after every write operation that succeeded (its change is
    /// committed), with the operation's name. Set it before adding the routes.
    public mutating func observeWrites(_ observer: @escaping @Sendable (_ op: String) -> Void) {
        writeObserver = observer
    }

    /// The lines of requests that failed, by the code the client was told: at most ten a minute of each.
    private let failureLog = LogThrottles()

    private var failureTranslator: (@Sendable (_ error: any Error, _ op: String) -> ServiceError?)?

    /// Lets `translator` turn a handler's failure that is not a `ServiceError` into the reply it should be —
    /// a full disk, say, which the client should hear as such — instead of `internal_error` (when it returns
    /// nil). Set it before adding the routes.
    public mutating func translateFailures(_ translator: @escaping @Sendable (_ error: any Error, _ op: String) -> ServiceError?) {
        failureTranslator = translator
    }

    /// No operations yet.
    public init() {}

    /// The wire names answered, sorted.
    public var operations: [String] { table.keys.sorted() }

    /// Those of `operations` run once per request id (a repeat is given the one run's reply): docs/PROTOCOL.md's "write".
    public var operationsRunOnce: Set<String> { Set(table.filter { $0.value.runsOnce }.keys) }

    /// Answers every operation added so far that `refused` picks (by its name, whether it writes, and whose it is) with the error
    /// `error` makes of its name, without decoding its body or running its handler: a storage open for reading only
    /// refuses every change before it reaches the store. The error is not remembered as a write's answer (`remember`):
    /// once the service can write again, a retry of the same request runs.
    public mutating func refuse(where refused: (_ op: String, _ isWrite: Bool, _ role: OperationRole) -> Bool,
                                with error: @escaping @Sendable (_ op: String) -> ServiceError) {
        let encoder = WireJSONEncoder()
        for (name, route) in table where refused(name, route.isWrite, route.role) {
            table[name] = Route(isWrite: route.isWrite, runsOnce: route.runsOnce, role: route.role, touchesFiles: false, repliesInBulk: false) { _, context in
                Self.refusal(error(name), to: context, using: encoder)
            }
        }
    }

    /// Puts `check` in front of every operation added so far that `selected` picks: each request of one is answered with
    /// the error `check` returns for it, without running its handler, and runs as before while `check` returns nil. Not
    /// remembered as a write's answer, as `refuse`.
    public mutating func gate(where selected: (_ op: String, _ isWrite: Bool, _ role: OperationRole) -> Bool,
                              by check: @escaping @Sendable (_ op: String) -> ServiceError?) {
        let encoder = WireJSONEncoder()
        for (name, route) in table where selected(name, route.isWrite, route.role) {
            let run = route.run
            table[name] = Route(isWrite: route.isWrite, runsOnce: route.runsOnce, role: route.role, touchesFiles: route.touchesFiles,
                                repliesInBulk: route.repliesInBulk) { frame, context in
                if let error = check(name) { return Self.refusal(error, to: context, using: encoder) }
                return await run(frame, context)
            }
        }
    }

    /// The answer of a request turned away before its handler ran: not remembered as a write's answer.
    private static func refusal(_ error: ServiceError, to context: RequestContext, using encoder: WireJSONEncoder) -> Answer {
        Answer(frames: [WireCodec.encodeError(id: context.requestID, error: error, using: encoder)], remember: false)
    }

    /// Answers `Op` with `handler`, whose reply may carry binary frames.
    public mutating func handleWithFrames<Op: WireOperation>(
        _: Op.Type,
        _ handler: @escaping @Sendable (Op.Request, RequestContext) async throws -> Reply<Op.Response>
    ) {
        precondition(table[Op.name] == nil, "\(Op.name) is registered twice")
        // Made once: the coders hold Foundation's as their fallback, costly to make per request.
        let encoder = WireJSONEncoder()
        // A client's request: a field it names that the operation does not have is refused, naming it. A peer's (sync)
        // is read as before, so replicas of two versions keep syncing.
        let decoder = Op.role == .peer ? WireJSONDecoder()
            : WireJSONDecoder(userInfo: [RecipeDraft.checksFields: true, WireJSONDecoder.refusesUnknownFields: true])
        let observer = Op.isWrite ? writeObserver : nil
        let translator = failureTranslator
        let failureLog = self.failureLog
        table[Op.name] = Route(isWrite: Op.isWrite, runsOnce: Op.runsOnce, role: Op.role, touchesFiles: Op.touchesFiles,
                               repliesInBulk: Op.repliesInBulk) { frame, context in
            do {
                let body = try WireCodec.decodeRequestBody(Op.Request.self, from: frame, using: decoder)
                let reply = try await handler(body, context)
                let json = try WireCodec.encodeReply(id: context.requestID, body: reply.body, using: encoder)
                // A read whose answer grew with the collection past what one frame may carry is told so, not sent:
                // a client drops a frame that large unread and would only ask again. (A reply of what ran once — a write,
                // a sync step — tells of what is already committed: it is never replaced by an error.)
                // One record (a recipe) is as large as it was written, whatever the collection: it goes up to what a
                // client takes, and past it (written by an older version) is said to be that record's size.
                if !Op.runsOnce && json.count > (Op.repliesWithOneRecord ? WireProtocol.maxReplyFrameBytes : Routes.maxReplyJSONBytes) {
                    let size = String(format: "%.1f", Double(json.count) / 1_048_576)
                    throw ServiceError(.messageTooLarge, Op.repliesWithOneRecord
                        ? "the reply to \(Op.name) would be \(size) MiB of JSON, over the \(WireProtocol.maxReplyFrameBytes / 1_048_576) MiB a client takes; the record is larger than any written now may be"
                        : "the reply to \(Op.name) would be \(size) MiB of JSON, over the \(Routes.maxReplyJSONBytes / 1_048_576) MiB one reply may carry; ask for less at a time (a smaller limit, or a narrower question)")
                }
                observer?(Op.name)
                return Answer(frames: [json] + reply.frames)
            } catch let error as ServiceError {
                return Answer(frames: [WireCodec.encodeError(id: context.requestID, error: error, using: encoder)], remember: error.code != .busy)
            } catch {
                if let reply = translator?(error, Op.name) {
                    // Not a fault of the service's own (a full disk) is a warning; a damaged database or a failing disk
                    // an error. Either with the code the client was told, and the whole error for whoever reads the log.
                    let fault = reply.code == .internalError || reply.code == .storageDamaged
                    if let leftOut = failureLog.admit(reply.code.rawValue) {
                        context.logger.log(level: fault ? .error : .warning, fault ? "request failed" : "request refused",
                                           metadata: ["code": "\(reply.code.rawValue)", "op": "\(Op.name)", "error": "\(error)"]
                                               .merging(LogThrottle.metadata(leftOut: leftOut)) { $1 })
                    }
                    return Answer(frames: [WireCodec.encodeError(id: context.requestID, error: reply, using: encoder)], remember: reply.code != .busy)
                }
                if let leftOut = failureLog.admit(ErrorCode.internalError.rawValue) {
                    context.logger.error("request failed", metadata: ["op": "\(Op.name)", "error": "\(error)"]
                                             .merging(LogThrottle.metadata(leftOut: leftOut)) { $1 })
                }
                let failure = ServiceError(.internalError, "\(Op.name) failed: \(error)")
                return Answer(frames: [WireCodec.encodeError(id: context.requestID, error: failure, using: encoder)])
            }
        }
    }

    /// The reply frames to one request as a server would answer it — envelope checked,
    /// operation looked up, body decoded, handler run — without a socket (tests and fuzzing).
    /// Roles, limits and the reply cache are the server loop's and are not applied here.
    public func reply(to payload: Data, frames: [Data] = [], logger: Logger) async -> [Data] {
        let encoder = WireJSONEncoder()
        let header: RequestHeader
        do {
            header = try WireCodec.decodeRequestHeader(payload, using: WireJSONDecoder())
        } catch {
            return [WireCodec.encodeError(id: error.id, error: error.error, using: encoder)]
        }
        guard let route = table[header.op] else {
            let error = ServiceError(.unknownOp, "unknown operation \"\(header.op.prefix(64))\"; this service answers: \(operations.joined(separator: ", "))")
            return [WireCodec.encodeError(id: header.id, error: error, using: encoder)]
        }
        return await route.run(payload, RequestContext(requestID: header.id, op: header.op, frames: frames, logger: logger)).frames
    }

    /// Answers `Op` with `handler`, whose reply is JSON only.
    public mutating func handle<Op: WireOperation>(
        _ op: Op.Type,
        _ handler: @escaping @Sendable (Op.Request, RequestContext) async throws -> Op.Response
    ) {
        handleWithFrames(op) { request, context in Reply(try await handler(request, context)) }
    }
}

extension Routes {
    /// `system.health` and `system.echo`, which every service answers.
    public mutating func addSystemOperations(service: String, startedAt: ContinuousClock.Instant = .now) {
        handle(System.Health.self) { _, _ in
            let uptime = ContinuousClock.now - startedAt
            return System.Health.Response(
                service: service,
                version: RecipeVault.version,
                protocolVersion: WireProtocol.version,
                uptimeSeconds: uptime / .seconds(1)
            )
        }
        handleWithFrames(System.Echo.self) { request, context in
            let frames = try request.frames.map { reference throws(ServiceError) in try context.frame(reference) }
            let references = frames.indices.map { FrameReference(frame: $0 + 1) }
            return Reply(System.Echo.Response(text: request.text, frames: references), frames: frames)
        }
    }
}
