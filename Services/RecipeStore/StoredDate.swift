import Foundation
import GRDB
import RecipeProtocol

/// A date bound as the text GRDB stores a `Date` as ("yyyy-MM-dd HH:mm:ss.SSS", UTC), written without a formatter.
///
/// GRDB formats a bound `Date` with a `DateFormatter`, which on Linux goes through ICU: a few microseconds a date,
/// three dates a create, about a twentieth of the writer's time (perf, storage-bench). This writes the same text
/// from the same milliseconds ICU takes — Foundation hands it (seconds since 2001 + 978,307,200) × 1,000 + ½, and
/// ICU cuts that down to whole milliseconds — for years 1970 to 9999; any other date goes through GRDB's formatter.
/// `StoredDateTests` holds the two to the same text.
struct StoredDate: DatabaseValueConvertible {
    let date: Date

    init(_ date: Date) {
        self.date = date
    }

    var databaseValue: DatabaseValue {
        Self.text(date).map(\.databaseValue) ?? date.databaseValue
    }

    static func fromDatabaseValue(_ dbValue: DatabaseValue) -> StoredDate? {
        Date.fromDatabaseValue(dbValue).map(StoredDate.init)
    }

    /// The text, or `nil` outside 1970–9999.
    static func text(_ date: Date) -> String? {
        let milliseconds = ((date.timeIntervalSinceReferenceDate + 978_307_200) * 1_000 + 0.5).rounded(.down)
        guard milliseconds >= 0, milliseconds < 253_402_300_800_000 else { return nil }
        let total = Int64(milliseconds)
        let days = total / 86_400_000, inDay = total % 86_400_000
        let (year, month, day) = WireDateText.civil(fromDays: days)
        let hour = inDay / 3_600_000, minute = inDay / 60_000 % 60, second = inDay / 1_000 % 60, millisecond = inDay % 1_000
        var bytes = [UInt8](repeating: 0, count: 23)
        func put(_ value: Int64, at offset: Int, digits: Int) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
                value /= 10
            }
        }
        put(Int64(year), at: 0, digits: 4)
        bytes[4] = 0x2D
        put(Int64(month), at: 5, digits: 2)
        bytes[7] = 0x2D
        put(Int64(day), at: 8, digits: 2)
        bytes[10] = 0x20
        put(hour, at: 11, digits: 2)
        bytes[13] = 0x3A
        put(minute, at: 14, digits: 2)
        bytes[16] = 0x3A
        put(second, at: 17, digits: 2)
        bytes[19] = 0x2E
        put(millisecond, at: 20, digits: 3)
        return String(decoding: bytes, as: UTF8.self)
    }
}
