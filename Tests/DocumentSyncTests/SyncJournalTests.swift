import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

@Suite struct SyncJournalTests {
    private struct Refusal: Error {}

    /// A journal for a container in `folder`, with `folder/state` standing for XDG_STATE_HOME.
    private func makeJournal(_ folder: TemporaryFolder) throws -> SyncJournal {
        try SyncJournal(container: try folder.folder("container"), stateHome: folder.file("state"))
    }

    private func fullItem(_ path: String) -> JournalItem {
        JournalItem(
            path: RemotePath(path), kind: .file, remoteTag: RemoteTag("etag-\"1\""), remoteSize: 4096,
            remoteFileID: "dev:42",
            syncedHash: ContentHash(of: Data("bytes".utf8)).hex,
            local: JournalItem.LocalStatus(
                inode: .max - 3, size: 4096, modification: 1_700_000_000_123_456_789,
                statusChange: -1_000_000_001),
            baseVersion: "chunk/abc")
    }

    /// `itemsByPath()` keeps what it read for the next pass; every commit, through this
    /// journal or another connection (a second process), must be seen all the same.
    @Test func itemsByPathSeesEveryCommit() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let first = fullItem("a.txt")
        try journal.upsert(first)
        #expect(try journal.itemsByPath() == [first.path: first])
        #expect(try journal.itemsByPath() == [first.path: first])

        let other = try SyncJournal(url: journal.url)
        let second = fullItem("b.txt")
        try other.upsert(second)
        #expect(try journal.itemsByPath() == [first.path: first, second.path: second])

