import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// How search results are ranked: FTS5's own `bm25`, computed the same way to the last bit, with what it reads
/// from the database for every match kept between searches.
///
/// For each matching row `bm25` reads the row's length in tokens, a lookup in the index's `docsize` table that
/// is more than half of its time (the two most common words of 100,000 recipes: ~50,000 lookups, ~40 ms of ~70),
/// and before the first row it counts, for each word of the search, every row that has it (a pass over the
/// word's whole list per search). `recipe_rank` reads both as `bm25` does the first time and keeps them.
///
/// - A row's length never changes while its rowid is in the index (a recipe changed is deleted and added again),
///   and a rowid is never given twice (`SearchIndex.nextRowid`): the lengths are kept across every change.
/// - The counts change with any change to the index. They are kept for the index as its structure record
///   (`recipes_fts_data` row 10) was when they were counted, read in the search's own read transaction: every write
///   to the index rewrites that record, with a count of segments written that only grows, so an unchanged record
///   means an unchanged index. A write from anywhere (a sync, another process) is seen.
final class SearchRanking: Sendable {
    /// What earlier searches left.
    struct Kept {
        /// Each row's length in tokens plus one, by its rowid; 0 for a row not read yet. Nil while a search holds
        /// them (one beside it reads its own).
        var lengths: [Int32]? = []
        /// The index's structure record when `idf` was counted.
        var structure: [UInt8] = []
        /// Each phrase's inverse document frequency, by the search text they were counted for.
        var idf: [String: [Double]] = [:]
        /// Counts `forget`: a search that began before one does not put back what it read.
        var generation = 0
    }

    private let kept = Mutex(Kept())

    /// The most rowids whose lengths are kept (16 MiB); rows past it are read each time, as `bm25` reads them.
    static let maxKeptRowid = 1 << 22
    /// The most search texts whose counts are kept at once.
    static let maxKeptTexts = 256

    /// Runs `work` with the query `recipe_rank` reads through for a search of `match` (an FTS5 expression), on
    /// `db` inside a read transaction; `work` binds it (`RankQuery.bind`) where its statement takes it.
    func ranking<T>(_ match: String, in db: Database, _ work: (RankQuery) throws -> T) throws -> T {
        let structure = try [UInt8](Data.fetchOne(db, sql: "SELECT block FROM recipes_fts_data WHERE id = 10") ?? Data())
        let query = RankQuery()
        let generation = kept.withLock { kept in
            query.lengths = kept.lengths ?? []
            kept.lengths = nil
            if kept.structure == structure { query.idf = kept.idf[match] }
            return kept.generation
        }
        defer { keep(query, structure: structure, match: match, generation: generation) }
        return try withExtendedLifetime(query) { try work(query) }
    }

    /// What is kept now.
    var state: Kept { kept.withLock { $0 } }

    /// Drops what was kept: for a database whose content was replaced whole (a snapshot installed), whose rowids
    /// are another index's.
    func forget() {
        kept.withLock { kept in kept = Kept(generation: kept.generation + 1) }
    }

    /// Puts back the lengths the search read and the counts it made, unless the database was replaced meanwhile.
    private func keep(_ query: RankQuery, structure: [UInt8], match: String, generation: Int) {
        let lengths = query.lengths
        kept.withLock { kept in
            guard kept.generation == generation else { return }
            if (kept.lengths?.count ?? -1) < lengths.count { kept.lengths = lengths }
            guard let counted = query.idf else { return }
            if kept.structure != structure || kept.idf.count >= Self.maxKeptTexts {
                kept.structure = structure
                kept.idf = [:]
            }
            kept.idf[match] = counted
        }
    }

    /// Makes `recipe_rank` known on a connection (each of the pool's, as it opens).
    static func register(on db: Database) throws {
        let api = FTS5.api(db)
        let code = api.pointee.xCreateFunction(UnsafeMutablePointer(mutating: api), "recipe_rank", nil, rankFunction, nil)
        guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "search ranking could not be set up") }
    }
}

