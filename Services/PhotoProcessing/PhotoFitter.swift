import CVips
import Foundation
import RecipeModel
import RecipeProtocol

/// Makes a photo fit the photo rules instead of refusing it: reads JPEG, PNG, WebP, HEIC
/// and AVIF; turns it upright by its orientation tag; takes out its metadata (GPS position,
/// camera serials) unless asked to keep it; scales it down (never up) to the long-side
/// maximum and re-encodes it — JPEG, or PNG/WebP when it has transparency — stepping the
/// quality down until it fits the byte limit. A photo that already fits is stored byte for
/// byte (only its metadata segments are cut out, without decoding it again).
///
/// Hostile files are refused before their pixels are decoded: the pixel count comes from
/// the header, and every format is read by its own loader (libvips' untrusted loaders are
/// off). `fit` is synchronous CPU work; run it off any socket or request thread.
public struct PhotoFitter: Sendable {
    public struct Limits: Sendable, Equatable, Codable {
        /// The stored photo's largest size in bytes (the storage's limit).
        public var maxBytes = RecipeVault.maxPhotoBytes
        /// The stored photo's longest side in pixels; larger photos are scaled down to it.
        public var maxLongSide = 2_560
        /// The most pixels a photo may have to be read at all (the check against decompression bombs).
        public var maxPixels = 100_000_000
        /// The largest file taken in: a request frame's default limit (16 MiB), which a 48-megapixel phone photo fits.
        public var maxInputBytes = 16 * 1_024 * 1_024
        public init() {}
    }

    /// A photo ready for storage and what was done to it.
    public struct Fitted: Sendable {
        public var bytes: Data
        public var fitting: PhotoFitting
    }

    public let limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// libvips is started once per process, with the first photo (a worker that is never sent one
    /// never loads it), one thread per pipeline: each photo is worked on one core.
    private static let started: Bool = rv_start(1) == 0

    /// Starts libvips now rather than with the first photo; false when it cannot start.
    public static func start() -> Bool { started }

