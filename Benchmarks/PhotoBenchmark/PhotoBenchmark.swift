import ArgumentParser
import BenchmarkSupport
import Foundation
import PhotoProcessing
import TestImages

/// `photo-bench`: fitting a 12-megapixel phone JPEG (~5 MB, EXIF orientation 6 and GPS) and a
/// 12-megapixel HEIC, on one core — time p50 and peak RSS per photo — beside a plain decode of
/// the same file in the same run (the baseline). Each measurement runs in a child process of its
/// own pinned to one CPU (taskset), so its peak RSS is that of one photo's work (an idle child is shown too).
@main
struct PhotoBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "photo-bench",
        abstract: "Time and memory of the worker's photo intake, beside a plain decode of the same photo.")

    @Option(help: "Runs of each measurement (the p50 is shown).") var runs = 7
    @Option(help: "Where the generated photos are kept between runs (making the HEIC takes a while).")
    var work = FileManager.default.temporaryDirectory.appendingPathComponent("rv-photo-bench").path
    @Option(help: .hidden) var child: String?
    @Option(help: .hidden) var file: String?
    @Option(name: .customLong("photo-intake-helper"), help: .hidden) var photoIntakeHelper: Int?

    func run() throws {
        if let photoIntakeHelper { PhotoIntakeProcess.serve(memoryLimit: photoIntakeHelper) }
        if let child, let file { return try measureOnce(child, file: file) }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let photos = try makePhotos()
        print("photo intake on one core (\(runs) runs each, p50; peak RSS is the child process's maximum resident size)")
        let idle = try childRun("idle", file: photos[0].path)
        print("an idle child process: peak RSS \(idle.rss) MiB\n")
        print(row("photo", "fit p50", "fit RSS", "decode p50", "decode RSS", "in helper", labelWidth: 20, columnWidth: 12) + "   stored as")
        print(row("", "", "", "(baseline)", "", "p50", labelWidth: 20, columnWidth: 12))
        for photo in photos {
            var fits: [Duration] = [], decodes: [Duration] = [], helped: [Duration] = []
            var fitRSS = 0, decodeRSS = 0, result = ""
            for _ in 0..<runs {
                let decode = try childRun("decode", file: photo.path)
                decodes.append(decode.time)
                decodeRSS = max(decodeRSS, decode.rss)
                let fit = try childRun("fit", file: photo.path)
                fits.append(fit.time)
                fitRSS = max(fitRSS, fit.rss)
                result = fit.result
                helped.append(try childRun("fit-in-helper", file: photo.path).time)
            }
            print(row(photo.label, Stats(fits).p50.millis, "\(fitRSS) MiB", Stats(decodes).p50.millis, "\(decodeRSS) MiB",
                      Stats(helped).p50.millis, labelWidth: 20, columnWidth: 12) + "   " + result)
        }
    }

    struct Photo { var path: String; var label: String }

    func makePhotos() throws -> [Photo] {
        let jpeg = URL(fileURLWithPath: work).appendingPathComponent("phone-12mp.jpg")
        if !FileManager.default.fileExists(atPath: jpeg.path) {
            let sensor = TestImages.picture(width: 4_032, height: 3_024, grain: 16, as: .jpeg(quality: 92))
            try EXIF.adding(to: sensor, orientation: 6).write(to: jpeg)
        }
        let heic = URL(fileURLWithPath: work).appendingPathComponent("phone-12mp.heic")
        if !FileManager.default.fileExists(atPath: heic.path) {
            print("making a 12-megapixel HEIC once (the encoder is slow; it is kept in \(work))…")
            try TestImages.picture(width: 4_032, height: 3_024, grain: 12, as: .heic(quality: 60)).write(to: heic)
        }
        return try [jpeg, heic].map { url in
            let size = try Data(contentsOf: url).count
            return Photo(path: url.path, label: "12 MP \(url.pathExtension.uppercased()) \(String(format: "%.1f", Double(size) / 1_000_000)) MB")
        }
    }

    struct Measured { var time: Duration; var rss: Int; var result: String }

    func childRun(_ mode: String, file: String) throws -> Measured {
        let process = Process()
        // On one CPU: taskset (util-linux) pins the child before it starts.
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.resolvingSymlinksInPath().path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        process.arguments = ["--cpu-list", "0", executable, "--child", mode, "--file", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(separator: "\t").map(String.init)
        guard process.terminationStatus == 0, fields.count >= 2, let nanoseconds = Int64(fields[0]), let rss = Int(fields[1]) else {
            throw ValidationError("the \(mode) run failed: \(String(decoding: data, as: UTF8.self))")
        }
        return Measured(time: .nanoseconds(nanoseconds), rss: rss, result: fields.count > 2 ? fields[2].trimmingCharacters(in: .newlines) : "")
    }

    /// In the child (pinned to one CPU): one operation, then "nanoseconds<TAB>peak RSS MiB<TAB>result".
    func measureOnce(_ mode: String, file: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        let fitter = PhotoFitter()
        // libvips' own start (once per process, loading its modules) is not the photo's work.
        guard PhotoFitter.start() else { throw ValidationError("the image library did not start") }
        let start = ContinuousClock.now
        var result = ""
        switch mode {
        case "fit":
            result = try fitter.fit(bytes).fitting.stored.description
        case "decode":
            try fitter.decode(bytes)
        case "fit-in-helper":
            // As recipe-worker fits: through its helper process (started, and libvips in it, by a first photo
            // before the clock starts); the figure is a photo's fit plus the trip through the pipes.
            let intake = PhotoIntakeProcess(settings: .init(arguments: [CommandLine.arguments[0], "--photo-intake-helper"]))
            _ = try intake.fit(bytes, limits: .init(), keepMetadata: false)
            let again = ContinuousClock.now
            result = try intake.fit(bytes, limits: .init(), keepMetadata: false).fitting.stored.description
            let elapsed = ContinuousClock.now - again
            print("\(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)\t0\t\(result)")
            return
        default:
            break
        }
        let elapsed = ContinuousClock.now - start
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        print("\(nanoseconds)\t\(peakResidentBytes() / 1_048_576)\t\(result)")
    }
}
