import Foundation

/// The largest frame a HEIF file's coded streams declare. The size libvips reports for a HEIC or AVIF is its `ispe`
/// box's; the decoders allocate for the size the stream itself declares — an AV1 sequence header, an HEVC sequence
/// parameter set — which a file may set far past its `ispe`: 624 bytes declaring AV1 frames of 16384×65285 made the
/// AV1 decoder take 2.2 GB (found by the photo-intake fuzz target), and an 818-byte HEIC whose SPS declares
/// 60000×60000 made the HEVC decoder take 9 GB and crash. So the intake reads every parameter set the decoders would
/// be given — in the codec configuration properties and in each image item's data — and refuses a frame past its
/// pixel limit as it refuses a header past it.
enum CodedFrameSize {
    struct Frame: Equatable {
        let width: Int
        let height: Int
        var pixels: Int { width * height }
    }

    enum Codec: String {
        case av1 = "AV1"
        case hevc = "HEVC"
    }

    struct Declared: Equatable {
        let frame: Frame
        let codec: Codec
    }

    /// The largest frame any sequence header or parameter set of the file declares; nil when it holds none the
    /// reader finds.
    static func largest(in data: Data) throws(Overlong) -> Declared? {
        let bytes = [UInt8](data)
        guard let meta = firstBox("meta", in: bytes, bytes.indices) else { return nil }
        let body = min(meta.lowerBound + 4, meta.upperBound)..<meta.upperBound // a full box: version and flags first
        var found: [Declared] = []
        let items = codedItems(bytes, body)
        if let iloc = firstBox("iloc", in: bytes, body) {
            let idat = firstBox("idat", in: bytes, body)
            for (codec, extents) in try itemExtents(bytes, iloc: iloc, idat: idat, items: items) {
                switch codec {
                case .av1:
                    found += sequenceHeaderFrames(bytes, extents).map { Declared(frame: $0, codec: .av1) }
                case .hevc:
                    found += lengthPrefixedSPSFrames(bytes, extents).map { Declared(frame: $0, codec: .hevc) }
                }
            }
        }
        if let iprp = firstBox("iprp", in: bytes, body), let ipco = firstBox("ipco", in: bytes, iprp) {
            // Each av1C: four bytes of its own, then its configOBUs (which may hold the sequence header).
            for config in boxes("av1C", in: bytes, ipco) where config.count > 4 {
                found += sequenceHeaderFrames(bytes, [(config.lowerBound + 4)..<config.upperBound]).map { Declared(frame: $0, codec: .av1) }
            }
            for config in boxes("hvcC", in: bytes, ipco) {
                found += configurationSPSFrames(bytes, config).map { Declared(frame: $0, codec: .hevc) }
            }
        }
        return found.max { $0.frame.pixels < $1.frame.pixels }
    }

    // MARK: ISO BMFF boxes

    /// The bodies of the boxes of `type` directly inside `range`.
    static func boxes(_ type: String, in bytes: [UInt8], _ range: Range<Int>) -> [Range<Int>] {
        let wanted = Array(type.utf8)
        var found: [Range<Int>] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = Int(read(bytes, offset, 4) ?? 0)
            var header = 8
            if size == 1 {
                guard let large = read(bytes, offset + 8, 8), large < UInt64(Int.max) else { break }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, size <= range.upperBound - offset else { break }
            if Array(bytes[(offset + 4)..<(offset + 8)]) == wanted { found.append((offset + header)..<(offset + size)) }
            offset += size
        }
        return found
    }

    static func firstBox(_ type: String, in bytes: [UInt8], _ range: Range<Int>) -> Range<Int>? {
        boxes(type, in: bytes, range).first
    }

