import DocumentKit
import Foundation
import Synchronization

/// The sync journal of one container: what both sides looked like when they last agreed, and
/// the remote writes in flight.
///
/// It is a SQLite database outside the container, under
/// `$XDG_STATE_HOME/DocumentKit/sync/` (by default `~/.local/state/DocumentKit/sync/`), named by
/// the SHA-256 of the container's canonical path: one journal per container, wherever the
/// container is opened from. It holds these tables: `items` (one ``JournalItem`` per path),
/// `intents` (one ``SyncIntent`` per remote write whose outcome is not yet recorded) and
/// `settings` (the remote remembered for the container, a pause with its reason), and the
/// documents a pause names in `pauseDeletions`.
///
/// Every change is one transaction: each method here makes its own, and ``transaction(_:)``
/// groups several, so that the engine records an item and completes its intent together. A
/// journal whose file is damaged or not a database throws ``SyncJournalError/corrupt(_:)``,
/// when opened or at any call; ``reset(at:now:)`` sets the file aside and starts empty.
///
/// It is `Sendable`: calls are serialised on one connection (see ``SQLiteDatabase``).
///
/// For example:
///
/// ```swift
/// let journal = try SyncJournal(container: container)
/// try journal.upsert(JournalItem(path: RemotePath("plan.txt"), kind: .file, remoteTag: tag))
/// try journal.renameItem(from: RemotePath("Notes"), to: RemotePath("Archive/Notes"))
/// for intent in try journal.pendingIntents() { /* resolve by reading the remote */ }
/// ```
package final class SyncJournal: Sendable {
    /// The name of a setting.
    package struct SettingKey: RawRepresentable, Hashable, Sendable {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The remote the container syncs with, by its display name (no credentials): which
        /// remote the journal's tags are of.
        package static let remoteURL = SettingKey(rawValue: "remoteURL")
        /// How to reach the remote again: its ``RemoteAddress``, as JSON (no secret).
        package static let remoteAddress = SettingKey(rawValue: "remoteAddress")
        /// Set while sync is paused (a mass delete, a vanished root): the reason, in words.
        package static let pauseReason = SettingKey(rawValue: "pauseReason")
        /// The canonical path of the container, recorded when the journal is made.
        package static let container = SettingKey(rawValue: "container")
        /// Set by "delete them" (``SyncEngine/resume(_:pause:)``): the identifier of the pause
        /// whose deletions (the rows of `pauseDeletions`) a pass may make past the mass-delete
        /// guard; cleared by the first pass that needs it no more.
        package static let approvedDeletions = SettingKey(rawValue: "approvedDeletions")
    }

    /// The database file.
    package let url: URL
    private let database: SQLiteDatabase
    /// The rows as ``itemsByPath()`` last read them, with the `PRAGMA data_version` they were
    /// read at: a pass that finds nothing to do writes nothing, and the next one finds them
    /// here instead of decoding every row again. Dropped by every transaction of this journal;
    /// a commit by another connection changes the data version.
    private let cachedItems = Mutex<(dataVersion: Int, items: [RemotePath: JournalItem])?>(nil)
    /// The transactions of ``transactionTogether(_:)`` waiting for their commit.
    let grouped = GroupCommit()
    /// How many commits ``transactionTogether(_:)`` made, for the tests: fewer than the
    /// transactions handed in when threads hand them in at once.
    package let groupedCommits = Atomic<Int>(0)
    /// Run before every commit that may record an outcome: what makes the remote's writes
    /// durable (``Remote/makeWritesDurable()``), so that the journal never records a write a
    /// power loss could still take back.
    private let beforeRecording = Mutex<(@Sendable () throws -> Void)?>(nil)

    /// Opens the journal at `url`, creating it if it is missing.
    ///
    /// - Throws: ``SyncJournalError``: ``SyncJournalError/corrupt(_:)`` when the file is
    ///   damaged or is not a database; ``SyncJournalError/newerVersion(_:found:supported:)``.
    package init(url: URL) throws {
        self.url = url
        let database: SQLiteDatabase
        // Commits are not flushed one by one: a killed process loses none, and a power loss
        // that takes the last ones leaves an older journal, which is safe by design. Every
        // decision compares bytes by hash, so an outcome the journal forgot is found again
        // (equal bytes on both sides are recorded, a missing intent's write is seen as a
        // change on both sides and compared), never taken for an edit or a deletion.
        var configuration = SQLiteDatabase.Configuration()
        configuration.flushesEveryCommit = false
        do {
            database = try SQLiteDatabase(url: url, configuration: configuration)
        } catch let error as SQLiteError {
            throw SyncJournalError(error)
        }
        do {
            guard try database.quickCheck().isEmpty else { throw SyncJournalError.corrupt(url) }
            let found = try database.userVersion()
            guard found <= Self.migrations.count else {
                throw SyncJournalError.newerVersion(url, found: found, supported: Self.migrations.count)
            }
            try database.migrate(Self.migrations)
        } catch {
            // Closed now, so that the caller can set the file aside.
            database.close()
            if let error = error as? SQLiteError { throw SyncJournalError(error) }
            throw error
        }
        self.database = database
    }

    /// Opens (or creates) the journal of `container`.
    ///
    /// - Parameters:
    ///   - container: The synced folder.
    ///   - stateHome: The folder standing for `$XDG_STATE_HOME`; by default the environment's.
    package convenience init(container: URL, stateHome: URL? = nil) throws {
        try self.init(url: Self.url(forContainer: container, stateHome: stateHome))
        if try setting(.container) == nil { try setSetting(.container, CanonicalPath.of(container)) }
    }

    /// `$XDG_STATE_HOME` when it is an absolute path, else `~/.local/state`: see
    /// ``SyncStateFiles/stateHome(environment:)``.
    package static func defaultStateHome(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        SyncStateFiles.stateHome(environment: environment)
    }

    /// Where the journal of `container` lives: ``SyncStateFiles/journal(forContainer:stateHome:)``.
    package static func url(forContainer container: URL, stateHome: URL? = nil) -> URL {
        SyncStateFiles.journal(forContainer: container, stateHome: stateHome)
    }

    /// Sets the journal file at `url` aside and opens a new, empty one there.
    ///
    /// The old file is kept beside it as `NAME.corrupt-YYYYMMDDTHHMMSSZ`, with its `-wal` and
    /// `-shm` files (moved first, so that a crash halfway never pairs a new database with the
    /// old one's log).
    ///
    /// - Throws: ``DocumentKitError`` when a file cannot be moved; ``SyncJournalError``.
    package static func reset(at url: URL, now: Date = Date()) throws -> SyncJournal {
        try setAside(url, now: now)
        return try SyncJournal(url: url)
    }

    /// Closes this journal, sets its file aside and opens a new, empty one in its place. This
    /// journal throws at every call afterwards.
    package func reset(now: Date = Date()) throws -> SyncJournal {
        database.close()
        return try Self.reset(at: url, now: now)
    }

    /// Moves the journal file at `url` and its companions aside.
    ///
    /// - Returns: Where the main file went, or nil when there was none.
    @discardableResult
    package static func setAside(_ url: URL, now: Date = Date()) throws -> URL? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        let stamp = String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
            parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        var suffix = ".corrupt-\(stamp)"
        var attempt = 1
        while FileStatus(path: url.path + suffix, followingLinks: false) != nil {
            attempt += 1
            suffix = ".corrupt-\(stamp)-\(attempt)"
        }
        var kept: URL?
        for companion in ["-wal", "-shm", ""] {
            let source = URL(fileURLWithPath: url.path + companion)
            guard FileStatus(path: source.path, followingLinks: false) != nil else { continue }
            let destination = URL(fileURLWithPath: url.path + suffix + companion)
            try SafeSave.moveItem(
                at: source, to: destination, operation: "set aside the damaged sync journal")
            if companion.isEmpty { kept = destination }
        }
        return kept
    }

    // MARK: Access

    /// Has `flush` run before every commit that may record an outcome (every transaction but
    /// the ones that only begin intents), and before the commit begins: the remote's writes
    /// that the commit records are durable before the journal says they happened.
    package func flushBeforeRecording(_ flush: @escaping @Sendable () throws -> Void) {
        beforeRecording.withLock { $0 = flush }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    ///
    /// - Parameter recordsOutcomes: False for a transaction that only begins intents, which
    ///   need no write to be durable: it skips ``flushBeforeRecording(_:)``'s flush.
    /// - Throws: ``SyncJournalError``, what the flush or `body` throws.
    package func transaction<T>(recordsOutcomes: Bool = true, _ body: (Transaction) throws -> T) throws -> T {
        if recordsOutcomes, let flush = beforeRecording.withLock({ $0 }) { try flush() }
        cachedItems.withLock { $0 = nil }
        defer { cachedItems.withLock { $0 = nil } }
        do {
            return try database.transaction { try body(Transaction(connection: $0)) }
        } catch let error as SQLiteError {
            throw SyncJournalError(error)
        }
    }

    private func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        do {
            return try database.read { try body(Transaction(connection: $0)) }
        } catch let error as SQLiteError {
            throw SyncJournalError(error)
        }
    }

    /// The row for `path`, or nil when the journal has none.
    package func item(at path: RemotePath) throws -> JournalItem? { try read { try $0.item(at: path) } }

    /// Every row, in path order.
    package func allItems() throws -> [JournalItem] { try read { try $0.allItems() } }

    /// Every row by its path, unsorted.
    package func itemsByPath() throws -> [RemotePath: JournalItem] {
        try read { transaction in
            let dataVersion = try transaction.dataVersion()
            if let cached = cachedItems.withLock({ $0 }), cached.dataVersion == dataVersion {
                return cached.items
            }
            let items = try transaction.itemsByPath()
            cachedItems.withLock { $0 = (dataVersion, items) }
            return items
        }
    }

    /// Each row's path, kind, local status and remote tag, handed to `body` a row at a time in
    /// no order: what a pass compares its scan with, without holding every row whole.
    package func forEachReference(_ body: (RemotePath, JournalReference) throws -> Void) throws {
        try read { try $0.forEachReference(body) }
    }

    /// The rows at `paths`, by path; a path the journal has no row for is left out.
    package func items(at paths: Set<RemotePath>) throws -> [RemotePath: JournalItem] {
        try read { try $0.items(at: paths) }
    }

    /// The rows of `folder` and everything inside it, in path order.
    package func items(under folder: RemotePath) throws -> [JournalItem] {
        try read { try $0.items(under: folder) }
    }

    /// The files synced both ways (with a remote tag, and here, not only on the server), each
    /// with the inode, size and modification time (nanoseconds) it had when it was synced, as
    /// the status's list holds them (``UbiquityStatus/encodeSynced(_:)``, byte for byte): made
    /// from those columns of the rows in path order, without holding them.
    package func encodedSyncedFiles() throws -> Data { try read { try $0.encodedSyncedFiles() } }

    /// A stamp of the items as they are: equal stamps mean no item was added, changed or
    /// removed between the two reads, by this process or another (triggers count every change
    /// in its own transaction), and a journal made again never repeats an old one's stamps.
    package func itemsStamp() throws -> String? { try read { try $0.itemsStamp() } }

    /// Records `item`, replacing the row at its path.
    package func upsert(_ item: JournalItem) throws { try transactionTogether { try $0.upsert(item) } }

    /// Removes the row at `path` and the rows inside it; returns how many.
    @discardableResult
    package func remove(_ path: RemotePath) throws -> Int { try transaction { try $0.remove(path) } }

    /// Moves the row at `source` and the rows inside it to `destination`; returns how many.
    @discardableResult
    package func renameItem(from source: RemotePath, to destination: RemotePath) throws -> Int {
        try transaction { try $0.renameItem(from: source, to: destination) }
    }

    /// Records an intent before its remote write; returns it with its number.
    package func beginIntent(_ intent: SyncIntent) throws -> SyncIntent {
        try transactionTogether(recordsOutcome: false) { try $0.beginIntent(intent) }
    }

    /// Removes a pending intent (alone: to record its outcome with it, use ``transaction(_:)``).
    package func completeIntent(_ id: Int64) throws { try transactionTogether { try $0.completeIntent(id) } }

    /// Every conflict version shared through the remote, by its identifier there.
    package func conflicts() throws -> [SharedConflict] { try read { try $0.conflicts() } }

    /// The intents whose outcome was never recorded, oldest first.
    package func pendingIntents() throws -> [SyncIntent] { try read { try $0.pendingIntents() } }

    /// The value of a setting, or nil.
    package func setting(_ key: SettingKey) throws -> String? { try read { try $0.setting(key) } }

    /// The pause in force, with the documents it names; nil when sync is not paused. A read,
    /// which never waits for a writer: `docs status` takes it while the agent syncs.
    package func pause() throws -> SyncPause? { try read { try $0.pause() } }

    /// Sets a setting, or removes it when `value` is nil.
    package func setSetting(_ key: SettingKey, _ value: String?) throws {
        try transaction { try $0.setSetting(key, value) }
    }
}
