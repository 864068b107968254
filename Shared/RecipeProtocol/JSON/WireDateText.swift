import Foundation

/// The wire's date text, `2026-11-21T19:32:53.123Z`, written and read without a formatter.
///
/// Both directions give exactly what `WireDates` (Foundation's ISO 8601 format style) gives — the
/// same text for a date, the same `Date` for a text — for years 1600 to 9999; outside them, and for any
/// text not in the canonical form, they answer `nil` and the caller uses `WireDates`. Held to
/// Foundation by `WireJSONTests`.
package enum WireDateText {
    /// 1600-01-01T00:00:00Z, since 1970: before the Gregorian reform Foundation's calendar is the Julian one.
    private static let firstSecond: Double = -11_676_096_000
    private static let endSecond: Double = 253_402_300_800 // 10000-01-01T00:00:00Z
    /// 1970-01-01 less 2001-01-01, in seconds.
    private static let referenceOffset: Double = 978_307_200

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC, milliseconds rounded down (as Foundation does:
    /// 1763753573.123 is stored as …573.12299… and written `.122`); `nil` outside years 1600–9999.
    static func format(_ date: Date) -> String? {
        let time = date.timeIntervalSince1970
        guard time.isFinite, time >= firstSecond, time < endSecond else { return nil }
        let seconds = time.rounded(.down)
        let millis = (time - seconds) * 1_000
        let wholeMillis = millis.rounded(.down)
        let total = Int64(seconds)
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = Int(total - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, at offset: Int, digits: Int) {
            var value = value
            for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                text[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, at: 0, digits: 4)
        text[4] = UInt8(ascii: "-")
        put(month, at: 5, digits: 2)
        text[7] = UInt8(ascii: "-")
        put(day, at: 8, digits: 2)
        text[10] = UInt8(ascii: "T")
        put(secondOfDay / 3_600, at: 11, digits: 2)
        text[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, at: 14, digits: 2)
        text[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, at: 17, digits: 2)
        text[19] = UInt8(ascii: ".")
        put(Int(wholeMillis), at: 20, digits: 3)
        text[23] = UInt8(ascii: "Z")
        return String(decoding: text, as: UTF8.self)
    }

    /// The date of `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.mmmZ` (a real calendar date and
    /// time, year 1600 or later); `nil` for any other text.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard text.count == 20 || text.count == 24, text[text.count - 1] == UInt8(ascii: "Z"),
              text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
              text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":") else { return nil }
        func number(_ offset: Int, _ digits: Int) -> Int? {
            var value = 0
            for position in offset..<(offset + digits) {
                let digit = Int(text[position]) - Int(UInt8(ascii: "0"))
                guard digit >= 0 && digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              year >= 1600, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        var millis = 0
        if text.count == 24 {
            guard text[19] == UInt8(ascii: "."), let value = number(20, 3) else { return nil }
            millis = value
        }
        let days = Self.days(fromCivil: year, month, day)
        let whole = Double(days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)) - referenceOffset
        return Date(timeIntervalSinceReferenceDate: whole + Double(millis) / 1_000)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's algorithm); the store's date text uses it too.
    package static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
