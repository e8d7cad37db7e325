import DocumentKit
import Foundation

extension SyncJournal {
    /// The journal inside one transaction: every change made through it commits together or
    /// not at all. Valid only inside the ``SyncJournal/transaction(_:)`` closure it is given to.
    package struct Transaction {
        let connection: SQLiteConnection
        var url: URL { connection.url }

        private static let columns = """
            path, kind, remoteTag, remoteSize, remoteFileID, syncedHash, localInode, localSize,
            localModification, localStatusChange, baseVersion
            """

        /// The row for `path`, or nil when the journal has none.
        package func item(at path: RemotePath) throws -> JournalItem? {
            try connection.queryFirst(
                "SELECT \(Self.columns) FROM items WHERE path = ?", [.text(path.string)]
            ) {
                try item(from: $0)
            }
        }

        /// Every row, in path order (a folder right before its contents).
        package func allItems() throws -> [JournalItem] {
            try connection.queryAll("SELECT \(Self.columns) FROM items") { try item(from: $0) }.sorted {
                $0.path < $1.path
            }
        }

        /// Every row by its path, unsorted: what a pass looks items up in.
        package func itemsByPath() throws -> [RemotePath: JournalItem] {
            var items: [RemotePath: JournalItem] = [:]
            try connection.query("SELECT \(Self.columns) FROM items") { row in
                let item = try item(from: row)
                items[item.path] = item
            }
            return items
        }

        /// See ``SyncJournal/forEachReference(_:)``.
        package func forEachReference(_ body: (RemotePath, JournalReference) throws -> Void) throws {
            try connection.query(
                """
                SELECT path, kind, remoteTag, localInode, localSize, localModification, localStatusChange
                FROM items
                """
            ) { row in
                let path = RemotePath(try row.value(at: 0) as String)
                try body(
                    path,
                    JournalReference(
                        kind: try kind(try row.value(at: 1), of: path),
                        local: try localStatus(row, from: 3),
                        remoteTag: (try row.value(at: 2) as String?).map { RemoteTag($0) }))
            }
        }

        /// See ``SyncJournal/items(at:)``.
        package func items(at paths: Set<RemotePath>) throws -> [RemotePath: JournalItem] {
            var items: [RemotePath: JournalItem] = [:]
            items.reserveCapacity(paths.count)
            // A few rows are looked up by path; many are read in one walk of the table.
            guard paths.count > Self.rowsLookedUpOneByOne else {
                for path in paths { items[path] = try item(at: path) }
                return items
            }
            try connection.query("SELECT \(Self.columns) FROM items") { row in
                let item = try item(from: row)
                if paths.contains(item.path) { items[item.path] = item }
            }
            return items
        }

        /// Up to how many rows ``items(at:)`` looks up one at a time.
        private static let rowsLookedUpOneByOne = 4096

        /// `PRAGMA data_version`: changes when another connection commits, not for commits
        /// made through this one.
        package func dataVersion() throws -> Int {
            try connection.queryFirst("PRAGMA data_version") { try $0.value(at: 0) as Int } ?? 0
        }

        /// See ``SyncJournal/itemsStamp()``.
        package func itemsStamp() throws -> String? {
            try connection.queryFirst("SELECT journal, changes FROM itemsChanged WHERE id = 1") {
                "\(try $0.value(at: 0) as String):\(try $0.value(at: 1) as Int64)"
            }
        }

        /// See ``SyncJournal/encodedSyncedFiles()``. A file kept on the server only has the
        /// local status ``JournalItem/LocalStatus/evicted``. By path in byte order: an NFC
        /// path's order as a `String`, the order ``UbiquityStatus/encodeSynced(_:)`` sorts in.
        package func encodedSyncedFiles() throws -> Data {
            let evicted = JournalItem.LocalStatus.evicted
            var data = Data()
            try connection.query(
                """
                SELECT path, localInode, localSize, localModification FROM items
                WHERE kind = 'file' AND remoteTag IS NOT NULL AND localInode IS NOT NULL
                    AND localSize IS NOT NULL AND localModification IS NOT NULL
                    AND localStatusChange IS NOT NULL
                    AND NOT (localInode = ? AND localSize = ? AND localModification = ?
                        AND localStatusChange = ?)
                ORDER BY path
                """,
                [
                    .integer(Int64(bitPattern: evicted.inode)), .integer(evicted.size),
                    .integer(evicted.modification), .integer(evicted.statusChange),
                ]
            ) { row in
                UbiquityStatus.appendSynced(
                    path: try row.value(at: 0),
                    [try row.value(at: 1), try row.value(at: 2), try row.value(at: 3)],
                    to: &data)
            }
            return data
        }

        /// The rows of `folder` and everything inside it, in path order.
        package func items(under folder: RemotePath) throws -> [JournalItem] {
            let (filter, bindings) = Self.subtree(folder)
            return try connection.queryAll("SELECT \(Self.columns) FROM items WHERE \(filter)", bindings) {
                try item(from: $0)
            }.sorted { $0.path < $1.path }
        }

        /// Records `item`, replacing the row at its path.
        package func upsert(_ item: JournalItem) throws {
            try connection.execute(
                """
                INSERT INTO items (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, remoteTag = excluded.remoteTag,
                    remoteSize = excluded.remoteSize, remoteFileID = excluded.remoteFileID,
                    syncedHash = excluded.syncedHash, localInode = excluded.localInode,
                    localSize = excluded.localSize, localModification = excluded.localModification,
                    localStatusChange = excluded.localStatusChange, baseVersion = excluded.baseVersion
                """,
                [
                    .text(item.path.string), .text(item.kind.rawValue), SQLiteValue(item.remoteTag?.rawValue),
                    SQLiteValue(item.remoteSize), SQLiteValue(item.remoteFileID),
                    SQLiteValue(item.syncedHash),
                    SQLiteValue(item.local.map { Int64(bitPattern: $0.inode) }),
                    SQLiteValue(item.local?.size),
                    SQLiteValue(item.local?.modification), SQLiteValue(item.local?.statusChange),
                    SQLiteValue(item.baseVersion),
                ])
        }

        /// Removes the row at `path` and the rows of everything inside it.
        ///
        /// - Returns: How many rows were removed.
        @discardableResult
        package func remove(_ path: RemotePath) throws -> Int {
            let (filter, bindings) = Self.subtree(path)
            try connection.execute("DELETE FROM items WHERE \(filter)", bindings)
            return connection.changes
        }

        /// Moves the row at `source`, and the rows of everything inside it, to `destination`.
        ///
        /// - Returns: How many rows moved (0 when the journal has nothing at `source`).
        /// - Throws: ``SyncJournalError/pathTaken(_:_:)`` when a row is at `destination` or
        ///   inside it (nothing moves); ``SyncJournalError/invalidRename(_:from:to:)`` for a
        ///   folder into itself.
        @discardableResult
        package func renameItem(from source: RemotePath, to destination: RemotePath) throws -> Int {
            guard source != destination else { return 0 }
            guard !source.isRoot, !destination.isRoot, !destination.isDescendant(of: source) else {
                throw SyncJournalError.invalidRename(url, from: source, to: destination)
            }
            let (taken, takenBindings) = Self.subtree(destination)
            if try connection.queryFirst(
                "SELECT 1 FROM items WHERE \(taken) LIMIT 1", takenBindings, { _ in true })
                ?? false
            {
                throw SyncJournalError.pathTaken(url, destination)
            }
            // substr counts characters (code points) from 1: keep what follows the source path.
            let (filter, bindings) = Self.subtree(source)
            let rename: [SQLiteValue] = [
                .text(destination.string), .integer(Int64(source.string.unicodeScalars.count + 1)),
            ]
            try connection.execute(
                "UPDATE items SET path = ? || substr(path, ?) WHERE \(filter)", rename + bindings)
            let moved = connection.changes
            // The conflict versions of what moved move with it; the remote's descriptions of
            // those already shared still name the old path until they are rewritten.
            try connection.execute(
                "UPDATE conflicts SET describedPath = coalesce(describedPath, path) WHERE uploaded AND \(filter)",
                bindings)
            try connection.execute(
                "UPDATE conflicts SET path = ? || substr(path, ?) WHERE \(filter)", rename + bindings)
            try connection.execute("UPDATE conflicts SET describedPath = NULL WHERE describedPath = path")
            return moved
        }

        /// Records an intent before its remote write.
        ///
        /// - Returns: The intent with its ``SyncIntent/id`` set.
        package func beginIntent(_ intent: SyncIntent) throws -> SyncIntent {
            let condition: SQLiteValue
            switch intent.condition {
            case nil: condition = .null
            case .absent: condition = .text("absent")
            case .matches(let tag): condition = .text("matches:" + tag.rawValue)
            }
            try connection.execute(
                "INSERT INTO intents (operation, path, destination, hash, condition, created) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .text(intent.operation.rawValue), .text(intent.path.string),
                    SQLiteValue(intent.destination?.string), SQLiteValue(intent.hash), condition,
                    .integer(SyncIntent.milliseconds(intent.created)),
                ])
            var recorded = intent
            recorded.id = connection.lastInsertedRowID
            return recorded
        }

