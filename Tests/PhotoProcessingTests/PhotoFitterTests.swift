import Foundation
@testable import PhotoProcessing
import RecipeModel
import RecipeProtocol
import TestImages
import TestThreads
import Testing

@Suite("Photo intake: photos made to fit", .onOwnThread)
struct PhotoFitterTests {
    let fitter = PhotoFitter()

    @Test("a 12-megapixel phone JPEG, turned by EXIF and carrying GPS, is stored under 2 MB, upright and without its location")
    func phonePhoto() throws {
        // 4032×3024 as the sensor reads it; orientation 6 says "turn 90° clockwise to show".
        let sensor = TestImages.picture(width: 4_032, height: 3_024, grain: 18, as: .jpeg(quality: 92))
        let photo = EXIF.adding(to: sensor, orientation: 6)
        #expect(photo.count > 3_000_000, "the source should be a phone-sized file, not \(photo.count) bytes")
        let source = try #require(TestImages.read(photo))
        #expect(source.orientation == 6 && source.hasLocation && source.hasCamera)

        let fitted = try fitter.fit(photo)
        #expect(fitted.bytes.count <= RecipeVault.maxPhotoBytes)
        #expect(ImageKind.detect(fitted.bytes) == .jpeg)
        // Upright: portrait, and the red block from the sensor's top-left is now at the top right.
        let stored = try #require(TestImages.read(fitted.bytes, at: [(0.9, 0.05), (0.05, 0.05)]))
        #expect(stored.width == 1_920 && stored.height == 2_560)
        #expect(TestImages.isRed(stored.pixels[0]) && !TestImages.isRed(stored.pixels[1]), "\(stored.pixels)")
        #expect(stored.orientation <= 1)
        #expect(!stored.hasLocation && !stored.hasCamera && !stored.hasEXIF)

        let fitting = fitted.fitting
        #expect(fitting.original == .init(byteCount: photo.count, width: 4_032, height: 3_024, format: "JPEG"))
        #expect(fitting.stored == .init(byteCount: fitted.bytes.count, width: 1_920, height: 2_560, format: "JPEG"))
        for change in [PhotoFitting.Change.turnedUpright, .scaledDown, .reencoded, .metadataRemoved, .locationRemoved] {
            #expect(fitting.changes.contains(change), "\(change.rawValue) missing from \(fitting.changes)")
        }
        #expect(!fitting.changes.contains(.converted))
        #expect(fitting.summary.hasPrefix("\(ImageKind.formatBytes(photo.count)) 4032×3024 JPEG → "))
        #expect(fitting.summary.hasSuffix("1920×2560 JPEG, turned upright, location removed"), "\(fitting.summary)")
    }

    @Test("--keep-metadata keeps the location and camera, and the stored photo is still upright")
    func keepMetadata() throws {
        let photo = EXIF.adding(to: TestImages.picture(width: 3_000, height: 2_000, as: .jpeg(quality: 90)), orientation: 6)
        let fitted = try fitter.fit(photo, keepMetadata: true)
        let stored = try #require(TestImages.read(fitted.bytes))
        #expect(stored.hasLocation && stored.hasCamera)
        #expect(stored.orientation <= 1 && stored.width == 1_707 && stored.height == 2_560)
        #expect(!fitted.fitting.changes.contains(.locationRemoved) && !fitted.fitting.changes.contains(.metadataRemoved))
    }

    @Test("a photo that already fits and carries no metadata is stored byte for byte")
    func fitsAlready() throws {
        for photo in [TestImages.picture(width: 1_600, height: 1_200, as: .jpeg(quality: 85)),
                      TestImages.picture(width: 800, height: 600, alpha: true, as: .png)] {
            let fitted = try fitter.fit(photo)
            #expect(fitted.bytes == photo)
            #expect(fitted.fitting.changes.isEmpty)
            #expect(fitted.fitting.summary.hasSuffix("stored as it came"))
        }
    }

    @Test("a photo that fits but carries a location loses only its metadata segments, not a pixel")
    func metadataCutOutWithoutReencoding() throws {
        let clean = TestImages.picture(width: 1_200, height: 900, as: .jpeg(quality: 85))
        let photo = EXIF.adding(to: clean, orientation: 1)
        let fitted = try fitter.fit(photo)
        #expect(fitted.bytes == clean, "the APP1 segment alone should have been taken out")
        #expect(fitted.fitting.changes == [.metadataRemoved, .locationRemoved])
        #expect(fitted.fitting.summary.hasSuffix("1200×900 JPEG, location removed"))
    }