        try journal.renameItem(from: first.path, to: RemotePath("c.txt"))
        #expect(try journal.itemsByPath().keys.sorted() == [RemotePath("b.txt"), RemotePath("c.txt")])
        // A transaction that throws changes nothing, and what is read stays right.
        #expect(throws: Refusal.self) {
            try journal.transaction { transaction in
                try transaction.remove(second.path)
                throw Refusal()
            }
        }
        #expect(try journal.itemsByPath().keys.sorted() == [RemotePath("b.txt"), RemotePath("c.txt")])
        try other.remove(second.path)
        #expect(try journal.itemsByPath().keys.sorted() == [RemotePath("c.txt")])
    }

    /// The status's list of synced files: a file synced both ways, with the status it had
    /// then; never a folder, a file not uploaded yet, one never seen here, or one kept on the
    /// server only.
    @Test func syncedFilesAreTheFilesSyncedBothWays() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let synced = fullItem("a b/é.txt")
        try journal.upsert(synced)
        var evicted = fullItem("evicted.txt")
        evicted.local = .evicted
        try journal.upsert(evicted)
        var unseen = fullItem("unseen.txt")
        unseen.local = .unseen
        try journal.upsert(unseen)
        var notUploaded = fullItem("new.txt")
        notUploaded.remoteTag = nil
        try journal.upsert(notUploaded)
        var neverHere = fullItem("there.txt")
        neverHere.local = nil
        try journal.upsert(neverHere)
        try journal.upsert(JournalItem(path: RemotePath("a b"), kind: .folder, remoteTag: RemoteTag("f")))
        let local = try #require(synced.local)
        #expect(
            UbiquityStatus.parseSynced(try journal.encodedSyncedFiles()) == [
                "a b/é.txt": [Int64(bitPattern: local.inode), local.size, local.modification],
                "unseen.txt": [0, -1, 0],
            ])
        // As the status's list holds them, byte for byte, in the order its encoder sorts.
        for path in ["Zed.txt", "ä/b.txt", "a.txt", "a b/z.txt", "日本.txt", "a-b.txt"] {
            try journal.upsert(fullItem(path))
        }
        let list = try journal.encodedSyncedFiles()
        #expect(list == UbiquityStatus.encodeSynced(UbiquityStatus.parseSynced(list)))
        #expect(UbiquityStatus.parseSynced(list).count == 8)
    }

    /// The items' stamp moves with every change to an item, made here or through another
    /// connection, stays while nothing changes (intents and settings are not items), and a
    /// journal made again never takes up an old one's stamps.
    @Test func theItemsStampMovesWithEveryChangeToAnItemAndOnlyThen() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        var stamps: [String] = []
        func stamp() throws -> String { try #require(try journal.itemsStamp()) }
        stamps.append(try stamp())
        var item = fullItem("a/b.txt")
        try journal.upsert(item)
        stamps.append(try stamp())
        #expect(try stamp() == stamps.last)
        let intent = try journal.beginIntent(
            SyncIntent(operation: .upload, path: item.path, condition: .absent, created: Date()))
        try journal.completeIntent(intent.id)
        #expect(try stamp() == stamps.last)
        item.remoteTag = RemoteTag("t2")
        try journal.upsert(item)
        stamps.append(try stamp())
        try journal.upsert(fullItem("a/c.txt"))
        try journal.renameItem(from: RemotePath("a/c.txt"), to: RemotePath("a/d.txt"))
        stamps.append(try stamp())
        let other = try SyncJournal(url: journal.url)
        try other.remove(RemotePath("a/d.txt"))
        stamps.append(try stamp())
        #expect(Set(stamps).count == stamps.count)

        try FileManager.default.removeItem(at: journal.url)
        let again = try SyncJournal(url: journal.url)
        try again.upsert(fullItem("a/b.txt"))
        let fresh = try #require(try again.itemsStamp())
        #expect(!stamps.contains(fresh))
    }

    @Test func upsertReadsBackEveryField() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let item = fullItem("Notes/plan.txt")
        try journal.upsert(item)
        #expect(try journal.item(at: item.path) == item)

        var bare = JournalItem(path: RemotePath("Notes"), kind: .folder)
        try journal.upsert(bare)
        #expect(try journal.item(at: bare.path) == bare)
        bare.remoteTag = RemoteTag("t2")
        try journal.upsert(bare)  // replaces
        #expect(try journal.item(at: bare.path) == bare)
        #expect(try journal.allItems() == [bare, item])
        #expect(try journal.item(at: RemotePath("missing")) == nil)
    }

    @Test func pathsAreOneSpellingInNFC() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        try journal.upsert(JournalItem(path: RemotePath("cafe\u{301}.txt"), kind: .file))
        let found = try #require(try journal.item(at: RemotePath("caf\u{e9}.txt")))
        #expect(Array(found.path.string.utf8) == Array("caf\u{e9}.txt".utf8))
    }

    @Test func renameItemMovesAFolderWithEverythingInside() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let paths = [
            "Notes", "Notes/a.txt", "Notes/Sub", "Notes/Sub/\u{e9}t\u{e9}.txt", "Notes.txt", "Notes2/x",
            "Other",
        ]
        for path in paths {
            try journal.upsert(
                JournalItem(path: RemotePath(path), kind: path.contains(".") ? .file : .folder))
        }
        #expect(try journal.renameItem(from: RemotePath("Notes"), to: RemotePath("Archive/N\u{f6}tes")) == 4)
        let after = try journal.allItems().map(\.path.string)
        #expect(
            after == [
                "Archive/N\u{f6}tes", "Archive/N\u{f6}tes/Sub", "Archive/N\u{f6}tes/Sub/\u{e9}t\u{e9}.txt",
                "Archive/N\u{f6}tes/a.txt", "Notes.txt", "Notes2/x", "Other",
            ])
        // The moved rows keep their fields.
        #expect(try journal.item(at: RemotePath("Archive/N\u{f6}tes/a.txt"))?.kind == .file)
        // A rename from a folder whose name has non-ASCII letters cuts at the right place.
        #expect(try journal.renameItem(from: RemotePath("Archive/N\u{f6}tes/Sub"), to: RemotePath("S")) == 2)
        #expect(try journal.item(at: RemotePath("S/\u{e9}t\u{e9}.txt")) != nil)
    }

    @Test func renameNeverOverwrites() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        for path in ["a", "a/x", "b", "b/y"] {
            try journal.upsert(JournalItem(path: RemotePath(path), kind: .folder))
        }
        #expect(throws: SyncJournalError.pathTaken(journal.url, RemotePath("b"))) {
            try journal.renameItem(from: RemotePath("a"), to: RemotePath("b"))
        }
        #expect(throws: SyncJournalError.self) {
            try journal.renameItem(from: RemotePath("a"), to: RemotePath("a/x/z"))
        }
        #expect(try journal.allItems().map(\.path.string) == ["a", "a/x", "b", "b/y"])
    }

    @Test func removeTakesTheItemsInsideAFolder() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        for path in ["a", "a/x", "a/x/y", "ab", "a.txt"] {
            try journal.upsert(JournalItem(path: RemotePath(path), kind: .file))
        }
        #expect(try journal.remove(RemotePath("a")) == 3)
        #expect(try journal.allItems().map(\.path.string) == ["a.txt", "ab"])
        #expect(try journal.items(under: RemotePath("ab")).map(\.path.string) == ["ab"])
        let byPath = try journal.itemsByPath()
        #expect(byPath == Dictionary(uniqueKeysWithValues: try journal.allItems().map { ($0.path, $0) }))
        #expect(byPath.count == 2)
    }

    @Test func intentsAreCompletedWithTheOutcomeTheyRecord() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let created = Date(timeIntervalSince1970: 1_700_000_000.123)
        let upload = try journal.beginIntent(
            SyncIntent(
                operation: .upload, path: RemotePath("a.txt"), hash: "h1", condition: .absent,
                created: created))
        let move = try journal.beginIntent(
            SyncIntent(
                operation: .move, path: RemotePath("b"), destination: RemotePath("c"),
                condition: .matches(RemoteTag("matches:odd tag")), created: created))
        let folderIntent = try journal.beginIntent(
            SyncIntent(operation: .makeFolder, path: RemotePath("d"), condition: nil, created: created))
        #expect(upload.id != move.id && upload.id > 0)
        #expect(try journal.pendingIntents() == [upload, move, folderIntent])

        try journal.transaction { transaction in
            try transaction.upsert(JournalItem(path: RemotePath("a.txt"), kind: .file, syncedHash: "h1"))
            try transaction.completeIntent(upload.id)
        }
        #expect(try journal.pendingIntents() == [move, folderIntent])
        #expect(throws: SyncJournalError.noSuchIntent(journal.url, id: upload.id)) {
            try journal.completeIntent(upload.id)
        }
    }

    @Test func aThrowingTransactionRecordsNeitherTheItemNorTheOutcome() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let intent = try journal.beginIntent(
            SyncIntent(operation: .delete, path: RemotePath("x"), condition: .absent, created: Date()))
        #expect(throws: Refusal.self) {
            try journal.transaction { transaction in
                try transaction.upsert(JournalItem(path: RemotePath("x"), kind: .file))
                try transaction.completeIntent(intent.id)
                throw Refusal()
            }
        }
        #expect(try journal.item(at: RemotePath("x")) == nil)
        #expect(try journal.pendingIntents() == [intent])
    }

    /// Transactions handed in from many threads at once share commits: each is committed
    /// when its call returns (another connection, a second process, sees it then), one that
    /// throws takes back only its own changes and throws to its own caller, and the
    /// transactions that waited for a commit to end are committed together by the next.
    @Test func transactionsHandedInTogetherShareACommitAndKeepTheirOwnOutcome() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        let other = try SyncJournal(url: journal.url)
        let waiting = 15
        let handedIn = Locked(0)
        let committing = Locked(false)
        let outcomes = Locked([Int: Bool]())  // thread: committed and seen by `other` on return
        let finished = DispatchGroup()
        finished.enter()
        Thread {
            // The first commit is held until every other thread has handed its transaction in.
            try? journal.transactionTogether { transaction in
                committing.value.withLock { $0 = true }
                try transaction.upsert(JournalItem(path: RemotePath("first"), kind: .file))
                while handedIn.value.withLock({ $0 }) < waiting { Thread.sleep(forTimeInterval: 0.01) }
                Thread.sleep(forTimeInterval: 0.1)
            }
            finished.leave()
        }.start()
        while !committing.value.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
        for index in 0..<waiting {
            finished.enter()
            Thread {
                let path = RemotePath("t\(index)")
                handedIn.value.withLock { $0 += 1 }
                do {
                    try journal.transactionTogether { transaction in
                        try transaction.upsert(JournalItem(path: path, kind: .file))
                        if index % 5 == 0 { throw Refusal() }
                    }
                    let seen = (try? other.item(at: path)) != nil
                    outcomes.value.withLock { $0[index] = seen }
                } catch {
                    outcomes.value.withLock { $0[index] = error is Refusal ? false : true }
                }
                finished.leave()
            }.start()
        }
        finished.wait()
        let results = outcomes.value.withLock { $0 }
        // Committed and visible on return, or refused (and then not recorded).
        #expect(results == Dictionary(uniqueKeysWithValues: (0..<waiting).map { ($0, $0 % 5 != 0) }))
        let recorded = try journal.itemsByPath().keys.map(\.string).sorted()
        #expect(recorded == (["first"] + (0..<waiting).filter { $0 % 5 != 0 }.map { "t\($0)" }).sorted())
        let commits = journal.groupedCommits.load(ordering: .relaxed)
        #expect(commits >= 2 && commits <= 4, "\(commits) commits for \(waiting + 1) transactions")
    }

    @Test func pendingIntentsSurviveReopening() throws {
        let folder = try TemporaryFolder()
        let intent: SyncIntent
        do {
            let journal = try makeJournal(folder)
            intent = try journal.beginIntent(
                SyncIntent(
                    operation: .conflictUpload, path: RemotePath(".documentsync/conflicts/a"), hash: "h",
                    condition: .absent, created: Date(timeIntervalSince1970: 1_600_000_000)))
        }
        let reopened = try makeJournal(folder)
        #expect(try reopened.pendingIntents() == [intent])
    }

    @Test func settingsAreKeptPerContainer() throws {
        let folder = try TemporaryFolder()
        let journal = try makeJournal(folder)
        #expect(try journal.setting(.remoteURL) == nil)
        try journal.setSetting(.remoteURL, "file:///mnt/backup")
        try journal.setSetting(.pauseReason, "1,200 of 1,300 items would be deleted")
        #expect(try journal.setting(.remoteURL) == "file:///mnt/backup")
        try journal.setSetting(.pauseReason, nil)
        #expect(try journal.setting(.pauseReason) == nil)
        #expect(try journal.setting(.container) == CanonicalPath.of(folder.file("container")))
    }

    @Test func aCorruptJournalIsRecognisedAndSetAside() throws {
        let folder = try TemporaryFolder()
        let container = try folder.folder("container")
        let url = SyncJournal.url(forContainer: container, stateHome: folder.file("state"))
        do {
            let journal = try SyncJournal(url: url)
            try journal.upsert(JournalItem(path: RemotePath("a"), kind: .file))
        }
        let garbage = Data(repeating: 0xA5, count: 8192)
        try garbage.write(to: url)
        #expect(throws: SyncJournalError.corrupt(url)) { try SyncJournal(url: url) }

        let now = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14T22:13:20Z
        let fresh = try SyncJournal.reset(at: url, now: now)
        #expect(try fresh.allItems().isEmpty)
        try fresh.upsert(JournalItem(path: RemotePath("b"), kind: .file))
        let kept = URL(fileURLWithPath: url.path + ".corrupt-20231114T221320Z")
        #expect(try Data(contentsOf: kept) == garbage)

        // A second reset in the same second keeps both bad files.
        let again = try fresh.reset(now: now)
        #expect(try again.allItems().isEmpty)
        #expect(FileStatus(path: url.path + ".corrupt-20231114T221320Z-2") != nil)
        #expect(throws: SyncJournalError.self) { try fresh.allItems() }  // closed by its reset
    }

    @Test func aDamagedPageIsReportedAsCorrupt() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("journal.sqlite3")
        do {
            let journal = try SyncJournal(url: url)
            try journal.transaction { transaction in
                for index in 0..<2000 {
                    try transaction.upsert(
                        JournalItem(path: RemotePath("folder/item-\(index)"), kind: .file, syncedHash: "h"))
                }
            }
        }  // The last connection's close folds the log into the file.
        // Overwrite the middle of the file, past the header, with noise.
        var bytes = try Data(contentsOf: url)
        #expect(bytes.count > 8192)
        for index in 4096..<min(bytes.count, 12288) { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
        try bytes.write(to: url)
        #expect(throws: SyncJournalError.corrupt(url)) { try SyncJournal(url: url) }
    }

    @Test func theJournalLivesUnderTheStateHomeNamedByTheContainersCanonicalPath() throws {
        let folder = try TemporaryFolder()
        let container = try folder.folder("real/container")
        try FileManager.default.createSymbolicLink(
            at: folder.file("link"), withDestinationURL: folder.file("real"))
        let stateHome = folder.file("state")
        let url = SyncJournal.url(forContainer: container, stateHome: stateHome)
        let hash = ContentHash(of: Data(CanonicalPath.of(container).utf8)).hex
        #expect(url.path == stateHome.path + "/DocumentKit/sync/\(hash).sqlite3")
        #expect(SyncJournal.url(forContainer: folder.file("link/container"), stateHome: stateHome) == url)
        #expect(SyncJournal.url(forContainer: folder.file("real/./container"), stateHome: stateHome) == url)
        #expect(SyncJournal.url(forContainer: folder.file("real/other"), stateHome: stateHome) != url)

        _ = try SyncJournal(container: container, stateHome: stateHome)
        #expect(FileStatus(path: url.path)?.permissions == 0o600)
        #expect(FileStatus(path: stateHome.path + "/DocumentKit/sync")?.permissions == 0o700)

        #expect(
            SyncJournal.defaultStateHome(environment: ["XDG_STATE_HOME": "/srv/state", "HOME": "/home/a"])
                .path == "/srv/state")
        // The spec says a relative value is ignored.
        #expect(
            SyncJournal.defaultStateHome(environment: ["XDG_STATE_HOME": "rel", "HOME": "/home/a"]).path
                == "/home/a/.local/state")
        #expect(SyncJournal.defaultStateHome(environment: ["HOME": "/home/a"]).path == "/home/a/.local/state")
    }
}
