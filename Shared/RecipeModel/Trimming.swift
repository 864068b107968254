extension String {
    /// The text without white space at either end: what Foundation's `trimmingCharacters(in:)` gives with
    /// `.whitespacesAndNewlines` (or `.whitespaces` when `newlines` is `false`), scalar for scalar,
    /// without the trip through `NSString` that costs more than the rest of a line's work on Linux.
    public func trimmingWhitespace(newlines: Bool = true) -> String {
        trimming { Self.isTrimmed($0, newlines: newlines) }
    }

    /// The text without punctuation (general categories P*) at either end: Foundation's `.punctuationCharacters`.
    public func trimmingPunctuation() -> String {
        trimming(where: Self.isPunctuation)
    }

    /// The text without the scalars `trimmed` picks at either end.
    public func trimming(where trimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, trimmed(scalars[start]) { start = scalars.index(after: start) }
        while end > start, trimmed(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        if start == scalars.startIndex && end == scalars.endIndex { return self }
        return String(scalars[start..<end])
    }

    /// `.whitespaces`: general category Zs, the tab and (in Foundation's table) U+200B; `.whitespacesAndNewlines` adds
    /// Zl, Zp, U+000A–U+000D and U+0085. A test holds this to Foundation's sets for every scalar.
    public static func isTrimmed(_ scalar: Unicode.Scalar, newlines: Bool) -> Bool {
        switch scalar.value {
        case 0x20, 0x09, 0x200B: return true
        case 0x0A...0x0D, 0x85: return newlines
        case 0..<0x80: return false
        default:
            switch scalar.properties.generalCategory {
            case .spaceSeparator: return true
            case .lineSeparator, .paragraphSeparator: return newlines
            default: return false
            }
        }
    }
}

extension String {
    /// General categories Pc, Pd, Ps, Pe, Pi, Pf and Po: Foundation's `.punctuationCharacters`.
    /// Foundation's table predates Unicode 16, so punctuation first assigned there is left as Foundation leaves it.
    public static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return asciiPunctuation[Int(scalar.value)] }
        return isPunctuationByTables(scalar)
    }

    /// `isPunctuation` of each ASCII scalar, worked out once by the Unicode tables themselves.
    private static let asciiPunctuation: [Bool] = (0..<128).map { isPunctuationByTables(Unicode.Scalar(UInt8($0))) }

    private static func isPunctuationByTables(_ scalar: Unicode.Scalar) -> Bool {
        if let age = scalar.properties.age, age.major >= 16 { return false }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
             .initialPunctuation, .finalPunctuation, .otherPunctuation: return true
        default: return false
        }
    }
}

extension Character {
    /// `isNumber`, answered for ASCII (what most recipe text is) from a table the Unicode properties filled once.
    public var isNumberQuick: Bool {
        if let ascii = asciiValue { return CharacterTables.number[Int(ascii)] }
        return isNumber
    }

    /// `isWhitespace`, answered for ASCII from a table the Unicode properties filled once ("\r\n" is ASCII 10 here
    /// and whitespace either way).
    public var isWhitespaceQuick: Bool {
        if let ascii = asciiValue { return CharacterTables.whitespace[Int(ascii)] }
        return isWhitespace
    }
}

enum CharacterTables {
    static let number: [Bool] = (0..<128).map { Character(Unicode.Scalar(UInt8($0))).isNumber }
    static let whitespace: [Bool] = (0..<128).map { Character(Unicode.Scalar(UInt8($0))).isWhitespace }
}
