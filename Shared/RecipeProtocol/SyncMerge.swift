import Foundation

/// The order of hybrid-logical-clock stamps: wall-clock milliseconds, then the counter, as
/// numbers (a short counter is not a small one), then the replica id; a stamp that does not
/// parse sorts below every one that does, by its text.
public enum StampOrder {
    /// A stamp's wall clock, counter and replica: the text before the first dot, between the first two, and the
    /// rest. `nil` when there are fewer than two dots or a number does not read as an `Int64`.
    public static func parts(_ stamp: String) -> (wall: Int64, counter: Int64, replica: Substring)? {
        // Every merge and every write reads stamps: an ASCII stamp (all that replicas make) is read by its bytes,
        // without the array of pieces `split` builds. Any other text is split by characters, as before.
        let bytes = stamp.utf8
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return splitParts(stamp) }
        let dot = UInt8(ascii: ".")
        guard let first = bytes.firstIndex(of: dot) else { return nil }
        let counterStart = bytes.index(after: first)
        guard let second = bytes[counterStart...].firstIndex(of: dot),
              let wall = number(stamp[..<first]), let counter = number(stamp[counterStart..<second]) else { return nil }
        return (wall, counter, stamp[bytes.index(after: second)...])
    }

    private static func splitParts(_ stamp: String) -> (wall: Int64, counter: Int64, replica: Substring)? {
        let pieces = stamp.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, let wall = Int64(pieces[0]), let counter = Int64(pieces[1]) else { return nil }
        return (wall, counter, pieces[2])
    }

    /// `Int64(text)`, with 1–18 plain digits (which cannot overflow) added up directly.
    private static func number(_ text: Substring) -> Int64? {
        let digits = text.utf8
        guard (1...18).contains(digits.count) else { return Int64(text) }
        var value: Int64 = 0
        for byte in digits {
            guard (48...57).contains(byte) else { return Int64(text) }
            value = value * 10 + Int64(byte - 48)
        }
        return value
    }

    /// `true` when `a` sorts strictly before `b`.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        switch (parts(a), parts(b)) {
        case let (x?, y?): return (x.wall, x.counter, x.replica) < (y.wall, y.counter, y.replica)
        case (nil, _?): return true
        case (_?, nil): return false
        case (nil, nil): return a < b
        }
    }
}

/// Merging two versions of a record, field by field. Pure functions: every replica
/// merging the same two versions gets the same result, in either order. Every replica must merge by the same
/// functions: a change here that gives any two versions another result raises `SyncRules.current`, so replicas of
/// the release before it refuse to sync with this one instead of settling the same changes differently.
public enum SyncMerge {
    /// A value that lost to a concurrent write of the same field.
    public struct Loss: Sendable, Hashable {
        public var field: String
        public var value: JSONValue
        public var clock: SyncClock
    }

    /// Merges `local` and `remote`. For each field: a version that has seen the
    /// other's write wins; of two that have seen the same writes, the one a clock restart re-dated more often
    /// (`SyncClock.restartEntry`), unless they are two writes of one number (`oneNumberTwoWrites`: concurrent); versions
    /// that have not seen each other are concurrent: a set element or record
    /// present beats one removed and stays as it was written, otherwise the higher stamp wins (ties: the larger value
    /// text) under both versions joined. The losing value of a concurrent pair is reported when it differs from the winner.
    public static func merge(_ local: [String: SyncField], _ remote: [String: SyncField]) -> (merged: [String: SyncField], losses: [Loss]) {
        var merged = local
        var losses: [Loss] = []
        var beaten: [(context: String, removal: SyncField)] = []
        for (name, theirs) in remote {
            guard let ours = local[name] else {
                merged[name] = theirs
                continue
            }
            let (field, loss) = mergeField(name, ours, theirs)
            merged[name] = field
            if let loss { losses.append(loss) }
            // A delete (or a set element's removal) that a version it had not seen beats — a re-creation, a record made
            // under the same id elsewhere, an add of the same photo or keyword elsewhere — is kept for the writes it had
            // seen: joined into `_deletions` (`removed:<element>`). Dropped, a later delete or removal by someone who had
            // seen only the version that won, with the writes of the dropped one merged in, left the record or element there.
            guard let removal = beatenRemoval(name, ours, theirs) else { continue }
            beaten.append((SyncRecord.isElementField(name) ? SyncRecord.removalsPrefix + name : SyncRecord.deletionsField, removal))
        }
        // Joined once both sides' kept removals are merged (above, as fields of their own).
        for (context, removal) in beaten {
            merged[context] = merged[context].map { mergeField(context, $0, removal).0 } ?? removal
        }
        settleRemovals(&merged)
        return (merged, losses)
    }

