import Foundation

/// The photo formats RecipeVault keeps, judged by their bytes, never their name.
public enum ImageKind: String, Codable, Sendable, CaseIterable, WireChoice {
    case jpeg, png, webp, heic

    /// The media type stored and sent with the photo.
    public var mediaType: String { "image/\(rawValue)" }

    /// The usual file extension.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The kind of image `bytes` are, or `nil` when they are not one of the four.
    public static func detect(_ bytes: Data) -> ImageKind? {
        let head = [UInt8](bytes.prefix(16))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count >= 12, head[0..<4] == [0x52, 0x49, 0x46, 0x46][...], head[8..<12] == [0x57, 0x45, 0x42, 0x50][...] {
            return .webp // "RIFF" size "WEBP"
        }
        if head.count >= 12, head[4..<8] == [0x66, 0x74, 0x79, 0x70][...] { // ISO BMFF "ftyp" box
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if heifBrands.contains(brand) { return .heic }
        }
        return nil
    }

    private static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]

    /// A byte count as people read it: 2400000 → "2.4 MB", 950000 → "950 KB".
    public static func formatBytes(_ count: Int) -> String {
        switch count {
        case ..<1_000: return "\(count) bytes"
        case ..<1_000_000: return "\(Int((Double(count) / 1_000).rounded())) KB"
        default:
            let megabytes = Double(count) / 1_000_000
            let text = String(format: "%.1f", (megabytes * 10).rounded(.down) / 10)
            return (text.hasSuffix(".0") ? String(text.dropLast(2)) : text) + " MB"
        }
    }
}
