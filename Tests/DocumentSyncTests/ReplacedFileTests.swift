import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// What a download replaces here (and a deletion removes) is held in the version store by a
/// hard link while the download is put in place, and stored as a version by the end of the
/// pass: the download does not wait for the store, and the old bytes are never lost, whatever
/// step a crash comes at.
@Suite struct ReplacedFileTests {
    let folder: TemporaryFolder
    let remoteFolder: URL

    init() throws {
        folder = try TemporaryFolder()
        remoteFolder = try folder.folder("remote")
    }

    func devices() throws -> (SyncDevice, SyncDevice) {
        let remote = LocalFolderRemote(root: remoteFolder)
        return (
            try SyncDevice("a", remote: remote, in: folder), try SyncDevice("b", remote: remote, in: folder)
        )
    }

    /// Device b synced `old` in big.txt; device a changed it to `new` since, synced: b's next
    /// pass downloads it over its copy.
    func changedOnA() throws -> (b: SyncDevice, old: String, new: String) {
        let (a, b) = try devices()
        let (old, new) = (Self.large("old"), Self.large("new"))
        try a.write("big.txt", old)
        try a.sync()
        try b.sync()
        try a.write("big.txt", new)
        try a.sync()
        return (b, old, new)
    }

    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// The files under `folder`, at any depth.
    static func files(under folder: URL) -> Int {
        (FileManager.default.enumerator(atPath: folder.path)?.allObjects.count) ?? 0
    }

    /// How many history versions of `path` on `device` hold `text`, as `store` lists them.
    static func versions(of path: String, on device: SyncDevice, holding text: String, in store: VersionStore)
        -> Int
    {
        store.otherVersionsOfItem(at: device.url(path)).count {
            !$0.isConflict && (try? Data(contentsOf: $0.url)) == Data(text.utf8)
        }
    }

    /// Larger than a merge base is kept for (`TextMerge.mostBytes`): the replaced bytes are in
    /// no version until the replacement keeps them.
    static func large(_ word: String) -> String {
        String(repeating: "\(word) ", count: (TextMerge.mostBytes + 4096) / (word.utf8.count + 1))
    }

    @Test func aDownloadIsPutInPlaceBeforeTheStoreKeepsWhatItReplaced() throws {
        let (b, old, new) = try changedOnA()
        let chunks = b.store.root.appendingPathComponent("chunks")
        let before = Self.files(under: chunks)
        let seen = Mutex<(held: Int, chunks: Int)?>(nil)
        try b.opened().checkpoint = { step in
            guard step == .afterLocalWrite else { return }
            seen.withLock {
                $0 = (
                    Self.names(in: b.store.root.appendingPathComponent("held")).count,
                    Self.files(under: chunks)
                )
            }
        }
        #expect(try b.sync().downloaded == 1)
        #expect(b.read("big.txt") == new)
        let atPlacing = try #require(seen.withLock { $0 })
        #expect(atPlacing.held == 1, "the replaced file is held while the download is put in place")
        #expect(atPlacing.chunks == before, "the store wrote nothing before the download was in place")
        // By the end of the pass it is a version, and nothing is held.
        #expect(Self.names(in: b.store.root.appendingPathComponent("held")).isEmpty)
        #expect(Self.versions(of: "big.txt", on: b, holding: old, in: b.store) == 1)
    }

    /// A crash at any step of a download over a file: the replaced bytes are found by a
    /// listing of another process before the next pass, and kept once by the next pass,
    /// which leaves nothing held.
    @Test(arguments: SyncStep.allCases)
    func aCrashAtAnyStepOfADownloadKeepsTheReplacedBytes(_ step: SyncStep) throws {
        let (b, old, new) = try changedOnA()
        var crashed = false
        try b.opened().checkpoint = { current in
            if current == step, !crashed {
                crashed = true
                throw SyncInterruption()
            }
        }
        _ = try? b.opened().pass()
        b.crash()
        // Another process, listing the versions before sync runs again: the old bytes are a
        // version, unless the crash came before anything was replaced.
        let other = VersionStore(
            root: b.store.root, device: DeviceIdentity(identifier: "device-b", name: "b"))
        let listed = Self.versions(of: "big.txt", on: b, holding: old, in: other)
        #expect(listed == 1 || (listed == 0 && b.read("big.txt") == old), "\(step)")

        try b.sync()
        #expect(b.read("big.txt") == new, "\(step)")
        #expect(Self.versions(of: "big.txt", on: b, holding: old, in: b.store) == 1, "\(step)")
        #expect(Self.names(in: b.store.root.appendingPathComponent("held")).isEmpty, "\(step)")
    }

    /// The same for a crash after the download is in place, before the pass stored the
    /// hold, when nothing lists versions in between: the next pass stores it.
    @Test func theNextPassStoresWhatACrashLeftHeld() throws {
        let (b, old, new) = try changedOnA()
        try b.crashPass(at: .afterJournal)
        #expect(Self.names(in: b.store.root.appendingPathComponent("held")).count == 1)
        try b.sync()
        #expect(Self.names(in: b.store.root.appendingPathComponent("held")).isEmpty)
        #expect(Self.versions(of: "big.txt", on: b, holding: old, in: b.store) == 1)
        #expect(b.read("big.txt") == new)
    }

    /// A document deleted on the remote is deleted here the same way: held, then stored; its
    /// history follows it into the Deleted folder.
    @Test func aDeletionHereKeepsTheDeletedBytes() throws {
        let (a, b) = try devices()
        let old = Self.large("old")
        try a.write("big.txt", old)
        try a.sync()
        try b.sync()
        try a.delete("big.txt")
        try a.sync()
        #expect(try b.sync().deletedLocally == 1)
        #expect(!b.exists("big.txt"))
        #expect(Self.names(in: b.store.root.appendingPathComponent("held")).isEmpty)
        let versions = b.store.otherVersionsOfItem(at: b.deleted.appendingPathComponent("big.txt"))
        #expect(versions.count { (try? Data(contentsOf: $0.url)) == Data(old.utf8) } == 1)
    }
}