        /// Removes a pending intent: its write's outcome is recorded in this transaction.
        ///
        /// - Throws: ``SyncJournalError/noSuchIntent(_:id:)`` when no intent has that number.
        package func completeIntent(_ id: Int64) throws {
            try connection.execute("DELETE FROM intents WHERE id = ?", [.integer(id)])
            guard connection.changes == 1 else { throw SyncJournalError.noSuchIntent(url, id: id) }
        }

        /// The intents whose outcome was never recorded, oldest first.
        package func pendingIntents() throws -> [SyncIntent] {
            try connection.queryAll(
                "SELECT id, operation, path, destination, hash, condition, created FROM intents ORDER BY id"
            ) { row in
                let path = RemotePath(try row.value(at: 2) as String)
                let operationName: String = try row.value(at: 1)
                guard let operation = SyncIntent.Operation(rawValue: operationName) else {
                    throw SyncJournalError.invalidRow(
                        url, path: path.string, detail: "operation \(operationName)")
                }
                let condition: WriteCondition?
                switch try row.value(at: 5) as String? {
                case nil: condition = nil
                case "absent": condition = .absent
                case let text? where text.hasPrefix("matches:"):
                    condition = .matches(RemoteTag(String(text.dropFirst("matches:".count))))
                case let text?:
                    throw SyncJournalError.invalidRow(url, path: path.string, detail: "condition \(text)")
                }
                return SyncIntent(
                    id: try row.value(at: 0), operation: operation, path: path,
                    destination: (try row.value(at: 3) as String?).map { RemotePath($0) },
                    hash: try row.value(at: 4), condition: condition,
                    created: SyncIntent.date(milliseconds: try row.value(at: 6)))
            }
        }

