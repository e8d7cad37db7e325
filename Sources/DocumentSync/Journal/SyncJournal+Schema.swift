import DocumentKit

extension SyncJournal {
    /// The schema, one migration per version (`PRAGMA user_version`); append, never edit.
    static var migrations: [(SQLiteConnection) throws -> Void] {
        [
            { connection in
                try connection.executeScript(
                    """
                    CREATE TABLE items (
                        path TEXT PRIMARY KEY NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('file', 'folder')),
                        remoteTag TEXT,
                        remoteSize INTEGER,
                        remoteFileID TEXT,
                        syncedHash TEXT,
                        localInode INTEGER,
                        localSize INTEGER,
                        localModification INTEGER,
                        localStatusChange INTEGER,
                        baseVersion TEXT
                    ) WITHOUT ROWID;
                    CREATE TABLE intents (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        operation TEXT NOT NULL
                            CHECK (operation IN ('upload', 'delete', 'move', 'makeFolder', 'conflictUpload')),
                        path TEXT NOT NULL,
                        destination TEXT,
                        hash TEXT,
                        condition TEXT,
                        created INTEGER NOT NULL
                    );
                    CREATE TABLE settings (
                        key TEXT PRIMARY KEY NOT NULL,
                        value TEXT NOT NULL
                    ) WITHOUT ROWID;
                    """)
            },
            // Conflict versions shared through the remote's conflicts area.
            { connection in
                try connection.executeScript(
                    """
                    CREATE TABLE conflicts (
                        id TEXT PRIMARY KEY NOT NULL,
                        path TEXT NOT NULL,
                        localVersion TEXT NOT NULL,
                        uploaded INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
            },
            // Where a shared conflict's description still names the path its item moved from.
            { connection in
                try connection.executeScript("ALTER TABLE conflicts ADD COLUMN describedPath TEXT;")
            },
            // Downloads are recorded as intents too: the operation's CHECK is rebuilt to allow them.
            { connection in
                try connection.executeScript(
                    """
                    CREATE TABLE intents_new (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        operation TEXT NOT NULL
                            CHECK (operation IN (
                                'upload', 'delete', 'move', 'makeFolder', 'conflictUpload', 'download')),
                        path TEXT NOT NULL,
                        destination TEXT,
                        hash TEXT,
                        condition TEXT,
                        created INTEGER NOT NULL
                    );
                    INSERT INTO intents_new SELECT id, operation, path, destination, hash, condition, created
                        FROM intents;
                    DROP TABLE intents;
                    ALTER TABLE intents_new RENAME TO intents;
                    """)
            },
            // The tag of a shared conflict's description as last read.
            { connection in
                try connection.executeScript("ALTER TABLE conflicts ADD COLUMN descriptionTag TEXT;")
            },
            // The documents a paused pass would delete, each with its side: what the user is
            // shown, and after "delete them", the only deletions a pass may make past the guard.
            { connection in
                try connection.executeScript(
                    """
                    CREATE TABLE pauseDeletions (
                        path TEXT NOT NULL,
                        side TEXT NOT NULL CHECK (side IN ('here', 'remote')),
                        PRIMARY KEY (path, side)
                    ) WITHOUT ROWID;
                    """)
            },
            // A stamp of the items: this journal's own random name and a count of the changes
            // to its items, kept by triggers in the transaction of each change, whoever makes
            // it. The status's list of synced files is made again only when the stamp moved.
            { connection in
                try connection.executeScript(
                    """
                    CREATE TABLE itemsChanged (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        journal TEXT NOT NULL,
                        changes INTEGER NOT NULL
                    );
                    INSERT INTO itemsChanged VALUES (1, lower(hex(randomblob(16))), 0);
                    CREATE TRIGGER itemInserted AFTER INSERT ON items
                        BEGIN UPDATE itemsChanged SET changes = changes + 1; END;
                    CREATE TRIGGER itemUpdated AFTER UPDATE ON items
                        BEGIN UPDATE itemsChanged SET changes = changes + 1; END;
                    CREATE TRIGGER itemDeleted AFTER DELETE ON items
                        BEGIN UPDATE itemsChanged SET changes = changes + 1; END;
                    """)
            },
        ]
    }
}
