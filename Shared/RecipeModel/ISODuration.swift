/// ISO 8601 durations as recipes use them: `PT1H15M`, `PT45M`, `P1DT2H`, `PT90S`.
public enum ISODuration {
    /// Whole minutes in `text` (seconds round up), or `nil` when it is not an ISO 8601 duration.
    public static func minutes(_ text: String) -> Int? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces).uppercased())
        guard rest.first == "P", rest.count > 1 else { return nil }
        rest = rest.dropFirst()
        var seconds = 0.0
        var inTime = false
        var number = ""
        var sawComponent = false
        for character in rest {
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            if character.isNumber || character == "." || character == "," {
                number.append(character == "," ? "." : character)
                continue
            }
            guard let value = Double(number) else { return nil }
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
            default: return nil
            }
        }
        guard number.isEmpty, sawComponent else { return nil }
        return Int((seconds / 60).rounded(.up))
    }

    /// The ISO 8601 form of `minutes`: 75 → `PT1H15M`, 0 → `PT0M`.
    public static func text(minutes: Int) -> String {
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

import Foundation
