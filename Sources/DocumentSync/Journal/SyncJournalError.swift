import DocumentKit
import Foundation

/// A failure of the sync journal, naming its file.
///
/// ``corrupt(_:)`` is the one the engine acts on: the journal cannot be trusted, so it is set
/// aside with ``SyncJournal/reset(at:now:)`` and the next pass is a full rescan, in which
/// equal contents count as synced and different ones become conflicts, never deletions.
///
/// For example:
///
/// ```swift
/// let journal: SyncJournal
/// do {
///     journal = try SyncJournal(container: container)
/// } catch SyncJournalError.corrupt(let url) {
///     journal = try SyncJournal.reset(at: url)
/// }
/// ```
public enum SyncJournalError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file is damaged, or is not a database at all.
    case corrupt(URL)
    /// The journal was written by a newer DocumentSync, with a schema this one does not know.
    case newerVersion(URL, found: Int, supported: Int)
    /// SQLite failed: the file, the operation, SQLite's message and result code.
    case database(URL, operation: String, message: String, code: Int32)
    /// A row holds a value this version cannot read.
    case invalidRow(URL, path: String, detail: String)
    /// An item is already at the path a rename was to use.
    case pathTaken(URL, RemotePath)
    /// A folder cannot be renamed into itself.
    case invalidRename(URL, from: RemotePath, to: RemotePath)
    /// No pending intent has this number (it was completed already).
    case noSuchIntent(URL, id: Int64)

    /// The journal file the error is about.
    public var url: URL {
        switch self {
        case .corrupt(let url), .newerVersion(let url, _, _), .database(let url, _, _, _),
            .invalidRow(let url, _, _), .pathTaken(let url, _), .invalidRename(let url, _, _),
            .noSuchIntent(let url, _):
            return url
        }
    }

    public var description: String {
        let file = "the sync journal “\(url.path)”"
        switch self {
        case .corrupt:
            return "The file of \(file) is damaged or is not a database; it must be set aside and rebuilt"
        case .newerVersion(_, let found, let supported):
            return "Could not open \(file): its version \(found) is newer than this program's \(supported)"
        case .database(_, let operation, let message, let code):
            return "Could not \(operation) in \(file): \(message) (SQLite code \(code))"
        case .invalidRow(_, let path, let detail):
            return "Could not read the row for “\(path)” in \(file): \(detail)"
        case .pathTaken(_, let path):
            return "Could not rename in \(file): an item is already at “\(path)”"
        case .invalidRename(_, let from, let to):
            return "Could not rename “\(from)” to “\(to)” in \(file): a folder cannot move into itself"
        case .noSuchIntent(_, let id):
            return "Could not complete intent \(id) in \(file): no such pending intent"
        }
    }

    /// The journal's form of a SQLite failure: damage becomes ``corrupt(_:)``.
    init(_ error: SQLiteError) {
        if error.isCorrupt {
            self = .corrupt(error.url)
        } else {
            self = .database(error.url, operation: error.operation, message: error.message, code: error.code)
        }
    }
}
