import Foundation

/// The built `recipe-storage`, run as its own process on a data folder.
public final class ServiceUnderTest {
    public let process = Process()
    public let endpoint: String

    public init(folder: URL, benchmark: String = "storage-bench") throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("recipe-storage")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchmarkError("recipe-storage is not built beside \(benchmark); run `swift build -c release` first")
        }
        process.executableURL = executable
        process.arguments = ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder.path]
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
        guard let found else { throw BenchmarkError("recipe-storage did not start:\n\(output)") }
        endpoint = found
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

/// A process's peak resident memory so far (VmHWM), or 0 when it cannot be read; `self` for this one.
public func peakResidentBytes(process: String = "self") -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes * 1_024
}
