import CSQLite
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The store's identity table: where each item was last seen, for finding it on file systems
/// without extended attributes and for following it when it moves. One row per item in
/// SQLite, `index.N.sqlite` in the store's folder, looked up by item, by path and by file
/// through SQL indexes: no process holds the whole table (the JSON file it replaces was
/// 13.7 MB at 100,000 items, and about 25 MB in memory).
///
/// Written only under the store's lock, one transaction per group of locations the store
/// notes; read by any process at any time (write-ahead log: a reader sees the last commit).
/// Rebuilt from the version records when damaged or missing, into a file of the next
/// generation `N`: a file another process may have open is never replaced under its own
/// name, so that no process's log or journal is ever applied to another file.
///
/// For example:
///
/// ```swift
/// let index = try IdentityIndex(opening: folder.appendingPathComponent("index.1.sqlite"))
/// try index.note([(itemID, IdentityIndex.Entry(path: path, device: 7, inode: 42))], durably: true)
/// let found = try index.itemID(path: path)  // itemID
/// ```
final class IdentityIndex: Sendable {
    /// Where an item was last seen. A path of "" and an inode of 0: nowhere known (another
    /// item took its place).
    struct Entry: Codable, Sendable, Equatable {
        var path: String
        var device: UInt64
        var inode: UInt64
    }

    /// The database file.
    let url: URL
    /// Which file `url` was when opened: a rebuild in another process puts another one there.
    let file: (device: UInt64, inode: UInt64)
    private let database: SQLiteDatabase
    /// Commits through this object, beside SQLite's count of other connections' commits.
    private let commits = Atomic<Int>(0)

    static let formatVersion = 1

    /// The schema, as SQLite keeps it in `sqlite_schema` (one space between words): a file
    /// whose schema differs in any way is not an index.
    static let schema: [(type: String, name: String, sql: String)] = [
        (
            "table", "items",
            "CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, path TEXT NOT NULL, device INTEGER NOT NULL, inode INTEGER NOT NULL) STRICT, WITHOUT ROWID"
        ),
        ("index", "items_by_path", "CREATE INDEX items_by_path ON items (path, id)"),
        ("index", "items_by_file", "CREATE INDEX items_by_file ON items (device, inode, id)"),
    ]

    /// Opens the index at `url`, which must exist and have the index's schema.
    ///
    /// - Throws: ``SQLiteError``: `isCorrupt` when the file is no database or not an index.
    init(opening url: URL) throws {
        var configuration = SQLiteDatabase.Configuration()
        configuration.createsFile = false
        database = try SQLiteDatabase(url: url, configuration: configuration)
        self.url = url
        let status = FileStatus(path: url.path)
        file = (status?.device ?? 0, status?.inode ?? 0)
        try database.read { connection in
            try connection.execute("PRAGMA cell_size_check = ON")
            // The log is folded into the file every 64 pages written and then cut back: a
            // small store's index stays a few pages on disk, not the 4 MB log SQLite allows.
            try connection.execute("PRAGMA wal_autocheckpoint = 64")
            try connection.execute("PRAGMA journal_size_limit = 262144")
            let version = try connection.userVersion()
            let found = try connection.queryAll("SELECT type, name, sql FROM sqlite_schema ORDER BY name") {
                row in
                (
                    try row.value(at: 0) as String, try row.value(at: 1) as String,
                    try row.value(at: 2) as String?
                )
            }
            let expected = Self.schema.sorted { $0.name < $1.name }
            guard version == Self.formatVersion, found.count == expected.count,
                zip(found, expected).allSatisfy({ $0.0 == $1.type && $0.1 == $1.name && $0.2 == $1.sql })
            else {
                throw SQLiteError(
                    url: url, operation: "open the identity index", code: SQLITE_NOTADB,
                    message: "not an identity index (format \(version), \(found.count) objects)")
            }
        }
    }

