import CVips
import Foundation
import Logging
import RecipeModel
import RecipeProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The photo intake in a process of its own. Photos come from strangers' web pages and are read by C decoders
/// (libjpeg, libpng, libwebp, libheif with libde265 and dav1d); one that makes a decoder crash, or allocate for
/// a frame far past its header, would otherwise take the worker down with every job and request in flight — and,
/// started again, the worker would meet the same page again. Here the decoders run in a helper (the worker's own
/// program, started with `--photo-intake-helper`) under a memory limit: a photo that crashes it, needs more
/// memory than a photo may take, or takes too long is refused with that said, and the next photo gets a fresh
/// helper.
///
/// Between the two, over the helper's standard input and output: frames of a four-byte big-endian length and
/// its bytes. A request is a JSON `Request` and the photo; a reply a JSON `Reply` and the fitted photo (empty
/// when refused). One photo at a time: `fit` is synchronous and holds the helper until its reply.
public final class PhotoIntakeProcess: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The program to start: the worker's own (`/proc/self/exe`).
        public var executable: String
        /// Its arguments (the first its name, as `ps` shows it), ahead of the memory limit.
        public var arguments: [String]
        /// The most memory the helper may map for its data (`RLIMIT_DATA`), in bytes.
        public var memoryLimit: Int
        /// How long one photo may take.
        public var timeout: Duration

        public init(executable: String = "/proc/self/exe",
                    arguments: [String] = [CommandLine.arguments.first ?? "recipe-worker", "--photo-intake-helper"],
                    memoryLimit: Int = PhotoIntakeProcess.defaultMemoryLimit, timeout: Duration = .seconds(60)) {
            self.executable = executable
            self.arguments = arguments
            self.memoryLimit = memoryLimit
            self.timeout = timeout
        }
    }

    /// 2 GiB: a 100-megapixel photo takes about half of it.
    public static let defaultMemoryLimit = 2_048 * 1_024 * 1_024

    struct Request: Codable {
        var keepMetadata: Bool
        var limits: PhotoFitter.Limits
    }

    struct Reply: Codable {
        var fitting: PhotoFitting?
        var error: ServiceError?
    }

    /// The helper running now, if any.
    private struct Helper {
        let pid: pid_t
        let input: Int32
        let output: Int32
    }

    public let settings: Settings
    private let logger: Logger
    private let helper = Mutex<Helper?>(nil)

    public init(settings: Settings = Settings(), logger: Logger = Logger(label: "photo-intake")) {
        self.settings = settings
        self.logger = logger
        // A helper that dies while the photo is written to it must be a failed write, not the worker's end.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        helper.withLock { helper in
            if let running = helper { Self.stop(running) }
            helper = nil
        }
    }

    /// The photo made to fit `limits` by the helper, or the error saying why it cannot be.
    public func fit(_ input: Data, limits: PhotoFitter.Limits, keepMetadata: Bool) throws(ServiceError) -> PhotoFitter.Fitted {
        let request = Request(keepMetadata: keepMetadata, limits: limits)
        let header: Data
        do { header = try JSONEncoder().encode(request) } catch {
            throw ServiceError(.internalError, "the photo intake could not write its request: \(error)")
        }
        return try helper.withLock { (helper: inout Helper?) throws(ServiceError) -> PhotoFitter.Fitted in
            // A helper that ended since the last photo (it was killed from outside) is replaced, once.
            for attempt in 0..<2 {
                let running: Helper
                // A helper kept from an earlier photo may have been killed from outside just before this one (it had
                // not died yet when the photo was written to it): killed then, it gets one more try on a new helper.
                let kept = helper != nil
                if let helper { running = helper } else {
                    running = try start()
                    helper = running
                }
                guard Self.write(frames: [header, input], to: running.input) else {
                    let ended = Self.stop(running)
                    helper = nil
                    if attempt == 0 { continue }
                    throw ServiceError(.internalError, "the photo intake stopped before it took the photo (\(ended))")
                }
                switch Self.readReply(from: running.output, timeout: settings.timeout) {
                case .reply(let reply, let bytes):
                    if let error = reply.error { throw error }
                    guard let fitting = reply.fitting else { throw ServiceError(.internalError, "the photo intake's reply held no photo") }
                    return PhotoFitter.Fitted(bytes: bytes, fitting: fitting)
                case .timedOut:
                    Self.stop(running)
                    helper = nil
                    logger.warning("a photo took over the time one may take; its reader was stopped", metadata: [
                        "bytes": "\(input.count)", "seconds": "\(Self.seconds(settings.timeout))"])
                    throw ServiceError(.unreadableImage,
                        "reading the photo took over \(Self.seconds(settings.timeout)) s, the most one photo may take; "
                        + "it is damaged or made to exhaust photo readers — nothing of it was kept")
                case .ended:
                    let ended = Self.stop(running)
                    helper = nil
                    // A helper that exits (rather than being killed by a signal) before it answers could not run at
                    // all: a missing library, a program that is not the worker's. That is not the photo's fault.
                    guard case .killed = ended else {
                        logger.error("the photo intake's helper ended before it answered", metadata: ["ended": "\(ended)", "program": "\(settings.executable)"])
                        throw ServiceError(.internalError, "the photo intake's helper ended before it answered (\(ended)); recipe-worker's log says more")
                    }
                    if kept && attempt == 0 { continue }
                    logger.warning("a photo stopped the image decoder; the next photo gets a new one", metadata: [
                        "bytes": "\(input.count)", "ended": "\(ended)", "memory-limit": "\(Self.mebibytes(settings.memoryLimit))"])
                    throw ServiceError(.unreadableImage,
                        "the photo stopped the image decoder (\(ended)): it is damaged, made to break photo readers, or needs more than the "
                        + "\(Self.mebibytes(settings.memoryLimit)) of memory one photo may take — nothing of it was kept")
                }
            }
            throw ServiceError(.internalError, "the photo intake could not be started")
        }
    }

    private func start() throws(ServiceError) -> Helper {
        var toHelper: [Int32] = [0, 0], fromHelper: [Int32] = [0, 0]
        guard pipe(&toHelper) == 0 else { throw Self.startFailed(errno) }
        guard pipe(&fromHelper) == 0 else {
            let error = errno
            close(toHelper[0]); close(toHelper[1])
            throw Self.startFailed(error)
        }
        // Only the ends given as its standard input and output reach the helper (the worker starts no other
        // process, so nothing can start between pipe and this).
        for descriptor in toHelper + fromHelper { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toHelper[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromHelper[1], 1)
        // What a crashing decoder prints (a C++ exception's words, a backtrace) is not the worker's log: the worker
        // says in one line how the helper ended.
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // And none of the worker's other descriptors: a connection the worker closes must close, not live on in
        // the helper (glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module does not show).
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = (settings.arguments + ["\(settings.memoryLimit)"]).map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, settings.executable, &actions, &attributes, argv, envp)
        close(toHelper[0])
        close(fromHelper[1])
        guard status == 0 else {
            close(toHelper[1]); close(fromHelper[0])
            throw Self.startFailed(status)
        }
        return Helper(pid: pid, input: toHelper[1], output: fromHelper[0])
    }

    private static func startFailed(_ error: Int32) -> ServiceError {
        ServiceError(.internalError, "the photo intake could not be started: \(String(cString: strerror(error)))")
    }

    /// How a helper ended, from its wait status.
    enum Ended: Equatable, CustomStringConvertible {
        /// It exited by itself, with this status.
        case exited(Int32)
        /// A signal ended it: a crash, the memory limit, or our kill.
        case killed(signal: Int32)

        init(waitStatus status: Int32) {
            let signalNumber = status & 0x7F
            self = signalNumber == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signalNumber)
        }

        /// "killed by signal 11 (Segmentation fault)", "exit status 1".
        var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .killed(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }
    }

    /// Ends `helper` (closing its input ends it; a kill makes sure) and says how it ended.
    @discardableResult
    private static func stop(_ helper: Helper) -> Ended {
        close(helper.input)
        close(helper.output)
        var status: Int32 = 0
        // It has usually ended already (a crash, a closed input); a hung one is killed.
        for _ in 0..<20 {
            if waitpid(helper.pid, &status, WNOHANG) == helper.pid { return Ended(waitStatus: status) }
            usleep(5_000)
        }
        kill(helper.pid, SIGKILL)
        while waitpid(helper.pid, &status, 0) == -1 && errno == EINTR {}
        return Ended(waitStatus: status)
    }

    static func mebibytes(_ bytes: Int) -> String {
        bytes % 1_048_576 == 0 ? "\(bytes / 1_048_576) MiB" : ImageKind.formatBytes(bytes)
    }

    private static func seconds(_ duration: Duration) -> String {
        let seconds = duration / .seconds(1)
        return seconds == seconds.rounded() ? "\(Int64(seconds))" : String(format: "%.1f", seconds)
    }

    // MARK: Frames

    static func write(frames: [Data], to descriptor: Int32) -> Bool {
        for frame in frames {
            var length = UInt32(frame.count).bigEndian
            guard withUnsafeBytes(of: &length, { writeAll($0, to: descriptor) }),
                  frame.withUnsafeBytes({ writeAll($0, to: descriptor) }) else { return false }
        }
        return true
    }

    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    enum Outcome {
        case reply(Reply, Data)
        case timedOut
        case ended
    }

    private static func readReply(from descriptor: Int32, timeout: Duration) -> Outcome {
        let deadline = ContinuousClock.now + timeout
        var reader = FrameReader(descriptor: descriptor, deadline: deadline)
        // A fitted photo is at most a few MB: a helper saying more has gone wrong, and is not believed.
        switch (reader.frame(limit: 1 << 20), reader.frame(limit: 64 << 20)) {
        case (.frame(let header), .frame(let bytes)):
            guard let reply = try? JSONDecoder().decode(Reply.self, from: header) else { return .ended }
            return .reply(reply, bytes)
        case (.timedOut, _), (_, .timedOut): return .timedOut
        default: return .ended
        }
    }

    enum FrameRead {
        case frame(Data)
        case timedOut
        case ended
    }

    /// Reads frames from a descriptor; with a deadline, waits for each part no later than it.
    struct FrameReader {
        let descriptor: Int32
        let deadline: ContinuousClock.Instant?

        mutating func frame(limit: Int) -> FrameRead {
            var lengthBytes = Data(count: 4)
            if case let failure? = fill(&lengthBytes) { return failure }
            let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
            guard length <= limit else { return .ended }
            var body = Data(count: length)
            if case let failure? = fill(&body) { return failure }
            return .frame(body)
        }

        private func fill(_ data: inout Data) -> FrameRead? {
            let count = data.count
            return data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> FrameRead? in
                var offset = 0
                while offset < count {
                    if let deadline {
                        let left = deadline - ContinuousClock.now
                        guard left > .zero else { return .timedOut }
                        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                        let milliseconds = Int32(min(left / .milliseconds(1) + 1, Double(Int32.max)))
                        let ready = poll(&poller, 1, milliseconds)
                        if ready < 0 && errno == EINTR { continue }
                        if ready == 0 { continue } // the deadline is looked at again above
                        guard ready > 0 else { return .ended }
                    }
                    let got = read(descriptor, buffer.baseAddress! + offset, count - offset)
                    if got < 0 && errno == EINTR { continue }
                    guard got > 0 else { return .ended }
                    offset += got
                }
                return nil
            }
        }
    }

    // MARK: The helper's side

    /// The helper's loop: photos from standard input, fitted photos to standard output, until its input ends.
    /// `memoryLimit` bytes is the most it may map for data; past it an allocation fails, and the decoder
    /// either says so or crashes — either way only this process. Short of memory on the machine, the kernel's
    /// out-of-memory killer picks it first.
    public static func serve(memoryLimit: Int) -> Never {
        var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
        _ = setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
        // The worker decides when it ends: not a Ctrl-C meant for the worker, and never after the worker.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        // (The signal comes when the thread that started the helper ends: the worker's photo intake thread, which
        // lives as long as the worker. Were it to end earlier, the next photo would find the helper gone and start
        // another.)
        _ = rv_end_with_parent()
        // When the machine (or the container) runs out of memory, the kernel ends this process rather than the worker.
        try? "1000".write(toFile: "/proc/self/oom_score_adj", atomically: false, encoding: .utf8)
        var reader = FrameReader(descriptor: 0, deadline: nil)
        while true {
            guard case .frame(let header) = reader.frame(limit: 1 << 20), case .frame(let photo) = reader.frame(limit: Int(UInt32.max)),
                  let request = try? JSONDecoder().decode(Request.self, from: header) else { exit(0) }
            let reply: Reply
            var fitted = Data()
            do {
                let result = try PhotoFitter(limits: request.limits).fit(photo, keepMetadata: request.keepMetadata)
                reply = Reply(fitting: result.fitting, error: nil)
                fitted = result.bytes
            } catch {
                reply = Reply(fitting: nil, error: error)
            }
            guard let encoded = try? JSONEncoder().encode(reply), write(frames: [encoded, fitted], to: 1) else { exit(0) }
        }
    }
}
