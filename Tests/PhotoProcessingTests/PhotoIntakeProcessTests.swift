import Foundation
@testable import PhotoProcessing
import RecipeProtocol
import Testing

#if canImport(Glibc)
import Glibc
import TestThreads
#endif

/// The intake's side of its helper process, with stand-in helpers that fail as a crashing decoder does (the real
/// helper, the worker's own program, is run by the end-to-end tests).
@Suite("Photo intake in a process of its own", .onOwnThread)
struct PhotoIntakeProcessTests {
    let photo = Data(repeating: 0xFF, count: 1_000)

    func intake(_ script: String, timeout: Duration = .seconds(20)) -> PhotoIntakeProcess {
        PhotoIntakeProcess(settings: .init(executable: "/bin/sh", arguments: ["sh", "-c", script, "helper"],
                                           memoryLimit: 256 * 1_048_576, timeout: timeout))
    }

    @Test("a helper that crashes on the photo: the photo is refused with how it ended, and the next photo gets a new helper")
    func crash() throws {
        // Reads the request (a frame's length and body, twice), then crashes; the marker file counts the starts.
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("rv-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        let intake = intake("echo started >> \(marker.path); head -c 1 > /dev/null; kill -SEGV $$")
        for round in 1...2 {
            let error = #expect(throws: ServiceError.self) { _ = try intake.fit(photo, limits: .init(), keepMetadata: false) }
            #expect(error?.code == .unreadableImage)
            #expect(error?.message == "the photo stopped the image decoder (killed by signal 11 (Segmentation fault)): it is damaged, made to "
                    + "break photo readers, or needs more than the 256 MiB of memory one photo may take — nothing of it was kept")
            let starts = try String(contentsOf: marker, encoding: .utf8).split(separator: "\n").count
            #expect(starts == round, "one helper per photo once each crashed")
        }
    }

    @Test("a helper kept from an earlier photo that is killed after this photo was written to it: the photo goes to a new helper, not refused as one that stopped the decoder")
    func keptHelperKilled() throws {
        // Each helper answers every request with a reply that holds no photo (an error of the intake, told apart from a
        // crash). The first helper started is killed from outside (SIGKILL, as an operator or the OOM killer would) once
        // it has read its second request, which was written to it whole while it was alive.
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("rv-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        let intake = intake("""
            started=$(cat \(marker.path) 2>/dev/null | wc -l); echo started >> \(marker.path)
            frame() { length=$(head -c 4 | od -An -tu1 | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
                      [ -n "$length" ] || exit 0; head -c "$length" > /dev/null; }
            while true; do
                frame; frame
                if [ "$started" = 0 ] && [ -n "$answered" ]; then kill -KILL $$; fi
                answered=1; printf '\\000\\000\\000\\002{}\\000\\000\\000\\000'
            done
            """)
        for photoNumber in 1...3 {
            let error = #expect(throws: ServiceError.self) { _ = try intake.fit(photo, limits: .init(), keepMetadata: false) }
            #expect(error?.code == .internalError && error?.message == "the photo intake's reply held no photo",
                    "photo \(photoNumber) was answered by a helper: \(error?.message ?? "")")
        }
        let starts = try String(contentsOf: marker, encoding: .utf8).split(separator: "\n").count
        #expect(starts == 2, "the killed helper was replaced once and the new one kept")
    }

    @Test("a helper that takes too long is stopped at the deadline and the photo refused")
    func hang() throws {
        let intake = intake("exec sleep 30", timeout: .milliseconds(300))
        let started = ContinuousClock.now
        let error = #expect(throws: ServiceError.self) { _ = try intake.fit(photo, limits: .init(), keepMetadata: false) }
        #expect(error?.code == .unreadableImage)
        #expect(error?.message.hasPrefix("reading the photo took over 0.3 s, the most one photo may take") == true, "\(error?.message ?? "")")
        #expect(ContinuousClock.now - started < .seconds(20), "not the helper's 30 s")
    }

    @Test("a helper that answers nonsense, exits before answering, or cannot be started, is an error of the intake, not a photo stored")
    func nonsenseAndMissing() throws {
        let nonsense = intake("head -c 1 > /dev/null; printf '\\000\\000\\000\\002{}\\000\\000\\000\\000'; sleep 5")
        let error = #expect(throws: ServiceError.self) { _ = try nonsense.fit(photo, limits: .init(), keepMetadata: false) }
        #expect(error?.code == .internalError && error?.message == "the photo intake's reply held no photo", "\(error?.message ?? "")")

        // A helper that exits before it answers (it could not run) is not the photo's fault.
        let exits = intake("head -c 1 > /dev/null; exit 127")
        let exited = #expect(throws: ServiceError.self) { _ = try exits.fit(photo, limits: .init(), keepMetadata: false) }
        #expect(exited?.code == .internalError
                && exited?.message == "the photo intake's helper ended before it answered (exit status 127); recipe-worker's log says more",
                "\(exited?.message ?? "")")

        let missing = PhotoIntakeProcess(settings: .init(executable: "/nonexistent/recipe-worker", arguments: ["recipe-worker"]))
        let notStarted = #expect(throws: ServiceError.self) { _ = try missing.fit(photo, limits: .init(), keepMetadata: false) }
        #expect(notStarted?.code == .internalError, "\(notStarted?.message ?? "")")
        #expect(notStarted?.message.hasPrefix("the photo intake could not be started: ") == true
                || notStarted?.message.hasPrefix("the photo intake stopped before it took the photo") == true, "\(notStarted?.message ?? "")")
    }
}
