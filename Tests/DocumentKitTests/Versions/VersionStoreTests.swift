import CDocumentSystem
import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct VersionStoreTests {
    // MARK: History

    @MainActor
    @Test func historyIsKeptAtEachSaveAndThinnedAsItAges() async throws {
        let tree = try TemporaryTree()
        // Midnight UTC, so the hour and day buckets below are the ones intended.
        let clock = StoreClock(Date(timeIntervalSince1970: 1_699_920_000))
        let store = makeStore(in: tree, clock: clock)
        let file = tree.file("notes.txt")
        let document = versionedDocument(file, store: store)
        document.text = "0"
        #expect(await document.save(to: file, for: .forCreating))
        for text in ["1", "2", "3", "4", "5"] {
            clock.advance(by: 600)
            #expect(await document.saveText(text))
            store.waitUntilIdle()
        }
        var versions = store.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == ["0", "1", "2", "3", "4"], "everything from the last hour")
        #expect(versions.allSatisfy { !$0.isConflict && $0.localizedName == "notes.txt" })

        clock.advance(by: 3 * 3600)
        #expect(await document.saveText("6"))
        store.waitUntilIdle()
        versions = store.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == ["4", "5"], "one an hour after the first hour")

        clock.advance(by: 3 * 86400)
        #expect(await document.saveText("7"))
        store.waitUntilIdle()
        versions = store.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == ["5", "6"], "one a day after the first day")

        clock.advance(by: 40 * 86400)
        #expect(await document.saveText("8"))
        store.waitUntilIdle()
        versions = store.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == ["7"], "nothing older than a month")
        // What dropped versions held is gone: one version left, in one pack with its bytes
        // inline, and no loose chunk.
        let chunks =
            FileManager.default.enumerator(atPath: store.root.appendingPathComponent("chunks").path)?
            .allObjects.compactMap { $0 as? String }.filter { $0.contains("/") } ?? []
        #expect(chunks.isEmpty, "\(chunks)")
        let packs = try FileManager.default.contentsOfDirectory(
            atPath: store.root.appendingPathComponent("packs").path)
        #expect(packs.count == 1, "\(packs)")
        _ = await document.close()
    }

    /// Autosaves make one version a minute in the first hour; a merge base kept meanwhile
    /// and the contents an explicit save replaced (made on purpose) stay, whatever autosaves
    /// come after them in their minute.
    @MainActor
    @Test func theFirstHourKeepsOneAutosaveAMinuteAndEveryVersionMadeOnPurpose() async throws {
        let tree = try TemporaryTree()
        let clock = StoreClock(Date(timeIntervalSince1970: 1_699_920_000))
        let store = makeStore(in: tree, clock: clock, policy: .init())
        let file = tree.file("notes.txt")
        let document = versionedDocument(file, store: store)
        document.text = "0"
        #expect(await document.save(to: file, for: .forCreating))
        func save(_ text: String, after seconds: TimeInterval, explicitly: Bool = false) async {
            clock.advance(by: seconds)
            if explicitly {
                #expect(await document.saveText(text))
            } else {
                document.text = text
                document.updateChangeCount(.done)
                #expect(await document.autosave())
            }
            store.waitUntilIdle()
        }
        for text in ["1", "2", "3"] { await save(text, after: 10) }
        clock.advance(by: 10)
        let base = try #require(store.keepBases([BaseToKeep(url: file)]).first ?? nil)
        await save("4", after: 10)
        await save("5", after: 5)
        var versions = store.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == ["3", "4"], "the base and the newest autosave of the minute")
        #expect(versions.first?.persistentIdentifier == base.versionID)

        await save("6", after: 60)
        #expect(
            store.otherVersionsOfItem(at: file).map(contents) == ["3", "4", "5"], "one for the next minute")

        await save("7", after: 5, explicitly: true)
        await save("8", after: 3)
        await save("9", after: 3)
        versions = store.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == ["3", "4", "5", "6", "8"], "what the explicit save replaced stays")
        _ = await document.close()
    }

    @Test func thinningPolicyLimitsAreConfigurable() {
        var policy = VersionStore.ThinningPolicy()
        policy.keepsEverythingFor = 60
        policy.keepsHourlyFor = 120
        policy.keepsDailyFor = 180
        let now = Date(timeIntervalSince1970: 1_699_920_000 + 3000)
        let drop = policy.versionsToDrop(
            [("young", now - 30), ("hourly", now - 100), ("daily", now - 150), ("old", now - 200)], now: now)
        #expect(drop == ["old"])
    }

    @MainActor
    @Test func versionsSurviveARenameAndASafeSave() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = versionedDocument(file, store: store)
        document.text = "first"
        #expect(await document.save(to: file, for: .forCreating))
        #expect(await document.saveText("second"))
        _ = await document.close()
        #expect(store.otherVersionsOfItem(at: file).map(contents) == ["first"])

        let renamed = tree.file("renamed notes.txt")
        #expect(rename(file.path, renamed.path) == 0)
        #expect(store.otherVersionsOfItem(at: renamed).map(contents) == ["first"], "after a rename")

        try SafeSave.write(Data("third".utf8), to: renamed)
        #expect(store.otherVersionsOfItem(at: renamed).map(contents) == ["first"], "after a safe save")
        #expect(store.otherVersionsOfItem(at: file).isEmpty)
    }

    @MainActor
    @Test func identityFallsBackToTheStoreTableWithoutExtendedAttributes() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = versionedDocument(file, store: store)
        document.text = "first"
        #expect(await document.save(to: file, for: .forCreating))
        #expect(await document.saveText("second"))
        store.waitUntilIdle()
        // A writer that drops extended attributes, as on a file system without them.
        #expect(dropIdentityAttribute(file))
        #expect(store.otherVersionsOfItem(at: file).map(contents) == ["first"], "by path, attribute dropped")
        try Data("third".utf8).write(to: tree.file("other.txt"))
        #expect(rename(tree.file("other.txt").path, file.path) == 0)
        #expect(store.otherVersionsOfItem(at: file).map(contents) == ["first"], "by last known path")
        _ = await document.close()
    }

    // MARK: Restoring

    @MainActor
    @Test func restoringAnOldVersionShowsItsContentsWhenReopened() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two", "three"], at: file, store: store)
        _ = await document.close()

        let old = try #require(store.otherVersionsOfItem(at: file).first { contents(of: $0) == "one" })
        let restored = try old.replaceItem(at: file)
        #expect(restored.standardizedFileURL == file.standardizedFileURL)

        let reopened = versionedDocument(file, store: store)
        #expect(await reopened.open())
        #expect(reopened.text == "one")
        // What the restore replaced is history too.
        #expect(store.otherVersionsOfItem(at: file).contains { contents(of: $0) == "three" })
        _ = await reopened.close()

        let byMoving = try #require(store.otherVersionsOfItem(at: file).first { contents(of: $0) == "two" })
        try byMoving.replaceItem(at: file, options: .byMoving)
        #expect(try String(contentsOf: file, encoding: .utf8) == "two")
        #expect(store.version(itemAt: file, forPersistentIdentifier: byMoving.persistentIdentifier) == nil)
    }

    @Test func packageVersionsAreKeptAndRestored() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let package = tree.file("Drawing.pkg")
        try tree.write("v1 body", to: "Drawing.pkg/body.txt")
        try tree.write("v1 image", to: "Drawing.pkg/images/a.bin")
        let saved = tree.file("saved.pkg")
        try FileManager.default.copyItem(at: package, to: saved)
        let version = try store.addOfItem(at: package, withContentsOf: saved, options: .byMoving)
        #expect(!FileManager.default.fileExists(atPath: saved.path))

        try SafeSave.writeDirectory(at: package) { staging in
            try Data("v2".utf8).write(to: staging.appendingPathComponent("body.txt"))
        }
        try version.replaceItem(at: package)
        #expect(
            try String(contentsOf: package.appendingPathComponent("body.txt"), encoding: .utf8) == "v1 body")
        #expect(
            try String(contentsOf: package.appendingPathComponent("images/a.bin"), encoding: .utf8)
                == "v1 image")
        // The folder replaced by the restore was kept, and the identity followed the exchange.
        #expect(store.otherVersionsOfItem(at: package).count == 2)
    }

    // MARK: Deduplication

    @Test func addingIdenticalBytesTwiceAddsNoChunkData() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("current", to: "notes.txt")
        var bytes = [UInt8](repeating: 0, count: 300_000)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        let first = tree.file("a.bin")
        let second = tree.file("b.bin")
        try Data(bytes).write(to: first)
        try Data(bytes).write(to: second)
        let chunks = store.root.appendingPathComponent("chunks")

        try store.addOfItem(at: file, withContentsOf: first)
        let once = bytesUnder(chunks)
        #expect(once == bytes.count)
        try store.addOfItem(at: file, withContentsOf: second)
        #expect(bytesUnder(chunks) == once, "identical bytes stored again")

        // One line changed in the middle costs a chunk or two, not another copy.
        bytes.replaceSubrange(150_000..<150_010, with: Array("edited!!!\n".utf8))
        try Data(bytes).write(to: second)
        try store.addOfItem(at: file, withContentsOf: second)
        let grown = bytesUnder(chunks) - once
        #expect(grown > 0 && grown <= 2 * 128 << 10 && grown < bytes.count / 2, "grew by \(grown)")
    }

    @MainActor
    @Test func savingUnchangedBytesAddsNoVersion() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = versionedDocument(file, store: store)
        document.text = "same"
        #expect(await document.save(to: file, for: .forCreating))
        #expect(await document.saveText("same"))
        store.waitUntilIdle()
        // Each safe save makes a new file, whose place the identity index notes (its log
        // grows by a commit): what versions take must not grow.
        func versionBytes() -> Int64 {
            store.diskUsage()
                - Self.indexFiles(store).reduce(0) { total, name in
                    total + (FileStatus(path: store.root.appendingPathComponent(name).path)?.size ?? 0)
                }
        }
        let usage = versionBytes()
        #expect(await document.saveText("same"))
        #expect(await document.saveText("same"))
        #expect(store.otherVersionsOfItem(at: file).count == 1)
        #expect(versionBytes() == usage)
        _ = await document.close()
    }

    // MARK: Presenters

    @Test func presentersHearOfGainedResolvedAndLostVersions() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "notes.txt")
        let presenter = VersionNewsPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        let theirs = try tree.write("theirs", to: "incoming.txt")
        let conflict = try store.addConflictOfItem(
            at: file, withContentsOf: theirs, savingComputer: "laptop", options: .byMoving)
        #expect(presenter.waitFor("gain"))
        #expect(conflict.isConflict && !conflict.isResolved)
        #expect(conflict.localizedNameOfSavingComputer == "laptop")
        #expect(store.unresolvedConflictVersionsOfItem(at: file).count == 1)

        conflict.isResolved = true
        #expect(presenter.waitFor("resolve"))
        #expect(store.unresolvedConflictVersionsOfItem(at: file).isEmpty)
        #expect(store.otherVersionsOfItem(at: file).first?.isResolved == true, "resolution is stored")

        try conflict.remove()
        #expect(presenter.waitFor("lose"))
        #expect(store.otherVersionsOfItem(at: file).isEmpty)
    }

    // MARK: Damage and bad places

    /// The identity index's files in the store's folder (`index.N.sqlite` and its logs).
    static func indexFiles(_ store: VersionStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.root.path)) ?? [])
            .filter { $0.hasPrefix("index.") && $0.contains(".sqlite") }.sorted()
    }

    @MainActor
    @Test func missingIndexIsRebuiltOnceAndWrittenBack() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two"], at: file, store: store)
        _ = await document.close()
        store.waitUntilIdle()
        #expect(Self.indexFiles(store).contains("index.1.sqlite"), "\(Self.indexFiles(store))")
        for name in Self.indexFiles(store) {
            try FileManager.default.removeItem(at: store.root.appendingPathComponent(name))
        }
        // Without its attribute the item is found through the index, which must be rebuilt.
        #expect(dropIdentityAttribute(file))
        #expect(store.otherVersionsOfItem(at: file).map(contents) == ["one"])
        let rebuilt = store.root.appendingPathComponent("index.1.sqlite")
        let written = try #require(FileStatus(path: rebuilt.path), "the rebuilt index was written back")
        #expect(store.otherVersionsOfItem(at: file).map(contents) == ["one"])
        // Another store object (another process) reads the same rows, and rebuilds nothing.
        #expect(VersionStore(root: store.root).otherVersionsOfItem(at: file).map(contents) == ["one"])
        #expect(FileStatus(path: rebuilt.path)?.inode == written.inode, "rebuilt once")
        #expect(!Self.indexFiles(store).contains { $0.hasPrefix("index.2") })
        #expect(store.lastRecoveryError == nil, "a missing index is not damage")
    }

    @MainActor
    @Test func corruptStoreIsReportedAndRebuiltWithoutAffectingTheDocument() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two"], at: file, store: store)
        _ = await document.close()
        store.waitUntilIdle()
        #expect(store.lastRecoveryError == nil)

        // The index torn to garbage, its log lost; and a damaged record file of the item's,
        // beside its versions in a pack. Opened by another store object, as another process
        // would, which finds the item only through the index.
        for name in Self.indexFiles(store) {
            try FileManager.default.removeItem(at: store.root.appendingPathComponent(name))
        }
        let index = store.root.appendingPathComponent("index.1.sqlite")
        try Data("{\"items\": garbage \u{0}\u{1}".utf8).write(to: index)
        var identity = [UInt8](repeating: 0, count: 64)
        let length = cds_lgetxattr(file.path, "user.documentkit.id", &identity, identity.count)
        let itemID = try #require(length > 0 ? String(decoding: identity.prefix(length), as: UTF8.self) : nil)
        let itemFolder = store.root.appendingPathComponent("items/\(itemID)")
        try FileManager.default.createDirectory(at: itemFolder, withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: itemFolder.appendingPathComponent("\(UUID().uuidString).json"))
        #expect(dropIdentityAttribute(file))

        let other = VersionStore(root: store.root)
        let reopened = versionedDocument(file, store: other)
        #expect(await reopened.open())
        #expect(reopened.text == "two")
        #expect(await reopened.saveText("three"))
        other.waitUntilIdle()
        #expect(reopened.errors.isEmpty, "\(reopened.errors)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "three")

        // Reported by the store object that found it: the first one hears of the document's
        // moves and saves too (every store of the process does), and may look first.
        let recovery = try #require(other.lastRecoveryError ?? store.lastRecoveryError)
        #expect(recovery.code == .corruptFile)
        #expect(other.otherVersionsOfItem(at: file).map(contents) == ["one", "two"])
        #expect(!FileManager.default.fileExists(atPath: index.path), "the damaged index was replaced")
        #expect(Self.indexFiles(store).contains("index.2.sqlite"), "\(Self.indexFiles(store))")
        let damaged = try FileManager.default.contentsOfDirectory(
            atPath: store.root.appendingPathComponent("damaged").path)
        #expect(
            damaged.contains { $0.hasPrefix("index-") && $0.hasSuffix(".sqlite") }, "set aside: \(damaged)")
        // The first store object, its old index gone, finds the new one.
        #expect(store.otherVersionsOfItem(at: file).map(contents) == ["one", "two"])
        _ = await reopened.close()
    }

    @MainActor
    @Test func unwritableStoreNeverFailsASaveAndSaysWhy() async throws {
        let tree = try TemporaryTree()
        // A file where the store's parent folder should be: every create fails with ENOTDIR,
        // even for root, who ignores permission bits.
        try tree.write("in the way", to: "blocked")
        let store = VersionStore(root: tree.file("blocked/Versions"))
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two", "three"], at: file, store: store)
        store.waitUntilIdle()
        #expect(document.errors.isEmpty, "\(document.errors)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "three")
        let error = try #require(store.lastError)
        #expect(error.errno == .notDirectory, "\(error)")
        #expect("\(error)".contains(tree.file("blocked").path), "\(error)")
        #expect(store.otherVersionsOfItem(at: file).isEmpty)
        _ = await document.close()

        let reopened = versionedDocument(file, store: store)
        #expect(await reopened.open())
        #expect(reopened.text == "three")
        _ = await reopened.close()
    }
}
