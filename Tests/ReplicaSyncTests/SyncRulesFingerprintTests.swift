import Crypto
import Foundation
import RecipeProtocol
@testable import RecipeStore
import TestRandom
import Testing

/// Sync rules are numbered by hand (`SyncRules`): a change to how replicas settle the same records that forgets to
/// raise the number lets two releases sync into states that differ for ever. So the answers of the pure parts of that
/// settling — the field merge, whether a record is live, the catalogue's row ids — to a fixed set of inputs are
/// recorded under the rules they belong to, and a change to any answer asks for a new number.
@Suite("Sync rules: the merge's answers are those recorded for this release's rules")
struct SyncRulesFingerprintTests {
    /// The SHA-256 of `answers()` under each sync rules number it was recorded for.
    static let recorded: [Int: String] = [
        3: "59914a97ddf631f58678b57f298d1a1f433e40783dc2d2c9b0a4563d199986fb",
        4: "74a3fedbe62c78ec003ac55a56ece178b9225b7c23809165ef9a8c292d5f33d6",
        5: "76c9c839c07b61a23d171d2cd3efe209a924078a75b24d7c40c1a04e41436601",
        6: "7d089b8c47ca5c59e3009a9b3907ad042573a2ffb3f984f6fb1e16382781978a",
    ]

    @Test("the field merge, liveness and catalogue row ids answer a fixed set of 4,000 inputs as recorded for this release's sync rules; a change to any answer raises SyncRules.current and records the new fingerprint here")
    func answersAsRecorded() {
        let digest = SHA256.hash(data: Data(Self.answers().utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(Self.recorded[SyncRules.current] == digest, """
            the merge answers differently than recorded for sync rules \(SyncRules.current) (\(digest)): if that is \
            meant, raise SyncRules.current (replicas of the release before must not sync with this one) and record \
            the new fingerprint under it
            """)
    }

    /// The inputs: versions over three replicas and the `restart` entry, stamps that tie and differ in each part,
    /// values of each kind, field names of each merge rule (a plain field, the delete flag, a set element, a kept conflict).
    static func answers() -> String {
        // Draws from the generator's own numbers (not the standard library's `random(in:)`, whose method may change).
        var random = SplitMix(seed: 0x5EC5_0003_F1A6_E7A1)
        func draw(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        func pick<T>(_ items: [T]) -> T { items[draw(items.count)] }
        let writers = ["a", "b", "c", SyncClock.restartEntry]
        let values: [JSONValue] = [.string("x"), .string("y"), .null, .bool(true), .bool(false), .number(1), .array([.string("x")])]
        func clock() -> SyncClock {
            var vv: [String: Int64] = [:]
            for writer in writers where draw(2) == 0 { vv[writer] = Int64(1 + draw(3)) }
            let wall = 1_763_700_000_000 + draw(3), counter = draw(2)
            return SyncClock(vv: vv, stamp: "000\(wall).00000\(counter).\(pick(["a", "b", "c"]))")
        }
        func field() -> SyncField { SyncField(value: pick(values), clock: clock()) }
        func text(_ field: SyncField) -> String {
            "\(field.value.canonicalText) \(field.clock.vv.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")) \(field.clock.stamp)"
        }
        var lines: [String] = []
        let names = ["name", SyncRecord.deletedField, SyncRecord.photoPrefix + "p", SyncRecord.conflictPrefix + "c"]
        for _ in 0..<2_000 {
            let name = pick(names)
            let (a, b) = (field(), field())
            let (merged, losses) = SyncMerge.merge([name: a], [name: b])
            lines.append("merge \(name): \(text(a)) | \(text(b)) → \(merged[name].map(text) ?? "-") lost \(losses.map { text(SyncField(value: $0.value, clock: $0.clock)) })")
        }
        // Since rules 6: the delete flag and a set element with the removals a presence beat before (`_deletions`,
        // `removed:<element>`), what a merge adds to them, and how they settle.
        for _ in 0..<1_000 {
            var (ours, theirs): ([String: SyncField], [String: SyncField]) = ([:], [:])
            let element = SyncRecord.photoPrefix + "p"
            for name in ["name", SyncRecord.deletedField, SyncRecord.deletionsField, element, SyncRecord.removalsPrefix + element] {
                if draw(2) == 0 { ours[name] = field() }
                if draw(2) == 0 { theirs[name] = field() }
            }
            let (merged, _) = SyncMerge.merge(ours, theirs)
            func all(_ states: [String: SyncField]) -> String { states.sorted { $0.key < $1.key }.map { "\($0.key): \(text($0.value))" }.joined(separator: "; ") }
            lines.append("merge \(all(ours)) | \(all(theirs)) → \(all(merged)) live \(SyncMerge.isLive(merged))")
        }
        for _ in 0..<500 {
            var states: [String: SyncField] = [:]
            for name in names + [SyncRecord.deletionsField] where draw(2) == 0 { states[name] = field() }
            lines.append("live \(states.sorted { $0.key < $1.key }.map { "\($0.key): \(text($0.value))" }): \(SyncMerge.isLive(states))")
        }
        let catalogueNames = ["apple", "basil", "onion", "spaghetti", "thyme"]
        let ids = ["0C6E9F5B-2F43-4A43-9A86-6E2C2B7A1D99", "5A3F0001-0000-4000-8000-000000000000"] + catalogueNames.map(SyncLog.derivedIngredientID)
        for _ in 0..<500 {
            var claims: [String: String] = [:]
            for name in catalogueNames where draw(2) == 0 { claims[name] = pick(ids) }
            lines.append("catalogue \(claims.sorted { $0.key < $1.key }) → \(SyncLog.catalogueRowIDs(claims).sorted { $0.key < $1.key })")
        }
        return lines.joined(separator: "\n")
    }
}
