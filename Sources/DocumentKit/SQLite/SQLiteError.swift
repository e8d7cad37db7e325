import CSQLite
import Foundation

/// A failure SQLite reported: on which database file, during which operation, with SQLite's
/// own message and result code.
///
/// For example:
///
/// ```swift
/// do {
///     try database.transaction { try $0.execute("INSERT INTO items VALUES (?)", ["a"]) }
/// } catch let error as SQLiteError where error.isCorrupt {
///     // start over from a rescan
/// }
/// ```
package struct SQLiteError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The database file.
    package var url: URL
    /// What was being done, in words ("open", "prepare SELECT ...", "commit").
    package var operation: String
    /// SQLite's extended result code (`SQLITE_NOTADB`, `SQLITE_CONSTRAINT_PRIMARYKEY`...).
    package var code: Int32
    /// SQLite's message (`sqlite3_errmsg`), or ours where SQLite has none.
    package var message: String

    package init(url: URL, operation: String, code: Int32, message: String) {
        self.url = url
        self.operation = operation
        self.code = code
        self.message = message
    }

    /// The primary result code, without the extended part.
    package var primaryCode: Int32 { code & 0xff }

    /// Whether the file is damaged or is not a database at all.
    package var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// Whether another connection held a lock longer than the busy timeout.
    package var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    /// Whether a constraint (a primary key, a check) refused the change.
    package var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }

    package var description: String {
        "Could not \(operation) in the database “\(url.path)”: \(message) (SQLite code \(code))"
    }
}
