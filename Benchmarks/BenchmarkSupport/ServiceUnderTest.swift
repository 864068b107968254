import Foundation

/// A built service (`recipe-storage` by default), run as its own process.
public final class ServiceUnderTest {
    public let process = Process()
    public let endpoint: String

    /// recipe-storage on a data folder.
    public convenience init(folder: URL, benchmark: String = "storage-bench") throws {
        try self.init("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder.path], benchmark: benchmark)
    }

    /// The executable `name` built beside the benchmark, with `arguments`; ready once it logs its endpoint.
    public init(_ name: String, _ arguments: [String], benchmark: String) throws {
        let executable = builtBeside(name)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchmarkError("\(name) is not built beside \(benchmark); run `swift build -c release` first")
        }
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Read what it logs (bounded) until it says where it listens.
        var output = ""
        let deadline = Date().addingTimeInterval(60)
        var found: String?
        while found == nil && Date() < deadline && process.isRunning {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { continue }
            output += String(decoding: data, as: UTF8.self)
            if let match = output.firstMatch(of: #/endpoint=(tcp://127\.0\.0\.1:\d+) operations=/#) { found = String(match.output.1) }
        }
        guard let found else { throw BenchmarkError("\(name) did not start:\n\(output)") }
        endpoint = found
        // Keep draining what it logs, so a full pipe never holds it up.
        pipe.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
    }

    /// The service's peak resident memory so far (VmHWM).
    public var peakResidentBytes: Int { BenchmarkSupport.peakResidentBytes(process: "\(process.processIdentifier)") }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// An executable built beside this one (the same `.build/<configuration>` folder).
public func builtBeside(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
}

/// A process's peak resident memory so far (VmHWM), or 0 when it cannot be read; `self` for this one.
public func peakResidentBytes(process: String = "self") -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes * 1_024
}

/// The processor time a process has used so far, user and system together (from `/proc/<pid>/stat`,
/// in clock ticks, so good to about 10 ms); `self` for this one. Zero when it cannot be read.
public func processorTime(process: String = "self") -> Duration {
    guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
          let afterName = stat.lastIndex(of: ")") else { return .zero }
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: afterName)...].split(separator: " ")
    guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return .zero }
    let ticks = max(1, sysconf(Int32(_SC_CLK_TCK)))
    return .microseconds((user + system) * 1_000_000 / ticks)
}

extension ServiceUnderTest {
    /// The service's processor time so far.
    public var processorTime: Duration { BenchmarkSupport.processorTime(process: "\(process.processIdentifier)") }
}