    /// A big-endian unsigned number of `count` bytes at `offset`; nil past the end.
    static func read(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64? {
        guard count >= 0, count <= 8, offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The ids of the items whose data a decoder reads, with its codec (`iinf`'s `infe` entries of version 2 or 3
    /// typed `av01`, `hvc1` or `hev1`).
    static func codedItems(_ bytes: [UInt8], _ meta: Range<Int>) -> [UInt64: Codec] {
        guard let iinf = firstBox("iinf", in: bytes, meta), let version = read(bytes, iinf.lowerBound, 1) else { return [:] }
        let entries = (iinf.lowerBound + 4 + (version == 0 ? 2 : 4))..<iinf.upperBound
        guard entries.lowerBound <= entries.upperBound else { return [:] }
        var items: [UInt64: Codec] = [:]
        for infe in boxes("infe", in: bytes, entries) {
            guard let entryVersion = read(bytes, infe.lowerBound, 1), entryVersion >= 2 else { continue }
            let idBytes = entryVersion == 2 ? 2 : 4
            guard let id = read(bytes, infe.lowerBound + 4, idBytes), infe.lowerBound + 4 + idBytes + 2 + 4 <= infe.upperBound else { continue }
            let type = infe.lowerBound + 4 + idBytes + 2
            switch String(decoding: bytes[type..<(type + 4)], as: UTF8.self) {
            case "av01": items[id] = .av1
            case "hvc1", "hev1": items[id] = .hevc
            default: continue
            }
        }
        return items
    }

    /// Item data claimed past what any real file holds: more than four times the file's size in all.
    struct Overlong: Error, Equatable {
        let claimed: Int
        let fileSize: Int
    }

    /// Each coded item's data, as the ranges of the file (or of `idat`, for construction method 1) `iloc` gives it.
    /// Throws when the items claim more than four times the file's size (extents repeated or overlapping: a file
    /// built to make its readers copy or walk without end); at most 100,000 extents are read.
    static func itemExtents(_ bytes: [UInt8], iloc: Range<Int>, idat: Range<Int>?,
                            items: [UInt64: Codec]) throws(Overlong) -> [(Codec, [Range<Int>])] {
        var cursor = iloc.lowerBound
        func next(_ count: Int) -> UInt64? {
            defer { cursor += count }
            return cursor + count <= iloc.upperBound ? read(bytes, cursor, count) : nil
        }
        guard let version = next(1), next(3) != nil, let sizes = next(1), let more = next(1) else { return [] }
        let (offsetSize, lengthSize) = (Int(sizes >> 4), Int(sizes & 15))
        let (baseOffsetSize, indexSize) = (Int(more >> 4), version >= 1 ? Int(more & 15) : 0)
        guard let count = next(version < 2 ? 2 : 4) else { return [] }
        var found: [(Codec, [Range<Int>])] = []
        var claimed = 0
        var extentsRead = 0
        for _ in 0..<count {
            guard let id = next(version < 2 ? 2 : 4) else { break }
            var method: UInt64 = 0
            if version >= 1 { guard let value = next(2) else { break }; method = value & 15 }
            guard next(2) != nil, let base = next(baseOffsetSize), let extents = next(2) else { break }
            var ranges: [Range<Int>] = []
            for _ in 0..<extents {
                extentsRead += 1
                guard extentsRead <= 100_000 else { return found }
                if indexSize > 0 { guard next(indexSize) != nil else { return found } }
                guard let offset = next(offsetSize), let length = next(lengthSize) else { return found }
                guard items[id] != nil else { continue }
                let (origin, end) = method == 1 ? (idat?.lowerBound ?? 0, idat?.upperBound ?? 0) : (0, bytes.count)
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, start < UInt64(end - origin) else { continue }
                let from = origin + Int(start)
                let available = end - from
                let take = length == 0 ? available : Int(min(length, UInt64(available)))
                claimed += take
                guard claimed <= 4 * max(bytes.count, 1) else { throw Overlong(claimed: claimed, fileSize: bytes.count) }
                ranges.append(from..<(from + take))
            }
            if let codec = items[id], !ranges.isEmpty { found.append((codec, ranges)) }
        }
        return found
    }

    // MARK: AV1

    /// The frames the sequence header OBUs of a stream declare (`max_frame_width_minus_1 + 1` by
    /// `max_frame_height_minus_1 + 1`, AV1 specification 5.5) — every one, as a later header may declare a larger
    /// frame than the first and the decoder allocates for it; read over the stream's extents without copying it.
    static func sequenceHeaderFrames(_ bytes: [UInt8], _ extents: [Range<Int>]) -> [Frame] {
        var stream = ExtentStream(bytes: bytes, extents: extents)
        var frames: [Frame] = []
        while let header = stream.take(1)?.first {
            let type = (header >> 3) & 15, hasExtension = header & 4 != 0, hasSize = header & 2 != 0
            if hasExtension { guard stream.take(1) != nil else { break } }
            var size = stream.remaining
            if hasSize {
                guard let (value, length) = leb128(stream.peek(min(8, stream.remaining)) ?? [], 0) else { break }
                stream.skip(length)
                guard value <= UInt64(stream.remaining) else { break }
                size = Int(value)
            }
            if type == 1, let payload = stream.peek(min(size, 4_096)), let frame = sequenceHeader(payload) { frames.append(frame) }
            stream.skip(size)
        }
        return frames
    }

    static func leb128(_ bytes: [UInt8], _ offset: Int) -> (UInt64, Int)? {
        var value: UInt64 = 0
        for index in 0..<8 {
            guard offset + index < bytes.count else { return nil }
            let byte = bytes[offset + index]
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return (value, index + 1) }
        }
        return nil
    }

    static func sequenceHeader(_ payload: [UInt8]) -> Frame? {
        var bits = BitReader(payload)
        guard bits.read(3) != nil, bits.read(1) != nil, let reduced = bits.read(1) else { return nil } // profile, still picture
        if reduced == 1 {
            guard bits.read(5) != nil else { return nil }
        } else {
            guard let timing = bits.read(1) else { return nil }
            var decoderModel: UInt64 = 0
            var bufferDelayLength = 0
            if timing == 1 {
                guard bits.read(32) != nil, bits.read(32) != nil, let equal = bits.read(1) else { return nil }
                if equal == 1 { guard bits.uvlc() != nil else { return nil } }
                guard let model = bits.read(1) else { return nil }
                decoderModel = model
                if model == 1 {
                    guard let length = bits.read(5), bits.read(32) != nil, bits.read(5) != nil, bits.read(5) != nil else { return nil }
                    bufferDelayLength = Int(length) + 1
                }
            }
            guard let displayDelay = bits.read(1), let points = bits.read(5) else { return nil }
            for _ in 0...points {
                guard bits.read(12) != nil, let level = bits.read(5) else { return nil }
                if level > 7 { guard bits.read(1) != nil else { return nil } }
                if decoderModel == 1 {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1 { guard bits.read(bufferDelayLength) != nil, bits.read(bufferDelayLength) != nil, bits.read(1) != nil else { return nil } }
                }
                if displayDelay == 1 {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1 { guard bits.read(4) != nil else { return nil } }
                }
            }
        }
        guard let widthBits = bits.read(4), let heightBits = bits.read(4),
              let width = bits.read(Int(widthBits) + 1), let height = bits.read(Int(heightBits) + 1) else { return nil }
        return Frame(width: Int(width) + 1, height: Int(height) + 1)
    }

    // MARK: HEVC

    /// The frames the sequence parameter sets among an item's NAL units declare (each unit after a four-byte
    /// length, as the HEIF reader gives them to the HEVC decoder).
    static func lengthPrefixedSPSFrames(_ bytes: [UInt8], _ extents: [Range<Int>]) -> [Frame] {
        var stream = ExtentStream(bytes: bytes, extents: extents)
        var frames: [Frame] = []
        while let length = stream.take(4) {
            let size = Int(length.reduce(0) { $0 << 8 | UInt64($1) })
            guard size > 0, size <= stream.remaining else { break }
            if let first = stream.peek(1), (first[0] >> 1) & 63 == 33, let head = stream.peek(min(size, 512)),
               let frame = spsFrame(head) {
                frames.append(frame)
            }
            stream.skip(size)
        }
        return frames
    }

    /// The frames the sequence parameter sets of an `hvcC` box declare: 22 bytes of configuration, then arrays of
    /// NAL units, each after a two-byte length (every unit is given to the decoder, whatever its array says).
    static func configurationSPSFrames(_ bytes: [UInt8], _ config: Range<Int>) -> [Frame] {
        var offset = config.lowerBound + 22
        guard offset < config.upperBound else { return [] }
        let arrays = Int(bytes[offset])
        offset += 1
        var frames: [Frame] = []
        for _ in 0..<arrays {
            guard let units = read(bytes, offset + 1, 2), offset + 3 <= config.upperBound else { break }
            offset += 3
            for _ in 0..<units {
                guard let length = read(bytes, offset, 2), offset + 2 + Int(length) <= config.upperBound else { return frames }
                let unit = (offset + 2)..<(offset + 2 + Int(length))
                if unit.count > 2, (bytes[unit.lowerBound] >> 1) & 63 == 33,
                   let frame = spsFrame(Array(bytes[unit.lowerBound..<min(unit.upperBound, unit.lowerBound + 512)])) {
                    frames.append(frame)
                }
                offset = unit.upperBound
            }
        }
        return frames
    }

    /// `pic_width_in_luma_samples` by `pic_height_in_luma_samples` of a sequence parameter set NAL unit (H.265
    /// 7.3.2.2: after the two-byte unit header, the VPS id, sub-layer count, profile_tier_level, SPS id and chroma
    /// format); nil when it cannot be read.
    static func spsFrame(_ unit: [UInt8]) -> Frame? {
        guard unit.count > 2 else { return nil }
        // Emulation prevention: 00 00 03 stands for 00 00.
        var payload: [UInt8] = []
        var zeros = 0
        for byte in unit.dropFirst(2) {
            if zeros >= 2 && byte == 3 { zeros = 0; continue }
            payload.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        var bits = BitReader(payload)
        guard bits.read(4) != nil, let subLayersMinus1 = bits.read(3), bits.read(1) != nil,
              bits.skip(96) else { return nil } // general profile, tier and level
        var profilePresent: [Bool] = [], levelPresent: [Bool] = []
        for _ in 0..<subLayersMinus1 {
            guard let profile = bits.read(1), let level = bits.read(1) else { return nil }
            profilePresent.append(profile == 1)
            levelPresent.append(level == 1)
        }
        if subLayersMinus1 > 0 { guard bits.skip(2 * (8 - Int(subLayersMinus1))) else { return nil } }
        for layer in 0..<Int(subLayersMinus1) {
            guard bits.skip((profilePresent[layer] ? 88 : 0) + (levelPresent[layer] ? 8 : 0)) else { return nil }
        }
        guard bits.uvlc() != nil, let chroma = bits.uvlc() else { return nil }
        if chroma == 3 { guard bits.read(1) != nil else { return nil } }
        guard let width = bits.uvlc(), let height = bits.uvlc(), width < UInt64(Int32.max), height < UInt64(Int32.max) else { return nil }
        return Frame(width: Int(width), height: Int(height))
    }

    /// The data of a list of extents, read front to back without copying it whole.
    struct ExtentStream {
        let bytes: [UInt8]
        let extents: [Range<Int>]
        var index = 0
        var offset: Int
        private(set) var remaining: Int

        init(bytes: [UInt8], extents: [Range<Int>]) {
            self.bytes = bytes
            self.extents = extents
            offset = extents.first?.lowerBound ?? 0
            remaining = extents.reduce(0) { $0 + $1.count }
        }

        /// The next `count` bytes without moving past them; nil when fewer remain.
        func peek(_ count: Int) -> [UInt8]? {
            guard count <= remaining else { return nil }
            var copy = self
            var data: [UInt8] = []
            data.reserveCapacity(count)
            while data.count < count {
                copy.settle()
                let end = min(copy.extents[copy.index].upperBound, copy.offset + count - data.count)
                data += bytes[copy.offset..<end]
                copy.offset = end
            }
            return data
        }

        mutating func take(_ count: Int) -> [UInt8]? {
            guard let data = peek(count) else { return nil }
            skip(count)
            return data
        }

        mutating func skip(_ count: Int) {
            var left = min(count, remaining)
            remaining -= left
            while left > 0 {
                settle()
                let step = min(left, extents[index].upperBound - offset)
                offset += step
                left -= step
            }
        }

        /// Moves to the next extent when this one is used up.
        private mutating func settle() {
            while index < extents.count, offset >= extents[index].upperBound {
                index += 1
                if index < extents.count { offset = extents[index].lowerBound }
            }
        }
    }

    struct BitReader {
        let bytes: [UInt8]
        var position = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func read(_ count: Int) -> UInt64? {
            guard count >= 0, count <= 32, position + count <= bytes.count * 8 else { return nil }
            var value: UInt64 = 0
            for _ in 0..<count {
                let bit = (bytes[position / 8] >> (7 - UInt8(position % 8))) & 1
                value = value << 1 | UInt64(bit)
                position += 1
            }
            return value
        }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, position + count <= bytes.count * 8 else { return false }
            position += count
            return true
        }

        /// AV1's `uvlc()`, which is HEVC's `ue(v)`: leading zeros, then that many bits.
        mutating func uvlc() -> UInt64? {
            var zeros = 0
            while true {
                guard let bit = read(1) else { return nil }
                if bit == 1 { break }
                zeros += 1
                guard zeros < 32 else { return nil }
            }
            guard let value = read(zeros) else { return nil }
            return value + (1 << UInt64(zeros)) - 1
        }
    }
}
