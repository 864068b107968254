import Foundation
import RecipeModel

/// What kind of record a synced record is.
public enum SyncKind: String, Codable, Sendable, CaseIterable, WireChoice {
    /// A cookbook (key: its id).
    case book
    /// A catalogue entry (key: its normalized name, which is unique).
    case ingredient
    /// A recipe with its ingredient lines, steps, keywords and photo list (key: its id).
    case recipe
    /// A cook-log entry (key: its id).
    case cookLog

    /// Books and catalogue entries are applied before the recipes that point to them, recipes before cook-log entries.
    public var applyOrder: Int {
        switch self {
        case .book: 0
        case .ingredient: 1
        case .recipe: 2
        case .cookLog: 3
        }
    }
}

/// The version of one field: the writes it has seen (a version vector, replica → write number)
/// and the hybrid-logical-clock stamp of the write that set it (`wallms.counter.replica`, ordered as text).
public struct SyncClock: Codable, Sendable, Hashable {
    /// Replica id → the number of that replica's last write this value has seen.
    public var vv: [String: Int64]
    /// `0001763700000000.000000.replica`: wall-clock milliseconds, counter, replica; compared as text.
    public var stamp: String

    public init(vv: [String: Int64], stamp: String) {
        self.vv = vv
        self.stamp = stamp
    }

    /// The clock of the sample collection: below every real write, the same on every replica.
    public static let genesis = SyncClock(vv: [:], stamp: "0000000000000000.000000.starter")

    /// The entry a version re-dated by a clock restart counts in (`SyncLog.restartClockIfAhead`): the same write
    /// with a new stamp, not a write of anyone's — so not part of what a version has seen (`covers`). Of two versions
    /// that have seen the same writes, the one re-dated more often supersedes the other (`SyncMerge`); a write that had
    /// seen the original (an edit, a delete) supersedes every re-dating of it.
    public static let restartEntry = "restart"

    /// The write that made this version: the replica its stamp names, and the number its vector counts for that replica;
    /// nil when the stamp does not read or the vector does not count its writer (the samples', a conflicted copy's).
    public var write: (replica: String, number: Int64)? {
        guard let writer = StampOrder.parts(stamp)?.replica, let number = vv[String(writer)] else { return nil }
        return (String(writer), number)
    }

    /// How many times this version was re-dated by a clock restart.
    public var restarts: Int64 { vv[Self.restartEntry] ?? 0 }

    /// `true` when every write `self` has seen, `other` has seen too.
    public func isCovered(by other: SyncClock) -> Bool { Self.covers(other.vv, self.vv) }

    /// `true` when version vector `a` has seen every write `b` has (a re-dating is not a write: `restartEntry`).
    public static func covers(_ a: [String: Int64], _ b: [String: Int64]) -> Bool {
        b.allSatisfy { replica, count in replica == restartEntry || a[replica, default: 0] >= count }
    }

    /// The writes either has seen.
    public static func join(_ a: [String: Int64], _ b: [String: Int64]) -> [String: Int64] {
        a.merging(b, uniquingKeysWith: max)
    }
}

/// One field's value with its version.
public struct SyncField: Sendable, Hashable {
    public var value: JSONValue
    public var clock: SyncClock

    public init(value: JSONValue, clock: SyncClock) {
        self.value = value
        self.clock = clock
    }
}

/// A record as it travels between replicas: the full current value of every
/// field, and each field's version. Fields that share a version share one entry
/// of `clocks` (a recipe edit changes many fields at once).
public struct SyncRecord: Codable, Sendable, Equatable {
    public var kind: SyncKind
    public var id: String
    /// Its position in the sender's change feed.
    public var seq: Int
    public var fields: [String: JSONValue]
    public var clocks: [SyncClock]
    /// Field name → index in `clocks`.
    public var fieldClocks: [String: Int]

    /// The name of the field that says whether the record was deleted (a tombstone keeps its last values).
    public static let deletedField = "_deleted"
    /// The deletes of the record that a version of it they had not seen beat (since sync rules 6), as one version: its
    /// vector every such delete's joined, its value `true`. The record is live only while some write of it was seen
    /// by no delete (`SyncMerge.isLive`): a delete beaten by a write made elsewhere still counts for the writes it saw.
    public static let deletionsField = "_deletions"
    /// The same for a set element: `removed:<element field>` → `true`, the removals of the element that an add they had
    /// not seen beat (since sync rules 6), its vector theirs joined. Kept only while the element is there: once every
    /// add of it was seen by some removal, the element reads removed, under that version (`SyncMerge.settleRemovals`).
    public static let removalsPrefix = "removed:"

    public init(kind: SyncKind, id: String, seq: Int, fields: [String: JSONValue], clocks: [SyncClock], fieldClocks: [String: Int]) {
        self.kind = kind
        self.id = id
        self.seq = seq
        self.fields = fields
        self.clocks = clocks
        self.fieldClocks = fieldClocks
    }