    public func fit(_ input: Data, keepMetadata: Bool = false) throws(ServiceError) -> Fitted {
        guard Self.started else { throw ServiceError(.internalError, "the image library did not start: \(Self.takeError())") }
        guard input.count <= limits.maxInputBytes else {
            throw ServiceError(.photoTooLarge,
                "the photo is \(ImageKind.formatBytes(input.count)); the worker takes photos of up to \(ImageKind.formatBytes(limits.maxInputBytes)) to fit them")
        }
        guard let format = IntakeFormat.detect(input) else {
            throw ServiceError(.unsupportedImage,
                "the photo's bytes are not a JPEG, PNG, WebP, HEIC or AVIF image (\(PhotoRules.describe(input))); only those are read")
        }
        // The loaders read the bytes in place: every use of them stays inside this closure.
        return try input.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            Result { () throws(ServiceError) -> Fitted in try fit(raw, format: format, input: input, keepMetadata: keepMetadata) }
        }.get()
    }

    private func fit(_ raw: UnsafeRawBufferPointer, format: IntakeFormat, input: Data,
                     keepMetadata: Bool) throws(ServiceError) -> Fitted {
        guard let base = raw.baseAddress else { throw ServiceError(.unsupportedImage, "the photo is empty") }
        guard let header = rv_header(base, raw.count, format.loader) else {
            throw unreadable(format, input.count)
        }
        defer { g_object_unref(header) }
        let width = Int(vips_image_get_width(header)), height = Int(vips_image_get_height(header))
        guard width > 0, height > 0, width * height <= limits.maxPixels else {
            throw ServiceError(.photoTooLarge,
                "the photo is \(width)×\(height) pixels (\(Self.megapixels(width * height))); the worker reads photos of up to \(Self.megapixels(limits.maxPixels))")
        }
        // The decoders allocate for the frame the stream declares, not the header's size. The codec follows the
        // image item's type, not the file's brand: any HEIF file may hold AV1 or HEVC items.
        if format == .avif || format == .heic {
            let declared: CodedFrameSize.Declared?
            do { declared = try CodedFrameSize.largest(in: input) } catch {
                throw ServiceError(.unsupportedImage,
                    "the photo's image items claim \(ImageKind.formatBytes(error.claimed)) of coded data from a file of \(ImageKind.formatBytes(error.fileSize)) "
                    + "(parts listed again and again); the worker reads HEIC and AVIF files whose items are each stored once")
            }
            if let declared, declared.frame.pixels > limits.maxPixels {
                let frame = declared.frame
                throw ServiceError(.photoTooLarge,
                    "the photo's \(declared.codec.rawValue) stream declares frames of \(frame.width)×\(frame.height) pixels (\(Self.megapixels(frame.pixels))) though its header says "
                    + "\(width)×\(height); the worker reads photos of up to \(Self.megapixels(limits.maxPixels))")
            }
        }
        let original = PhotoFitting.Shape(byteCount: input.count, width: width, height: height, format: format.rawValue)
        let orientation = Int(vips_image_get_orientation(header))
        let metadataFields: [String] = ["exif-data", "xmp-data", "iptc-data"]
        let hasMetadata = metadataFields.contains { rv_has_field(header, $0) != 0 }
            || rv_has_field_prefix(header, "png-comment-") != 0
        let hasLocation = rv_has_field_prefix(header, "exif-ifd3-") != 0
        let frames = Int(vips_image_get_n_pages(header))
        var removed: [PhotoFitting.Change] = []
        if hasMetadata && !keepMetadata { removed.append(.metadataRemoved) }
        if hasLocation && !keepMetadata { removed.append(.locationRemoved) }

        let fitsAsItIs = format.storedKind != nil && format != .heic && orientation <= 1
            && input.count <= limits.maxBytes && max(width, height) <= limits.maxLongSide
        if fitsAsItIs {
            // Every pixel is decoded once, so a truncated or damaged photo is refused, not stored.
            guard rv_decode_all(header) == 0 else { throw unreadable(format, input.count) }
            if removed.isEmpty { return Fitted(bytes: input, fitting: PhotoFitting(original: original, stored: original, changes: [])) }
            if let (stripped, _) = MetadataStripper.strip(input, format: format) {
                var stored = original
                stored.byteCount = stripped.count
                return Fitted(bytes: stripped, fitting: PhotoFitting(original: original, stored: stored, changes: removed))
            }
        }
        var changes: [PhotoFitting.Change] = []
        if orientation > 1 { changes.append(.turnedUpright) }
        if frames > 1 { changes.append(.firstFrameOnly) }
        return try reencode(base, raw.count, original: original, format: format, keepMetadata: keepMetadata,
                            changes: changes + removed)
    }

    /// Decodes every pixel and does nothing else: a photo's plain decode, the baseline `photo-bench`
    /// measures `fit` against; throws what `fit` would for a file it cannot read.
    public func decode(_ input: Data) throws(ServiceError) {
        guard Self.started else { throw ServiceError(.internalError, "the image library did not start: \(Self.takeError())") }
        guard let format = IntakeFormat.detect(input) else { throw ServiceError(.unsupportedImage, "not a photo (\(PhotoRules.describe(input)))") }
        let decoded = input.withUnsafeBytes { raw -> Bool in
            guard let image = rv_header(raw.baseAddress, raw.count, format.loader) else { return false }
            defer { g_object_unref(image) }
            return rv_decode_all(image) == 0
        }
        guard decoded else { throw unreadable(format, input.count) }
    }

    /// Decodes, turns and scales the photo once, then encodes it at falling qualities (and, if
    /// that is not enough, smaller sizes) until it fits.
    private func reencode(_ base: UnsafeRawPointer, _ count: Int, original: PhotoFitting.Shape, format: IntakeFormat,
                          keepMetadata: Bool, changes: [PhotoFitting.Change]) throws(ServiceError) -> Fitted {
        // A fresh read: the header image of `fit` may have been decoded once already, and it is read in sequence.
        guard let loaded = rv_header(base, count, format.loader) else { throw unreadable(format, count) }
        defer { g_object_unref(loaded) }
        guard var image = rv_fit(loaded, Int32(limits.maxLongSide)) else { throw unreadable(format, count) }
        defer { g_object_unref(image) }
        let transparent = vips_image_hasalpha(image) != 0
        let strip: Int32 = keepMetadata ? 0 : 1
        for _ in 0..<8 {
            let attempts: [(IntakeFormat, Int32)] = transparent
                ? [(.png, 0), (.webp, 90), (.webp, 80), (.webp, 70), (.webp, 60)]
                : [(.jpeg, 85), (.jpeg, 78), (.jpeg, 70), (.jpeg, 60), (.jpeg, 50)]
            for (output, quality) in attempts {
                var bytes = try encode(image, as: output, quality: quality, strip: strip)
                // libvips writes a small EXIF chunk into every WebP, stripped or not: cut it out too.
                if !keepMetadata, let (stripped, _) = MetadataStripper.strip(bytes, format: output) { bytes = stripped }
                guard bytes.count <= limits.maxBytes else { continue }
                let width = Int(vips_image_get_width(image)), height = Int(vips_image_get_height(image))
                let stored = PhotoFitting.Shape(byteCount: bytes.count, width: width, height: height, format: output.rawValue)
                var done: [PhotoFitting.Change] = []
                if changes.contains(.turnedUpright) { done.append(.turnedUpright) }
                // Turning swaps the sides; scaled down means fewer pixels than the original had.
                if width * height < original.width * original.height { done.append(.scaledDown) }
                done.append(.reencoded)
                if output != format { done.append(.converted) }
                done += changes.filter { $0 != .turnedUpright }
                return Fitted(bytes: bytes, fitting: PhotoFitting(original: original, stored: stored, changes: done))
            }
            // Even the lowest quality is too large: three quarters of the size, and again.
            guard let smaller = rv_scale(image, 0.75) else { throw unreadable(format, count) }
            g_object_unref(image)
            image = smaller
        }
        throw ServiceError(.photoTooLarge,
            "the photo could not be made to fit \(ImageKind.formatBytes(limits.maxBytes)) by scaling it down; it is kept out")
    }

    private func encode(_ image: UnsafeMutablePointer<VipsImage>, as format: IntakeFormat, quality: Int32,
                        strip: Int32) throws(ServiceError) -> Data {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32 = switch format {
        case .png: rv_save_png(image, strip, &buffer, &length)
        case .webp: rv_save_webp(image, quality, strip, &buffer, &length)
        default: rv_save_jpeg(image, quality, strip, &buffer, &length)
        }
        guard status == 0, let buffer else {
            throw ServiceError(.internalError, "the photo could not be encoded as \(format.rawValue): \(Self.takeError())")
        }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    private func unreadable(_ format: IntakeFormat, _ count: Int) -> ServiceError {
        let lines = Self.takeErrorLines()
        // A decoder whose memory ran out says something else too ("bad seek"): the photo is whole, only too big to
        // read within the memory one photo may take.
        if let memory = lines.first(where: { $0.contains("out of memory") }) {
            return ServiceError(.photoTooLarge,
                "the photo (\(ImageKind.formatBytes(count)) of \(format.rawValue)) needs more memory to read than one photo may take (\(memory)); "
                + "recipe-worker's --photo-memory sets that limit")
        }
        return ServiceError(.unreadableImage,
            "the photo (\(ImageKind.formatBytes(count))) starts like a \(format.rawValue) file but could not be read: \(lines.first ?? "unknown error"); it may be truncated or damaged")
    }

    /// libvips' error text, its first line, without the loader's name in front.
    static func takeError() -> String {
        takeErrorLines().first ?? "unknown error"
    }

    /// libvips' error text, line by line, each without the name of what said it in front.
    static func takeErrorLines() -> [String] {
        guard let text = rv_take_error() else { return [] }
        defer { g_free(text) }
        return String(cString: text).split(separator: "\n").compactMap { line in
            let message = line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? String(line)
            return message.isEmpty ? nil : message
        }
    }

    static func megapixels(_ pixels: Int) -> String {
        pixels >= 10_000_000 ? "\(pixels / 1_000_000) megapixels" : String(format: "%.1f megapixels", Double(pixels) / 1_000_000)
    }
}

extension IntakeFormat {
    var loader: rv_format {
        switch self {
        case .jpeg: RV_JPEG
        case .png: RV_PNG
        case .webp: RV_WEBP
        case .heic, .avif: RV_HEIF
        }
    }
}
