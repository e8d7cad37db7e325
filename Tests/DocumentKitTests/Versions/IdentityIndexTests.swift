import CDocumentSystem
import Foundation
import Synchronization
import Testing

@testable import DocumentKit

/// The version store's table of where each item was last seen: rows in SQLite, looked up by
/// item, by path and by file.
@Suite struct IdentityIndexTests {
    static func entry(_ path: String, _ inode: UInt64) -> IdentityIndex.Entry {
        IdentityIndex.Entry(path: path, device: 7, inode: inode)
    }

    static func emptyIndex(in tree: TemporaryTree) throws -> IdentityIndex {
        try IdentityIndex.build(at: tree.file("index.1.sqlite")) { _ in }
    }

    /// Whether `body` throws an error of SQLite's that the store takes for damage.
    static func isDamage(_ body: () throws -> some Any) -> Bool {
        do {
            _ = try body()
            return false
        } catch let error as SQLiteError {
            return VersionStore.isDamage(error)
        } catch {
            return false
        }
    }

    @Test func lookupsFollowEveryChangeOfTheItems() throws {
        let tree = try TemporaryTree()
        let index = try Self.emptyIndex(in: tree)
        let first = UUID().uuidString
        let second = UUID().uuidString
        #expect(try index.itemID(path: "/a") == nil)
        #expect(try index.note([(first, Self.entry("/a", 10))], durably: true))
        #expect(try index.itemID(path: "/a") == first)
        #expect(try index.itemID(device: 7, inode: 10) == first)
        #expect(try index.entry(of: first) == Self.entry("/a", 10))
        // Noting what the index already holds changes nothing.
        #expect(try !index.note([(first, Self.entry("/a", 10))], durably: false))
        try index.note([(first, Self.entry("/b", 11)), (second, Self.entry("/a", 12))], durably: false)
        #expect(try index.itemID(path: "/a") == second)
        #expect(try index.itemID(path: "/b") == first)
        #expect(try index.itemID(device: 7, inode: 10) == nil)
        #expect(try index.itemID(device: 7, inode: 12) == second)
        #expect(try index.count() == 2)
    }

    /// An item noted where another was last seen (its path, or its file) takes the place: the
    /// other is nowhere known, not found there any more.
    @Test func anItemNotedWhereAnotherWasLeavesTheOtherNowhere() throws {
        let tree = try TemporaryTree()
        let index = try Self.emptyIndex(in: tree)
        let (old, copy, moved) = (UUID().uuidString, UUID().uuidString, UUID().uuidString)
        try index.note([(old, Self.entry("/a", 10)), (moved, Self.entry("/m", 20))], durably: true)
        try index.note([(copy, Self.entry("/a", 11))], durably: true)
        #expect(try index.itemID(path: "/a") == copy)
        #expect(try index.entry(of: old) == IdentityIndex.Entry(path: "", device: 7, inode: 0))
        // The same file at another path (a rename the store heard of only from the inode).
        try index.note([(copy, Self.entry("/c", 20))], durably: true)
        #expect(try index.entry(of: moved) == IdentityIndex.Entry(path: "", device: 7, inode: 0))
        #expect(try index.itemID(device: 7, inode: 20) == copy)
    }

    @Test func twoItemsAtOnePathGiveTheSmallerIDWhateverTheOrder() throws {
        let tree = try TemporaryTree()
        let ids = (0..<20).map { _ in UUID().uuidString }
        // Only a rebuild from records can leave two items at one place.
        let index = try IdentityIndex.build(at: tree.file("index.1.sqlite")) { insert in
            for id in ids.shuffled() { try insert(id, Self.entry("/same", 5)) }
        }
        #expect(try index.itemID(path: "/same") == ids.min())
        #expect(try index.itemID(device: 7, inode: 5) == ids.min())
    }

