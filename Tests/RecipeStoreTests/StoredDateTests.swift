import Foundation
import GRDB
@testable import RecipeStore
import TestRandom
import TestThreads
import Testing

/// Dates written by `StoredDate` are the text GRDB's formatter writes, to the millisecond.
@Suite("Stored dates: written as GRDB's formatter writes them", .onOwnThread)
struct StoredDateTests {
    static func expectSame(_ date: Date, sourceLocation: SourceLocation = #_sourceLocation) {
        let grdb = date.databaseValue
        #expect(StoredDate(date).databaseValue == grdb, "\(date.timeIntervalSinceReferenceDate): \(StoredDate(date).databaseValue) against \(grdb)",
                sourceLocation: sourceLocation)
    }

    @Test("whole milliseconds, times between them, and the edges of the years it writes itself")
    func sameAsFormatter() {
        var random = SplitMix(seed: 0xDA7E)
        let edges: [Double] = [0, 0.0004, 0.0005, 0.0009999, 0.001, 59.999, 60, 86_399.999, 86_400, 951_782_400, 951_868_800,
                               4_107_542_400, 253_402_300_799.999, 253_402_300_800, -0.001, -1, -86_400.5, 1e12, -1e12]
        for seconds in edges {
            Self.expectSame(Date(timeIntervalSince1970: seconds))
        }
        for _ in 0..<20_000 {
            // As the store makes them (a whole millisecond divided back), and any time at all.
            let millisecond = Int64(random.next() % 253_402_300_800_000)
            Self.expectSame(Date(timeIntervalSince1970: Double(millisecond) / 1_000))
            Self.expectSame(Date(timeIntervalSince1970: (Double(millisecond) / 1_000).rounded(.down) / 1 + Double(random.next() % 1_000_000) / 1e6))
            Self.expectSame(Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: random.next()) % 300_000_000_000) / 1_000))
        }
        // Today's dates, a millisecond apart.
        let now = (Date().timeIntervalSince1970 * 1_000).rounded(.down)
        for step in 0..<5_000 { Self.expectSame(Date(timeIntervalSince1970: (now + Double(step)) / 1_000)) }
    }
}