        /// The value of a setting, or nil when it is not set.
        package func setting(_ key: SettingKey) throws -> String? {
            try connection.queryFirst("SELECT value FROM settings WHERE key = ?", [.text(key.rawValue)]) {
                try $0.value(at: 0) as String
            }
        }

        /// Sets a setting, or removes it when `value` is nil.
        package func setSetting(_ key: SettingKey, _ value: String?) throws {
            if let value {
                try connection.execute(
                    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [.text(key.rawValue), .text(value)])
            } else {
                try connection.execute("DELETE FROM settings WHERE key = ?", [.text(key.rawValue)])
            }
        }

        /// Every conflict version shared through the remote, by its identifier there.
        package func conflicts() throws -> [SharedConflict] {
            try connection.queryAll(
                "SELECT id, path, localVersion, uploaded, describedPath, descriptionTag FROM conflicts"
            ) {
                row in
                SharedConflict(
                    id: try row.value(at: 0), path: RemotePath(try row.value(at: 1) as String),
                    localVersion: try row.value(at: 2), isUploaded: try row.value(at: 3),
                    describedPath: (try row.value(at: 4) as String?).map { RemotePath($0) },
                    descriptionTag: (try row.value(at: 5) as String?).map { RemoteTag($0) })
            }.sorted { $0.id < $1.id }
        }

        /// Records a shared conflict version, replacing the row with its identifier.
        package func upsertConflict(_ conflict: SharedConflict) throws {
            try connection.execute(
                "INSERT INTO conflicts (id, path, localVersion, uploaded, describedPath, descriptionTag) "
                    + "VALUES (?, ?, ?, ?, ?, ?) "
                    + "ON CONFLICT (id) DO UPDATE SET path = excluded.path, "
                    + "localVersion = excluded.localVersion, uploaded = excluded.uploaded, "
                    + "describedPath = excluded.describedPath, descriptionTag = excluded.descriptionTag",
                [
                    .text(conflict.id), .text(conflict.path.string), .text(conflict.localVersion),
                    SQLiteValue(conflict.isUploaded), SQLiteValue(conflict.describedPath?.string),
                    SQLiteValue(conflict.descriptionTag?.rawValue),
                ])
        }

        /// Forgets a shared conflict version.
        package func removeConflict(_ id: String) throws {
            try connection.execute("DELETE FROM conflicts WHERE id = ?", [.text(id)])
        }

        private func item(from row: SQLiteRow) throws -> JournalItem {
            let path = RemotePath(try row.value(at: 0) as String)
            return JournalItem(
                path: path, kind: try kind(try row.value(at: 1), of: path),
                remoteTag: (try row.value(at: 2) as String?).map { RemoteTag($0) },
                remoteSize: try row.value(at: 3), remoteFileID: try row.value(at: 4),
                syncedHash: try row.value(at: 5), local: try localStatus(row, from: 6),
                baseVersion: try row.value(at: 10))
        }

        private func kind(_ name: String, of path: RemotePath) throws -> RemoteEntry.Kind {
            guard let kind = RemoteEntry.Kind(rawValue: name) else {
                throw SyncJournalError.invalidRow(url, path: path.string, detail: "kind \(name)")
            }
            return kind
        }

        /// The local status in the four columns from `column` (inode, size, modification,
        /// status change); nil unless all four are there.
        private func localStatus(_ row: SQLiteRow, from column: Int32) throws -> JournalItem.LocalStatus? {
            guard let inode = try row.value(at: column) as Int64?,
                let size = try row.value(at: column + 1) as Int64?,
                let modification = try row.value(at: column + 2) as Int64?,
                let change = try row.value(at: column + 3) as Int64?
            else { return nil }
            return JournalItem.LocalStatus(
                inode: UInt64(bitPattern: inode), size: size, modification: modification, statusChange: change
            )
        }

        /// The filter for `path` and everything inside it: with BINARY collation, the paths
        /// from "p/" up to (not including) "p0" are those that start with "p/" ("0" follows "/").
        private static func subtree(_ path: RemotePath) -> (String, [SQLiteValue]) {
            guard !path.isRoot else { return ("1", []) }
            let prefix = path.string
            return (
                "(path = ? OR (path >= ? AND path < ?))",
                [.text(prefix), .text(prefix + "/"), .text(prefix + "0")]
            )
        }
    }
}