    /// The items inside a folder, at any depth, and none of a sibling whose name starts alike;
    /// paths that need quoting in JSON or SQL, and device and inode numbers past Int64's range.
    @Test func theItemsInsideAFolderAndNoOther() throws {
        let tree = try TemporaryTree()
        let index = try Self.emptyIndex(in: tree)
        let paths = [
            "/d/a.txt", "/d/sub/b.txt", "/d/'quoted' \"x\" é\u{1}.txt", "/d0/c.txt", "/d-other/e.txt", "/d",
            "/e/f.txt",
        ]
        var ids: [String: String] = [:]
        for (number, path) in paths.enumerated() {
            let id = UUID().uuidString
            ids[path] = id
            try index.note(
                [
                    (
                        id,
                        IdentityIndex.Entry(
                            path: path, device: UInt64.max - 1, inode: UInt64.max - UInt64(number))
                    )
                ],
                durably: false)
        }
        let inside = try index.entries(inside: "/d")
        #expect(
            Set(inside.map(\.entry.path)) == ["/d/a.txt", "/d/sub/b.txt", "/d/'quoted' \"x\" é\u{1}.txt"])
        #expect(inside.map(\.itemID) == inside.map(\.itemID).sorted())
        for (itemID, entry) in inside { #expect(ids[entry.path] == itemID) }
        #expect(try index.itemID(device: UInt64.max - 1, inode: UInt64.max - 2) == ids[paths[2]])
        #expect(try index.entry(of: ids[paths[2]]!)?.inode == UInt64.max - 2)
    }

    /// Every byte on disk is hostile: a file that is no database, or a database that is not
    /// an index, fails to open as one, as damage; a row whose id is no item's is never given.
    @Test func aFileThatIsNoIndexIsDamage() throws {
        let tree = try TemporaryTree()
        let garbage = try tree.write("{\"items\": garbage \u{0}\u{1}", to: "index.1.sqlite")
        #expect(Self.isDamage { try IdentityIndex(opening: garbage) })

        let other = tree.file("index.2.sqlite")
        let database = try SQLiteDatabase(url: other)
        try database.transaction { try $0.execute("CREATE TABLE items (id TEXT, path TEXT)") }
        database.close()
        #expect(Self.isDamage { try IdentityIndex(opening: other) })

        let index = try IdentityIndex.build(at: tree.file("index.3.sqlite")) { insert in
            try insert("not an item", Self.entry("/a", 1))
        }
        #expect(try index.itemID(path: "/a") == nil)
        #expect(try index.entries(inside: "").isEmpty)
        #expect(throws: (any Error).self) { try IdentityIndex(opening: tree.file("index.4.sqlite")) }
        #expect(
            !FileManager.default.fileExists(atPath: tree.file("index.4.sqlite").path), "opening makes no file"
        )
    }

    /// A build that fails leaves nothing: no index, and no file of the build.
    @Test func aFailedBuildLeavesNothing() throws {
        struct Refusal: Error {}
        let tree = try TemporaryTree()
        #expect(throws: Refusal.self) {
            try IdentityIndex.build(at: tree.file("index.1.sqlite")) { insert in
                try insert(UUID().uuidString, Self.entry("/a", 1))
                throw Refusal()
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.url.path).isEmpty)
    }

    /// Two connections, as two processes have: each sees the other's commits at its next
    /// lookup, and the stamp tells that the index changed.
    @Test func aSecondConnectionSeesEachCommit() throws {
        let tree = try TemporaryTree()
        let writer = try Self.emptyIndex(in: tree)
        let reader = try IdentityIndex(opening: writer.url)
        let before = try reader.stamp()
        let id = UUID().uuidString
        try writer.note([(id, Self.entry("/a", 1))], durably: false)
        #expect(try reader.itemID(path: "/a") == id)
        #expect(try reader.stamp() != before)
        let unchanged = try reader.stamp()
        #expect(try reader.stamp() == unchanged)
    }
}

/// The store's use of the index: imported from an old store's `index.json`, and where a crash
/// between a batch's records and its index write leaves it.
@Suite struct IdentityIndexStoreTests {
    static func itemID(of url: URL) throws -> String {
        var identity = [UInt8](repeating: 0, count: 64)
        let length = cds_lgetxattr(url.path, "user.documentkit.id", &identity, identity.count)
        return try #require(length > 0 ? String(decoding: identity.prefix(length), as: UTF8.self) : nil)
    }

