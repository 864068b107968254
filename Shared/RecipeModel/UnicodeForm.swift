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
            if scalar.value >= 0x300, scalar.properties.canonicalCombiningClass != .notReordered {
                run += 1
                longest = Swift.max(longest, run)
            } else {
                run = 0
            }
        }
        return longest
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
