import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A folder of the remote whose listing cannot be taken (a name that is no name, an answer a
/// vault cannot decrypt) is left as it is for the pass, named in its failures, and every other
/// folder syncs; a root that cannot be listed, or a remote that cannot be reached, still fails
/// the pass with nothing changed.
@Suite struct SyncUnlistedFolderTests {
    let folder: TemporaryFolder
    let remote = SimulatedRemote()
    /// b's view of `remote`.
    let hostile: HostileFolders
    let a: SyncDevice
    let b: SyncDevice

    /// Twelve documents in `B`, one in `C` and one at the root, synced to both devices.
    init() throws {
        folder = try TemporaryFolder()
        a = try SyncDevice("a", remote: remote, in: folder)
        hostile = HostileFolders(remote)
        b = try SyncDevice("b", remote: hostile, in: folder)
        for index in 0..<12 { try a.write(Self.inB(index), "b \(index)\n") }
        try a.write("C/c.txt", "c\n")
        try a.write("notes.txt", "notes\n")
        try a.sync()
        try b.sync()
    }

    static func inB(_ index: Int) -> String { String(format: "B/b%02d.txt", index) }

    /// b's listings of `folder` fail as a hostile server's do, until `body` returns.
    func failingListings<T>(of folder: String, _ body: () throws -> T) rethrows -> T {
        hostile.folders.withLock { $0 = [RemotePath(folder)] }
        defer { hostile.folders.withLock { $0 = [] } }
        return try body()
    }

    func remoteText(_ path: String) -> String? {
        remote.snapshot().files[RemotePath(path)].map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aFolderThatCannotBeListedIsLeftAsItIsAndTheOthersSync() throws {
        try a.write("C/c.txt", "c, edited on a\n")
        try a.sync()
        // On b, inside B: a deletion, an edit and a new document, none of which may go up
        // over what the pass cannot see; beside it, a new document that must.
        try b.delete(Self.inB(0))
        try b.write(Self.inB(1), "b 1, edited on b\n")
        try b.write("B/new.txt", "new in B\n")
        try b.write("C/new.txt", "new in C\n")
        let treeInB = try b.tree().filter { $0.key.hasPrefix("B/") }
        let summary = try failingListings(of: "B") { try b.sync() }
        #expect(
            summary.failures.contains { $0.hasPrefix("B: cannot be listed") && $0.contains("hostile-nul") },
            "\(summary.failures)")
        #expect(summary.failures.count == 1, "\(summary.failures)")
        // B as it was on both sides: twelve documents there are not twelve deletions (no
        // pause), and nothing of b's goes up.
        #expect(try b.tree().filter { $0.key.hasPrefix("B/") } == treeInB)
        for index in 0..<12 { #expect(remoteText(Self.inB(index)) == "b \(index)\n") }
        #expect(remoteText("B/new.txt") == nil)
        // The others synced in the same pass.
        #expect(b.read("C/c.txt") == "c, edited on a\n")
        #expect(remoteText("C/new.txt") == "new in C\n")
        #expect(summary.downloaded == 1 && summary.uploaded == 1, "\(summary)")
        // Listed again, B syncs as the user left it.
        let next = try b.sync()
        #expect(next.failures.isEmpty, "\(next.failures)")
        #expect(remoteText(Self.inB(0)) == nil)
        #expect(remoteText(Self.inB(1)) == "b 1, edited on b\n")
        #expect(remoteText("B/new.txt") == "new in B\n")
    }

    /// Downloads on demand: a document of the folder kept on the server only keeps its
    /// placeholder, and the app's request to download it waits for a pass that lists it.
    @Test func aPlaceholderInAFolderThatCannotBeListedStaysAndItsRequestWaits() throws {
        try b.evict(Self.inB(2))
        try b.sync()
        #expect(b.placeholder(Self.inB(2)) != nil)
        try b.requestDownload(Self.inB(2))
        let summary = try failingListings(of: "B") { try b.sync() }
        #expect(summary.failures.contains { $0.hasPrefix("B: cannot be listed") }, "\(summary.failures)")
        #expect(b.placeholder(Self.inB(2)) != nil)
        #expect(!b.exists(Self.inB(2)))
        #expect(b.downloadRequests.load() == [Self.inB(2)] as Set)
        _ = try b.sync()
        #expect(b.read(Self.inB(2)) == "b 2\n")
    }

    @Test func aRootThatCannotBeListedFailsThePassChangingNothing() throws {
        try a.write("notes.txt", "notes, edited on a\n")
        try a.sync()
        let error = failingListings(of: "") { #expect(throws: SyncError.self) { try b.sync() } }
        #expect(error?.kind == .failed)
        #expect(b.read("notes.txt") == "notes\n")
    }

    /// No answer for one folder says nothing of that folder, but that the remote cannot be
    /// used now: the pass fails, as it would for the root, and the next goes on.
    @Test func aFolderWhoseListingGetsNoAnswerFailsThePass() throws {
        try a.write("C/c.txt", "c, edited on a\n")
        try a.sync()
        remote.schedule(.serverError(status: 503), on: .list, at: RemotePath("B"))
        let error = #expect(throws: SyncError.self) { try b.sync() }
        #expect(error?.kind == .failed)
        #expect(b.read("C/c.txt") == "c\n")
        #expect(try b.sync().failures.isEmpty)
        #expect(b.read("C/c.txt") == "c, edited on a\n")
    }
}

/// A remote whose listings of `folders` hold a name that is not one, as a hostile server's do,
/// and fail the remote's own check (``Remote/checkedListing(_:_:folderTag:)``). While any does,
/// its listing of the whole tree fails too, as S3's does for a bad key anywhere.
final class HostileFolders: ForwardingRemote, @unchecked Sendable {
    let folders = Mutex<Set<RemotePath>>([])

    override func list(_ folder: RemotePath) throws -> RemoteListing {
        let listing = try base.list(folder)
        guard folders.withLock({ $0.contains(folder) }) else { return listing }
        let hostile = RemoteEntry(name: "hostile-nul\u{0}.txt", kind: .file, size: 1, tag: RemoteTag("h"))
        return try base.checkedListing(folder, listing.entries + [hostile], folderTag: listing.folderTag)
    }

    override func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws
        -> [RemotePath: RemoteEntry]?
    {
        guard folders.withLock({ $0.isEmpty }) else {
            throw RemoteError(
                .badAnswer, operation: .list, path: .root, remote: displayName, detail: "a bad key")
        }
        return nil
    }
}

extension BlockingSyncTests {
    /// A WebDAV server on loopback whose answer for one folder is cut short: that folder is left
    /// as it is, and the rest syncs.
    @Suite struct WebDAVUnlistedFolderTests {
        @Test func aFolderWhoseListingIsCutShortIsLeftAsItIsAndTheOthersSync() throws {
            let dav = try HostileDAV()
            dav.put("A/one.txt", "one\n")
            dav.put("B/two.txt", "two\n")
            let folder = try TemporaryFolder()
            let device = try SyncDevice("a", remote: try dav.remote(), in: folder)
            #expect(try device.sync().downloaded == 2)
            dav.listing { folder, items in
                let whole = HostileServer.multistatus(items)
                return .xml(207, folder == "B" ? String(whole.prefix(whole.count / 2)) : whole)
            }
            dav.put("A/new.txt", "new\n")
            try device.write("B/two.txt", "two, edited here\n")
            let summary = try device.sync()
            #expect(
                summary.failures.contains {
                    $0.hasPrefix("B: cannot be listed") && $0.contains("not well-formed XML")
                },
                "\(summary.failures)")
            #expect(summary.failures.count == 1, "\(summary.failures)")
            #expect(summary.downloaded == 1 && summary.uploaded == 0, "\(summary)")
            #expect(
                try device.tree() == [
                    "A/one.txt": "one\n", "A/new.txt": "new\n", "B/two.txt": "two, edited here\n",
                ])
            let puts = dav.server.requests.filter { $0.method == "PUT" }
            #expect(puts.isEmpty, "\(puts.map(\.path))")
        }
    }
}
