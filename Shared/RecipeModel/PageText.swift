import Foundation

/// A web page's bytes as text, in the encoding a browser would read them in (after the WHATWG encoding sniffing, in
/// brief): a byte order mark; else the charset of the `Content-Type` header; else one a `<meta>` near the top declares
/// (`<meta charset="iso-8859-1">`, or `http-equiv="Content-Type"` with `charset=` in its content); else UTF-8 when the
/// bytes read as UTF-8 more than not, and Windows-1252 (the web's Latin-1) when they do not. Read as UTF-8 alone, an
/// older site's "Crème brûlée" became "Cr�me br�l�e", from the web and from a saved page alike. A page declared UTF-8
/// with a stray byte that is not stays UTF-8 (that byte is U+FFFD), as a browser shows it.
public enum PageText {
    /// How far into the page a `<meta>` declaring the encoding is looked for (the standard says 1,024 bytes; pages put
    /// long heads before it, and a browser finds it there too).
    static let metaScanBytes = 4_096

    public static func decode(_ bytes: [UInt8], contentType: String? = nil) -> String {
        if let (encoding, skip) = byteOrderMark(bytes) {
            if encoding == .utf8 { return String(decoding: bytes.dropFirst(skip), as: UTF8.self) }
            if let text = String(data: Data(bytes.dropFirst(skip)), encoding: encoding) { return text }
        }
        let declared = [contentType.flatMap(charsetLabel(inContentType:)).flatMap { encoding(label: $0, fromMeta: false) },
                        metaCharset(bytes).flatMap { encoding(label: $0, fromMeta: true) }]
        for case let encoding? in declared {
            if encoding == .utf8 { return String(decoding: bytes, as: UTF8.self) }
            if let text = String(data: Data(bytes), encoding: encoding) { return text }
        }
        let utf8 = String(decoding: bytes, as: UTF8.self)
        guard bytes.contains(where: { $0 >= 0x80 }) else { return utf8 }
        // Undeclared: UTF-8 when more of its letters past ASCII read as UTF-8 than not.
        var read = 0
        var unread = 0
        for scalar in utf8.unicodeScalars where scalar.value >= 0x80 {
            if scalar == "\u{FFFD}" { unread += 1 } else { read += 1 }
        }
        return read >= unread ? utf8 : windows1252(bytes)
    }

    /// Windows-1252, with its five unassigned bytes read as Latin-1 (where Foundation gives up on them).
    static func windows1252(_ bytes: [UInt8]) -> String {
        String(data: Data(bytes), encoding: .windowsCP1252) ?? String(data: Data(bytes), encoding: .isoLatin1) ?? String(decoding: bytes, as: UTF8.self)
    }

    static func byteOrderMark(_ bytes: [UInt8]) -> (String.Encoding, Int)? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (.utf16BigEndian, 2) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (.utf16LittleEndian, 2) }
        return nil
    }

    /// The `charset=` parameter of a `Content-Type` value, lower-cased, without quotes.
    static func charsetLabel(inContentType value: String) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "charset" else { continue }
            let label = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")).lowercased()
            return label.isEmpty ? nil : label
        }
        return nil
    }

    /// The label a `<meta>` tag near the top declares: `charset=` inside the tag, quoted or not (the `charset`
    /// attribute, or the parameter in an `http-equiv` content). ASCII only, as the standard's pre-scan reads it.
    static func metaCharset(_ bytes: [UInt8]) -> String? {
        // Bytes past ASCII read as U+FFFD: none can be part of a label the scan looks for.
        let head = String(decoding: bytes.prefix(metaScanBytes), as: Unicode.ASCII.self).lowercased()
        var rest = head[...]
        while let tag = rest.firstRange(of: "<meta") {
            let end = rest[tag.upperBound...].firstIndex(of: ">") ?? rest.endIndex
            if let label = charsetValue(in: rest[tag.upperBound..<end]) { return label }
            rest = rest[end...]
        }
        return nil
    }

    /// The value of the first `charset=` in a tag's attributes that has one (of at most 40 characters).
    private static func charsetValue(in attributes: Substring) -> String? {
        let space: (Character) -> Bool = { [" ", "\t", "\n", "\r", "\r\n"].contains($0) }
        var rest = attributes
        while let name = rest.firstRange(of: "charset") {
            rest = rest[name.upperBound...]
            let equals = rest.drop(while: space)
            guard equals.first == "=" else { continue }
            let value = equals.dropFirst().drop { space($0) || $0 == "\"" || $0 == "'" }
                .prefix { !(space($0) || "\"';/".contains($0)) }
            if !value.isEmpty, value.count <= 40 { return String(value) }
        }
        return nil
    }

    /// The encoding a label names (the standard's labels for the encodings Foundation has); nil for one it does not
    /// know, which is then passed over. A `<meta>` naming UTF-16 is read as UTF-8, as the standard says: a page whose
    /// `<meta>` could be read as ASCII is not UTF-16.
    static func encoding(label: String, fromMeta: Bool) -> String.Encoding? {
        switch label {
        case "utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8":
            return .utf8
        case "utf-16", "utf-16le", "unicode", "ucs-2", "csunicode", "iso-10646-ucs-2", "unicodefeff":
            return fromMeta ? .utf8 : .utf16LittleEndian
        case "utf-16be", "unicodefffe":
            return fromMeta ? .utf8 : .utf16BigEndian
        case "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "latin1", "l1",
             "cp819", "ibm819", "iso-ir-100", "csisolatin1", "us-ascii", "ascii", "ansi_x3.4-1968", "iso-8859-15", "iso8859-15", "latin9", "latin-1":
            // The web reads all of these as Windows-1252 (ISO-8859-15 differs from it in eight rarely used letters).
            return .windowsCP1252
        case "iso-8859-2", "iso8859-2", "iso_8859-2", "latin2", "l2", "csisolatin2", "iso-ir-101":
            return .isoLatin2
        case "windows-1250", "cp1250", "x-cp1250":
            return .windowsCP1250
        case "windows-1251", "cp1251", "x-cp1251":
            return .windowsCP1251
        case "windows-1253", "cp1253", "x-cp1253":
            return .windowsCP1253
        case "windows-1254", "cp1254", "x-cp1254", "iso-8859-9", "iso8859-9", "latin5", "l5":
            return .windowsCP1254
        case "shift_jis", "shift-jis", "sjis", "ms_kanji", "windows-31j", "x-sjis", "csshiftjis", "ms932":
            return .shiftJIS
        case "euc-jp", "x-euc-jp", "cseucpkdfmtjapanese":
            return .japaneseEUC
        case "iso-2022-jp", "csiso2022jp":
            return .iso2022JP
        default:
            return nil
        }
    }
}
