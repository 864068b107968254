import Foundation

/// The largest frame an AVIF file's AV1 streams declare. The size libvips reports for an AVIF is its `ispe` box's;
/// the AV1 decoder allocates for the size the stream's own sequence header declares, which a file may set to
/// 16384×65285 beside an `ispe` of 64×48: 624 bytes that made the decoder take 2.2 GB (found by the photo-intake
/// fuzz target). So the intake reads each image item's sequence header (and the one `av1C` may carry) before
/// decoding, and refuses a frame past its pixel limit as it refuses a header past it.
enum AV1FrameSize {
    struct Frame: Equatable {
        let width: Int
        let height: Int
        var pixels: Int { width * height }
    }

    /// The largest frame any sequence header of the file declares; nil when the file holds none the reader finds.
    static func largest(in data: Data) -> Frame? {
        let bytes = [UInt8](data)
        guard let meta = firstBox("meta", in: bytes, bytes.indices) else { return nil }
        let body = min(meta.lowerBound + 4, meta.upperBound)..<meta.upperBound // a full box: version and flags first
        var streams: [ArraySlice<UInt8>] = []
        let items = av1Items(bytes, body)
        if let iloc = firstBox("iloc", in: bytes, body) {
            let idat = firstBox("idat", in: bytes, body)
            streams += itemData(bytes, iloc: iloc, idat: idat, items: items)
        }
        if let iprp = firstBox("iprp", in: bytes, body), let ipco = firstBox("ipco", in: bytes, iprp) {
            // Each av1C: four bytes of its own, then its configOBUs (which may hold the sequence header).
            for config in boxes("av1C", in: bytes, ipco) where config.count > 4 { streams.append(bytes[(config.lowerBound + 4)..<config.upperBound]) }
        }
        return streams.compactMap(sequenceHeaderFrame).max { $0.pixels < $1.pixels }
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

    /// The ids of the items whose type is `av01` (`iinf`'s `infe` entries of version 2 or 3).
    static func av1Items(_ bytes: [UInt8], _ meta: Range<Int>) -> Set<UInt64> {
        guard let iinf = firstBox("iinf", in: bytes, meta), let version = read(bytes, iinf.lowerBound, 1) else { return [] }
        let entries = (iinf.lowerBound + 4 + (version == 0 ? 2 : 4))..<iinf.upperBound
        guard entries.lowerBound <= entries.upperBound else { return [] }
        var items: Set<UInt64> = []
        for infe in boxes("infe", in: bytes, entries) {
            guard let entryVersion = read(bytes, infe.lowerBound, 1), entryVersion >= 2 else { continue }
            let idBytes = entryVersion == 2 ? 2 : 4
            guard let id = read(bytes, infe.lowerBound + 4, idBytes), infe.lowerBound + 4 + idBytes + 2 + 4 <= infe.upperBound else { continue }
            let type = infe.lowerBound + 4 + idBytes + 2
            if Array(bytes[type..<(type + 4)]) == Array("av01".utf8) { items.insert(id) }
        }
        return items
    }

    /// The first 64 KB of each of `items`' data, by `iloc` (from the file, or from `idat` for construction method 1).
    static func itemData(_ bytes: [UInt8], iloc: Range<Int>, idat: Range<Int>?, items: Set<UInt64>) -> [ArraySlice<UInt8>] {
        var cursor = iloc.lowerBound
        func next(_ count: Int) -> UInt64? {
            defer { cursor += count }
            return cursor + count <= iloc.upperBound ? read(bytes, cursor, count) : nil
        }
        guard let version = next(1), next(3) != nil, let sizes = next(1), let more = next(1) else { return [] }
        let (offsetSize, lengthSize) = (Int(sizes >> 4), Int(sizes & 15))
        let (baseOffsetSize, indexSize) = (Int(more >> 4), version >= 1 ? Int(more & 15) : 0)
        guard let count = next(version < 2 ? 2 : 4) else { return [] }
        var found: [ArraySlice<UInt8>] = []
        for _ in 0..<min(count, 10_000) {
            guard let id = next(version < 2 ? 2 : 4) else { break }
            var method: UInt64 = 0
            if version >= 1 { guard let value = next(2) else { break }; method = value & 15 }
            guard next(2) != nil, let base = next(baseOffsetSize), let extents = next(2) else { break }
            var data: [UInt8] = []
            for _ in 0..<extents {
                if indexSize > 0 { guard next(indexSize) != nil else { return found } }
                guard let offset = next(offsetSize), let length = next(lengthSize) else { return found }
                guard items.contains(id), data.count < 65_536 else { continue }
                let origin: Int
                let end: Int
                if method == 1 {
                    guard let idat else { continue }
                    (origin, end) = (idat.lowerBound, idat.upperBound)
                } else {
                    (origin, end) = (0, bytes.count)
                }
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, start < UInt64(end - origin) else { continue }
                let from = origin + Int(start)
                let available = end - from
                let take = min(length == 0 ? available : Int(min(length, UInt64(available))), 65_536 - data.count)
                data += bytes[from..<(from + take)]
            }
            if items.contains(id), !data.isEmpty { found.append(data[...]) }
        }
        return found
    }

    // MARK: AV1

    /// The frame a stream's first sequence header OBU declares (`max_frame_width_minus_1 + 1` by
    /// `max_frame_height_minus_1 + 1`, AV1 specification 5.5); nil when it holds none that can be read.
    static func sequenceHeaderFrame(_ stream: ArraySlice<UInt8>) -> Frame? {
        let bytes = Array(stream)
        var offset = 0
        while offset < bytes.count {
            let header = bytes[offset]
            let type = (header >> 3) & 15, hasExtension = header & 4 != 0, hasSize = header & 2 != 0
            offset += hasExtension ? 2 : 1
            var size = bytes.count - offset
            if hasSize {
                guard let (value, length) = leb128(bytes, offset) else { return nil }
                offset += length
                guard value <= UInt64(bytes.count - offset) else { return nil }
                size = Int(value)
            }
            guard offset <= bytes.count, size <= bytes.count - offset else { return nil }
            if type == 1 { return sequenceHeader(Array(bytes[offset..<(offset + size)])) }
            offset += size
        }
        return nil
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

        /// AV1's `uvlc()`: leading zeros, then that many bits.
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
