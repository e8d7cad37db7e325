import CSQLite
import Foundation

/// A value bound to a statement's parameter: SQLite's storage classes, less floating point.
///
/// For example:
///
/// ```swift
/// try connection.execute(
///     "INSERT INTO items (path, size, hash) VALUES (?, ?, ?)",
///     [.text("a.txt"), SQLiteValue(size), nil])
/// ```
package enum SQLiteValue: Hashable, Sendable, ExpressibleByNilLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral
{
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)

    package init(nilLiteral: ()) { self = .null }
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(stringLiteral value: String) { self = .text(value) }

    /// The value of `value` (`.null` for nil).
    package init(_ value: some SQLiteConvertible) { self = value.sqliteValue }
}

/// A Swift type stored in one SQLite column: bound as a ``SQLiteValue``, read back from a row
/// with its type checked.
package protocol SQLiteConvertible {
    /// The value to bind.
    var sqliteValue: SQLiteValue { get }
    /// Reads column `index` of `row`; throws when it holds another type (or NULL).
    static func read(from row: SQLiteRow, at index: Int32) throws -> Self
}

extension Int64: SQLiteConvertible {
    package var sqliteValue: SQLiteValue { .integer(self) }
    package static func read(from row: SQLiteRow, at index: Int32) throws -> Int64 {
        try row.require(SQLITE_INTEGER, at: index, "an integer")
        return sqlite3_column_int64(row.statement, index)
    }
}

extension Int: SQLiteConvertible {
    package var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    package static func read(from row: SQLiteRow, at index: Int32) throws -> Int {
        Int(try Int64.read(from: row, at: index))
    }
}

extension Bool: SQLiteConvertible {
    package var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
    package static func read(from row: SQLiteRow, at index: Int32) throws -> Bool {
        try Int64.read(from: row, at: index) != 0
    }
}

extension String: SQLiteConvertible {
    package var sqliteValue: SQLiteValue { .text(self) }
    package static func read(from row: SQLiteRow, at index: Int32) throws -> String {
        try row.require(SQLITE_TEXT, at: index, "text")
        let count = Int(sqlite3_column_bytes(row.statement, index))
        guard let bytes = sqlite3_column_text(row.statement, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

extension Data: SQLiteConvertible {
    package var sqliteValue: SQLiteValue { .blob(self) }
    package static func read(from row: SQLiteRow, at index: Int32) throws -> Data {
        try row.require(SQLITE_BLOB, at: index, "a blob")
        let count = Int(sqlite3_column_bytes(row.statement, index))
        // An empty blob comes back as a null pointer.
        guard let bytes = sqlite3_column_blob(row.statement, index), count > 0 else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

extension Optional: SQLiteConvertible where Wrapped: SQLiteConvertible {
    package var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
    package static func read(from row: SQLiteRow, at index: Int32) throws -> Wrapped? {
        row.isNull(at: index) ? nil : try Wrapped.read(from: row, at: index)
    }
}

/// The current row of a query, valid only inside the closure it is given to.
///
/// For example:
///
/// ```swift
/// try connection.query("SELECT path, size FROM items") { row in
///     let path: String = try row.value(at: 0)
///     let size: Int64? = try row.value(at: 1)
/// }
/// ```
package struct SQLiteRow {
    let statement: OpaquePointer
    let connection: SQLiteConnection

    /// How many columns the row has.
    package var columnCount: Int32 { sqlite3_column_count(statement) }

    /// Whether column `index` is NULL.
    package func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(statement, index) == SQLITE_NULL
    }

    /// Column `index` as `T`.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_MISMATCH`) naming the column when it holds another
    ///   type, or NULL where `T` is not optional.
    package func value<T: SQLiteConvertible>(at index: Int32, as type: T.Type = T.self) throws -> T {
        try T.read(from: self, at: index)
    }

    func require(_ type: Int32, at index: Int32, _ expected: String) throws {
        let found = sqlite3_column_type(statement, index)
        guard found != type else { return }
        let names = [
            SQLITE_INTEGER: "an integer", SQLITE_FLOAT: "a real number", SQLITE_TEXT: "text",
            SQLITE_BLOB: "a blob", SQLITE_NULL: "NULL",
        ]
        let column = sqlite3_column_name(statement, index).map { String(cString: $0) } ?? "\(index)"
        throw SQLiteError(
            url: connection.url, operation: "read column \(column)", code: SQLITE_MISMATCH,
            message: "expected \(expected), found \(names[found] ?? "type \(found)")")
    }
}

/// A prepared statement, finalised when it goes away; kept in its connection's cache.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    /// Whether a query is stepping through it, so that a nested use prepares its own.
    var isInUse = false

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters, in order.
    func bind(_ values: [SQLiteValue], connection: SQLiteConnection) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw SQLiteError(
                url: connection.url, operation: "bind the parameters of \(sql)", code: SQLITE_RANGE,
                message: "\(values.count) values for \(expected) parameters")
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .text(let text):
                // By length, not as a C string: a NUL inside the text is kept.
                var text = text
                result = text.withUTF8 { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(
                            handle, index, $0, sqlite3_uint64(bytes.count), sqliteTransient,
                            UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let data):
                result = data.withUnsafeBytes { bytes in
                    // A null pointer would bind NULL: an empty blob is a zero-length one.
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_zeroblob(handle, index, 0)
                    }
                    return sqlite3_bind_blob64(
                        handle, index, base, sqlite3_uint64(bytes.count), sqliteTransient)
                }
            }
            guard result == SQLITE_OK else {
                throw connection.error("bind parameter \(index) of \(sql)", result)
            }
        }
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
