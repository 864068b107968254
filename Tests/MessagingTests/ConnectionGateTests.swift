#if canImport(Glibc)
import Glibc
#endif
import RecipeProtocol
import Testing
@testable import Messaging

@Suite("When a service holds new connections back before they take its last files")
struct ConnectionGateTests {
    @Test("a reserve of an eighth of the limit, at least 32 and at most 1,024, never more than a third of the room above what the process held at start; taken again a reserve lower",
          arguments: [(64, 32, 54, 44), (78, 47, 68, 58), (1_024, 35, 896, 768), (65_536, 40, 64_512, 63_488), (1_048_576, 40, 1_047_552, 1_046_528)])
    func thresholds(limit: Int, baseline: Int, pauseAt: Int, resumeAt: Int) {
        let gate = ConnectionGate(port: 1, limit: UInt64(limit), baseline: baseline)
        #expect(gate.pauseAt == pauseAt && gate.resumeAt == resumeAt, "\(gate.pauseAt) \(gate.resumeAt)")
        #expect(gate.resumeAt > baseline, "it can always be taken again")
    }

    @Test("a count of connections bounds them when it comes before the files do: held back that many files above the start, taken again an eighth lower",
          arguments: [(1_048_576, 40, 1_024, 1_064, 936, ConnectionGate.Bound.connections), (65_536, 40, 64, 104, 96, .connections),
                      (1_024, 35, 1_024, 896, 768, .files), (64, 32, 1_024, 54, 44, .files), (1_048_576, 40, 1_048_576, 1_047_552, 1_046_528, .files)])
    func countBound(limit: Int, baseline: Int, maxConnections: Int, pauseAt: Int, resumeAt: Int, bound: ConnectionGate.Bound) {
        let gate = ConnectionGate(port: 1, limit: UInt64(limit), baseline: baseline, maxConnections: maxConnections)
        #expect(gate.pauseAt == pauseAt && gate.resumeAt == resumeAt && gate.bound == bound, "\(gate.pauseAt) \(gate.resumeAt) \(gate.bound)")
        #expect(gate.change(open: pauseAt - 1) == nil && gate.change(open: pauseAt) == .pause && gate.excess(open: pauseAt + 4) == 5)
    }

    @Test("held back from the threshold on, and only then; connections just taken past it are shut")
    func changes() {
        let gate = ConnectionGate(port: 1, limit: 1_024, baseline: 35)
        #expect(gate.change(open: 895) == nil)
        #expect(gate.change(open: 896) == .pause)
        #expect(gate.excess(open: 895) == 0 && gate.excess(open: 900) == 5)
    }
}

@Suite("The process's open files, listed")
struct OpenDescriptorsTests {
    @Test("the listing holds every file opened, not its own, and counts as openCount does; a few hundred entries read safely")
    func listsWhatIsOpen() throws {
        let opened = (0..<300).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { for descriptor in opened { close(descriptor) } }
        #expect(opened.allSatisfy { $0 >= 0 })
        let listed = try #require(OpenFiles.descriptors())
        #expect(Set(opened).isSubset(of: Set(listed)))
        // The listing's own descriptor is closed by the time it returns, so a listing holding it names a closed file.
        // Other tests in this process open and close files meanwhile, so one listing may name a file closed since it
        // was made; of many, spread over a few seconds, one at least names only open ones unless the listing's own is
        // always among them.
        let someListingAllOpen = (0..<Self.rounds).contains { round in
            if round > 0 { usleep(Self.pause) }
            return OpenFiles.descriptors()?.allSatisfy { fcntl($0, F_GETFD) != -1 } == true
        }
        #expect(someListingAllOpen, "the listing's own descriptor is closed by now and not listed")
        // The count and the listing are one walk: taken back to back in a quiet moment they agree. Other tests open and
        // close files meanwhile (many at once on a loaded machine), so of many rounds (a count, a listing, a count) spread
        // over a few seconds, one at least is quiet.
        var rounds: [String] = []
        let agreeing = (0..<Self.rounds).contains { round in
            if round > 0 { usleep(Self.pause) }
            guard let before = OpenFiles.openCount(), let listing = OpenFiles.descriptors(), let after = OpenFiles.openCount() else { return false }
            rounds.append("\(before)/\(listing.count)/\(after)")
            return before == after && listing.count == before
        }
        #expect(agreeing, "count/listing/count: \(rounds.suffix(20))")
    }

    /// Rounds, and the microseconds between two: at most 4 s in all.
    static let rounds = 200
    static let pause: useconds_t = 20_000
}