    /// A record from per-field states; clocks are shared and listed in a fixed order, so equal states encode equally.
    public init(kind: SyncKind, id: String, seq: Int, states: [String: SyncField]) {
        let clocks = Array(Set(states.values.map(\.clock))).sorted { ($0.stamp, Self.vvText($0.vv)) < ($1.stamp, Self.vvText($1.vv)) }
        let index = Dictionary(uniqueKeysWithValues: clocks.enumerated().map { ($1, $0) })
        self.init(kind: kind, id: id, seq: seq, fields: states.mapValues(\.value), clocks: clocks,
                  fieldClocks: states.mapValues { index[$0.clock]! })
    }

    /// Each field with its version (fields without a valid clock index are dropped).
    public var states: [String: SyncField] {
        var states: [String: SyncField] = [:]
        for (name, value) in fields {
            guard let index = fieldClocks[name], clocks.indices.contains(index) else { continue }
            states[name] = SyncField(value: value, clock: clocks[index])
        }
        return states
    }

    /// The SHA-256 of every photo a live record's values name (recipes only). A tombstone names none:
    /// deleting a recipe removes its photos, so its blobs may be collected everywhere.
    public var photoHashes: [String] {
        guard kind == .recipe, isLive else { return [] }
        return fields.compactMap { name, value in
            name.hasPrefix(Self.photoPrefix) ? value.object?["sha256"]?.string : nil
        }.sorted()
    }

    /// A recipe's photos and keywords are sets: each element is a field of its own
    /// (`photo:<photo id>` → `{sha256, byteCount, mediaType, position}`, `keyword:<text>` → position),
    /// `null` once removed. Concurrent adds on two replicas keep both; a removal wins only over the adds it had seen.
    public static let photoPrefix = "photo:"
    public static let keywordPrefix = "keyword:"
    /// The fields of a conflict kept on a book, catalogue entry or cook-log entry: `conflict:<id>` →
    /// `{field, value, state}`; and, on a conflicted copy, `conflictOf` → `{recipe, fields}`. They live
    /// in the sync record only (no table holds them) and travel with it, so every replica lists the same conflicts.
    public static let conflictPrefix = "conflict:"
    public static let conflictOfField = "conflictOf"

    /// Whether `name` is one element of a set field (merged add-wins, never a conflict).
    public static func isElementField(_ name: String) -> Bool {
        name.hasPrefix(photoPrefix) || name.hasPrefix(keywordPrefix)
    }

    /// Whether `name` is kept in the sync record only (no table column holds it).
    public static func isRecordOnlyField(_ name: String) -> Bool {
        name.hasPrefix(conflictPrefix) || name == conflictOfField || name == deletionsField || name.hasPrefix(removalsPrefix)
    }

    /// Whether the record exists (see `SyncMerge.isLive`).
    public var isLive: Bool { SyncMerge.isLive(states) }

    static func vvText(_ vv: [String: Int64]) -> String {
        vv.keys.sorted().map { "\($0)=\(vv[$0]!)" }.joined(separator: ",")
    }
}

extension JSONValue {
    /// The value with every text in it composed (NFC), keys too.
    public var composed: JSONValue {
        switch self {
        case .string(let text): .string(text.composed)
        case .array(let items): .array(items.map(\.composed))
        case .object(let members): .object(SyncRecord.composedKeys(members.mapValues(\.composed)))
        default: self
        }
    }
}

extension SyncRecord {
    /// The record with its id, field names (a keyword's or alias's text is in its field's name) and values composed
    /// (NFC), as every replica stores text: a record written in another form by an older or foreign peer then reads
    /// as the replicas' own. Of names that compose to one, the one first by its bytes is kept.
    public var composed: SyncRecord {
        SyncRecord(kind: kind, id: id.composed, seq: seq, fields: Self.composedKeys(fields.mapValues(\.composed)),
                   clocks: clocks, fieldClocks: Self.composedKeys(fieldClocks))
    }

    public static func composedKeys<Value>(_ members: [String: Value]) -> [String: Value] {
        guard !members.keys.allSatisfy({ $0.utf8.allSatisfy { $0 < 0x80 } }) else { return members }
        var result: [String: Value] = [:]
        var chosen: [String: [UInt8]] = [:]
        for (key, value) in members {
            let name = key.composed
            let bytes = Array(key.utf8)
            if let kept = chosen[name], !bytes.lexicographicallyPrecedes(kept) { continue }
            chosen[name] = bytes
            result[name] = value
        }
        return result
    }
}

extension JSONValue {
    /// Equal to the byte: Swift's `==` calls text in its two Unicode forms equal ("é" and "e" with an accent), which
    /// the tables, exports and peers do not.
    public func isIdentical(to other: JSONValue) -> Bool {
        guard self == other else { return false }
        switch (self, other) {
        case let (.string(a), .string(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.array(a), .array(b)): return zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case let (.object(a), .object(b)):
            let (left, right) = (a.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }, b.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
            return zip(left, right).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && $0.value.isIdentical(to: $1.value) }
        default: return true
        }
    }
}
