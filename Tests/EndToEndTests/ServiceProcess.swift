import Foundation
import Synchronization

/// One of our executables running as a separate process, as a user would start it.
final class ServiceProcess: Sendable {
    let process: Process
    private let output = OutputBuffer()

    /// The built executable `name`, beside the test bundle (`swift build --build-tests` builds both).
    static func executable(_ name: String) throws -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        // The test bundle may be a folder (…/debug/X.xctest/…) or a file in …/debug.
        while !folder.path.isEmpty && folder.path != "/" {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw ProcessTestError("\(name) is not built; run `swift build --build-tests` first")
    }

    /// Starts `name` with `arguments`, collecting what it prints.
    init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = try Self.executable(name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { output.append(data) }
        }
        try process.run()
    }

    /// Everything printed so far.
    var printed: String { output.text }

    /// Waits (bounded) until the output contains a match for `pattern`; returns the first capture group.
    func waitForOutput(_ pattern: String, timeout: Duration = .seconds(30)) async throws -> String {
        let regex = try Regex(pattern)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let match = printed.firstMatch(of: regex) {
                return match.output.count > 1 ? String(match.output[1].substring ?? "") : String(match.output[0].substring ?? "")
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ProcessTestError("no output matching \(pattern) within \(timeout); printed:\n\(printed)")
    }

    /// Sends `signal` and waits (bounded) for the exit; returns the exit status, or `nil` if it did not exit.
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async throws -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct ProcessTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a process printed, filled from the pipe's handler thread.
final class OutputBuffer: Sendable {
    private let storage = Mutex("")
    func append(_ data: Data) { storage.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var text: String { storage.withLock { $0 } }
}
