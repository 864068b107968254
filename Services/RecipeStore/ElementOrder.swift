import Crypto
import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// The order of a recipe's photos and keywords, which sync as sets of elements each carrying a position.
enum ElementOrder {
    static func position(_ value: JSONValue) -> Double {
        value.number ?? value.object?["position"]?.number ?? 0
    }

    /// The present elements under `prefix`, in the order shown: position, then the stamp of the write that
    /// placed them (two replicas adding at one position show both, the earlier first), then the key.
    static func ordered(_ states: [String: SyncField], prefix: String) -> [(key: String, value: JSONValue)] {
        states.filter { $0.key.hasPrefix(prefix) && $0.value.value != .null }
            .sorted { a, b in
                let (pa, pb) = (position(a.value.value), position(b.value.value))
                if pa != pb { return pa < pb }
                if a.value.clock.stamp != b.value.clock.stamp { return StampOrder.precedes(a.value.clock.stamp, b.value.clock.stamp) }
                return a.key < b.key
            }
            .map { ($0.key, $0.value.value) }
    }

    /// Positions for the elements `current` (keys, in the order the tables show): elements whose
    /// order did not change keep their stored positions, new ones fit between their neighbours, and
    /// when that cannot give the shown order every element is numbered afresh.
    static func positions(current: [String], stored: [String: SyncField], prefix: String) -> [String: Double] {
        let storedOrder = ordered(stored, prefix: prefix)
        var storedPosition: [String: Double] = [:]
        for (key, value) in storedOrder { storedPosition[key] = position(value) }
        let renumbered = Dictionary(current.enumerated().map { ($1, Double($0)) }, uniquingKeysWith: { first, _ in first })
        let currentSet = Set(current)
        guard current.filter({ storedPosition[$0] != nil }) == storedOrder.map(\.key).filter(currentSet.contains) else { return renumbered }
        var result: [String: Double] = [:]
        for (index, key) in current.enumerated() {
            if let kept = storedPosition[key] {
                result[key] = kept
                continue
            }
            let previous = index > 0 ? result[current[index - 1]] : nil
            let next = current[(index + 1)...].lazy.compactMap { storedPosition[$0] }.first
            switch (previous, next) {
            case (nil, nil): result[key] = Double(index)
            case (let p?, nil): result[key] = p + 1
            case (nil, let n?): result[key] = n - 1
            case (let p?, let n?): result[key] = (p + n) / 2
            }
        }
        // New elements get the newest stamp, so at an equal position they sort after the old ones, by key among themselves.
        let stamps = stored.mapValues(\.clock.stamp)
        let shown = current.sorted { a, b in
            let (pa, pb) = (result[a]!, result[b]!)
            if pa != pb { return pa < pb }
            switch (storedPosition[a] == nil, storedPosition[b] == nil) {
            case (false, true): return true
            case (true, false): return false
            case (false, false) where stamps[a] != stamps[b]: return StampOrder.precedes(stamps[a] ?? "", stamps[b] ?? "")
            default: return a < b
            }
        }
        return shown == current ? result : renumbered
    }
}