    /// The removal among two versions of the delete flag or of a set element that have not seen each other, one present
    /// and one removed, as a version of the removals kept beside it: the present one wins (`mergeField`), and the removal
    /// counts on there. Two versions that have seen the same writes (one number given to two writes) are not such a pair:
    /// the removal had not seen the other's write, though its vector says so.
    /// Nil for any other field.
    static func beatenRemoval(_ name: String, _ a: SyncField, _ b: SyncField) -> SyncField? {
        let (element, deleteFlag) = (SyncRecord.isElementField(name), name == SyncRecord.deletedField)
        guard element || deleteFlag, !a.clock.isCovered(by: b.clock), !b.clock.isCovered(by: a.clock) else { return nil }
        let (aThere, bThere) = (presence(a, element: element, deleteFlag: deleteFlag), presence(b, element: element, deleteFlag: deleteFlag))
        guard aThere != bThere else { return nil }
        return SyncField(value: .bool(true), clock: (aThere ? b : a).clock)
    }

    /// A set element's kept removals (`removed:<element>`) stand only beside the element while it is there and some
    /// add of it was seen by none of them: an element removed, or every add of it seen by one of them, reads removed
    /// under its removal joined with them, and they go (the version two such removals give when they meet directly).
    /// Every merge and every local write settles so, whatever order the versions came in.
    public static func settleRemovals(_ states: inout [String: SyncField]) {
        for (name, kept) in states where name.hasPrefix(SyncRecord.removalsPrefix) {
            let element = String(name.dropFirst(SyncRecord.removalsPrefix.count))
            states[name] = nil
            let removal = SyncField(value: .null, clock: kept.clock)
            guard let field = states[element] else { continue }
            if field.value != .null && !SyncClock.covers(kept.clock.vv, field.clock.vv) {
                states[name] = kept // an add none of them had seen: it stays, and they with it
            } else {
                states[element] = mergeField(element, field, removal).0
            }
        }
    }

    static func mergeField(_ name: String, _ a: SyncField, _ b: SyncField) -> (SyncField, Loss?) {
        if a == b { return (a, nil) } // one version met again (what every rule below gives it, without comparing texts)
        let aSeesB = b.clock.isCovered(by: a.clock)
        let bSeesA = a.clock.isCovered(by: b.clock)
        let element = SyncRecord.isElementField(name)
        let deleteFlag = name == SyncRecord.deletedField
        if aSeesB && bSeesA {
            // The same writes seen: a re-dated version supersedes the one it re-dated (the same write and value under
            // a new stamp). Two writes of one replica under one number are concurrent, as they were made.
            if !oneNumberTwoWrites(a, b) {
                if a.clock.restarts != b.clock.restarts { return (a.clock.restarts > b.clock.restarts ? a : b, nil) }
                return (ranksHigher(a, b, element: element, deleteFlag: deleteFlag) ? a : b, nil)
            }
        } else if aSeesB {
            return (a, nil)
        } else if bSeesA {
            return (b, nil)
        }
        let (winner, loser) = ranksHigher(a, b, element: element, deleteFlag: deleteFlag) ? (a, b) : (b, a)
        // Present against removed (a set element, the delete flag): the present side wins as it was written. Joined with
        // the removal's version it would claim to have seen a removal nobody who wrote it saw, and a later removal by a
        // person who had seen every write, but not that other removal, would read as concurrent and lose again (seed
        // 14825737107347041799: a cook-log entry deleted after its re-creation stayed for ever).
        if presence(winner, element: element, deleteFlag: deleteFlag) != presence(loser, element: element, deleteFlag: deleteFlag) {
            return (winner, nil)
        }
        let field = SyncField(value: winner.value, clock: SyncClock(vv: SyncClock.join(a.clock.vv, b.clock.vv), stamp: winner.clock.stamp))
        // A set element, the delete flag and conflict bookkeeping never make a conflict of their own.
        let quiet = element || name == SyncRecord.deletedField || SyncRecord.isRecordOnlyField(name)
        let lost = winner.value == loser.value || quiet ? nil : Loss(field: name, value: loser.value, clock: loser.clock)
        return (field, lost)
    }

