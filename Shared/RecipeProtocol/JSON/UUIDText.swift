import Foundation

/// UUIDs as text (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`) written and read without Foundation's
/// `uuid_unparse`/`uuid_parse`, which go through `sprintf` and `sscanf` — a recipe carries some
/// thirty ids, and those calls were a visible part of every recipe read and reply.
public enum UUIDText {
    private static let digits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The uppercase text `UUID.uuidString` gives, as UTF-8 bytes.
    static func write(_ id: UUID, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            }
        }
    }

    /// The UUID of 36 characters in the 8-4-4-4-12 form, hex digits in either case (what `UUID(uuidString:)`
    /// accepts); `nil` for anything else.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36, text[8] == UInt8(ascii: "-"), text[13] == UInt8(ascii: "-"),
              text[18] == UInt8(ascii: "-"), text[23] == UInt8(ascii: "-") else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                guard let high = JSONTape.hexValue(text[position]), let low = JSONTape.hexValue(text[position + 1]) else { return false }
                out[index] = UInt8(high << 4 | low)
                position += 2
            }
            return true
        }
        return ok ? UUID(uuid: value) : nil
    }

    /// The UUID written as `text` (UTF-8 bytes, the forms `parse` takes), without making a `String` first.
    public static func uuid(utf8 text: UnsafeBufferPointer<UInt8>) -> UUID? {
        parse(text)
    }

    /// `UUID(uuidString:)` without `sscanf`.
    public static func uuid(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { parse($0) }
    }
}
