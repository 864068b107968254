import Foundation
import RecipeModel

/// The formats the photo intake reads, judged by their first bytes. Storage keeps the first
/// four as they are; AVIF is read and stored as JPEG (or PNG when it has transparency).
public enum IntakeFormat: String, Sendable, CaseIterable {
    case jpeg = "JPEG", png = "PNG", webp = "WebP", heic = "HEIC", avif = "AVIF"

    public static func detect(_ bytes: Data) -> IntakeFormat? {
        switch ImageKind.detect(bytes) {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .heic: return isAVIF(bytes) ? .avif : .heic
        case nil: return isAVIF(bytes) ? .avif : nil
        }
    }

    /// The kind storage records when this format is stored unchanged (nil: never stored as it is).
    public var storedKind: ImageKind? {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .heic: .heic
        case .avif: nil
        }
    }

    /// An ISO BMFF file whose brand (or, under a general HEIF brand, a compatible brand) is AVIF's.
    private static func isAVIF(_ bytes: Data) -> Bool {
        let head = [UInt8](bytes.prefix(64))
        guard head.count >= 16, head[4..<8] == [0x66, 0x74, 0x79, 0x70][...] else { return false } // "ftyp"
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        let brand = { (offset: Int) in String(decoding: head[offset..<offset + 4], as: UTF8.self) }
        if ["avif", "avis"].contains(brand(8)) { return true }
        guard ["mif1", "msf1"].contains(brand(8)) else { return false }
        // Compatible brands follow the major brand and its version, up to the box's end.
        var offset = 16
        while offset + 4 <= min(boxSize, head.count) {
            if ["avif", "avis"].contains(brand(offset)) { return true }
            if ["heic", "heix", "hevc", "hevx"].contains(brand(offset)) { return false }
            offset += 4
        }
        return false
    }
}