    static func removeIndexFiles(of store: VersionStore) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: store.root.path)
        where name.hasPrefix("index.") && name.contains(".sqlite") {
            try FileManager.default.removeItem(at: store.root.appendingPathComponent(name))
        }
    }

    /// An old store's `index.json` becomes the rows, all it knew: here a location that no
    /// record holds (the item moved unseen and lost its attribute), so that only the imported
    /// row finds it. The JSON is removed once the rows are in place.
    @MainActor
    @Test func anOldIndexJSONIsImportedThenRemoved() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two"], at: file, store: store)
        _ = await document.close()
        store.waitUntilIdle()
        let itemID = try Self.itemID(of: file)
        let moved = tree.file("moved.txt")
        try FileManager.default.moveItem(at: file, to: moved)
        #expect(dropIdentityAttribute(moved))
        let status = try #require(FileStatus(path: moved.path))
        try Self.removeIndexFiles(of: store)
        let json = store.root.appendingPathComponent("index.json")
        let other = UUID().uuidString
        try Data(
            """
            {"format":1,"items":{"\(itemID)":{"device":\(status.device),"inode":\(status.inode),"path":"\(moved.path)"},\
            "\(other)":{"device":1,"inode":2,"path":"/elsewhere"}}}
            """.utf8
        ).write(to: json)

        let reader = VersionStore(root: store.root)
        #expect(reader.otherVersionsOfItem(at: moved).map(contents) == ["one"])
        #expect(!FileManager.default.fileExists(atPath: json.path), "index.json removed")
        #expect(reader.withIndex { try $0.count() } == 2)
        #expect(reader.withIndex { try $0.itemID(path: "/elsewhere") } == other)
        #expect(reader.lastRecoveryError == nil)
    }

    /// A damaged `index.json` is reported and set aside, and the rows rebuilt from the records.
    @MainActor
    @Test func aDamagedOldIndexJSONIsRebuiltFromTheRecords() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two"], at: file, store: store)
        _ = await document.close()
        store.waitUntilIdle()
        try Self.removeIndexFiles(of: store)
        try Data("{\"format\":1,\"items\":{\"not-a-uuid\":{}}}".utf8).write(
            to: store.root.appendingPathComponent("index.json"))
        #expect(dropIdentityAttribute(file))

        let reader = VersionStore(root: store.root)
        #expect(reader.otherVersionsOfItem(at: file).map(contents) == ["one"])
        #expect(reader.lastRecoveryError?.code == .corruptFile)
        let damaged = try FileManager.default.contentsOfDirectory(
            atPath: store.root.appendingPathComponent("damaged").path)
        #expect(damaged.contains { $0.hasPrefix("index-") && $0.hasSuffix(".json") }, "\(damaged)")
        #expect(!reader.hasDamagedRecords, "a damaged index is no damaged record: chunks are collected")
    }

    /// Processes share the rows (ste, docs and the agent use one store): another process finds
    /// an item by the rows this one wrote, and this one, its index open since before, by the
    /// rows the other wrote. Items are found by path alone (their attributes dropped).
    @MainActor
    @Test func anotherProcessReadsTheRowsAndItsRowsAreRead() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["one", "two"], at: file, store: store)
        _ = await document.close()
        store.waitUntilIdle()
        #expect(dropIdentityAttribute(file))
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        let added = try TestChild.run(["add-conflict", store.root.path, file.path, theirs.path])
        #expect(added.status == 0, "\(added.standardError)")
        // The child found the item this process noted: its conflict is the item's.
        #expect(dropIdentityAttribute(file))
        #expect(store.unresolvedConflictVersionsOfItem(at: file).count == 1)
        #expect(store.otherVersionsOfItem(at: file).compactMap(contents).contains("one"))

        // A new item the child made and noted, read through this process's open index.
        let other = try tree.write("other", to: "other.txt")
        let theirsAgain = try tree.write("theirs again", to: "incoming/again.txt")
        let again = try TestChild.run(["add-conflict", store.root.path, other.path, theirsAgain.path])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(dropIdentityAttribute(other))
        #expect(store.unresolvedConflictVersionsOfItem(at: other).map(contents) == ["theirs again"])
    }

    /// Lookups from many threads at once (a save looks its item up off the store's queue)
    /// on a store whose index is missing: one of them rebuilds it under the store's lock, the
    /// others wait and use that one; none fails, and one generation is made.
    @Test func lookupsFromManyThreadsRebuildAMissingIndexOnce() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let urls = try (0..<5).map { try tree.write("text \($0)", to: "docs/\($0).txt") }
        #expect(store.keepBases(urls.map { BaseToKeep(url: $0) }).allSatisfy { $0 != nil })
        try Self.removeIndexFiles(of: store)
        let reader = VersionStore(root: store.root)
        let counts = Mutex<[Int?]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let count = reader.withIndex { try $0.count() }
            counts.withLock { $0.append(count) }
        }
        #expect(counts.withLock { $0 } == Array(repeating: 5, count: 8))
        let files = try FileManager.default.contentsOfDirectory(atPath: store.root.path).filter {
            $0.hasPrefix("index.")
        }
        #expect(files.allSatisfy { $0.hasPrefix("index.1.sqlite") }, "\(files)")
        #expect(reader.lastError == nil, "\(String(describing: reader.lastError))")
    }

    /// A crash after a batch's records are flushed and before its index rows are written
    /// leaves an index that is whole (the rows of before), and the item found by its
    /// attribute; a crash after the rows finds it by path alone.
    @Test func aCrashBetweenTheRecordsAndTheIndexStillFindsTheItem() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        // The index exists before, with another item in it.
        let first = try tree.write("first", to: "docs/first.txt")
        #expect(store.keepBases([BaseToKeep(url: first)])[0] != nil)
        let file = try tree.write("the text", to: "docs/notes.txt")
        let copies = CrashCopies(of: store, in: tree)
        #expect(store.keepBases([BaseToKeep(url: file)])[0] != nil)
        store.onEachStep(nil)
        let placed = try #require(copies[.versionsPlaced])
        let written = try #require(copies[.indexWritten])

        let afterRecords = VersionStore(root: placed)
        #expect(afterRecords.otherVersionsOfItem(at: file).count == 1)
        #expect(afterRecords.otherVersionsOfItem(at: first).count == 1)
        #expect(afterRecords.withIndex { try $0.itemID(path: file.path) } == nil, "no row yet")
        #expect(afterRecords.withIndex { try $0.itemID(path: first.path) } != nil, "the rows of before")
        #expect(afterRecords.lastRecoveryError == nil)

        #expect(dropIdentityAttribute(file))
        let afterIndex = VersionStore(root: written)
        #expect(afterIndex.otherVersionsOfItem(at: file).count == 1, "found by path alone")
        #expect(afterIndex.lastRecoveryError == nil)
    }

    /// The first batch stored into a store with neither an index nor versions (a first sync's
    /// merge bases) makes the index from its own locations once its pack is placed: the same
    /// rows a rebuild from the records makes. A crash before leaves no index at all, so the
    /// next opening rebuilds it and still finds every item by path.
    @Test func theFirstBatchOfAnEmptyStoreMakesTheIndexARebuildWouldMake() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let urls = try (0..<30).map { try tree.write("text \($0)", to: "docs/\($0 % 3)/\($0).txt") }
        let copies = CrashCopies(of: store, in: tree)
        #expect(store.keepBases(urls.map { BaseToKeep(url: $0) }).allSatisfy { $0 != nil })
        store.onEachStep(nil)
        let docs = tree.file("docs").path
        func rows(_ store: VersionStore) -> [String] {
            (store.withIndex { try $0.entries(inside: docs) } ?? []).map {
                "\($0.itemID) \($0.entry.path) \($0.entry.device) \($0.entry.inode)"
            }
        }
        let made = rows(store)
        #expect(made.count == urls.count)
        try Self.removeIndexFiles(of: store)
        let rebuilt = VersionStore(root: store.root)
        #expect(rows(rebuilt) == made)

        let placed = try #require(copies[.versionsPlaced])
        let names = try FileManager.default.contentsOfDirectory(atPath: placed.path)
        #expect(!names.contains { $0.hasPrefix("index.") }, "\(names)")
        for url in urls { #expect(dropIdentityAttribute(url)) }
        let afterCrash = VersionStore(root: placed)
        #expect(urls.allSatisfy { afterCrash.otherVersionsOfItem(at: $0).count == 1 })
        #expect(afterCrash.lastRecoveryError == nil)
        let afterIndex = VersionStore(root: try #require(copies[.indexWritten]))
        #expect(urls.allSatisfy { afterIndex.otherVersionsOfItem(at: $0).count == 1 })
    }
}

/// Copies of a store's folder as a crash at `.versionsPlaced` and at `.indexWritten` leaves it,
/// taken as the store reaches each step.
private final class CrashCopies: Sendable {
    private let copies = Mutex<[StoreStep: URL]>([:])

    init(of store: VersionStore, in tree: TemporaryTree) {
        store.onEachStep { [store, self] step in
            guard step == .versionsPlaced || step == .indexWritten else { return }
            let copy = tree.file("crash-\(self.copies.withLock { $0.count })/Versions")
            try? FileManager.default.createDirectory(
                at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.copyItem(at: store.root, to: copy)
            self.copies.withLock { $0[step] = copy }
        }
    }

    subscript(step: StoreStep) -> URL? { copies.withLock { $0[step] } }
}
