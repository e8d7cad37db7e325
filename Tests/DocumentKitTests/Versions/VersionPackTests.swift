import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Merge bases kept in batches (`VersionStore.keepBases`): a pack of small contents per batch,
/// not three new inodes a document; a crash at any step of writing or rewriting a pack leaves
/// every base there whole or not there at all; a pack goes only once none of its versions is left.
@Suite struct VersionPackTests {
    /// `count` files of `size` bytes each under `folder` of `tree`, each with bytes of its own.
    static func files(_ count: Int, size: Int, in tree: TemporaryTree, folder: String = "docs") throws
        -> [URL]
    {
        try (0..<count).map { index in
            let line = "document \(index) of \(count): the quick brown fox jumps over the lazy dog\n"
            let text = String(String(repeating: line, count: size / line.utf8.count + 1).prefix(size))
            return try tree.write(text, to: "\(folder)/doc-\(index).txt")
        }
    }

    /// Files, folders and links under `url`, `url` itself included.
    static func inodes(under url: URL) -> Int {
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        return 1 + (FileManager.default.enumerator(atPath: url.path)?.allObjects.count ?? 0)
    }

    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// The bytes of the version `id` of the item at `url`, as `store` reads them.
    static func bytes(of id: String?, at url: URL, in store: VersionStore) -> Data? {
        guard let id, let version = store.version(itemAt: url, forPersistentIdentifier: id) else {
            return nil
        }
        return try? Data(contentsOf: version.url)
    }

    // MARK: - Cost

    /// A first sync of many 4 KiB documents keeps every base for a handful of new inodes in
    /// all, not three a document (a record, an item folder and a chunk each, before packs).
    @Test func manySmallBasesCostAFewInodesNotThreeADocument() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let urls = try Self.files(400, size: 4096, in: tree)
        _ = store.keepBases([BaseToKeep(url: try Self.files(1, size: 10, in: tree, folder: "first")[0])])
        let before = Self.inodes(under: store.root)

        let kept = store.keepBases(urls.map { BaseToKeep(url: $0) })

