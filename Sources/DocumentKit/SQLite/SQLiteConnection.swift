import CSQLite
import Foundation

/// An open SQLite connection, used inside a ``SQLiteDatabase`` closure: runs statements,
/// prepared once and cached by their text.
///
/// For example:
///
/// ```swift
/// try database.transaction { connection in
///     try connection.execute("DELETE FROM items WHERE path = ?", [.text(path)])
///     return connection.changes
/// }
/// ```
package final class SQLiteConnection {
    let handle: OpaquePointer
    /// The database file, for errors.
    package let url: URL
    private var statements: [String: SQLiteStatement] = [:]

    init(handle: OpaquePointer, url: URL) {
        self.handle = handle
        self.url = url
    }

    deinit {
        statements.removeAll()  // finalised before the close
        sqlite3_close_v2(handle)
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    package var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The row ID of the last row inserted.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs one statement with `bindings`, stepping it to the end and ignoring any rows.
    ///
    /// - Throws: ``SQLiteError`` naming the statement.
    package func execute(_ sql: String, _ bindings: [SQLiteValue] = []) throws {
        try query(sql, bindings) { _ in }
    }

    /// Runs several statements separated by semicolons, without bindings: for schemas.
    package func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard result == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            throw SQLiteError(
                url: url, operation: "run \(Self.abbreviated(sql))", code: result, message: text)
        }
    }

    /// Runs one statement with `bindings`, calling `row` for each row it gives.
    ///
    /// - Throws: ``SQLiteError`` naming the statement, or what `row` throws.
    package func query(_ sql: String, _ bindings: [SQLiteValue] = [], _ row: (SQLiteRow) throws -> Void)
        throws
    {
        let statement = try prepared(sql)
        statement.isInUse = true
        defer {
            sqlite3_reset(statement.handle)
            statement.isInUse = false
        }
        try statement.bind(bindings, connection: self)
        while true {
            let result = sqlite3_step(statement.handle)
            switch result {
            case SQLITE_ROW: try row(SQLiteRow(statement: statement.handle, connection: self))
            case SQLITE_DONE: return
            default: throw error(Self.abbreviated(sql), result)
            }
        }
    }

    /// The rows of a query, each made into a value by `transform`.
    package func queryAll<T>(
        _ sql: String, _ bindings: [SQLiteValue] = [], _ transform: (SQLiteRow) throws -> T
    ) throws -> [T] {
        var values: [T] = []
        try query(sql, bindings) { values.append(try transform($0)) }
        return values
    }

    /// The first row of a query made into a value by `transform`, or nil when there is none.
    package func queryFirst<T>(
        _ sql: String, _ bindings: [SQLiteValue] = [], _ transform: (SQLiteRow) throws -> T
    ) throws -> T? {
        var value: T?
        try query(sql, bindings) { row in
            if value == nil { value = try transform(row) }
        }
        return value
    }

    /// `PRAGMA user_version`.
    package func userVersion() throws -> Int {
        try queryFirst("PRAGMA user_version") { try $0.value(at: 0) as Int } ?? 0
    }

    /// Rolls back the open transaction, if SQLite has not already (it does after some errors).
    func rollBack() {
        guard sqlite3_get_autocommit(handle) == 0 else { return }
        _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    /// The error SQLite reports for the last call on this connection.
    func error(_ operation: String, _ code: Int32) -> SQLiteError {
        let message =
            sqlite3_errmsg(handle).map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        return SQLiteError(url: url, operation: operation, code: code, message: message)
    }

    private func prepared(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql], !cached.isInUse { return cached }
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v3(self.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard result == SQLITE_OK, let handle else {
            throw error("prepare \(Self.abbreviated(sql))", result == SQLITE_OK ? SQLITE_MISUSE : result)
        }
        let statement = SQLiteStatement(handle: handle, sql: sql)
        // A statement in use by an outer query stays cached; the nested one is used once.
        if statements[sql] == nil { statements[sql] = statement }
        return statement
    }

    /// The start of a statement, for messages.
    private static func abbreviated(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
        return line.count > 60 ? String(line.prefix(57)) + "..." : line
    }
}
