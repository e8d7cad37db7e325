import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// Documents kept on the server only: a device that downloads on demand lists a container
/// without fetching it, placeholders follow the remote, a download asked for arrives, an
/// eviction is never a deletion, and removing a placeholder is one. On real folders with a
/// real journal and a local-folder remote.
@Suite struct DownloadOnDemandTests {
    let folder: TemporaryFolder
    let remoteFolder: URL

    init() throws {
        folder = try TemporaryFolder()
        remoteFolder = try folder.folder("remote")
    }

    /// Device a downloads at once; b on demand.
    func devices() throws -> (SyncDevice, SyncDevice) {
        let remote = LocalFolderRemote(root: remoteFolder)
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        b.downloadsOnDemand = true
        return (a, b)
    }

    func remoteText(_ path: String) -> String? {
        (try? Data(contentsOf: remoteFolder.appendingPathComponent(path))).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    @Test func aDeviceOnDemandListsEveryDocumentAsAPlaceholderWithItsSizeAndFetchesNothing() throws {
        let (a, b) = try devices()
        try a.write("one.txt", "first")
        try a.write("Notes/two.txt", "the second document")
        _ = try a.sync()
        let summary = try b.sync()
        #expect(summary.downloaded == 0)
        #expect(summary.keptOnServer == 2)
        #expect(try b.tree().isEmpty)
        #expect(b.placeholder("one.txt") == UbiquityPlaceholder(name: "one.txt", size: 5, path: "one.txt"))
        #expect(
            b.placeholder("Notes/two.txt")
                == UbiquityPlaceholder(name: "two.txt", size: 19, path: "Notes/two.txt"))
        // The next pass has nothing to do; the remote is as a left it.
        #expect(try !b.sync().didWork)
        #expect(remoteText("one.txt") == "first")
        let states = try SyncEngine.status(
            ofContainer: b.container, remote: LocalFolderRemote(root: remoteFolder),
            configuration: b.configuration)
        #expect(states.map(\.state) == [.onServerOnly, .onServerOnly], "\(states)")
    }

    @Test func aDownloadAskedForArrivesReplacesItsPlaceholderAndThenSyncsAsAnyDocument() throws {
        let (a, b) = try devices()
        try a.write("one.txt", "first")
        try a.write("two.txt", "second")
        _ = try a.sync()
        _ = try b.sync()
        try b.requestDownload("one.txt")
        let summary = try b.sync()
        #expect(summary.downloaded == 1)
        #expect(b.read("one.txt") == "first")
        #expect(b.placeholder("one.txt") == nil)
        #expect(b.placeholder("two.txt") != nil && !b.exists("two.txt"))
        #expect(b.downloadRequests.load().isEmpty)
        // Edited on b: uploaded as any document; a gets it.
        try b.write("one.txt", "first, edited on b")
        #expect(try b.sync().uploaded == 1)
        _ = try a.sync()
        #expect(a.read("one.txt") == "first, edited on b")
    }

    @Test func aPlaceholderFollowsTheRemotesEditsAndGoesWhenTheDocumentIsDeletedThere() throws {
        let (a, b) = try devices()
        try a.write("one.txt", "first")
        _ = try a.sync()
        _ = try b.sync()
        try a.write("one.txt", "first, and much longer now")
        _ = try a.sync()
        _ = try b.sync()
        #expect(b.placeholder("one.txt")?.size == 26)
        #expect(!b.exists("one.txt"))
        // Downloaded now, it is the remote's latest.
        try b.requestDownload("one.txt")
        _ = try b.sync()
        #expect(b.read("one.txt") == "first, and much longer now")
        // Evicted again, then deleted on a: the placeholder goes, and nothing comes back.
        try b.evict("one.txt")
        _ = try b.sync()
        try a.delete("one.txt")
        _ = try a.sync()
        let summary = try b.sync()
        #expect(summary.deletedLocally == 1)
        #expect(b.placeholder("one.txt") == nil && !b.exists("one.txt"))
        #expect(try !b.sync().didWork)
        #expect(remoteText("one.txt") == nil)
    }

    @Test func anEvictionIsNotADeletionAndRemovingAPlaceholderIs() throws {
        let (a, b) = try devices()
        b.downloadsOnDemand = false
        try a.write("keep.txt", "kept on the server")
        try a.write("gone.txt", "deleted from b's list")
        _ = try a.sync()
        _ = try b.sync()
        #expect(b.read("keep.txt") == "kept on the server")
        try b.evict("keep.txt")
        try b.evict("gone.txt")
        _ = try b.sync()
        #expect(remoteText("keep.txt") == "kept on the server")
        #expect(remoteText("gone.txt") == "deleted from b's list")
        _ = try a.sync()
        #expect(a.read("keep.txt") == "kept on the server")
        // The user removes a placeholder: the document is deleted everywhere (and kept in a's
        // version store, as every deletion from the remote is).
        try FileManager.default.removeItem(at: UbiquityPlaceholder.placeholderURL(for: b.url("gone.txt")))
        _ = try b.sync()
        #expect(remoteText("gone.txt") == nil)
        _ = try a.sync()
        #expect(!a.exists("gone.txt"))
        #expect(a.read("keep.txt") == "kept on the server")
    }