        let added = Self.inodes(under: store.root) - before
        #expect(kept.allSatisfy { $0 != nil }, "\(store.lastError.map(String.init(describing:)) ?? "")")
        #expect(added <= 2, "\(added) new inodes for 400 bases")
        #expect(Self.names(in: store.root.appendingPathComponent("packs")).count == 2)
        let reader = makeStore(in: tree)
        for (url, base) in zip(urls, kept) {
            #expect(Self.bytes(of: base?.versionID, at: url, in: reader) == (try Data(contentsOf: url)))
        }
        #expect(reader.lastRecoveryError == nil)
    }

    /// Bases are read and stored a group at a time (at most `mostBasesTogether` of them, or
    /// `mostBaseBytesTogether` bytes), so that keeping many holds one group's bytes in
    /// memory, not all of them: more bytes than a group's fill a pack per group, each kept,
    /// and each group's rows of the identity index are written after its pack.
    @Test func manyBasesAreKeptAGroupAtATime() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let small = try Self.files(10, size: 64, in: tree)
        // Four files of 1.5 MiB, each read whole: more than a group's bytes.
        let large = try Self.files(4, size: 3 << 19, in: tree, folder: "large")
        #expect(4 * (3 << 19) > VersionStore.mostBaseBytesTogether)
        let steps = Mutex<[StoreStep]>([])
        store.onEachStep { step in steps.withLock { $0.append(step) } }

        let kept = store.keepBases((small + large).map { BaseToKeep(url: $0) })
        store.onEachStep(nil)

        #expect(kept.allSatisfy { $0 != nil }, "\(store.lastError.map(String.init(describing:)) ?? "")")
        // The small ones with three large ones (the group's bytes reached), then the last one.
        #expect(Self.names(in: store.root.appendingPathComponent("packs")).count == 2)
        // Each group's index rows in one transaction, after its pack is placed.
        #expect(
            steps.withLock { $0.filter { $0 == .versionsPlaced || $0 == .indexWritten } }
                == [.versionsPlaced, .indexWritten, .versionsPlaced, .indexWritten])
        let reader = makeStore(in: tree)
        for (url, base) in zip(small + large, kept) {
            #expect(Self.bytes(of: base?.versionID, at: url, in: reader) == (try Data(contentsOf: url)))
        }
    }

    /// The bases of documents the store never saw (a first sync's) are kept without looking
    /// up their history, so the store never reads every pack's table (tens of megabytes at
    /// 100,000 documents); the packs placed meanwhile are all found by the next look.
    @Test func basesOfNewDocumentsAreKeptWithoutReadingEveryPack() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let urls = try Self.files(6, size: 64, in: tree)
        let first = store.keepBases(urls.prefix(3).map { BaseToKeep(url: $0) })
        let second = store.keepBases(urls.suffix(3).map { BaseToKeep(url: $0) })
        #expect(
            (first + second).allSatisfy { $0 != nil },
            "\(store.lastError.map(String.init(describing:)) ?? "")")
        #expect(Self.names(in: store.root.appendingPathComponent("packs")).count == 2)
        #expect(store.catalogedPacks == 0)

        // Known documents: their history is looked up, in every pack placed so far. Unchanged
        // bytes are the version already there; changed ones are a second version.
        let original = try Data(contentsOf: urls[4])
        try Data("changed".utf8).write(to: urls[4])
        let again = store.keepBases(urls.map { BaseToKeep(url: $0) })
        #expect(store.catalogedPacks >= 2)
        for index in urls.indices where index != 4 {
            #expect(again[index]?.versionID == (first + second)[index]?.versionID)
        }
        #expect(again[4] != nil && again[4]?.versionID != second[1]?.versionID)
        #expect(Self.bytes(of: second[1]?.versionID, at: urls[4], in: store) == original)
        #expect(Self.bytes(of: again[4]?.versionID, at: urls[4], in: store) == Data("changed".utf8))
    }

    /// A base is kept only if the file still holds the bytes the caller synced, in the file
    /// it synced: a writer that changed it since costs the base, never a wrong one.
    @Test func aBaseIsKeptOnlyWhereTheFileIsStillWhatTheCallerSynced() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let urls = try Self.files(3, size: 100, in: tree)
        let hashes = try urls.map { ContentHash(of: try Data(contentsOf: $0)).hex }
        let statuses = urls.map { FileStatus(path: $0.path) }
        // The second file changed since it was synced, the third was replaced by another file.
        try Data("changed".utf8).write(to: urls[1])
        try FileManager.default.removeItem(at: urls[2])
        try Data(contentsOf: urls[0]).write(to: urls[2])

        let kept = store.keepBases(
            zip(urls, zip(hashes, statuses)).map { BaseToKeep(url: $0, hash: $1.0, status: $1.1) })

        #expect(kept[0] != nil)
        #expect(kept[1] == nil, "the file no longer holds the synced bytes")
        #expect(kept[2] == nil, "another file is at the path now")
        #expect(kept[0]?.status.inode == statuses[0]?.inode)
        #expect(store.otherVersionsOfItem(at: urls[1]).isEmpty)
    }

    // MARK: - Crash order

    /// Copies of the store taken at each step of its writes: what a crash at that step would
    /// leave on disk (every step follows the flushes that make what came before durable),
    /// each with the bases that must be in it.
    final class Snapshots: Sendable {
        struct Snapshot {
            var step: StoreStep
            var root: URL
            var required: Set<Int>
        }

        let tree: TemporaryTree
        let taken = Mutex<[Snapshot]>([])
        /// The bases reported kept and not yet being removed.
        let required = Mutex<Set<Int>>([])

        init(_ tree: TemporaryTree) { self.tree = tree }

        func take(_ store: VersionStore, at step: StoreStep) {
            let count = taken.withLock { $0.count }
            let copy = tree.file("crash-\(count)/Versions")
            do {
                try FileManager.default.createDirectory(
                    at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: store.root, to: copy)
                let required = self.required.withLock { $0 }
                taken.withLock { $0.append(Snapshot(step: step, root: copy, required: required)) }
            } catch {
                Issue.record("cannot copy the store at \(step): \(error)")
            }
        }
    }

    /// A crash at every step of storing bases in a pack, and of removing them (the pack
    /// rewritten without some, the old one removed; then the last ones, and the pack): each
    /// crash leaves a store that opens without damage, where every base is there with its
    /// bytes or not there at all, each base reported kept and not being removed is there,
    /// and no version is listed twice. The next write to it sweeps a replaced pack.
    @Test func aCrashAtEveryStepLeavesEveryBaseWholeOrAbsent() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        // Small ones inline, and one large enough for loose chunks.
        var urls = try Self.files(6, size: 3000, in: tree)
        urls += try Self.files(1, size: 400_000, in: tree, folder: "large")
        let snapshots = Snapshots(tree)
        store.onEachStep { [store] step in
            // Before its versions are placed, none of a batch is reported kept.
            if step == .chunksPlaced {
                let held = snapshots.required.withLock { $0 }
                snapshots.required.withLock { $0 = [] }
                snapshots.take(store, at: step)
                snapshots.required.withLock { $0 = held }
            } else {
                snapshots.take(store, at: step)
            }
        }

        snapshots.required.withLock { $0 = Set(urls.indices) }
        let kept = store.keepBases(urls.map { BaseToKeep(url: $0) })
        #expect(kept.allSatisfy { $0 != nil })
        for index in [1, 3, 6, 0, 2, 4, 5] {
            snapshots.required.withLock { _ = $0.remove(index) }
            try store.version(itemAt: urls[index], forPersistentIdentifier: kept[index]!.versionID)?.remove()
        }
        store.onEachStep(nil)

        let taken = snapshots.taken.withLock { $0 }
        let steps = Set(taken.map(\.step))
        #expect(
            steps.isSuperset(of: [
                .chunksPlaced, .versionsPlaced, .indexWritten, .packReplaced, .versionsRemoved,
            ]),
            "\(taken.map(\.step))")
        let expected = try urls.map { try Data(contentsOf: $0) }
        for (number, snapshot) in taken.enumerated() {
            let crash = "crash \(number) at \(snapshot.step)"
            let reader = VersionStore(root: snapshot.root)
            for (index, url) in urls.enumerated() {
                let versions = reader.otherVersionsOfItem(at: url)
                #expect(versions.count <= 1, "\(crash): \(versions.count) versions of \(index)")
                for version in versions {
                    #expect(
                        (try? Data(contentsOf: version.url)) == expected[index],
                        "\(crash): base \(index) torn")
                }
                if snapshot.required.contains(index) {
                    #expect(versions.count == 1, "\(crash): the kept base of \(index) is gone")
                }
            }
            #expect(
                reader.lastRecoveryError == nil, "\(crash): \(String(describing: reader.lastRecoveryError))")
            let packsFolder = snapshot.root.appendingPathComponent("packs")
            let packsBefore = Set(Self.names(in: packsFolder))
            #expect(reader.keepBases([BaseToKeep(url: urls[0])])[0] != nil, "\(crash)")
            if snapshot.step == .packReplaced {
                #expect(
                    !packsBefore.subtracting(Self.names(in: packsFolder)).isEmpty, "\(crash): nothing swept")
            }
        }
    }

    // MARK: - Collection

    /// A pack stays while any of its versions does; removing some rewrites it with the others
    /// (their bytes unchanged), removing the last removes it. Loose chunks its records name
    /// are kept as long as the pack names them.
    @Test func aPackGoesOnlyWhenNoneOfItsVersionsIsLeft() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        var urls = try Self.files(3, size: 1000, in: tree)
        urls += try Self.files(1, size: 300_000, in: tree, folder: "large")
        let kept = store.keepBases(urls.map { BaseToKeep(url: $0) })
        let packs = store.root.appendingPathComponent("packs")
        let chunks = store.root.appendingPathComponent("chunks")
        #expect(Self.names(in: packs).count == 1)
        let looseChunks = Self.inodes(under: chunks)
        #expect(looseChunks > 1, "the large base is in loose chunks")
        func remove(_ index: Int) throws {
            let version = store.version(itemAt: urls[index], forPersistentIdentifier: kept[index]!.versionID)
            #expect(version != nil, "base \(index)")
            try version?.remove()
        }

        try remove(0)
        #expect(Self.names(in: packs).count == 1)
        let reader = makeStore(in: tree)
        #expect(reader.otherVersionsOfItem(at: urls[0]).isEmpty)
        for index in 1..<4 {
            #expect(
                Self.bytes(of: kept[index]?.versionID, at: urls[index], in: reader)
                    == (try Data(contentsOf: urls[index])))
        }
        #expect(Self.inodes(under: chunks) == looseChunks, "the large base's chunks stay")

        try remove(3)
        #expect(Self.names(in: packs).count == 1)
        #expect(Self.inodes(under: chunks) < looseChunks, "chunks no version names are collected")
        try remove(1)
        try remove(2)
        #expect(Self.names(in: packs).isEmpty)
        #expect(makeStore(in: tree).lastRecoveryError == nil)
    }

    /// A later version of a large file stores only its new chunks, inline in its own pack;
    /// removing the earlier version keeps, in the pack that replaces the earlier one, the
    /// chunks the later one names; removing the later one lets every pack and chunk go.
    @Test func aLaterVersionsChunksInAnEarlierPackOutliveTheEarlierVersion() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let url = try Self.files(1, size: 600_000, in: tree)[0]
        let packs = store.root.appendingPathComponent("packs")
        let chunks = store.root.appendingPathComponent("chunks")
        let first = try #require(store.keepBases([BaseToKeep(url: url)])[0])
        let firstPacks = Set(Self.names(in: packs))
        let looseChunks = Self.inodes(under: chunks)
        var bytes = try Data(contentsOf: url)
        bytes.replaceSubrange(1000..<1010, with: Data("one change".utf8))
        try bytes.write(to: url)

        let second = try #require(store.keepBases([BaseToKeep(url: url)])[0])

        let secondPack = try #require(Set(Self.names(in: packs)).subtracting(firstPacks).first)
        let packSize = try #require(FileStatus(path: packs.appendingPathComponent(secondPack).path)?.size)
        #expect(packSize < 2 * 128 << 10 + 8 << 10, "only the changed chunks: \(packSize) bytes")
        #expect(Self.inodes(under: chunks) == looseChunks, "no loose chunk for a change")

        try store.version(itemAt: url, forPersistentIdentifier: first.versionID)?.remove()
        let reader = makeStore(in: tree)
        #expect(Self.bytes(of: second.versionID, at: url, in: reader) == bytes)
        #expect(reader.otherVersionsOfItem(at: url).count == 1)
        #expect(Self.names(in: packs).count == 2, "the first pack's chunks the second names are kept")

        try store.version(itemAt: url, forPersistentIdentifier: second.versionID)?.remove()
        #expect(Self.names(in: packs).isEmpty)
        let left = FileManager.default.enumerator(atPath: chunks.path)?.allObjects.compactMap {
            $0 as? String
        }
        #expect(left?.filter { $0.contains("/") }.isEmpty ?? true, "\(left ?? [])")
        #expect(makeStore(in: tree).lastRecoveryError == nil)
    }

    // MARK: - Damage

    /// A pack is hostile input like any file: a table that does not match its digest sets the
    /// whole pack aside (reported, its versions gone, never read wrong); a damaged record
    /// costs that record only.
    @Test func aDamagedPackIsSetAsideAndADamagedRecordCostsOnlyItself() throws {
        let tree = try TemporaryTree()
        let urls = try Self.files(3, size: 500, in: tree)
        let store = makeStore(in: tree)
        let kept = store.keepBases(urls.map { BaseToKeep(url: $0) })
        let packs = store.root.appendingPathComponent("packs")
        let pack = packs.appendingPathComponent(Self.names(in: packs)[0])
        var bytes = try Data(contentsOf: pack)

        // A record's JSON changed: its digest no longer matches.
        let record = try #require(bytes.range(of: Data(kept[1]!.versionID.utf8)))
        bytes[record.lowerBound] ^= 0x01
        try bytes.write(to: pack)
        let reader = makeStore(in: tree)
        #expect(
            Self.bytes(of: kept[0]?.versionID, at: urls[0], in: reader) == (try Data(contentsOf: urls[0])))
        #expect(reader.otherVersionsOfItem(at: urls[1]).isEmpty)
        #expect(reader.lastRecoveryError != nil)

        // The table cut short: nothing of the pack is trusted.
        bytes.removeLast(20)
        try bytes.write(to: pack)
        let another = makeStore(in: tree)
        for url in urls { #expect(another.otherVersionsOfItem(at: url).isEmpty) }
        #expect(another.lastRecoveryError?.url?.lastPathComponent == pack.lastPathComponent)
        #expect(Self.names(in: packs).isEmpty, "set aside")
    }
}
