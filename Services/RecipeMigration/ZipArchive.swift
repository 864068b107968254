import Foundation

/// Reads zip files (the container of Paprika, Mealie and Tandoor exports) from their
/// central directory, stored and deflated entries, each checked against its CRC-32 and
/// inflated under a cap. Writes plain zips (stored entries) for `recipes export`.
public struct ZipArchive: Sendable {
    public struct Entry: Sendable, Equatable {
        public var path: String
        public var method: UInt16
        public var compressedSize: Int
        public var size: Int
        public var crc: UInt32
        var localHeaderOffset: Int

        public var isDirectory: Bool { path.hasSuffix("/") }
        /// The last part of the path.
        public var name: String { String(path.split(separator: "/").last ?? "") }
        /// macOS adds `__MACOSX/` resource forks and `.DS_Store` files when it zips a folder.
        public var isCruft: Bool {
            path.hasPrefix("__MACOSX/") || path.contains("/__MACOSX/") || name == ".DS_Store" || name.hasPrefix("._") || name == "Thumbs.db"
        }
    }

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case notAZip
        case damaged(String)
        case tooLarge(String, limit: Int)
        case unsupported(String)

        public var description: String {
            switch self {
            case .notAZip: "it is not a zip file (no zip directory at its end)"
            case .damaged(let what): "the zip file is damaged: \(what)"
            case .tooLarge(let path, let limit): "\(path) unpacks to more than \(limit / 1_048_576) MiB, the most read for one file"
            case .unsupported(let what): "the zip file uses \(what), which is not read"
            }
        }
    }

    public let data: Data
    public let entries: [Entry]

    /// The most one entry may unpack to.
    public static let maxEntrySize = 64 * 1_024 * 1_024
    /// The most entries one archive may list.
    public static let maxEntries = 200_000

    public init(_ data: Data) throws(Failure) {
        self.data = data
        self.entries = try Self.directory(of: data)
    }

    /// Whether the bytes start like a zip file.
    public static func looksLikeZip(_ data: Data) -> Bool {
        data.count >= 4 && data.prefix(4).elementsEqual([0x50, 0x4B, 0x03, 0x04])
            || data.count >= 4 && data.prefix(4).elementsEqual([0x50, 0x4B, 0x05, 0x06])
    }

    /// The entries that are files, without macOS cruft.
    public var files: [Entry] { entries.filter { !$0.isDirectory && !$0.isCruft } }

    /// An entry's bytes, checked and unpacked.
    public func read(_ entry: Entry, limit: Int = ZipArchive.maxEntrySize) throws(Failure) -> Data {
        guard entry.size <= limit else { throw .tooLarge(entry.path, limit: limit) }
        let local = entry.localHeaderOffset
        guard local >= 0, local <= data.count - 30, u32(data, local) == 0x0403_4B50 else {
            throw .damaged("the entry \(entry.path) is not where the directory says")
        }
        let start = local + 30 + Int(u16(data, local + 26)) + Int(u16(data, local + 28))
        guard start <= data.count, entry.compressedSize <= data.count - start else {
            throw .damaged("the entry \(entry.path) runs past the end of the file")
        }
        let base = data.startIndex
        let stored = data.subdata(in: (base + start)..<(base + start + entry.compressedSize))
        let bytes: Data
        switch entry.method {
        case 0: bytes = stored
        case 8:
            do throws(Compression.Failure) {
                bytes = try Compression.inflate(stored, wrapping: .raw, limit: limit)
            } catch {
                switch error {
                case .tooLarge: throw .tooLarge(entry.path, limit: limit)
                case .damaged(let why): throw .damaged("the entry \(entry.path) does not unpack (\(why))")
                }
            }
        default: throw .unsupported("compression method \(entry.method) for \(entry.path)")
        }
        guard bytes.count == entry.size, Compression.crc32(bytes) == entry.crc else {
            throw .damaged("the entry \(entry.path) does not match its checksum")
        }
        return bytes
    }

    /// The entry at `path`, if the archive has it.
    public func entry(_ path: String) -> Entry? { entries.first { $0.path == path } }

    private static func directory(of data: Data) throws(Failure) -> [Entry] {
        guard data.count >= 22 else { throw .notAZip }
        // The end record is in the last 64 KiB + 22 bytes (its comment is at most 65,535 bytes).
        var end = -1
        var position = data.count - 22
        let lowest = max(0, data.count - 22 - 65_535)
        while position >= lowest {
            if u32(data, position) == 0x0605_4B50 { end = position; break }
            position -= 1
        }
        guard end >= 0 else { throw .notAZip }
        var count = Int(u16(data, end + 10))
        var size = Int(u32(data, end + 12))
        var offset = Int(u32(data, end + 16))
        if count == 0xFFFF || size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF {
            // Zip64: the real figures are in the zip64 end record the locator points to.
            guard end >= 20, u32(data, end - 20) == 0x0706_4B50 else { throw .damaged("a zip64 archive without its locator") }
            let record = Int(clamping: u64(data, end - 20 + 8))
            guard record >= 0, record <= data.count - 56, u32(data, record) == 0x0606_4B50 else { throw .damaged("the zip64 end record is missing") }
            count = Int(clamping: u64(data, record + 32))
            size = Int(clamping: u64(data, record + 40))
            offset = Int(clamping: u64(data, record + 48))
        }
        guard count <= maxEntries else { throw .unsupported("\(count) entries (at most \(maxEntries) are read)") }
        guard offset >= 0, size >= 0, offset <= data.count, size <= data.count - offset else {
            throw .damaged("its directory points past the end of the file")
        }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var cursor = offset
        for _ in 0..<count {
            guard cursor + 46 <= data.count, u32(data, cursor) == 0x0201_4B50 else { throw .damaged("its directory ends too soon") }
            let method = u16(data, cursor + 10)
            let crc = u32(data, cursor + 16)
            var compressed = Int(u32(data, cursor + 20))
            var uncompressed = Int(u32(data, cursor + 24))
            let nameLength = Int(u16(data, cursor + 28)), extraLength = Int(u16(data, cursor + 30)), commentLength = Int(u16(data, cursor + 32))
            var local = Int(u32(data, cursor + 42))
            let nameStart = cursor + 46
            guard nameStart + nameLength + extraLength + commentLength <= data.count else { throw .damaged("its directory ends too soon") }
            let base = data.startIndex
            let nameBytes = data.subdata(in: (base + nameStart)..<(base + nameStart + nameLength))
            // Bit 11: UTF-8 names. Older tools wrote CP437; a name that is not UTF-8 is read as Latin-1 rather than refused.
            let path = String(data: nameBytes, encoding: .utf8) ?? String(data: nameBytes, encoding: .isoLatin1) ?? ""
            if extraLength > 0 {
                // Zip64 extra field: the 64-bit sizes and offset, in that order, for each 32-bit field that is all ones.
                var extra = nameStart + nameLength
                let extraEnd = extra + extraLength
                while extra + 4 <= extraEnd {
                    let tag = u16(data, extra), length = Int(u16(data, extra + 2))
                    if tag == 0x0001 {
                        var field = extra + 4
                        if uncompressed == 0xFFFF_FFFF, field + 8 <= extraEnd { uncompressed = Int(clamping: u64(data, field)); field += 8 }
                        if compressed == 0xFFFF_FFFF, field + 8 <= extraEnd { compressed = Int(clamping: u64(data, field)); field += 8 }
                        if local == 0xFFFF_FFFF, field + 8 <= extraEnd { local = Int(clamping: u64(data, field)) }
                    }
                    extra += 4 + length
                }
            }
            guard !path.isEmpty, !path.hasPrefix("/"), !path.split(separator: "/").contains("..") else {
                throw .damaged("an entry has the name \"\(path.prefix(80))\", which points outside the archive")
            }
            entries.append(Entry(path: path, method: method, compressedSize: compressed, size: uncompressed, crc: crc, localHeaderOffset: local))
            cursor = nameStart + nameLength + extraLength + commentLength
        }
        return entries
    }

    // MARK: Writing

    /// A zip of `files` (path, bytes), each stored as it is: the photos in exports are already compressed,
    /// and the recipe entries of a Paprika export are gzip files of their own.
    public static func write(_ files: [(path: String, data: Data)]) -> Data {
        var output = Data()
        var builder = ZipBuilder()
        for file in files { builder.add(path: file.path, data: file.data) { output.append($0) } }
        output.append(builder.end())
        return output
    }
}

