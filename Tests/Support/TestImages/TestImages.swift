import CVips
import PhotoProcessing
import Foundation

/// Images made by libvips at test time and by the benchmarks (no binaries committed), and ways to read back what the intake wrote.
public enum TestImages {
    public enum Encoding { case jpeg(quality: Int32), png, webp(quality: Int32), heic(quality: Int32), avif(quality: Int32) }

    /// Bytes that begin with a JPEG's start marker and go on in a pattern of `step`, `count` after the marker: what
    /// recipe-storage keeps as a photo as given (it does not decode photos), different for each step. Not an image.
    public static func jpegMarked(count: Int, step: Int) -> Data {
        Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* step) })
    }

    /// A photo-like picture (gradient, grain, a red block in the top-left quarter), encoded.
    /// A black lossless WebP: a few KB that take `width` × `height` × 3 bytes to decode.
    public static func blankWebP(width: Int, height: Int) -> Data {
        _ = started
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard rv_make_blank_webp(Int32(width), Int32(height), &buffer, &length) == 0, let buffer else { fatalError("libvips could not encode") }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    public static func picture(width: Int, height: Int, grain: Double = 8, alpha: Bool = false, as encoding: Encoding) -> Data {
        _ = started
        guard let image = rv_make_picture(Int32(width), Int32(height), grain, alpha ? 1 : 0) else { fatalError("libvips could not draw") }
        defer { g_object_unref(image) }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32 = switch encoding {
        case .jpeg(let quality): rv_save_jpeg(image, quality, 1, &buffer, &length)
        case .png: rv_save_png(image, 1, &buffer, &length)
        case .webp(let quality): rv_save_webp(image, quality, 1, &buffer, &length)
        case .heic(let quality): rv_save_heif(image, quality, 0, &buffer, &length)
        case .avif(let quality): rv_save_heif(image, quality, 1, &buffer, &length)
        }
        guard status == 0, let buffer else { fatalError("libvips could not encode the test picture") }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// libvips started the worker's way, by the one start the process has: `vips_init` may not run twice at once
    /// (a second caller returns at once and uses libvips while the first is still starting it).
    private static var started: Bool { PhotoFitter.start() }

    /// What libvips reads back from `bytes`.
    public struct Read {
        public var width: Int
        public var height: Int
        public var bands: Int
        public var hasAlpha: Bool
        public var orientation: Int
        public var hasEXIF: Bool
        public var hasLocation: Bool
        public var hasCamera: Bool
        /// Pixel values at fractions of the width and height.
        public var pixels: [[Double]]
    }

    public static func read(_ bytes: Data, at points: [(Double, Double)] = []) -> Read? {
        _ = started
        return bytes.withUnsafeBytes { raw -> Read? in
            guard let image = rv_read(raw.baseAddress!, raw.count) else { return nil }
            defer { g_object_unref(image) }
            let width = Int(vips_image_get_width(image)), height = Int(vips_image_get_height(image))
            var pixels: [[Double]] = []
            for (x, y) in points {
                var values = [Double](repeating: 0, count: 4)
                guard rv_pixel(image, Int32(Double(width) * x), Int32(Double(height) * y), &values, 4) == 0 else { return nil }
                pixels.append(Array(values.prefix(Int(vips_image_get_bands(image)))))
            }
            return Read(width: width, height: height, bands: Int(vips_image_get_bands(image)),
                        hasAlpha: vips_image_hasalpha(image) != 0, orientation: Int(vips_image_get_orientation(image)),
                        hasEXIF: rv_has_field(image, "exif-data") != 0, hasLocation: rv_has_field_prefix(image, "exif-ifd3-") != 0,
                        hasCamera: rv_has_field(image, "exif-ifd0-Make") != 0, pixels: pixels)
        }
    }

    public static func isRed(_ pixel: [Double]) -> Bool { pixel.count >= 3 && pixel[0] > 170 && pixel[1] < 90 && pixel[2] < 90 }
}

/// An EXIF block as phones write it: the camera's make, an orientation and a GPS position.
public enum EXIF {
    /// `jpeg` with an APP1 EXIF segment put right after its start-of-image marker.
    public static func adding(to jpeg: Data, orientation: UInt16, latitude: (UInt32, UInt32, UInt32)? = (52, 22, 12),
                       make: String = "RecipeCam") -> Data {
        let payload = Array("Exif\0\0".utf8) + tiff(orientation: orientation, latitude: latitude, make: make)
        let length = payload.count + 2
        var out = Data(jpeg.prefix(2))
        out.append(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload)
        out.append(jpeg.dropFirst(2))
        return out
    }

    /// A little-endian TIFF structure: IFD0 (Make, Orientation, GPS pointer) and a GPS IFD.
    static func tiff(orientation: UInt16, latitude: (UInt32, UInt32, UInt32)?, make: String) -> [UInt8] {
        var bytes: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        func u16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        let makeBytes = Array(make.utf8) + [0]
        let ifd0Count = latitude == nil ? 2 : 3
        let ifd0Size = 2 + 12 * ifd0Count + 4
        let makeOffset = 8 + ifd0Size
        let gpsOffset = makeOffset + makeBytes.count + (makeBytes.count & 1)
        // IFD0, entries sorted by tag.
        bytes += u16(UInt16(ifd0Count))
        bytes += u16(0x010F) + u16(2) + u32(UInt32(makeBytes.count)) + u32(UInt32(makeOffset))
        bytes += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0]
        if latitude != nil { bytes += u16(0x8825) + u16(4) + u32(1) + u32(UInt32(gpsOffset)) }
        bytes += u32(0)
        bytes += makeBytes + (makeBytes.count & 1 == 1 ? [0] : [])
        if let latitude {
            let gpsSize = 2 + 12 * 4 + 4
            let latitudeOffset = gpsOffset + gpsSize, longitudeOffset = latitudeOffset + 24
            bytes += u16(4)
            bytes += u16(0x0001) + u16(2) + u32(2) + Array("N".utf8) + [0, 0, 0]
            bytes += u16(0x0002) + u16(5) + u32(3) + u32(UInt32(latitudeOffset))
            bytes += u16(0x0003) + u16(2) + u32(2) + Array("E".utf8) + [0, 0, 0]
            bytes += u16(0x0004) + u16(5) + u32(3) + u32(UInt32(longitudeOffset))
            bytes += u32(0)
            for value in [latitude.0, latitude.1, latitude.2, 4, 53, 30] { bytes += u32(value) + u32(1) }
        }
        return bytes
    }
}

