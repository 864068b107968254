/// ISO 8601 durations as recipes use them: `PT1H15M`, `PT45M`, `P1DT2H`, `PT90S`.
///
/// Every duration comes from a person, a web page or another replica, so the
/// arithmetic is bounded: a duration is 0 to `maxMinutes` (one year), and
/// anything longer reads as out of range rather than as a number that overflows.
public enum ISODuration {
    /// The longest duration a recipe may give: 365 days, in minutes.
    public static let maxMinutes = 365 * 24 * 60
    /// The longest text read as a duration; longer text is not one.
    public static let maxTextLength = 64

    /// What a text says as a duration.
    public enum Reading: Sendable, Equatable {
        /// Whole minutes (seconds round up), 0 to `maxMinutes`.
        case minutes(Int)
        /// Not an ISO 8601 duration at all.
        case notADuration
        /// A duration, but longer than `maxMinutes`.
        case outOfRange
    }

    /// Reads `text` as a duration.
    public static func read(_ text: String) -> Reading {
        guard text.utf8.count <= maxTextLength else { return .notADuration }
        var rest = Substring(text.trimmingCharacters(in: .whitespaces).uppercased())
        guard rest.first == "P", rest.count > 1 else { return .notADuration }
        rest = rest.dropFirst()
        var seconds = 0.0
        var inTime = false
        var number = ""
        var sawComponent = false
        for character in rest {
            if character == "T" {
                guard !inTime, number.isEmpty else { return .notADuration }
                inTime = true
                continue
            }
            if character.isASCII && (character.isNumber || character == "." || character == ",") {
                number.append(character == "," ? "." : character)
                continue
            }
            guard let value = Double(number), value.isFinite, value >= 0 else { return .notADuration }
            number = ""
            sawComponent = true
            switch (character, inTime) {
            case ("Y", false): seconds += value * 365 * 86_400
            case ("M", false): seconds += value * 30 * 86_400
            case ("W", false): seconds += value * 7 * 86_400
            case ("D", false): seconds += value * 86_400
            case ("H", true): seconds += value * 3_600
            case ("M", true): seconds += value * 60
            case ("S", true): seconds += value
            default: return .notADuration
            }
        }
        guard number.isEmpty, sawComponent else { return .notADuration }
        // Compared as a Double before any conversion: 1e300 years must not reach `Int(_:)`.
        let minutes = (seconds / 60).rounded(.up)
        guard minutes.isFinite, minutes <= Double(maxMinutes) else { return .outOfRange }
        return .minutes(Int(minutes))
    }

    /// Whole minutes in `text` (seconds round up), or `nil` when it is not an ISO 8601 duration of at most `maxMinutes`.
    public static func minutes(_ text: String) -> Int? {
        if case .minutes(let minutes) = read(text) { return minutes }
        return nil
    }

    /// Why `text` is not an acceptable duration for `field`, or `nil` when it is.
    public static func problem(_ text: String, field: String) -> String? {
        switch read(text) {
        case .minutes: return nil
        case .notADuration:
            return "\(field) \"\(text.prefix(40))\" is not an ISO 8601 duration; write it like PT15M or PT1H30M"
        case .outOfRange:
            return "\(field) \"\(text.prefix(40))\" is longer than a recipe may take; durations may be 0 to \(maxMinutes / 1_440) days (P\(maxMinutes / 1_440)D)"
        }
    }

    /// The ISO 8601 form of `minutes`: 75 → `PT1H15M`, 0 → `PT0M`. Negative counts read as 0.
    public static func text(minutes: Int) -> String {
        let minutes = max(0, minutes)
        let days = minutes / 1_440
        let hours = (minutes % 1_440) / 60
        let rest = minutes % 60
        var text = "P"
        if days > 0 { text += "\(days)D" }
        if hours > 0 || rest > 0 || days == 0 {
            text += "T"
            if hours > 0 { text += "\(hours)H" }
            if rest > 0 || hours == 0 { text += "\(rest)M" }
        }
        return text
    }
}
