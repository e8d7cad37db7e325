import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A pass's scan (``SyncScan/init(changesIn:journal:remote:configuration:leftovers:)``) leaves
/// out what is as the journal last saw it on both sides, so that it holds what changed, not
/// the container. What it leaves out must be what the whole scan would do nothing for: the
/// two plan alike, whatever changed where.
@Suite struct SyncScanTests {
    /// A synced container of three folders, changed by seed on both sides (edits, edits back
    /// to the same bytes, times touched, deletions, new files, renames, a file made a folder,
    /// a document evicted, a download asked for): the pass's scan plans exactly the actions,
    /// notes and bytes the whole scan plans, and holds none of the files left as they were.
    @Test(arguments: 0..<48 as Range<UInt64>)
    func aPassScanPlansWhatTheWholeScanPlans(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let folder = try TemporaryFolder("scan-\(seed)")
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let here = try SyncDevice("here", remote: remote, in: folder)
        let there = try SyncDevice("there", remote: remote, in: folder)
        var names: [String] = []
        for folderName in ["A", "B", "C"] {
            for file in 0..<8 { names.append("\(folderName)/f\(file).txt") }
        }
        names.append("top.txt")
        for name in names { try here.write(name, "first \(name)\n") }
        try here.sync()
        try there.sync()
        let evicted = names[Int(random.next() % UInt64(names.count))]
        try here.evict(evicted)
        try here.sync()
        var untouched = Set(names).subtracting([evicted])

        // Another device's changes reach the remote; then this device's, unsynced.
        for name in names.shuffled(using: &random).prefix(Int(random.next() % 6)) {
            untouched.remove(name)
            switch random.next() % 4 {
            case 0: try there.delete(name)
            case 1: try there.write(name, "there's edit of \(name)\n")
            case 2: try FileManager.default.moveItem(at: there.url(name), to: there.url(name + ".moved"))
            default: try there.write(name.replacingOccurrences(of: ".txt", with: "-new.txt"), "new there\n")
            }
        }
        try there.sync()
        for name in names.shuffled(using: &random).prefix(Int(random.next() % 6)) where name != evicted {
            untouched.remove(name)
            switch random.next() % 7 {
            case 0: try here.delete(name)
            case 1: try here.write(name, "here's edit of \(name)\n")
            case 2: try here.write(name, "first \(name)\n")  // the same bytes, a new status
            case 3:
                let url = here.url(name)
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: url.path)
            case 4: try FileManager.default.moveItem(at: here.url(name), to: here.url(name + ".renamed"))
            case 5:
                try here.delete(name)
                try FileManager.default.createDirectory(
                    at: here.url(name), withIntermediateDirectories: false)
            default: try here.write("new-\(name.replacingOccurrences(of: "/", with: "-"))", "new here\n")
            }
        }
        if random.next() % 3 == 0 { try here.requestDownload(evicted) }

        let engine = try here.opened()
        let whole = try SyncScan(
            here.container, known: try engine.journal.itemsByPath(), remote: remote,
            configuration: here.configuration)
        let pass = try SyncScan(
            changesIn: here.container, journal: engine.journal, remote: remote,
            configuration: here.configuration)

        #expect(Set(pass.plan.actions) == Set(whole.plan.actions), "seed \(seed)")
        #expect(pass.plan.actions.count == whole.plan.actions.count)
        #expect(pass.plan.notes == whole.plan.notes)
        #expect(pass.plan.scannedHere == whole.plan.scannedHere)
        #expect(pass.plan.scannedFolderTags == whole.plan.scannedFolderTags)
        #expect(pass.plan.byteTotal == whole.plan.byteTotal)
        #expect(Set(pass.plan.newLocalFiles) == Set(whole.plan.newLocalFiles))
        #expect(pass.notes == whole.notes)
        #expect(pass.placeholders == whole.placeholders)
        #expect(pass.requestsGoneFromRemote == whole.requestsGoneFromRemote)
        #expect(pass.knownFiles == whole.knownFiles)