/// One search's state for `recipe_rank`, used on the thread that steps the search.
final class RankQuery {
    /// The type `sqlite3_bind_pointer` gives the query under, so no other pointer is taken for one.
    static var pointerType: UnsafePointer<CChar> {
        UnsafeRawPointer(("recipevault_rank_query" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// Each row's length in tokens plus one, by rowid (see `SearchRanking.Kept`); read and grown for every
    /// matching row, on one thread.
    @exclusivity(unchecked) var lengths: [Int32] = []
    /// Each phrase's inverse document frequency, kept from an earlier search of the same text or counted by this one.
    var idf: [Double]?
    private struct Term { var idf: Double; var frequency: Double }
    /// A row scored: the lower score is the better (bm25's sign), the lower rowid first among equal scores.
    struct Ranked: Comparable {
        var score: Double
        var rowid: Int64
        static func < (a: Ranked, b: Ranked) -> Bool { (a.score, a.rowid) < (b.score, b.rowid) }
    }
    /// How many of the best rows `ranked` keeps (none unless set).
    var limit = 0
    // Used for every matching row, on one thread: no run-time exclusivity checks (nor reference counting, for the
    // buffers).
    @exclusivity(unchecked) private var best: [Ranked] = []
    @exclusivity(unchecked) private var prepared = false
    @exclusivity(unchecked) private var terms = UnsafeMutableBufferPointer<Term>(start: nil, count: 0)
    @exclusivity(unchecked) private var weights = UnsafeBufferPointer<Double>(start: nil, count: 0)
    @exclusivity(unchecked) private var averageLength = 0.0

    /// Binds this query to parameter `index` of `statement` (as a pointer only `recipe_rank` takes). The query
    /// must outlive the statement's steps; `SearchRanking.ranking` keeps it for its `work`.
    func bind(to statement: SQLiteStatement, at index: Int32) {
        sqlite3_bind_pointer(statement, index, Unmanaged.passUnretained(self).toOpaque(), Self.pointerType, nil)
    }

    /// The row's length in tokens: kept, or read (as `bm25` reads it) and kept.
    private func length(of rowid: Int64, api: UnsafePointer<Fts5ExtensionApi>, context: OpaquePointer) -> Int32? {
        if rowid >= 0, rowid < lengths.count, lengths[Int(rowid)] > 0 { return lengths[Int(rowid)] - 1 }
        var tokens: Int32 = 0
        guard api.pointee.xColumnSize(context, -1, &tokens) == SQLITE_OK else { return nil }
        if rowid >= 0, rowid < SearchRanking.maxKeptRowid {
            if rowid >= lengths.count {
                let grown = min(max(Int(rowid) + 1, lengths.count * 2, 1_024), SearchRanking.maxKeptRowid)
                lengths.append(contentsOf: repeatElement(0, count: grown - lengths.count))
            }
            lengths[Int(rowid)] = tokens + 1
        }
        return tokens
    }

    /// bm25's score of the row `context` is on (negative: the best sorts first), and SQLite's result code.
    func score(api: UnsafePointer<Fts5ExtensionApi>, context: OpaquePointer,
               weights arguments: UnsafeBufferPointer<OpaquePointer?>) -> (Double, Int32) {
        if !prepared {
            let code = prepare(api: api, context: context, weights: arguments)
            guard code == SQLITE_OK else { return (0, code) }
        }
        let phrases = terms.count
        // How often each phrase occurs in the row, each occurrence weighted by its column: bm25 adds the same
        // weights in the same order (by its list of all phrases' instances, in which each phrase's come in order).
        for phrase in 0..<phrases {
            var iterator = Fts5PhraseIter()
            var column: Int32 = 0, offset: Int32 = 0, sum = 0.0
            let code = api.pointee.xPhraseFirst(context, Int32(phrase), &iterator, &column, &offset)
            guard code == SQLITE_OK else { return (0, code) }
            while column >= 0 {
                sum += Int(column) < weights.count ? weights[Int(column)] : 1.0
                api.pointee.xPhraseNext(context, &iterator, &column, &offset)
            }
            terms[phrase].frequency = sum
        }
        let rowid = api.pointee.xRowid(context)
        guard let tokens = length(of: rowid, api: api, context: context) else { return (0, SQLITE_ERROR) }
        // bm25's sum, term by term as it writes it.
        let k1 = 1.2, b = 0.75
        let length = Double(tokens)
        var score = 0.0
        for phrase in 0..<phrases {
            let (idf, frequency) = (terms[phrase].idf, terms[phrase].frequency)
            score += idf * ((frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + b * length / averageLength)))
        }
        consider(-1.0 * score, rowid)
        return (-1.0 * score, SQLITE_OK)
    }

    /// Keeps the row if it is among the best `limit` so far (the lower score first, then the lower rowid).
    private func consider(_ score: Double, _ rowid: Int64) {
        guard limit > 0 else { return }
        let entry = Ranked(score: score, rowid: rowid)
        if best.count < limit {
            // A heap with the worst kept on top: a row better than it replaces it.
            best.append(entry)
            var child = best.count - 1
            while child > 0, best[(child - 1) / 2] < best[child] {
                best.swapAt(child, (child - 1) / 2)
                child = (child - 1) / 2
            }
        } else if entry < best[0] {
            best[0] = entry
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var worst = parent
                if left < best.count, best[worst] < best[left] { worst = left }
                if right < best.count, best[worst] < best[right] { worst = right }
                guard worst != parent else { break }
                best.swapAt(parent, worst)
                parent = worst
            }
        }
    }

    /// The best rows scored, best first; with `limit` set before the statement ran.
    var ranked: [Ranked] { best.sorted() }

    /// The average row length and each phrase's inverse document frequency (kept, or counted as `bm25` counts
    /// them), and the column weights.
    private func prepare(api: UnsafePointer<Fts5ExtensionApi>, context: OpaquePointer, weights arguments: UnsafeBufferPointer<OpaquePointer?>) -> Int32 {
        weights.deallocate()
        weights = UnsafeBufferPointer(Self.copy(arguments.map { sqlite3_value_double($0) }))
        let phrases = Int(api.pointee.xPhraseCount(context))
        var rows: Int64 = 0, tokens: Int64 = 0
        var code = api.pointee.xRowCount(context, &rows)
        if code == SQLITE_OK { code = api.pointee.xColumnTotalSize(context, -1, &tokens) }
        guard code == SQLITE_OK else { return code }
        averageLength = Double(tokens) / Double(rows)
        if idf?.count != phrases {
            var counted: [Double] = []
            for phrase in 0..<phrases {
                var hits: Int64 = 0
                code = api.pointee.xQueryPhrase(context, Int32(phrase), &hits) { _, _, hits in
                    hits?.assumingMemoryBound(to: Int64.self).pointee += 1
                    return SQLITE_OK
                }
                guard code == SQLITE_OK else { return code }
                // bm25's IDF, with its floor for a phrase in more than half the rows.
                var value = log((Double(rows - hits) + 0.5) / (Double(hits) + 0.5))
                if value <= 0.0 { value = 1e-6 }
                counted.append(value)
            }
            idf = counted
        }
        terms.deallocate()
        terms = Self.copy((idf ?? []).map { Term(idf: $0, frequency: 0) })
        prepared = true
        return SQLITE_OK
    }

    private static func copy<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = buffer.initialize(from: elements)
        return buffer
    }

    deinit {
        weights.deallocate()
        terms.deallocate()
    }
}

/// `recipe_rank(recipes_fts, query, weight...)`: `bm25(recipes_fts, weight...)`, reading through `query`.
private let rankFunction: fts5_extension_function = { api, context, result, count, values in
    guard let api, let context, let result, let values, count >= 1,
          let pointer = sqlite3_value_pointer(values[0], RankQuery.pointerType) else {
        if let result { sqlite3_result_error(result, "recipe_rank needs the search's query", -1) }
        return
    }
    // The query is held by the search for as long as its statement steps: no reference counting per row.
    Unmanaged<RankQuery>.fromOpaque(pointer)._withUnsafeGuaranteedRef { query in
        let (score, code) = query.score(api: api, context: context, weights: UnsafeBufferPointer(start: values + 1, count: Int(count) - 1))
        if code == SQLITE_OK { sqlite3_result_double(result, score) } else { sqlite3_result_error_code(result, code) }
    }
}
