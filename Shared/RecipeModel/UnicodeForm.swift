import Foundation

extension String {
    /// The most combining marks in a row that text may hold: Unicode's stream-safe limit (UAX #15). Real text needs a
    /// handful; normalising a longer run costs time that grows with the square of its length (a 2 MB "character" of a
    /// million accents would take the storage many minutes).
    public static let maxCombiningRun = 30

    /// The longest run of combining marks (non-starters) in the text.
    public var longestCombiningRun: Int {
        var longest = 0, run = 0
        for scalar in unicodeScalars {
            if scalar.isCombiningMark {
                run += 1
                longest = Swift.max(longest, run)
            } else {
                run = 0
            }
        }
        return longest
    }

    /// Whether the text has a longer run of combining marks than `maxCombiningRun` (ASCII, most text, has none).
    public var isPastCombiningLimit: Bool {
        !utf8.allSatisfy { $0 < 0x80 } && longestCombiningRun > Self.maxCombiningRun
    }

    /// The text with every run of combining marks cut at `maxCombiningRun`: the rest of a run is dropped.
    public var withinCombiningLimit: String {
        guard isPastCombiningLimit else { return self }
        var scalars = String.UnicodeScalarView()
        var run = 0
        for scalar in unicodeScalars {
            run = scalar.isCombiningMark ? run + 1 : 0
            if run <= Self.maxCombiningRun { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// The text in Unicode's composed form (NFC): "e" followed by a combining accent becomes "é". Stored text is kept
    /// in this one form. Swift calls the two forms equal; SQLite, exports and checksums see different bytes, so two
    /// replicas holding one each would never agree, and an edit from one form to the other would change nothing
    /// Swift can see. Text past the stream-safe limit (`maxCombiningRun`) is left as it is: validation refuses it where
    /// a person writes it, and every replica leaves it alike.
    public var composed: String {
        // ASCII (most recipe text) is composed already.
        if utf8.allSatisfy({ $0 < 0x80 }) { return self }
        if longestCombiningRun > Self.maxCombiningRun { return self }
        let result = precomposedStringWithCanonicalMapping
        return result.utf8.elementsEqual(utf8) ? self : result
    }
}

extension Unicode.Scalar {
    /// A combining mark (a non-starter: its canonical combining class is not 0), which attaches to the character
    /// before it. None lies below U+0300.
    public var isCombiningMark: Bool {
        value >= 0x300 && properties.canonicalCombiningClass != .notReordered
    }

    /// A control character a terminal obeys rather than shows: the C0 controls but line break and tab, DEL, and the C1
    /// controls (U+0080–U+009F; U+009B acts as ESC [).
    public var isTerminalControl: Bool {
        switch value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F, 0x80...0x9F: true
        default: false
        }
    }
}