        // What was left as it was on both sides is in none of the pass's tables.
        let leftAlone = Set(untouched.map(RemotePath.init))
        #expect(leftAlone.count >= names.count - 12)
        let held = Set(pass.local.keys).union(pass.remote.keys).union(pass.known.keys)
        #expect(held.isDisjoint(with: leftAlone), "seed \(seed): \(held.intersection(leftAlone).sorted())")
        #expect(leftAlone.isSubset(of: Set(whole.known.keys)))
    }

    /// A file as the journal saw it here whose remote side changed is looked at again once the
    /// remote is listed: the plan takes that later look as the scan's. Here the file is edited
    /// between the scan and that look (by a hook in the remote's listing), and the plan sees
    /// the edit: a reconcile of both changes, never a download over it.
    @Test func aFileChangedAfterTheScanIsSeenAsItIsWhenLookedAtAgain() throws {
        let folder = try TemporaryFolder(#function)
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let here = try SyncDevice("here", remote: remote, in: folder)
        let there = try SyncDevice("there", remote: remote, in: folder)
        try here.write("a.txt", "first\n")
        try here.sync()
        try there.sync()
        try there.write("a.txt", "there's edit\n")
        try there.sync()
        let listing = ListingHook(remote) { try? here.write("a.txt", "here's edit, during the listing\n") }
        let engine = try here.opened()
        let pass = try SyncScan(
            changesIn: here.container, journal: engine.journal, remote: listing,
            configuration: here.configuration, listingAfterTheScan: true)
        #expect(pass.plan.actions.map(\.path) == [RemotePath("a.txt")])
        guard case .reconcile = pass.plan.actions.first else {
            Issue.record("planned \(pass.plan.actions), not a reconcile")
            return
        }
        let seen = try #require(pass.plan.scannedHere[RemotePath("a.txt")])
        #expect(seen.size == Int64("here's edit, during the listing\n".utf8.count))
    }

    /// The second look goes beneath the container, as the scan does: a folder made a link
    /// to a folder outside between the scan and that look is followed to nothing, and the
    /// file outside is not taken for the container's.
    @Test func theSecondLookFollowsNoLinkOutOfTheContainer() throws {
        let folder = try TemporaryFolder(#function)
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let here = try SyncDevice("here", remote: remote, in: folder)
        let there = try SyncDevice("there", remote: remote, in: folder)
        try here.write("A/a.txt", "first\n")
        try here.sync()
        try there.sync()
        try there.write("A/a.txt", "there's edit\n")
        try there.sync()
        let outside = try folder.folder("outside")
        try Data("outside\n".utf8).write(to: outside.appendingPathComponent("a.txt"))
        let listing = ListingHook(remote) {
            try? FileManager.default.moveItem(at: here.url("A"), to: folder.file("A moved away"))
            try? FileManager.default.createSymbolicLink(at: here.url("A"), withDestinationURL: outside)
        }
        let engine = try here.opened()
        let pass = try SyncScan(
            changesIn: here.container, journal: engine.journal, remote: listing,
            configuration: here.configuration, listingAfterTheScan: true)
        #expect(pass.local[RemotePath("A/a.txt")] == nil)
        #expect(!pass.plan.actions.contains { $0.path == RemotePath("A/a.txt") && $0.isUpload })
    }

    /// A device whose container holds a.txt, synced to a local folder; its engine open. The
    /// folder holds them all: they are gone with it.
    static func oneSyncedFile(_ name: String) throws -> (
        TemporaryFolder, LocalFolderRemote, SyncDevice, SyncEngine
    ) {
        let folder = try TemporaryFolder(name)
        let base = LocalFolderRemote(root: try folder.folder("remote"))
        let here = try SyncDevice("here", remote: base, in: folder)
        try here.write("a.txt", "first\n")
        try here.sync()
        return (folder, base, here, try here.opened())
    }

    /// The remote is listed beside the local scan; a local scan that fails still waits for
    /// the listing, so that no listing goes on once the scan has returned.
    @Test func aScanThatFailsHereStillWaitsForTheListing() throws {
        let (folder, base, here, engine) = try Self.oneSyncedFile(#function)
        defer { withExtendedLifetime(folder) {} }
        let listing = SlowListing(base)
        try FileManager.default.removeItem(at: here.container)
        #expect(throws: (any Error).self) {
            try SyncScan(
                changesIn: here.container, journal: engine.journal, remote: listing,
                configuration: here.configuration)
        }
        #expect(listing.isDone.withLock { $0 })
    }

    /// A remote whose whole listing keeps a file the pass said it knows (what two keys that
    /// spell one path, or one key listed twice with two tags, come to): the pass's scan fails,
    /// naming the path, rather than plan from a listing that says two things of one file.
    @Test func aListingThatKeepsAFileThePassLeftOutFailsTheScan() throws {
        let (folder, base, here, engine) = try Self.oneSyncedFile(#function)
        defer { withExtendedLifetime(folder) {} }
        let error = #expect(throws: RemoteError.self) {
            try SyncScan(
                changesIn: here.container, journal: engine.journal, remote: KeepingAnyway(base),
                configuration: here.configuration)
        }
        #expect(error?.kind == .badAnswer)
        #expect(
            error?.description.contains("it lists a.txt twice, and differently") == true,
            "\(String(describing: error))")
        // The whole scan, asked nothing, plans nothing.
        let whole = try SyncScan(
            here.container, known: try engine.journal.itemsByPath(), remote: KeepingAnyway(base),
            configuration: here.configuration)
        #expect(whole.plan.actions.isEmpty)
    }
}

/// A remote whose listing of the root takes a while, and that says when it is done.
private final class SlowListing: ForwardingRemote, @unchecked Sendable {
    let isDone = Mutex(false)

    override func list(_ folder: RemotePath) throws -> RemoteListing {
        if folder.isRoot { usleep(300_000) }
        defer { if folder.isRoot { isDone.withLock { $0 = true } } }
        return try base.list(folder)
    }
}

/// A remote listing its whole tree at once that asks `keeping` of every file and keeps each
/// anyway.
private final class KeepingAnyway: ForwardingRemote, @unchecked Sendable {
    override func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws
        -> [RemotePath: RemoteEntry]?
    {
        let tree = try SyncTrees.remote(base)
        for (path, entry) in tree where entry.kind == .file { _ = keeping(path, entry) }
        return tree
    }
}

/// A remote that runs `hook` once, before its first listing of the root.
private final class ListingHook: ForwardingRemote, @unchecked Sendable {
    private var hook: (() -> Void)?

    init(_ base: any Remote, hook: @escaping () -> Void) {
        self.hook = hook
        super.init(base)
    }

    override func list(_ folder: RemotePath) throws -> RemoteListing {
        if folder.isRoot, let hook {
            self.hook = nil
            hook()
        }
        return try base.list(folder)
    }
}

extension SyncAction {
    fileprivate var isUpload: Bool {
        if case .upload = self { return true }
        return false
    }
}