    @Test func aFilePutWhereAPlaceholderStandsIsReconciledNeverWrittenOverTheRemotes() throws {
        let (a, b) = try devices()
        try a.write("one.txt", "a's text\n")
        _ = try a.sync()
        _ = try b.sync()
        // Another program writes a different file where the placeholder stands.
        try b.write("one.txt", "b's own text\n")
        _ = try b.sync()
        #expect(b.placeholder("one.txt") == nil)
        // Neither text is lost: the remote's at the path (or merged into it), b's kept.
        let atPath = try #require(b.read("one.txt"))
        let everywhere = [atPath] + b.conflicts("one.txt")
        #expect(everywhere.contains { $0.contains("a's text") }, "\(everywhere)")
        #expect(everywhere.contains { $0.contains("b's own text") }, "\(everywhere)")
        #expect(remoteText("one.txt") == atPath)
    }

    /// The steps of keeping on the server and downloading: neither writes the remote.
    @Test(arguments: [SyncStep.beforeLocalWrite, .afterLocalWrite, .afterJournal])
    func aCrashAtAnyStepOfKeepingOnTheServerOrDownloadingConverges(_ step: SyncStep) throws {
        let (a, b) = try devices()
        try a.write("one.txt", "first")
        try a.write("two.txt", "second")
        _ = try a.sync()
        // Crashed while making the placeholders.
        try b.crashPass(at: step)
        _ = try b.sync()
        #expect(try b.tree().isEmpty)
        #expect(b.placeholder("one.txt") != nil && b.placeholder("two.txt") != nil)
        // Crashed while downloading the one asked for.
        try b.requestDownload("one.txt")
        try b.crashPass(at: step)
        _ = try b.sync()
        #expect(b.read("one.txt") == "first")
        #expect(b.placeholder("one.txt") == nil)
        #expect(b.placeholder("two.txt") != nil)
        #expect(try !b.sync().didWork)
        #expect(remoteText("one.txt") == "first" && remoteText("two.txt") == "second")
        _ = try a.sync()
        #expect(try a.tree() == ["one.txt": "first", "two.txt": "second"])
    }

    /// Found by the simulation (seed 175 of the on-demand runs): a folder holding a
    /// placeholder was moved, and the document it stood for was deleted from the remote.
    @Test(arguments: [false, true])
    func aPlaceholderMovedWithItsFolderOrRenamedMovesItsDocument(renamed: Bool) throws {
        let (a, b) = try devices()
        try a.write("B/one.txt", "kept on the server")
        _ = try a.sync()
        _ = try b.sync()
        #expect(b.placeholder("B/one.txt") != nil)
        let destination = renamed ? "B/renamed.txt" : "C/A/one.txt"
        try FileManager.default.createDirectory(at: b.url("C"), withIntermediateDirectories: true)
        if renamed {
            try FileManager.default.moveItem(
                at: UbiquityPlaceholder.placeholderURL(for: b.url("B/one.txt")),
                to: UbiquityPlaceholder.placeholderURL(for: b.url(destination)))
        } else {
            try FileManager.default.moveItem(at: b.url("B"), to: b.url("C/A"))
        }
        let summary = try b.sync()
        #expect(summary.moved == 1, "\(summary)")
        #expect(remoteText(destination) == "kept on the server")
        #expect(remoteText("B/one.txt") == nil)
        #expect(b.placeholder(destination) != nil && !b.exists(destination))
        #expect(try !b.sync().didWork)
        _ = try a.sync()
        #expect(a.read(destination) == "kept on the server")
        // Asked for at its new place, it arrives there.
        try b.requestDownload(destination)
        _ = try b.sync()
        #expect(b.read(destination) == "kept on the server")
    }

    @Test func aPlaceholderThatStandsForNothingIsRemoved() throws {
        let (_, b) = try devices()
        try SafeSave.write(
            try UbiquityPlaceholder(name: "ghost.txt", size: 12).encoded(),
            to: UbiquityPlaceholder.placeholderURL(for: b.url("ghost.txt")))
        _ = try b.sync()
        #expect(b.placeholder("ghost.txt") == nil)
        #expect(try !b.sync().didWork)
    }

    @Test func aRemoteWipeOfDocumentsKeptOnTheServerPausesAsAnyMassDeletion() throws {
        let (a, b) = try devices()
        for index in 0..<12 { try a.write("doc\(index).txt", "text \(index)") }
        _ = try a.sync()
        _ = try b.sync()
        for index in 0..<12 {
            try FileManager.default.removeItem(at: remoteFolder.appendingPathComponent("doc\(index).txt"))
        }
        #expect(throws: SyncError.self) { try b.sync() }
        #expect(b.placeholder("doc0.txt") != nil)
    }
}
