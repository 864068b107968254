import ArgumentParser
import Foundation
import RecipeImport

/// `import-bench`: extraction and normalization speed on saved pages, in-process on one core,
/// beside a baseline measured in the same run: decoding the same bytes and finding their
/// JSON-LD blocks' starts (the least any importer does).
@main
struct ImportBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-bench",
        abstract: "Pages per second and MB per second of recipe extraction over a folder of saved pages.")

    @Argument(help: "A folder of saved pages (<host>/<name>.html), such as ../shared/fixtures/recipe-pages.")
    var folder: String = "../shared/fixtures/recipe-pages"

    @Option(help: "Seconds to run each measurement.")
    var seconds: Double = 5

    @Flag(help: "Instead: read 10 MB hostile pages (deep nesting, unmatched tags, thousands of itemscopes…), each in a process of its own, and print the time and peak memory of each beside a 10 MB page of saved pages.")
    var hostile = false

    @Option(help: .hidden)
    var hostileOne: String?

    func run() throws {
        if let kind = hostileOne { return try Self.readOne(kind, folder: folder) }
        if hostile { return try Self.hostileReport(folder: folder) }
        let pages = try Self.load(URL(fileURLWithPath: folder))
        guard !pages.isEmpty else { throw ValidationError("no .html pages under \(folder)") }
        let bytes = pages.reduce(0) { $0 + $1.data.count }
        print("import-bench: \(pages.count) pages, \(String(format: "%.1f", Double(bytes) / 1e6)) MB, one thread, \(seconds) s per measurement")

        var found = 0
        let extraction = Self.measure(seconds: seconds) {
            found = 0
            for page in pages {
                let html = String(decoding: page.data, as: UTF8.self)
                if RecipeExtractor.extract(html: html, url: page.url) != nil { found += 1 }
            }
        }
        var blocks = 0
        let baseline = Self.measure(seconds: seconds) {
            blocks = 0
            for page in pages {
                var html = String(decoding: page.data, as: UTF8.self)
                blocks += html.withUTF8 { Self.count("ld+json", in: $0) }
            }
        }
        func line(_ name: String, _ result: (rounds: Int, elapsed: Double)) -> String {
            let perSecond = Double(result.rounds * pages.count) / result.elapsed
            let megabytes = Double(result.rounds * bytes) / 1e6 / result.elapsed
            return name.padding(toLength: 36, withPad: " ", startingAt: 0)
                + String(format: "%10.0f pages/s %9.1f MB/s %8.3f ms/page", perSecond, megabytes, 1_000 / perSecond)
        }
        print(line("baseline: decode + scan for ld+json", baseline) + "  (\(blocks) blocks)")
        print(line("extract + normalize (RecipeVault)", extraction) + "  (\(found) recipes)")
        let ratio = (Double(baseline.rounds) / baseline.elapsed) / (Double(extraction.rounds) / extraction.elapsed)
        print(String(format: "extraction costs %.1f× the baseline pass", ratio))
    }

    /// Each hostile page read by a child process of this executable, which reports time and peak memory.
    static func hostileReport(folder: String) throws {
        print("import-bench --hostile: each ~10 MB page read once by its own process (release builds are the ones to judge)")
        print("page".padding(toLength: 20, withPad: " ", startingAt: 0) + "   seconds   peak RSS   recipe found")
        for kind in HostilePages.kinds {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["--hostile-one", kind, folder]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let label = kind == "benign" ? "baseline: saved pages" : kind
            let result = process.terminationStatus == 0 ? output.trimmingCharacters(in: .whitespacesAndNewlines) : "failed (exit \(process.terminationStatus))"
            print(label.padding(toLength: 20, withPad: " ", startingAt: 0) + "   " + result)
        }
    }

    /// Reads one hostile page and prints "seconds  peak-MB  found".
    static func readOne(_ kind: String, folder: String) throws {
        let saved = kind == "benign" ? try load(URL(fileURLWithPath: folder)).map(\.data) : []
        guard let html = HostilePages.page(kind, benignFrom: saved) else { throw ValidationError("no hostile page \(kind)") }
        let clock = ContinuousClock()
        let start = clock.now
        let found = RecipeExtractor.extract(html: html, url: "https://example.com/hostile") != nil
        let duration = clock.now - start
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(whereSeparator: \.isWhitespace)[1]) }.map { $0 / 1_024 } ?? -1
        print(String(format: "%7.3f   %5d MB   %@", seconds, peak, found ? "yes" : "no"))
    }

    struct Page {
        let url: String
        let data: Data
    }

    /// Occurrences of `needle` in `bytes`: one plain pass over the page.
    static func count(_ needle: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        needle.withUTF8Buffer { pattern in
            var found = 0
            var index = 0
            while index + pattern.count <= bytes.count {
                if bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) { found += 1 }
                index += 1
            }
            return found
        }
    }

    static func load(_ folder: URL) throws -> [Page] {
        var pages: [Page] = []
        for host in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            let hostFolder = folder.appendingPathComponent(host)
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: hostFolder.path) else { continue }
            for file in files.sorted() where file.hasSuffix(".html") {
                pages.append(Page(url: "https://\(host)/\(file)", data: try Data(contentsOf: hostFolder.appendingPathComponent(file))))
            }
        }
        return pages
    }

    /// Runs `round` until `seconds` pass (after one warm-up round); rounds done and seconds taken.
    static func measure(seconds: Double, _ round: () -> Void) -> (rounds: Int, elapsed: Double) {
        round()
        let clock = ContinuousClock()
        let start = clock.now
        var rounds = 0
        var elapsed = 0.0
        repeat {
            round()
            rounds += 1
            let duration = clock.now - start
            elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        } while elapsed < seconds
        return (rounds, elapsed)
    }
}
