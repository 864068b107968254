import Foundation

extension String {
    /// The text in Unicode's composed form (NFC): "e" followed by a combining accent becomes "é". Stored text is kept
    /// in this one form. Swift calls the two forms equal; SQLite, exports and checksums see different bytes, so two
    /// replicas holding one each would never agree, and an edit from one form to the other would change nothing
    /// Swift can see.
    public var composed: String {
        // ASCII (most recipe text) is composed already.
        if utf8.allSatisfy({ $0 < 0x80 }) { return self }
        let result = precomposedStringWithCanonicalMapping
        return result.utf8.elementsEqual(utf8) ? self : result
    }
}
