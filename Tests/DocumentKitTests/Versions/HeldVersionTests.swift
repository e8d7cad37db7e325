import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Replaced files held by a hard link (`VersionStore.hold`) and stored later
/// (`storeHeldVersions`): the old bytes are never lost, whenever a crash comes, and a
/// listing of versions finds them before anything stored them.
@Suite struct HeldVersionTests {
    /// Old bytes large enough for loose chunks, and new ones of the same size.
    static let old = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 4096) })
    static let new = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })

    /// A file `name` holding `bytes` in a folder of `tree`, and that folder, open.
    static func document(_ name: String, _ bytes: Data, in tree: TemporaryTree) throws
        -> (url: URL, folder: FileDescriptor)
    {
        let url = tree.file("docs/\(name)")
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try bytes.write(to: url)
        return (url, try FileDescriptor.openDirectory(url.deletingLastPathComponent(), operation: "test"))
    }

    /// Puts `bytes` at `url` as a download does: a new file renamed over the old one.
    static func replace(_ url: URL, with bytes: Data) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".download")
        try bytes.write(to: temporary)
        #expect(rename(temporary.path, url.path) == 0)
    }

    static func held(in store: VersionStore) -> [String] {
        VersionPackTests.names(in: store.root.appendingPathComponent("held"))
    }

    /// The history versions of `url` whose bytes are `bytes`, as `store` lists them.
    static func versions(of url: URL, holding bytes: Data, in store: VersionStore) -> Int {
        store.otherVersionsOfItem(at: url).count {
            !$0.isConflict && (try? Data(contentsOf: $0.url)) == bytes
        }
    }

    @Test func aHeldFileIsStoredAsAVersionOnceReplaced() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let (url, folder) = try Self.document("big.bin", Self.old, in: tree)
        let held = try #require(try store.hold(itemAt: url, in: folder, named: "big.bin"))
        let status = try #require(FileStatus(path: url.path))
        #expect(held.device == status.device && held.inode == status.inode)
        #expect(Self.held(in: store).count == 1)
        // Holding wrote no chunk: the store's work waits until the hold is stored.
        #expect(VersionPackTests.inodes(under: store.root.appendingPathComponent("chunks")) == 0)
        try Self.replace(url, with: Self.new)

        try store.storeHeldVersions()
        #expect(Self.held(in: store).isEmpty)
        let version = try #require(
            store.version(itemAt: url, forPersistentIdentifier: held.persistentIdentifier))
        #expect(try Data(contentsOf: version.url) == Self.old)
        #expect(Self.versions(of: url, holding: Self.old, in: store) == 1)
        try store.storeHeldVersions()
        #expect(store.otherVersionsOfItem(at: url).count == 1, "stored once")
    }

    /// A hold let go (the file was not replaced after all) leaves no version and no hold.
    @Test func aReleasedHoldLeavesNothing() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let (url, folder) = try Self.document("notes.txt", Data("the same".utf8), in: tree)
        let held = try #require(try store.hold(itemAt: url, in: folder, named: "notes.txt"))
        store.release(held)
        #expect(Self.held(in: store).isEmpty)
        try store.storeHeldVersions()
        #expect(store.otherVersionsOfItem(at: url).isEmpty)
        #expect(FileStatus(path: url.path)?.linkCount == 1)
    }

    /// Copies of the store, and the file's bytes, at each step of holding, replacing and
    /// storing: what a crash there leaves. Each, opened by a new store object (a new
    /// process), lists the old bytes as one version of the file before anything else
    /// stores them, and keeps nothing held after.
    @Test func aCrashAtEveryStepLeavesTheOldBytesRecoverable() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let (url, folder) = try Self.document("big.bin", Self.old, in: tree)
        let snapshots = VersionPackTests.Snapshots(tree)
        let steps = Mutex<[StoreStep]>([])
        store.onEachStep { [store] step in
            steps.withLock { $0.append(step) }
            snapshots.take(store, at: step)
        }
        let held = try #require(try store.hold(itemAt: url, in: folder, named: "big.bin"))
        try Self.replace(url, with: Self.new)
        // A crash after the download is in place, before anything stores the hold.
        snapshots.take(store, at: .held)
        try store.storeHeldVersions()
        store.onEachStep(nil)
        #expect(
            Set(steps.withLock { $0 }).isSuperset(of: [.held, .chunksPlaced, .versionsPlaced, .heldStored]),
            "\(steps.withLock { $0 })")

        for (number, snapshot) in snapshots.taken.withLock({ $0 }).enumerated() {
            let crash = "crash \(number) at \(snapshot.step)"
            let reader = VersionStore(root: snapshot.root)
            // The first snapshot is taken while the old file is still in place: the version
            // holds the bytes that were there, which are the old ones either way.
            #expect(Self.versions(of: url, holding: Self.old, in: reader) == 1, "\(crash)")
            #expect(Self.held(in: reader).isEmpty, "\(crash): still held after a listing")
            #expect(
                reader.version(itemAt: url, forPersistentIdentifier: held.persistentIdentifier) != nil,
                "\(crash): the version has the identifier its hold named")
            #expect(
                reader.lastRecoveryError == nil, "\(crash): \(String(describing: reader.lastRecoveryError))")
        }
    }

    /// A hold whose record is damaged is set aside whole (its contents with it), reported,
    /// and no longer held: it never fails a listing, nor is read as another item's.
    @Test func aDamagedHoldIsSetAsideNotTrusted() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let (url, folder) = try Self.document("notes.txt", Data("old text".utf8), in: tree)
        let held = try #require(try store.hold(itemAt: url, in: folder, named: "notes.txt"))
        let name = try #require(Self.held(in: store).first)
        #expect(name.hasSuffix(held.persistentIdentifier))
        try Data(#"{"itemID":"../../x"}"#.utf8).write(
            to: store.root.appendingPathComponent("held/\(name)/record.json"))
        try Self.replace(url, with: Data("new text".utf8))

        let reader = VersionStore(root: store.root)
        #expect(reader.otherVersionsOfItem(at: url).isEmpty)
        #expect(Self.held(in: reader).isEmpty)
        let damaged = VersionPackTests.names(in: store.root.appendingPathComponent("damaged"))
        #expect(damaged.count == 1 && damaged.first?.hasSuffix(name) == true, "\(damaged)")
        #expect(reader.lastRecoveryError != nil)
    }
}