    @Test("a WebP's EXIF chunk is cut out (its VP8X flags follow) and the file still reads the same")
    func webpMetadata() throws {
        // libvips writes an EXIF chunk into every WebP it saves.
        let photo = TestImages.picture(width: 1_000, height: 700, alpha: true, as: .webp(quality: 80))
        #expect(photo.range(of: Data("EXIF".utf8)) != nil)
        let fitted = try fitter.fit(photo)
        #expect(fitted.bytes.range(of: Data("EXIF".utf8)) == nil && fitted.bytes.count < photo.count)
        #expect(fitted.fitting.changes == [.metadataRemoved])
        let before = try #require(TestImages.read(photo, at: [(0.25, 0.5), (0.75, 0.5)]))
        let after = try #require(TestImages.read(fitted.bytes, at: [(0.25, 0.5), (0.75, 0.5)]))
        #expect(!after.hasEXIF && after.hasAlpha && after.pixels == before.pixels && after.width == 1_000)
        // Once is enough: nothing more comes out.
        #expect(try fitter.fit(fitted.bytes).bytes == fitted.bytes)
    }

    @Test("a large PNG with transparency stays transparent")
    func transparency() throws {
        let photo = TestImages.picture(width: 2_700, height: 1_800, grain: 4, alpha: true, as: .png)
        #expect(photo.count > RecipeVault.maxPhotoBytes && photo.count < PhotoFitter.Limits().maxInputBytes, "\(photo.count) bytes")
        let fitted = try fitter.fit(photo)
        #expect(fitted.bytes.count <= RecipeVault.maxPhotoBytes)
        #expect([ImageKind.png, .webp].contains(ImageKind.detect(fitted.bytes)))
        // The right half was transparent, the left half opaque.
        let stored = try #require(TestImages.read(fitted.bytes, at: [(0.75, 0.5), (0.25, 0.5)]))
        #expect(stored.hasAlpha && stored.width == 2_560 && (1_706...1_707).contains(stored.height))
        #expect(stored.pixels[0].last == 0 && stored.pixels[1].last == 255, "\(stored.pixels)")
    }

    @Test("a HEIC photo from a phone-sized source is stored as JPEG")
    func heic() throws {
        let photo = TestImages.picture(width: 4_032, height: 3_024, grain: 0, as: .heic(quality: 40))
        #expect(ImageKind.detect(photo) == .heic)
        let fitted = try fitter.fit(photo)
        #expect(ImageKind.detect(fitted.bytes) == .jpeg)
        let stored = try #require(TestImages.read(fitted.bytes, at: [(0.05, 0.05)]))
        #expect(stored.width == 2_560 && stored.height == 1_920 && TestImages.isRed(stored.pixels[0]))
        #expect(fitted.fitting.original.format == "HEIC" && fitted.fitting.stored.format == "JPEG")
        #expect(fitted.fitting.changes.contains(.converted) && fitted.fitting.changes.contains(.scaledDown))
        #expect(fitted.fitting.summary.contains("4032×3024 HEIC → ") && fitted.fitting.summary.contains("2560×1920 JPEG"))
    }

    @Test("AVIF is read and stored as JPEG")
    func avif() throws {
        let photo = TestImages.picture(width: 640, height: 480, grain: 0, as: .avif(quality: 50))
        #expect(IntakeFormat.detect(photo) == .avif)
        let fitted = try fitter.fit(photo)
        #expect(ImageKind.detect(fitted.bytes) == .jpeg)
        #expect(fitted.fitting.stored.width == 640)
        #expect(fitted.fitting.changes.starts(with: [.reencoded, .converted]) && !fitted.fitting.changes.contains(.scaledDown))
    }

