import Foundation
import Testing

@testable import DocumentKit

@Suite struct SQLiteDatabaseTests {
    private struct Refusal: Error {}

    private func makeDatabase(_ folder: TemporaryTree, _ name: String = "test.sqlite3") throws
        -> SQLiteDatabase
    {
        let database = try SQLiteDatabase(url: folder.file(name))
        try database.migrate([
            { try $0.executeScript("CREATE TABLE t (i INTEGER, s TEXT, b BLOB, n INTEGER)") }
        ])
        return database
    }

    @Test func bindsAndReadsEachType() throws {
        let folder = try TemporaryTree()
        let database = try makeDatabase(folder)
        let text = "caf\u{e9} \u{0} after a NUL"
        let blob = Data([0, 1, 2, 0xFF, 0])
        try database.transaction {
            try $0.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?)", [.integer(.max), .text(text), .blob(blob), nil])
            try $0.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?)", [.integer(.min), .text(""), .blob(Data()), 7])
        }
        let rows = try database.read { connection in
            try connection.queryAll("SELECT i, s, b, n FROM t ORDER BY i DESC") { row in
                (
                    try row.value(at: 0) as Int64, try row.value(at: 1) as String,
                    try row.value(at: 2) as Data,
                    try row.value(at: 3) as Int64?
                )
            }
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == .max && rows[0].1 == text && rows[0].2 == blob && rows[0].3 == nil)
        #expect(rows[1].0 == .min && rows[1].1 == "" && rows[1].2 == Data() && rows[1].3 == 7)
        // An empty blob is a blob, not NULL.
        let emptyIsNull = try database.read {
            try $0.queryFirst("SELECT b IS NULL FROM t WHERE i = ?", [.integer(.min)]) {
                try $0.value(at: 0) as Bool
            }
        }
        #expect(emptyIsNull == false)
    }

    @Test func readingTheWrongTypeNamesTheColumn() throws {
        let folder = try TemporaryTree()
        let database = try makeDatabase(folder)
        try database.transaction { try $0.execute("INSERT INTO t VALUES (1, 'text', NULL, NULL)") }
        let error = try #require(throws: SQLiteError.self) {
            try database.read { try $0.queryFirst("SELECT s FROM t") { try $0.value(at: 0) as Int64 } }
        }
        #expect(error.code == 20)  // SQLITE_MISMATCH
        #expect(error.description.contains("column s"))
        #expect(throws: SQLiteError.self) {
            try database.read { try $0.queryFirst("SELECT b FROM t") { try $0.value(at: 0) as Data } }
        }
        #expect(throws: SQLiteError.self) {
            try database.transaction { try $0.execute("INSERT INTO t VALUES (?, ?)", [1, 2]) }
        }
    }

    @Test func transactionRollsBackWhenItsBodyThrows() throws {
        let folder = try TemporaryTree()
        let database = try makeDatabase(folder)
        #expect(throws: Refusal.self) {
            try database.transaction { connection in
                try connection.execute("INSERT INTO t (i) VALUES (1)")
                throw Refusal()
            }
        }
        try database.transaction { try $0.execute("INSERT INTO t (i) VALUES (2)") }
        let values = try database.read { try $0.queryAll("SELECT i FROM t") { try $0.value(at: 0) as Int } }
        #expect(values == [2])
    }

    @Test func aFileThatIsNotADatabaseIsAnErrorNamingIt() throws {
        let folder = try TemporaryTree()
        let url = try folder.write(String(repeating: "not a database. ", count: 200), to: "bad.sqlite3")
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(url: url) }
        #expect(error.isCorrupt)
        #expect(error.description.contains(url.path))
        #expect(error.message.contains("not a database"))
        // Left as it was.
        #expect(try Data(contentsOf: url).count == 3200)
    }

    @Test func commitsAreFlushedOneByOneUnlessAskedNotToInWriteAheadLogging() throws {
        let folder = try TemporaryTree()
        var configuration = SQLiteDatabase.Configuration()
        configuration.flushesEveryCommit = false
        let database = try SQLiteDatabase(url: folder.file("journal.sqlite3"), configuration: configuration)
        let synchronous = try database.read {
            try $0.queryFirst("PRAGMA synchronous") { try $0.value(at: 0) as Int }
        }
        #expect(try database.journalMode() == "wal")
        #expect(synchronous == 1)  // NORMAL: flushed at checkpoints
    }

    @Test func opensInWriteAheadLoggingWithPrivateModes() throws {
        let folder = try TemporaryTree()
        let url = folder.file("state/deeper/journal.sqlite3")
        let database = try SQLiteDatabase(url: url)
        try database.migrate([{ try $0.executeScript("CREATE TABLE t (i INTEGER)") }])
        try database.transaction { try $0.execute("INSERT INTO t VALUES (1)") }
        #expect(try database.journalMode() == "wal")
        #expect(FileStatus(path: url.path)?.permissions == 0o600)
        #expect(FileStatus(path: url.path + "-wal")?.permissions == 0o600)
        #expect(FileStatus(path: folder.file("state").path)?.permissions == 0o700)
        #expect(FileStatus(path: folder.file("state/deeper").path)?.permissions == 0o700)
        let synchronous = try database.read {
            try $0.queryFirst("PRAGMA synchronous") { try $0.value(at: 0) as Int }
        }
        #expect(synchronous == 2)  // FULL
        let foreignKeys = try database.read {
            try $0.queryFirst("PRAGMA foreign_keys") { try $0.value(at: 0) as Int }
        }
        #expect(foreignKeys == 1)
    }

    @Test func migrationsRunOnceEachAndSetTheVersion() throws {
        let folder = try TemporaryTree()
        let url = folder.file("m.sqlite3")
        let migrations: [(SQLiteConnection) throws -> Void] = [
            { try $0.executeScript("CREATE TABLE a (x INTEGER)") },
            { try $0.executeScript("CREATE TABLE b (y INTEGER)") },
        ]
        let first = try SQLiteDatabase(url: url)
        #expect(try first.migrate(Array(migrations.prefix(1))) == (0, 1))
        #expect(try first.migrate(migrations) == (1, 2))
        first.close()
        let second = try SQLiteDatabase(url: url)
        #expect(try second.migrate(migrations) == (2, 2))  // CREATE TABLE again would throw
        #expect(try second.userVersion() == 2)
        let newer = #expect(throws: SQLiteError.self) { try second.migrate(Array(migrations.prefix(1))) }
        #expect(newer?.message.contains("newer") == true)
    }

    @Test func aFailedMigrationLeavesTheLastGoodVersion() throws {
        let folder = try TemporaryTree()
        let database = try SQLiteDatabase(url: folder.file("m.sqlite3"))
        #expect(throws: Refusal.self) {
            try database.migrate([
                { try $0.executeScript("CREATE TABLE a (x INTEGER)") },
                { connection in
                    try connection.executeScript("CREATE TABLE b (y INTEGER)")
                    throw Refusal()
                },
            ])
        }
        #expect(try database.userVersion() == 1)
        let tables = try database.read {
            try $0.queryAll("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                try $0.value(at: 0) as String
            }
        }
        #expect(tables == ["a"])
    }

    @Test func aClosedDatabaseThrows() throws {
        let folder = try TemporaryTree()
        let database = try makeDatabase(folder)
        database.close()
        #expect(throws: SQLiteError.self) { try database.userVersion() }
    }

    @Test func threadsShareOneDatabase() async throws {
        let folder = try TemporaryTree()
        let database = try makeDatabase(folder)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<50 {
                        try? database.transaction {
                            try $0.execute(
                                "INSERT INTO t (i) VALUES (?)", [.integer(Int64(worker * 1000 + index))])
                        }
                    }
                }
            }
        }
        let count = try database.read {
            try $0.queryFirst("SELECT count(*) FROM t") { try $0.value(at: 0) as Int }
        }
        #expect(count == 200)
    }
}
