import Foundation
import GRDB
import RecipeProtocol
import Testing
@testable import RecipeStore

@Suite("A created date given with recipe.create")
struct CreatedDateTests {
    @Test("is stored at the millisecond it was sent, never in the future, refused before 1970")
    func keptToTheMillisecond() async throws {
        try await withStore { store in
            var state: UInt64 = 0x2545_F491_4F6C_DD1D
            let format = Date.VerbatimFormatStyle(
                format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
                timeZone: .gmt, calendar: Calendar(identifier: .gregorian))
            for _ in 0..<300 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let milliseconds = Int64(state >> 24) % 1_700_000_000_000
                // As the wire hands it over: parsed from "….mmmZ".
                let sent = Date(timeIntervalSinceReferenceDate: Double(milliseconds / 1_000) - 978_307_200 + Double(milliseconds % 1_000) / 1_000)
                let id = UUID()
                _ = try await store.createRecipe(id: id, RecipeDraft(name: "Old"), createdAt: sent)
                let column = try await store.pool.read { db in
                    try String.fetchOne(db, sql: "SELECT createdAt FROM recipes WHERE id = ?", arguments: [id.databaseText])
                }
                let expected = Date(timeIntervalSince1970: Double(milliseconds / 1_000)).formatted(format) + String(format: ".%03d", Int(milliseconds % 1_000))
                #expect(column == expected)
            }
            let future = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Soon"), createdAt: Date().addingTimeInterval(3_600)).recipe
            #expect(future.createdAt <= Date().addingTimeInterval(1), "a date a little ahead (a clock off) is kept at now")
            await #expect(throws: ServiceError.self) { try await store.createRecipe(id: UUID(), RecipeDraft(name: "Ancient"), createdAt: Date(timeIntervalSince1970: -10)) }
        }
    }
}