    /// Makes a complete index at `url` holding the rows `rows` hands its function, and opens
    /// it: the rows are written into a file beside it in one flushed transaction, which is
    /// then renamed into place and its folder flushed, so that no one ever opens an index
    /// that is partly written.
    ///
    /// - Throws: ``SQLiteError`` or ``DocumentKitError``; nothing is left at `url` then.
    static func build(
        at url: URL, rows: ((_ itemID: String, _ entry: Entry) throws -> Void) throws -> Void
    ) throws -> IdentityIndex {
        let folder = url.deletingLastPathComponent()
        let building = folder.appendingPathComponent("\(buildingPrefix)\(UUID().uuidString).sqlite")
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] {
                _ = Syscall.unlinkat(AT_FDCWD, building.path + suffix)
            }
        }
        do {
            var configuration = SQLiteDatabase.Configuration()
            configuration.writesAheadLog = false
            let database = try SQLiteDatabase(url: building, configuration: configuration)
            defer { database.close() }
            try database.transaction { connection in
                for object in schema { try connection.execute(object.sql) }
                try connection.execute("PRAGMA user_version = \(formatVersion)")
                try rows { itemID, entry in
                    try connection.execute(
                        "INSERT OR REPLACE INTO items (id, path, device, inode) VALUES (?, ?, ?, ?)",
                        [
                            .text(itemID), .text(entry.path), .integer(Int64(bitPattern: entry.device)),
                            .integer(Int64(bitPattern: entry.inode)),
                        ])
                }
            }
            // Switched to WAL here, by its only connection, so that opening it never writes
            // (two processes' first openings once raced to switch it); the log is folded in.
            let mode = try database.executeAlone("PRAGMA journal_mode = WAL") {
                try $0.value(at: 0) as String
            }
            if mode?.lowercased() == "wal",
                try database.executeAlone("PRAGMA wal_checkpoint(TRUNCATE)", { try $0.value(at: 0) as Int })
                    != 0
            {
                throw SQLiteError(
                    url: building, operation: "fold in the log of the index built", code: SQLITE_BUSY,
                    message: "the checkpoint was kept from finishing")
            }
        }
        // Closed: its log folded in and removed, nothing under its name is left to apply.
        guard FileStatus(path: building.path + "-wal").map({ $0.size == 0 }) ?? true else {
            throw SQLiteError(
                url: building, operation: "close the index built", code: SQLITE_BUSY,
                message: "its write-ahead log was left behind")
        }
        let directory = try FileDescriptor.openDirectory(folder, operation: "flush the folder of")
        _ = try Syscall.renameat(AT_FDCWD, building.path, AT_FDCWD, url.path).get("put in place", url)
        try directory.sync(operation: "flush the folder of")
        return try IdentityIndex(opening: url)
    }

    /// The start of the name of an index being built: one left there is a builder's that died.
    static let buildingPrefix = "index.building-"

    // MARK: - Lookups

    /// Where item `itemID` was last seen, or nil when the index does not know it.
    func entry(of itemID: String) throws -> Entry? {
        try database.read { connection in
            try connection.queryFirst("SELECT path, device, inode FROM items WHERE id = ?", [.text(itemID)]) {
                try Self.entry($0, at: 0)
            }
        }
    }

    /// The item last seen at `path`; of two, the smaller id.
    func itemID(path: String) throws -> String? {
        try firstItem("SELECT id FROM items WHERE path = ? ORDER BY id", [.text(path)])
    }

    /// The item last seen in the file `device`, `inode`; of two, the smaller id.
    func itemID(device: UInt64, inode: UInt64) throws -> String? {
        try firstItem(
            "SELECT id FROM items WHERE device = ? AND inode = ? ORDER BY id",
            [.integer(Int64(bitPattern: device)), .integer(Int64(bitPattern: inode))])
    }

    /// The items last seen inside the folder at `path`, at any depth, in order of their ids.
    func entries(inside path: String) throws -> [(itemID: String, entry: Entry)] {
        // Every path that starts with "path/" sorts between "path/" and "path0" ('0' follows
        // '/'), and SQLite compares text as bytes.
        try database.read { connection in
            try connection.queryAll(
                "SELECT id, path, device, inode FROM items WHERE path > ? AND path < ? ORDER BY id",
                [.text(path + "/"), .text(path + "0")]
            ) { row in (try row.value(at: 0) as String, try Self.entry(row, at: 1)) }
        }
        .filter { Self.isItemID($0.itemID) && $0.entry.path.hasPrefix(path + "/") }
    }

    /// How many items the index knows.
    func count() throws -> Int {
        try database.read {
            try $0.queryFirst("SELECT count(*) FROM items") { try $0.value(at: 0) as Int } ?? 0
        }
    }

    /// What tells one state of the index from another: equal while nothing was committed to it.
    struct Stamp: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var otherCommits: Int
        var ownCommits: Int
    }

    func stamp() throws -> Stamp {
        let others = try database.read {
            try $0.queryFirst("PRAGMA data_version") { try $0.value(at: 0) as Int } ?? 0
        }
        return Stamp(
            device: file.device, inode: file.inode, otherCommits: others,
            ownCommits: commits.load(ordering: .relaxed))
    }

    // MARK: - Changes

    /// Records where items are now, in order, in one transaction: an item another one was
    /// last seen at the same path or in the same file is nowhere known any more.
    ///
    /// - Parameter durably: Whether the commit is flushed before this returns. Without, a
    ///   crash of the process keeps it and a power cut may lose it (never tear it): only for
    ///   locations that flushed version records also hold.
    /// - Returns: Whether any location changed.
    @discardableResult
    func note(_ locations: [(itemID: String, entry: Entry)], durably: Bool) throws -> Bool {
        let changed = try database.transaction(flushing: durably) { connection in
            var changed = false
            for (itemID, entry) in locations {
                let known = try connection.queryFirst(
                    "SELECT path, device, inode FROM items WHERE id = ?", [.text(itemID)]
                ) { try Self.entry($0, at: 0) }
                if known == entry { continue }
                let device = SQLiteValue.integer(Int64(bitPattern: entry.device))
                let inode = SQLiteValue.integer(Int64(bitPattern: entry.inode))
                // Another item last seen at this path or in this file is somewhere else now.
                try connection.execute(
                    "UPDATE items SET path = '', inode = 0 WHERE path = ? AND id != ?",
                    [.text(entry.path), .text(itemID)])
                try connection.execute(
                    "UPDATE items SET path = '', inode = 0 WHERE device = ? AND inode = ? AND id != ?",
                    [device, inode, .text(itemID)])
                try connection.execute(
                    """
                    INSERT INTO items (id, path, device, inode) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET path = excluded.path, device = excluded.device,
                    inode = excluded.inode
                    """, [.text(itemID), .text(entry.path), device, inode])
                changed = true
            }
            return changed
        }
        if changed { commits.add(1, ordering: .relaxed) }
        return changed
    }

    // MARK: - Reading rows

    private func firstItem(_ sql: String, _ bindings: [SQLiteValue]) throws -> String? {
        try database.read { connection in
            var found: String?
            // A row whose id is no item's is skipped, as a damaged record is.
            try connection.query(sql, bindings) { row in
                if found == nil, let id = try row.value(at: 0) as String?, Self.isItemID(id) { found = id }
            }
            return found
        }
    }

    private static func entry(_ row: SQLiteRow, at column: Int32) throws -> Entry {
        Entry(
            path: try row.value(at: column),
            device: UInt64(bitPattern: try row.value(at: column + 1) as Int64),
            inode: UInt64(bitPattern: try row.value(at: column + 2) as Int64))
    }

    static func isItemID(_ id: String) -> Bool { UUID(uuidString: id) != nil }
}