/// A zip's records, entry by entry: each entry's local header and bytes go to a sink as they come
/// (memory or a file); only the central directory is kept until `end`.
struct ZipBuilder {
    private var directory = Data()
    private(set) var offset = 0
    private(set) var count = 0

    /// Hands `sink` the entry's local header and bytes (stored), and notes its directory record.
    mutating func add(path: String, data: Data, to sink: (Data) throws -> Void) rethrows {
        let name = Data(path.utf8)
        let crc = Compression.crc32(data)
        var local = Data()
        local.append(le32: 0x0403_4B50); local.append(le16: 20); local.append(le16: 0x0800); local.append(le16: 0)
        local.append(le16: 0); local.append(le16: 0x21) // 1980-01-01 00:00: the same bytes for the same recipes
        local.append(le32: crc); local.append(le32: UInt32(data.count)); local.append(le32: UInt32(data.count))
        local.append(le16: UInt16(name.count)); local.append(le16: 0)
        local.append(name)
        try sink(local)
        try sink(data)
        var central = Data()
        central.append(le32: 0x0201_4B50); central.append(le16: 0x031E); central.append(le16: 20); central.append(le16: 0x0800)
        central.append(le16: 0); central.append(le16: 0); central.append(le16: 0x21)
        central.append(le32: crc); central.append(le32: UInt32(data.count)); central.append(le32: UInt32(data.count))
        central.append(le16: UInt16(name.count)); central.append(le16: 0); central.append(le16: 0); central.append(le16: 0)
        central.append(le16: 0); central.append(le32: 0o100644 << 16); central.append(le32: UInt32(truncatingIfNeeded: offset))
        directory.append(central); directory.append(name)
        offset += local.count + data.count
        count += 1
    }

    /// The central directory and the end record, to write after the last entry.
    func end() -> Data {
        var output = directory
        output.append(le32: 0x0605_4B50); output.append(le16: 0); output.append(le16: 0)
        output.append(le16: UInt16(count)); output.append(le16: UInt16(count))
        output.append(le32: UInt32(directory.count)); output.append(le32: UInt32(truncatingIfNeeded: offset)); output.append(le16: 0)
        return output
    }
}

private func u16(_ data: Data, _ offset: Int) -> UInt16 {
    guard offset >= 0, offset + 2 <= data.count else { return 0 }
    let base = data.startIndex + offset
    return UInt16(data[base]) | UInt16(data[base + 1]) << 8
}

private func u32(_ data: Data, _ offset: Int) -> UInt32 {
    guard offset >= 0, offset + 4 <= data.count else { return 0 }
    return UInt32(u16(data, offset)) | UInt32(u16(data, offset + 2)) << 16
}

private func u64(_ data: Data, _ offset: Int) -> UInt64 {
    guard offset >= 0, offset + 8 <= data.count else { return 0 }
    return UInt64(u32(data, offset)) | UInt64(u32(data, offset + 4)) << 32
}

extension Data {
    mutating func append(le16 value: UInt16) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }
    mutating func append(le32 value: UInt32) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }
}
