import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One of our executables running as a separate process, started the way a
/// shell, systemd or a container runtime starts it: a clean signal mask and
/// default signal actions (Foundation's `Process` would pass on the test
/// thread's blocked signals, which hides signal-handling bugs).
final class ServiceProcess: Sendable {
    let pid: pid_t
    private let output = OutputBuffer()
    private let status = Mutex<Int32?>(nil)

    /// The built executable `name`, beside the test bundle (`swift build --build-tests` builds both).
    static func executable(_ name: String) throws -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        while !folder.path.isEmpty && folder.path != "/" {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw ProcessTestError("\(name) is not built; run `swift build --build-tests` first")
    }

    /// Starts our executable `name` with `arguments`, collecting what it prints.
    convenience init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(path: try Self.executable(name), arguments, environment: environment)
    }

    /// Starts the program at `path` (a script with its interpreter: `/bin/bash`) with `arguments`.
    init(path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw ProcessTestError("pipe failed") }
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        // Nothing else of the test process's: its descriptors without close-on-exec (sockets, pipes of other tests
        // running beside this one) would count against the service's own open-file limit.
        // (glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module does not show.)
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
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // Tests stay on the machine: a worker fetches only from what its --allow-host names (the loopback
        // page server), so a saved page's photo on its real site is skipped without a DNS lookup.
        let merged = ProcessInfo.processInfo.environment.merging(["RECIPES_WORKER_FETCH_ONLY_ALLOWED": "1"]) { $1 }
            .merging(environment) { $1 }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        close(writeEnd)
        guard rc == 0 else {
            close(readEnd)
            throw ProcessTestError("cannot start \(path): \(String(cString: strerror(rc)))")
        }
        self.pid = pid

        let output = self.output
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count > 0 {
                    output.append(Data(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(readEnd)
            output.end()
        }
        reader.start()
    }

    /// Everything printed so far.
    var printed: String { output.text }

    /// The exit status once it has exited (128 + N when killed by signal N), else `nil`.
    var exitStatus: Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            return status
        }
    }

    var isRunning: Bool { exitStatus == nil }

    /// Waits (bounded) for the process to exit on its own; returns its status, or `nil`.
    func waitForExit(timeout: Duration = .seconds(10)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        // The process may exit before the reader thread has taken its last bytes from the pipe:
        // wait (bounded: a child it left running may hold the pipe open) until the output is complete.
        let outputDeadline = ContinuousClock.now + .seconds(2)
        while exitStatus != nil && !output.isComplete && ContinuousClock.now < outputDeadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        return exitStatus
    }

    /// Waits (bounded) until the output contains a match for `pattern`; returns the first capture group.
    func waitForOutput(_ pattern: String, timeout: Duration = .seconds(30)) async throws -> String {
        let regex = try Regex(pattern)
        let deadline = ContinuousClock.now + timeout
        // The output is looked at after every wait, the one that passed the deadline too: with every test of the
        // suite running on two cores, a 10 ms sleep can end seconds late, and the line may have come meanwhile.
        while true {
            if let match = printed.firstMatch(of: regex) {
                return match.output.count > 1 ? String(match.output[1].substring ?? "") : String(match.output[0].substring ?? "")
            }
            if !isRunning || ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ProcessTestError("no output matching \(pattern) within \(timeout); printed:\n\(printed)")
    }

    /// Sends `signal` and waits (bounded) for the exit; returns the exit status, or `nil` if it did not exit.
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async throws -> Int32? {
        if isRunning { kill(pid, signal) }
        if let status = try await waitForExit(timeout: timeout) { return status }
        kill(pid, SIGKILL)
        _ = try await waitForExit(timeout: .seconds(5))
        return nil
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
}

/// What a process printed, filled from the reader thread.
final class OutputBuffer: Sendable {
    private let storage = Mutex("")
    private let ended = Mutex(false)
    func append(_ data: Data) { storage.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var text: String { storage.withLock { $0 } }
    /// Set once the reader has seen the end of the output (every writer closed the pipe).
    func end() { ended.withLock { $0 = true } }
    var isComplete: Bool { ended.withLock { $0 } }
}

struct ProcessTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