    /// 624 bytes found by the photo-intake fuzz target: an `ispe` of 64×48 and an AV1 sequence header declaring
    /// 16384×65285 frames; the decoder took 2.2 GB for it.
    @Test("an AVIF whose AV1 stream declares frames past the pixel limit is refused before decoding; real AVIFs read their own size")
    func avifFramePastItsHeader() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/photo-intake/avif-av1-frame-past-header-oom")
        // The second: the same under a HEIC brand (the codec follows the item's type, not the brand).
        for (name, format) in [("avif-av1-frame-past-header-oom", IntakeFormat.avif), ("heif-brand-av1-frame-past-header-oom", .heic)] {
            let hostile = try Data(contentsOf: corpus.deletingLastPathComponent().appendingPathComponent(name))
            #expect(IntakeFormat.detect(hostile) == format)
            let error = #expect(throws: ServiceError.self) { _ = try fitter.fit(hostile) }
            #expect(error?.code == .photoTooLarge)
            #expect(error?.message.hasPrefix("the photo's AV1 stream declares frames of 16384×") == true, "\(error?.message ?? "")")
            #expect(error?.message.hasSuffix("the worker reads photos of up to 100 megapixels") == true, "\(error?.message ?? "")")
        }
        for (width, height) in [(640, 480), (37, 1_200)] {
            let photo = TestImages.picture(width: width, height: height, grain: 0, as: .avif(quality: 50))
            let frame = try #require(try CodedFrameSize.largest(in: photo)?.frame, "\(width)×\(height): no sequence header found")
            // An encoder may round a frame up to its block size; never past it.
            #expect(frame.width >= width && frame.height >= height && frame.width <= width + 8 && frame.height <= height + 8, "\(frame)")
            #expect(try fitter.fit(photo).fitting.stored.width == width)
        }
    }

    /// dav1d allocates for each sequence header it meets: one later in the stream may declare a larger frame than the
    /// first, so every one counts.
    @Test("every AV1 sequence header of a stream counts, not only the first; a cut stream reads what it holds")
    func everySequenceHeader() {
        // A reduced still-picture sequence header OBU (AV1 5.5) of width × height, with its size field.
        func header(width: Int, height: Int) -> [UInt8] {
            var bits: [Bool] = []
            func put(_ value: Int, _ count: Int) { for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) } }
            put(0, 3); put(1, 1); put(1, 1); put(0, 5) // profile, still picture, reduced header, level
            put(15, 4); put(15, 4); put(width - 1, 16); put(height - 1, 16)
            while bits.count % 8 != 0 { bits.append(false) }
            let payload = stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) } }
            return [1 << 3 | 2, UInt8(payload.count)] + payload
        }
        let temporalDelimiter: [UInt8] = [2 << 3 | 2, 0]
        let stream = temporalDelimiter + header(width: 64, height: 48) + temporalDelimiter + header(width: 16_384, height: 16_384)
        #expect(CodedFrameSize.sequenceHeaderFrames(stream, [0..<stream.count])
                == [.init(width: 64, height: 48), .init(width: 16_384, height: 16_384)])
        // The same stream in three extents, split inside the OBUs.
        #expect(CodedFrameSize.sequenceHeaderFrames(stream, [0..<5, 5..<9, 9..<stream.count]).count == 2)
        #expect(CodedFrameSize.sequenceHeaderFrames(stream, [0..<(stream.count - 3)]) == [.init(width: 64, height: 48)])
    }

    /// HEIC files made from a real one: the HEVC sequence parameter set in its `hvcC` declaring 60000×60000 (the
    /// decoder took 9 GB and crashed), one put in front of the image item's data declaring 16000×16000 (1.2 GB), and
    /// an item whose one extent is listed 5,000 times.
    @Test("a HEIC whose HEVC parameter sets declare frames past the pixel limit is refused before decoding, wherever the set is; real HEICs read their own size")
    func heicFramePastItsHeader() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/photo-intake")
        for (name, size) in [("heic-hevc-sps-frame-past-header-crash", "60000×60000 pixels (3600 megapixels)"),
                             ("heic-hevc-item-sps-frame-past-header-oom", "16000×16000 pixels (256 megapixels)")] {
            let hostile = try Data(contentsOf: corpus.appendingPathComponent(name))
            #expect(IntakeFormat.detect(hostile) == .heic)
            let error = #expect(throws: ServiceError.self) { _ = try fitter.fit(hostile) }
            #expect(error?.code == .photoTooLarge)
            #expect(error?.message == "the photo's HEVC stream declares frames of \(size) though its header says 64×48; "
                    + "the worker reads photos of up to 100 megapixels", "\(name): \(error?.message ?? "")")
        }
        let repeated = try Data(contentsOf: corpus.appendingPathComponent("heic-item-extents-repeated"))
        let overlong = #expect(throws: CodedFrameSize.Overlong.self) { _ = try CodedFrameSize.largest(in: repeated) }
        #expect(overlong?.fileSize == repeated.count && (overlong?.claimed ?? 0) > 4 * repeated.count)
        #expect(throws: ServiceError.self) { _ = try fitter.fit(repeated) }
        for (width, height) in [(640, 480), (37, 1_200)] {
            let photo = TestImages.picture(width: width, height: height, grain: 0, as: .heic(quality: 50))
            let declared = try #require(try CodedFrameSize.largest(in: photo), "\(width)×\(height): no parameter set found")
            // The coded frame: the whole picture or one tile of its grid, rounded up to the coding block size.
            #expect(declared.codec == .hevc && declared.frame.pixels > 0 && declared.frame.width <= width + 64
                    && declared.frame.height <= height + 64, "\(declared)")
            #expect(try fitter.fit(photo).fitting.stored.width == width)
        }
    }

    @Test("a small photo is never scaled up")
    func neverUp() throws {
        let photo = EXIF.adding(to: TestImages.picture(width: 300, height: 200, as: .jpeg(quality: 80)), orientation: 8)
        let fitted = try fitter.fit(photo)
        #expect(fitted.fitting.stored.width == 200 && fitted.fitting.stored.height == 300)
        #expect(!fitted.fitting.changes.contains(.scaledDown))
    }

    // MARK: Hostile images

    @Test("a decompression bomb is refused from its header, before any pixel is decoded")
    func decompressionBomb() throws {
        // 50,000 × 50,000: 2.5 gigapixels promised by a file of a few KB.
        let bomb = PNGBomb.make(width: 50_000, height: 50_000, rows: 64)
        #expect(bomb.count < 10_000)
        let error = try #require(throws: ServiceError.self) { try fitter.fit(bomb) }
        #expect(error.code == .photoTooLarge)
        #expect(error.message == "the photo is 50000×50000 pixels (2500 megapixels); the worker reads photos of up to 100 megapixels")
        // The same, complete and valid: 400 megapixels of one-bit black in ~300 KB.
        let valid = PNGBomb.make(width: 20_000, height: 20_000)
        #expect(valid.count < 400_000)
        let validError = try #require(throws: ServiceError.self) { try fitter.fit(valid) }
        #expect(validError.code == .photoTooLarge)
        #expect(validError.message.contains("20000×20000 pixels"))
    }

    @Test("truncated photos are refused, whether they fit or need fitting")
    func truncated() throws {
        let small = TestImages.picture(width: 1_000, height: 800, grain: 20, as: .jpeg(quality: 90))
        let large = TestImages.picture(width: 3_000, height: 2_000, grain: 20, as: .jpeg(quality: 90))
        let png = TestImages.picture(width: 900, height: 600, grain: 20, as: .png)
        for photo in [small, large, png] {
            let cut = photo.prefix(photo.count * 6 / 10)
            let error = try #require(throws: ServiceError.self) { try fitter.fit(Data(cut)) }
            #expect(error.code == .unreadableImage, "\(error)")
            #expect(error.message.contains("could not be read") && error.message.contains("truncated or damaged"), "\(error.message)")
        }
    }

    @Test("a JPEG header on garbage, a HEIC with a broken box, and bytes that are no image are refused")
    func garbage() throws {
        var random = SystemRandomNumberGenerator()
        let garbage = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &random) })
        let error = try #require(throws: ServiceError.self) { try fitter.fit(garbage) }
        #expect(error.code == .unreadableImage, "\(error)")

        var heic = TestImages.picture(width: 640, height: 480, grain: 0, as: .heic(quality: 40))
        let meta = try #require(heic.range(of: Data("meta".utf8)))
        heic.replaceSubrange((meta.lowerBound - 4)..<meta.lowerBound, with: [0x7F, 0xFF, 0xFF, 0xF0]) // the box's size
        let heicError = try #require(throws: ServiceError.self) { try fitter.fit(heic) }
        #expect(heicError.code == .unreadableImage, "\(heicError)")
        #expect(heicError.message.hasPrefix("the photo (") && heicError.message.contains("HEIC"))

        for bytes in [Data("hello, not a photo".utf8), Data()] {
            let notImage = try #require(throws: ServiceError.self) { try fitter.fit(bytes) }
            #expect(notImage.code == .unsupportedImage)
            #expect(notImage.message.contains("not a JPEG, PNG, WebP, HEIC or AVIF image"))
        }
    }

    @Test("a file larger than the intake takes is refused before it is read")
    func tooLargeToTake() throws {
        var limits = PhotoFitter.Limits()
        limits.maxInputBytes = 100_000
        let photo = TestImages.picture(width: 1_000, height: 800, grain: 20, as: .jpeg(quality: 95))
        let error = try #require(throws: ServiceError.self) { try PhotoFitter(limits: limits).fit(photo) }
        #expect(error.code == .photoTooLarge && error.message.contains("up to 100 KB"))
    }
}
