import Foundation
import RecipeProtocol

/// One recipe of an export, as the CLI cut it out of the file or folder: the raw files
/// that make up that recipe (a Paprika `.paprikarecipe`, a Tandoor inner zip, a `.cook`
/// file and its photo…). The worker reads it into a recipe; nothing is interpreted on the
/// way, so a damaged entry fails on its own, in the worker, with a reason.
public struct MigrationEntry: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        public var name: String
        public var data: Data
        public init(name: String, data: Data) {
            self.name = name
            self.data = data
        }
    }

    /// Where the entry is in the export (shown in the report).
    public var label: String
    public var format: MigrationFormat
    public var files: [File]

    public init(label: String, format: MigrationFormat, files: [File]) {
        self.label = label
        self.format = format
        self.files = files
    }

    public var byteCount: Int { files.reduce(0) { $0 + $1.data.count } }

    public func file(named name: String) -> File? { files.first { $0.name == name } }

    // MARK: Travel

    private static let magic = Data("RVME1".utf8)

    /// The entry as one frame: "RVME1", then the label, the format and each file, every
    /// string and byte run preceded by its length (32-bit little-endian).
    public func encoded() -> Data {
        var out = Self.magic
        func put(_ bytes: Data) {
            out.append(le32: UInt32(bytes.count))
            out.append(bytes)
        }
        put(Data(label.utf8))
        put(Data(format.rawValue.utf8))
        out.append(le32: UInt32(files.count))
        for file in files {
            put(Data(file.name.utf8))
            put(file.data)
        }
        return out
    }

    /// An entry read back from `encoded()`; `nil` for anything else.
    public static func decode(_ data: Data) -> MigrationEntry? {
        var cursor = data.startIndex
        func take(_ count: Int) -> Data? {
            guard count >= 0, count <= data.endIndex - cursor else { return nil }
            defer { cursor += count }
            return data[cursor..<(cursor + count)]
        }
        func u32() -> Int? {
            take(4).map { bytes in bytes.reversed().reduce(0) { $0 << 8 | Int($1) } }
        }
        func run() -> Data? { u32().flatMap { take($0) } }
        guard take(magic.count) == magic, let label = run().flatMap({ String(data: $0, encoding: .utf8) }),
              let format = run().flatMap({ String(data: $0, encoding: .utf8) }).flatMap(MigrationFormat.init(rawValue:)),
              let count = u32(), count <= 10_000 else { return nil }
        var files: [File] = []
        for _ in 0..<count {
            guard let name = run().flatMap({ String(data: $0, encoding: .utf8) }), let bytes = run() else { return nil }
            files.append(File(name: name, data: Data(bytes)))
        }
        guard cursor == data.endIndex else { return nil }
        return MigrationEntry(label: label, format: format, files: files)
    }
}
