import Foundation
import GRDB
import GRDBSQLite
import RecipeProtocol

/// The row a stepped statement is on, read by column position straight from SQLite.
///
/// For the reads that run on every request (a recipe and its child rows): GRDB's `Row` copies or wraps
/// each row and turns each column into a `DatabaseValue` through generic code, which cost more than
/// SQLite's own work for a recipe read. Valid only inside the `forEachRow` call that gives it.
struct StatementRow {
    let statement: SQLiteStatement

    /// The column at `index` as `Value` (SQLite's conversions, as GRDB's `Row` makes them); `nil` for NULL.
    subscript<Value: StatementColumnConvertible>(_ index: Int32) -> Value? {
        Value.fromStatement(statement, atUncheckedIndex: index)
    }

    /// The column at `index` as `Value`, or `fallback` for NULL.
    subscript<Value: StatementColumnConvertible>(_ index: Int32, or fallback: Value) -> Value {
        Value.fromStatement(statement, atUncheckedIndex: index) ?? fallback
    }

    /// The column at a named position (a case of an enum of the statement's columns, its raw value the position).
    subscript<Column: RawRepresentable, Value: StatementColumnConvertible>(_ column: Column) -> Value? where Column.RawValue == Int32 {
        self[column.rawValue]
    }

    /// The column at a named position, or `fallback` for NULL.
    subscript<Column: RawRepresentable, Value: StatementColumnConvertible>(_ column: Column, or fallback: Value) -> Value
    where Column.RawValue == Int32 {
        self[column.rawValue, or: fallback]
    }

    /// The column's text when SQLite holds it as text; `nil` for any other storage class (as GRDB's
    /// `String` conversion of a `DatabaseValue` gives), where the subscript would convert a number.
    func storedText(_ index: Int32) -> String? {
        sqlite3_column_type(statement, index) == SQLITE_TEXT ? String(cString: sqlite3_column_text(statement, index)) : nil
    }

    /// The column at `index` as GRDB's `DatabaseValue` (for a value kept whatever its storage class, as a list cursor's key).
    func databaseValue(_ index: Int32) -> DatabaseValue {
        DatabaseValue(sqliteStatement: statement, index: index)
    }

    /// `uuid(_:)` at a named position.
    func uuid<Column: RawRepresentable>(_ column: Column) -> UUID? where Column.RawValue == Int32 {
        uuid(column.rawValue)
    }

    /// A text column holding a UUID, read from its bytes; `nil` for NULL or text that is not a UUID.
    func uuid(_ index: Int32) -> UUID? {
        guard let text = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return UUIDText.uuid(utf8: UnsafeBufferPointer(start: text, count: count))
    }
}

extension Database {
    /// Runs the (cached) `sql` with `arguments` and hands `body` each row it returns, in order; `bind`, when given,
    /// binds what `arguments` cannot hold (a search's rank query) after them.
    func forEachRow(_ sql: String, _ arguments: StatementArguments, bind: ((SQLiteStatement) -> Void)? = nil,
                    _ body: (StatementRow) throws -> Void) throws {
        try step(sql, arguments, bind: bind) { row in
            try body(row)
            return true
        }
    }

    /// The first row `sql` returns, made into a value by `body`; `nil` when it returns none.
    func firstRow<T>(_ sql: String, _ arguments: StatementArguments, _ body: (StatementRow) throws -> T) throws -> T? {
        var first: T?
        try step(sql, arguments) { row in
            first = try body(row)
            return false
        }
        return first
    }

    /// Steps the statement while `body` asks for the next row, then resets it.
    private func step(_ sql: String, _ arguments: StatementArguments, bind: ((SQLiteStatement) -> Void)? = nil,
                      _ body: (StatementRow) throws -> Bool) throws {
        let statement = try cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        let raw = statement.sqliteStatement
        bind?(raw)
        defer {
            sqlite3_reset(raw)
            if bind != nil { sqlite3_clear_bindings(raw) } // nothing it bound outlives this run
        }
        while true {
            let code = sqlite3_step(raw)
            switch code {
            case SQLITE_ROW:
                guard try body(StatementRow(statement: raw)) else { return }
            case SQLITE_DONE:
                return
            default:
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: lastErrorMessage, sql: sql, arguments: arguments)
            }
        }
    }
}