/// A PNG whose header promises `width`×`height` one-bit pixels, all black, with a valid
/// deflate stream of zero bytes; `rows` limits how many rows the stream really holds
/// (nil: all of them — a complete, valid file).
public enum PNGBomb {
    public static func make(width: Int, height: Int, rows: Int? = nil) -> Data {
        let rowBytes = 1 + (width + 7) / 8
        let zeros = rowBytes * (rows ?? height)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        for value in [UInt32(width), UInt32(height)] { header += bigEndian(value) }
        header += [1, 0, 0, 0, 0] // bit depth 1, greyscale, deflate, no filter choice, not interlaced
        png += chunk("IHDR", header)
        png += chunk("IDAT", zlibZeros(zeros))
        png += chunk("IEND", [])
        return Data(png)
    }

    /// A zlib stream of `count` zero bytes: one fixed-Huffman block of a literal zero and runs of 258.
    static func zlibZeros(_ count: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.write(1, count: 1) // last block
        bits.write(1, count: 2) // fixed Huffman codes
        bits.writeCode(0x30, length: 8) // literal 0
        var left = count - 1
        while left >= 258 {
            bits.writeCode(0xC5, length: 8) // length 258 (code 285)
            bits.writeCode(0, length: 5) // distance 1
            left -= 258
        }
        for _ in 0..<left { bits.writeCode(0x30, length: 8) }
        bits.writeCode(0, length: 7) // end of block
        let adler = UInt32(count % 65_521) << 16 | 1
        return [0x78, 0x01] + bits.bytes + bigEndian(adler)
    }

    struct BitWriter {
        var bytes: [UInt8] = []
        var used = 8
        /// `value`'s low bits, least significant first (deflate's header fields).
        mutating func write(_ value: UInt32, count: Int) {
            for bit in 0..<count { push((value >> bit) & 1 == 1) }
        }
        /// A Huffman code, most significant bit first.
        mutating func writeCode(_ code: UInt32, length: Int) {
            for bit in stride(from: length - 1, through: 0, by: -1) { push((code >> bit) & 1 == 1) }
        }
        private mutating func push(_ bit: Bool) {
            if used == 8 { bytes.append(0); used = 0 }
            if bit { bytes[bytes.count - 1] |= 1 << used }
            used += 1
        }
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
