import CSQLite
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One SQLite database file, open for reading and writing, safe to share between threads.
///
/// Opening it makes its folder (mode 0700) and the file (mode 0600) if they are missing, and
/// sets write-ahead logging, `synchronous=FULL` (a committed transaction survives a power cut)
/// unless ``Configuration/flushesEveryCommit`` is off (the sync journal's choice, see
/// ``SyncJournal``), a busy timeout for other processes' locks, and foreign keys. Work is
/// scoped to a closure, as in GRDB: ``transaction(_:)`` commits when the closure returns and
/// rolls back when it throws; ``read(_:)`` sees one consistent state.
///
/// It is `Sendable` by serialising: one connection, and every closure runs under a `Mutex`,
/// one at a time. The ``SQLiteConnection`` a closure gets must not outlive it (it is not
/// `Sendable`, so it cannot be sent to another thread either). That suits the journal, whose
/// transactions are short; nested calls from inside a closure would deadlock, and the
/// connection the closure gets does everything a nested call would.
///
/// For example:
///
/// ```swift
/// let database = try SQLiteDatabase(url: stateFolder.appendingPathComponent("journal.sqlite3"))
/// try database.migrate([{ try $0.executeScript("CREATE TABLE notes (text TEXT NOT NULL)") }])
/// try database.transaction { try $0.execute("INSERT INTO notes VALUES (?)", ["hello"]) }
/// let count = try database.read { try $0.queryFirst("SELECT count(*) FROM notes") { try $0.value(at: 0) as Int } }
/// ```
package final class SQLiteDatabase: @unchecked Sendable {
    /// How a database is opened.
    package struct Configuration: Sendable {
        /// How long to wait for another connection's lock before failing with `SQLITE_BUSY`.
        package var busyTimeout: Duration = .seconds(10)
        /// The mode of a database file this opening creates.
        package var fileMode: mode_t = 0o600
        /// The mode of the folders this opening creates.
        package var folderMode: mode_t = 0o700
        /// Whether each commit is flushed before it returns (`synchronous=FULL`). Without, in
        /// WAL mode (`synchronous=NORMAL`), a commit survives the process being killed at
        /// once and a power loss once the log is next flushed (at a checkpoint); the database
        /// is never torn either way. Without WAL, commits are always flushed.
        package var flushesEveryCommit = true
        /// Whether a missing file is made. Without, opening a missing file fails with
        /// `SQLITE_CANTOPEN`: for a file that must have been made whole beforehand.
        package var createsFile = true
        /// Whether to keep write-ahead logging (where the file system allows it). Without, the
        /// rollback journal, removed at each commit: a file built and then renamed into place
        /// leaves no log behind under its old name.
        package var writesAheadLog = true

        package init() {}
    }

    /// The database file.
    package let url: URL
    // Every access to `connection` is under `lock`: that is what makes the class Sendable.
    private let lock = Mutex(())
    private var connection: SQLiteConnection?
    /// `PRAGMA synchronous` as the configuration asks ("FULL" without WAL whatever it asks),
    /// and as last set on the connection (under `lock`).
    private let configuredSynchronous: String
    /// Whether the database is in WAL mode, as opening it found.
    private let writesAheadLog: Bool
    private var currentSynchronous: String

    /// Opens (or creates) the database at `url`.
    ///
    /// - Throws: ``SQLiteError`` naming the file: `isCorrupt` when it is not a database.
    package init(url: URL, configuration: Configuration = Configuration()) throws {
        self.url = url
        if configuration.createsFile { try Self.prepareFile(url, configuration) }
        var handle: OpaquePointer?
        let flags =
            SQLITE_OPEN_READWRITE | (configuration.createsFile ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(url.path, &handle, flags, nil)
        guard let handle else {
            throw SQLiteError(url: url, operation: "open", code: opened, message: "out of memory")
        }
        let connection = SQLiteConnection(handle: handle, url: url)
        guard opened == SQLITE_OK else { throw connection.error("open", opened) }
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds =
            configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        // The first statement reads the header: a file that is not a database fails here.
        // WAL is kept where the file system allows it; where it does not (no shared memory),
        // the rollback journal with synchronous=FULL is as durable, only slower.
        let wanted = configuration.writesAheadLog ? "WAL" : "DELETE"
        let mode = try connection.queryFirst("PRAGMA journal_mode = \(wanted)") {
            try $0.value(at: 0) as String
        }
        let isWriteAheadLogging = mode?.lowercased() == "wal"
        let flushing = configuration.flushesEveryCommit || !isWriteAheadLogging
        configuredSynchronous = flushing ? "FULL" : "NORMAL"
        currentSynchronous = configuredSynchronous
        writesAheadLog = isWriteAheadLogging
        try connection.execute("PRAGMA synchronous = \(configuredSynchronous)")
        try connection.execute("PRAGMA foreign_keys = ON")
        // A file's schema is as hostile as its rows: nothing it declares runs a function
        // with side effects.
        try connection.execute("PRAGMA trusted_schema = OFF")
        self.connection = connection
    }

    deinit { connection = nil }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// The transaction starts `IMMEDIATE`, taking the write lock at once, so that two
    /// processes never both read and then both fail to write.
    ///
    /// - Throws: ``SQLiteError``, or what `body` throws (after the rollback).
    package func transaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try within("BEGIN IMMEDIATE", body)
    }

    /// ``transaction(_:)``, its commit flushed or not whatever ``Configuration/flushesEveryCommit``
    /// says: in WAL mode, `flushing` a commit makes it survive a power cut before it returns;
    /// without, it survives the process being killed, and a power cut once the log is next
    /// flushed. Without WAL every commit is flushed.
    package func transaction<T>(flushing: Bool, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try within("BEGIN IMMEDIATE", synchronous: flushing || !writesAheadLog ? "FULL" : "NORMAL", body)
    }

    /// Runs `body` on one consistent state of the database (a deferred transaction, ended when
    /// it returns). Writes in `body` are allowed but rolled back if it throws.
    package func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try within("BEGIN DEFERRED", body)
    }

    /// Runs `body` between `begin` and a commit, rolled back when it throws.
    private func within<T>(
        _ begin: String, synchronous: String? = nil, _ body: (SQLiteConnection) throws -> T
    ) throws -> T {
        try withConnection { connection in
            // A commit flushed as this transaction asks, or as the configuration says.
            let wanted = synchronous ?? configuredSynchronous
            if wanted != currentSynchronous {
                try connection.execute("PRAGMA synchronous = \(wanted)")
                currentSynchronous = wanted
            }
            try connection.execute(begin)
            do {
                let result = try body(connection)
                try connection.execute("COMMIT")
                return result
            } catch {
                connection.rollBack()
                throw error
            }
        }
    }

    /// The schema version, `PRAGMA user_version`: 0 for a new database.
    package func userVersion() throws -> Int {
        try withConnection { try $0.userVersion() }
    }

    /// Brings the schema up to date: migration `n` (counting from 1) runs when the version is
    /// below `n`, in its own transaction that also sets the version to `n`.
    ///
    /// - Returns: The version before and after.
    /// - Throws: ``SQLiteError``: a failed migration (its transaction rolled back, the version
    ///   left at the last one that succeeded); `SQLITE_ERROR` when the database's version is
    ///   newer than `migrations` knows.
    @discardableResult
    package func migrate(_ migrations: [(SQLiteConnection) throws -> Void]) throws -> (from: Int, to: Int) {
        let from = try userVersion()
        guard from <= migrations.count else {
            throw SQLiteError(
                url: url, operation: "migrate", code: SQLITE_ERROR,
                message: "schema version \(from) is newer than this program's \(migrations.count)")
        }
        for (index, migration) in migrations.enumerated() where index + 1 > from {
            try transaction { connection in
                // Another process may have migrated since the version was read.
                guard try connection.userVersion() <= index else { return }
                try migration(connection)
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
        return (from, max(from, migrations.count))
    }

    /// The problems `PRAGMA quick_check` finds; empty for a sound database.
    package func quickCheck() throws -> [String] {
        let results = try withConnection { connection in
            try connection.queryAll("PRAGMA quick_check") { try $0.value(at: 0) as String }
        }
        return results == ["ok"] ? [] : results
    }

    /// Runs one statement outside any transaction, for what cannot run inside one (a change of
    /// `journal_mode`, a `wal_checkpoint`): its first row made into a value by `transform`, or
    /// nil when it gives none.
    ///
    /// - Throws: ``SQLiteError`` naming the statement.
    package func executeAlone<T>(_ sql: String, _ transform: (SQLiteRow) throws -> T) throws -> T? {
        try withConnection { try $0.queryFirst(sql, [], transform) }
    }

    /// The journal mode in force: "wal" where the file system allows it.
    package func journalMode() throws -> String {
        try withConnection {
            try $0.queryFirst("PRAGMA journal_mode") { try $0.value(at: 0) as String } ?? ""
        }
    }

    /// Closes the connection; every later call throws `SQLITE_MISUSE`.
    package func close() {
        lock.withLock { _ in connection = nil }
    }

    private func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try lock.withLock { _ in
            guard let connection else {
                throw SQLiteError(
                    url: url, operation: "use", code: SQLITE_MISUSE, message: "the database is closed")
            }
            return try body(connection)
        }
    }

    /// Makes the folders (0700) and an empty file (0600) before SQLite opens it, so that the
    /// database and its `-wal` and `-shm` files (which SQLite gives the database's mode) are
    /// private from the first byte.
    private static func prepareFile(_ url: URL, _ configuration: Configuration) throws {
        func failure(_ operation: String, _ error: Errno, _ path: String) -> SQLiteError {
            SQLiteError(
                url: url, operation: operation, code: SQLITE_CANTOPEN,
                message: "\(path): \(error.description)")
        }
        var missing: [String] = []
        var folder = url.deletingLastPathComponent().standardizedFileURL.path
        while folder != "/", !folder.isEmpty, FileStatus(path: folder) == nil {
            missing.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        for path in missing.reversed() {
            switch Syscall.mkdirat(AT_FDCWD, path, configuration.folderMode) {
            case .success, .failure(.fileExists): continue
            case .failure(let error): throw failure("create the folder of", error, path)
            }
        }
        switch Syscall.openat(AT_FDCWD, url.path, O_WRONLY | O_CREAT | O_EXCL, configuration.fileMode) {
        case .success(let fd): _ = FileDescriptor(rawValue: fd, url: url)  // closes it
        case .failure(.fileExists): return
        case .failure(let error): throw failure("create", error, url.path)
        }
    }
}