    /// Whether `a` and `b`, which have seen the same writes, are two writes one replica made under one number: a
    /// replica rolled back (a snapshot put back) that wrote again before a peer told it, whose new write reached the
    /// merging replica by a third one. Both name one writer (their stamps' replica) that counts in their vectors, at
    /// different stamps, with different values. A version no write made is never one: a conflicted copy's fields,
    /// stamped alike by every replica that makes it, with no count of their writer (their values follow the record the
    /// copy was made from, and settle by rank), nor the starter samples'.
    static func oneNumberTwoWrites(_ a: SyncField, _ b: SyncField) -> Bool {
        guard a.value != b.value, a.clock.stamp != b.clock.stamp,
              let writer = StampOrder.parts(a.clock.stamp)?.replica, StampOrder.parts(b.clock.stamp)?.replica == writer
        else { return false }
        return a.clock.vv[String(writer), default: 0] > 0
    }

    /// Whether a set element or the record is there by this version (always, for other fields).
    static func presence(_ field: SyncField, element: Bool, deleteFlag: Bool) -> Bool {
        if element { return field.value != .null }
        if deleteFlag { return field.value != .bool(true) }
        return true
    }

    /// The deterministic order between two versions: for a set element, present beats removed
    /// (an add the removal had not seen survives it), and so for the record itself: a re-creation the delete
    /// had not seen survives it (by the stamp, the delete won when its replica's clock ran ahead, and its
    /// version, joined with the re-creation's, then read as having seen every field); then the stamp, then the
    /// value text.
    static func ranksHigher(_ a: SyncField, _ b: SyncField, element: Bool = false, deleteFlag: Bool = false) -> Bool {
        let (aThere, bThere) = (presence(a, element: element, deleteFlag: deleteFlag), presence(b, element: element, deleteFlag: deleteFlag))
        if aThere != bThere { return aThere }
        if a.clock.stamp != b.clock.stamp { return StampOrder.precedes(b.clock.stamp, a.clock.stamp) }
        return a.value.canonicalText >= b.value.canonicalText
    }

    /// A record exists unless every write of it was seen by some delete of it — the one its flag holds, or one that a
    /// version it had not seen beat (`_deletions`): an edit, or a making, that no deleting side had seen brings it back.
    /// (Each delete removes the writes it saw: the record made on two replicas under one id and deleted on each by
    /// someone who saw only that one stays deleted, whichever delete a merge met first.)
    /// Conflict bookkeeping is not an edit: a conflict dismissed while another replica
    /// deleted the record leaves it deleted.
    public static func isLive(_ states: [String: SyncField]) -> Bool {
        guard let deleted = states[SyncRecord.deletedField] else { return true }
        let deletions = states[SyncRecord.deletionsField]
        let seen: [String: Int64]
        if deleted.value == .bool(true) {
            seen = deletions.map { SyncClock.join(deleted.clock.vv, $0.clock.vv) } ?? deleted.clock.vv
        } else {
            // There by a making (or a making again) that no delete had seen.
            guard let deletions, SyncClock.covers(deletions.clock.vv, deleted.clock.vv) else { return true }
            seen = deletions.clock.vv
        }
        return states.contains { name, field in
            name != SyncRecord.deletedField && !SyncRecord.isRecordOnlyField(name) && !SyncClock.covers(seen, field.clock.vv)
        }
    }
}
