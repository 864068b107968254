import Foundation

/// Takes metadata out of a JPEG, PNG or WebP file without touching its pixels: the
/// file's segments or chunks are copied, except those holding EXIF, XMP, IPTC,
/// comments and text. Colour profiles, transparency and animation stay.
public enum MetadataStripper {
    /// The file without its metadata, and whether anything was taken out; nil when the
    /// file's structure cannot be followed (the caller then encodes the photo again).
    public static func strip(_ bytes: Data, format: IntakeFormat) -> (bytes: Data, removed: Bool)? {
        let input = [UInt8](bytes)
        let output: [UInt8]?
        switch format {
        case .jpeg: output = jpeg(input)
        case .png: output = png(input)
        case .webp: output = webp(input)
        case .heic, .avif: output = nil
        }
        guard let output else { return nil }
        return output.count == input.count ? (bytes, false) : (Data(output), true)
    }

    // MARK: JPEG: markers up to the first scan

    static func jpeg(_ input: [UInt8]) -> [UInt8]? {
        guard input.count >= 4, input[0] == 0xFF, input[1] == 0xD8 else { return nil }
        var output: [UInt8] = [0xFF, 0xD8]
        output.reserveCapacity(input.count)
        var index = 2
        while index < input.count {
            guard input[index] == 0xFF else { return nil }
            var markerIndex = index + 1
            while markerIndex < input.count, input[markerIndex] == 0xFF { markerIndex += 1 } // fill bytes
            guard markerIndex < input.count else { return nil }
            let marker = input[markerIndex]
            let start = markerIndex - 1
            if marker == 0xD9 || marker == 0xDA { // end of image, or start of scan: the rest is entropy-coded data
                output.append(contentsOf: input[start...])
                return output
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { // no length
                output.append(contentsOf: input[start...markerIndex])
                index = markerIndex + 1
                continue
            }
            guard markerIndex + 2 < input.count else { return nil }
            let length = Int(input[markerIndex + 1]) << 8 | Int(input[markerIndex + 2])
            let end = markerIndex + 1 + length
            guard length >= 2, end <= input.count else { return nil }
            if keepsJPEGSegment(marker, payload: input[(markerIndex + 3)..<end]) {
                output.append(contentsOf: input[start..<end])
            }
            index = end
        }
        return nil // no scan
    }

    /// APP0 (JFIF), an APP2 colour profile and APP14 (Adobe's colour transform) stay;
    /// every other application segment (EXIF, XMP, IPTC, makers' notes) and comments go.
    private static func keepsJPEGSegment(_ marker: UInt8, payload: ArraySlice<UInt8>) -> Bool {
        switch marker {
        case 0xE0: return true
        case 0xE2: return payload.starts(with: Array("ICC_PROFILE\0".utf8))
        case 0xEE: return payload.starts(with: Array("Adobe".utf8))
        case 0xE1, 0xE3...0xED, 0xEF, 0xFE: return false
        default: return true
        }
    }

    // MARK: PNG: chunks

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let pngMetadata: Set<String> = ["tEXt", "zTXt", "iTXt", "eXIf", "tIME"]

    static func png(_ input: [UInt8]) -> [UInt8]? {
        guard input.starts(with: pngSignature) else { return nil }
        var output = pngSignature
        output.reserveCapacity(input.count)
        var index = pngSignature.count
        while index + 12 <= input.count {
            let length = Int(input[index]) << 24 | Int(input[index + 1]) << 16 | Int(input[index + 2]) << 8 | Int(input[index + 3])
            let type = String(decoding: input[(index + 4)..<(index + 8)], as: UTF8.self)
            let end = index + 12 + length
            guard length <= 0x7FFF_FFFF, end <= input.count else { return nil }
            if !pngMetadata.contains(type) { output.append(contentsOf: input[index..<end]) }
            index = end
            if type == "IEND" { return output }
        }
        return nil // no IEND
    }

    // MARK: WebP: RIFF chunks

    static func webp(_ input: [UInt8]) -> [UInt8]? {
        guard input.count >= 12, input[0..<4] == [0x52, 0x49, 0x46, 0x46][...], input[8..<12] == [0x57, 0x45, 0x42, 0x50][...] else {
            return nil
        }
        let declared = littleEndian(input, at: 4)
        let limit = min(input.count, 8 + declared)
        var output: [UInt8] = Array(input[0..<12])
        var index = 12
        var removed = false
        while index + 8 <= limit {
            let fourCC = String(decoding: input[index..<(index + 4)], as: UTF8.self)
            let size = littleEndian(input, at: index + 4)
            let end = index + 8 + size + (size & 1)
            guard end <= limit || (index + 8 + size == limit) else { return nil }
            let chunkEnd = min(end, limit)
            if fourCC == "EXIF" || fourCC == "XMP " {
                removed = true
            } else {
                output.append(contentsOf: input[index..<chunkEnd])
            }
            index = chunkEnd
        }
        guard index == limit else { return nil }
        guard removed else { return input }
        // VP8X, when present, flags the metadata chunks: clear the EXIF (0x08) and XMP (0x04) bits.
        if output.count >= 21, output[12..<16] == [0x56, 0x50, 0x38, 0x58][...] { output[20] &= ~0x0C }
        let size = output.count - 8
        output[4] = UInt8(size & 0xFF)
        output[5] = UInt8((size >> 8) & 0xFF)
        output[6] = UInt8((size >> 16) & 0xFF)
        output[7] = UInt8((size >> 24) & 0xFF)
        return output
    }

    private static func littleEndian(_ bytes: [UInt8], at index: Int) -> Int {
        Int(bytes[index]) | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2]) << 16 | Int(bytes[index + 3]) << 24
    }
}
