import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// The engine's rules, each by name, on real folders with a real journal: a local-folder
/// remote where real parts do, the simulated remote where a fault is needed.
@Suite struct SyncEngineTests {
    let folder: TemporaryFolder
    let remoteFolder: URL

    init() throws {
        folder = try TemporaryFolder()
        remoteFolder = try folder.folder("remote")
    }

    func devices(_ names: String..., remote: (any Remote)? = nil) throws -> [SyncDevice] {
        let remote = remote ?? LocalFolderRemote(root: remoteFolder)
        return try names.map { try SyncDevice($0, remote: remote, in: folder) }
    }

    // MARK: - One side changed

    @Test func aTreeMadeOnOneDeviceArrivesWholeOnAnother() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("notes.txt", "first notes")
        try a.write("Projects/plan.txt", "the plan")
        try a.write("Projects/Deep/more.txt", "deeper")
        let up = try a.sync()
        #expect(up.uploaded == 3)
        #expect(
            try String(contentsOf: remoteFolder.appendingPathComponent("Projects/plan.txt"), encoding: .utf8)
                == "the plan")
        let down = try b.sync()
        #expect(down.downloaded == 3)
        #expect(try b.tree() == a.tree())
        // Nothing left to do on either side.
        #expect(try !a.sync().didWork)
        #expect(try !b.sync().didWork)
    }

    @Test func aPassReportsItsItemsAndTheBytesItMovesUpAndDown() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        let big = String(repeating: "x", count: 3 * RemoteChunk.size + 5)
        try a.write("big.txt", big)
        try a.write("small.txt", "small")
        for (device, expected) in [(a, 2), (b, 2)] {
            let engine = try device.opened()
            let seen = Recorded()
            engine.progress = { seen.append($0) }
            _ = try device.sync()
            engine.progress = nil
            let reports = seen.all
            let last = try #require(reports.last)
            #expect(last.done == expected && last.total == expected)
            #expect(last.byteTotal == Int64(big.utf8.count + 5))
            #expect(last.bytes == last.byteTotal)
            // Bytes only grow, and a large file reports as it goes, not only when done.
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytes <= $1.bytes })
            #expect(reports.contains { $0.bytes > 0 && $0.bytes < last.byteTotal })
        }
    }

    @Test func anEditOnOneSideIsPropagatedAndTheReplacedTextKept() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("notes.txt", "version 1")
        try a.sync()
        try b.sync()
        try b.write("notes.txt", "version 2 from b")
        #expect(try b.sync().uploaded == 1)
        #expect(try a.sync().downloaded == 1)
        #expect(a.read("notes.txt") == "version 2 from b")
        #expect(a.conflicts("notes.txt").isEmpty)
        let kept = a.store.otherVersionsOfItem(at: a.url("notes.txt")).compactMap {
            try? String(contentsOf: $0.url, encoding: .utf8)
        }
        #expect(kept.contains("version 1"), "the replaced text is a version: \(kept)")
    }

    // MARK: - Both sides changed

    @Test func bothSidesChangedToEqualBytesIsNoConflict() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("same.txt", "the same words")
        try b.write("same.txt", "the same words")
        try a.sync()
        let summary = try b.sync()
        #expect(summary.conflicts == 0)
        #expect(summary.recorded == 1)
        #expect(b.conflicts("same.txt").isEmpty)
        #expect(try !b.sync().didWork)
    }

    @Test func editsOfDifferentLinesMergeOnBothSides() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("list.txt", "one\ntwo\nthree\nfour\nfive\n")
        try a.sync()
        try b.sync()
        try a.write("list.txt", "ONE\ntwo\nthree\nfour\nfive\n")
        try b.write("list.txt", "one\ntwo\nthree\nfour\nFIVE\n")
        try a.sync()
        let merged = try b.sync()
        #expect(merged.merged == 1, "\(merged)")
        try a.sync()
        #expect(a.read("list.txt") == "ONE\ntwo\nthree\nfour\nFIVE\n")
        #expect(b.read("list.txt") == a.read("list.txt"))
        #expect(a.conflicts("list.txt").isEmpty && b.conflicts("list.txt").isEmpty)
    }

    /// The remote's version stays at the path; the other device's becomes a conflict version
    /// on every device; resolving it on one resolves it on all.
    @Test func overlappingEditsAreAConflictEveryDeviceShowsAndAnyDeviceResolves() throws {
        let devices = try devices("a", "b", "c")
        let (a, b, c) = (devices[0], devices[1], devices[2])
        try a.write("story.txt", "It was a dark night.\n")
        for device in devices { try device.sync() }
        try a.write("story.txt", "It was a stormy night.\n")
        try b.write("story.txt", "It was a quiet night.\n")
        try a.sync()
        let conflicted = try b.sync()
        #expect(conflicted.conflicts == 1)
        #expect(b.read("story.txt") == "It was a stormy night.\n", "the remote's version stays at the path")
        #expect(b.conflicts("story.txt") == ["It was a quiet night.\n"], "b's edit is a conflict version")
        try a.sync()
        try c.sync()
        for device in devices {
            #expect(device.read("story.txt") == "It was a stormy night.\n", "\(device.name)")
            #expect(device.conflicts("story.txt") == ["It was a quiet night.\n"], "\(device.name)")
        }
        // Resolved on c: gone everywhere.
        for version in c.store.unresolvedConflictVersionsOfItem(at: c.url("story.txt")) {
            version.isResolved = true
        }
        try c.sync()
        try a.sync()
        try b.sync()
        for device in devices { #expect(device.conflicts("story.txt").isEmpty, "\(device.name)") }
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: remoteFolder.appendingPathComponent(".documentsync/conflicts").path
            ).isEmpty)
    }

    // MARK: - Deletes

    @Test func anEditBeatsADeleteWhicheverSyncsFirst() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("kept.txt", "v1")
        try a.write("other.txt", "v1")
        try a.sync()
        try b.sync()
        // The edit syncs first.
        try a.delete("kept.txt")
        try b.write("kept.txt", "edited on b")
        try b.sync()
        let restored = try a.sync()
        #expect(a.read("kept.txt") == "edited on b")
        #expect(restored.notes.contains { $0.contains("kept.txt") && $0.contains("kept") })
        // The delete syncs first.
        try a.delete("other.txt")
        try b.write("other.txt", "edited on b")
        try a.sync()
        try b.sync()
        try a.sync()
        #expect(a.read("other.txt") == "edited on b")
        #expect(b.read("other.txt") == "edited on b")
    }

    @Test func aDeleteOfAnUnchangedFilePropagatesAndStaysRecoverable() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("gone.txt", "last words")
        try a.sync()
        try b.sync()
        try a.delete("gone.txt")
        #expect(try a.sync().deletedRemotely == 1)
        #expect(try b.sync().deletedLocally == 1)
        #expect(!b.exists("gone.txt"))
        #expect(
            (try? String(contentsOf: b.deleted.appendingPathComponent("gone.txt"), encoding: .utf8))
                == "last words",
            "set aside in the Deleted folder")
        #expect(try !a.sync().didWork && !b.sync().didWork, "nothing comes back")
    }

    @Test func aRemoteDeleteThatFailsIsNeverRecordedAsDone() throws {
        let remote = SimulatedRemote(displayName: "sim")
        let devices = try devices("a", remote: remote)
        let a = devices[0]
        try a.write("doomed.txt", "text")
        try a.sync()
        try a.delete("doomed.txt")
        remote.schedule(.serverError(status: 503), on: .delete)
        let failed = try a.opened().pass()
        #expect(failed.failures.count == 1)
        #expect(remote.snapshot().files[RemotePath("doomed.txt")] != nil)
        #expect(try a.opened().journal.item(at: RemotePath("doomed.txt")) != nil, "still known")
        // The next pass deletes it; nothing comes back.
        try a.sync()
        #expect(remote.snapshot().files[RemotePath("doomed.txt")] == nil)
        #expect(!a.exists("doomed.txt"))
    }

    @Test func aListingThatFailsReadsAsNothingDeleted() throws {
        let remote = SimulatedRemote(displayName: "sim")
        let devices = try devices("a", remote: remote)
        let a = devices[0]
        try a.write("Folder/one.txt", "1")
        try a.write("Folder/two.txt", "2")
        try a.sync()
        remote.schedule(.connectionCut(afterBytes: 0), on: .list, at: RemotePath("Folder"))
        #expect(throws: SyncError.self) { try a.opened().pass() }
        #expect(a.read("Folder/one.txt") == "1" && a.read("Folder/two.txt") == "2")
        #expect(try a.opened().journal.allItems().count == 3)
        #expect(try !a.sync().didWork)
    }

    @Test func deletingMostDocumentsAtOncePausesUntilResumed() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        for index in 0..<20 { try a.write("doc \(index).txt", "\(index)") }
        try a.sync()
        try b.sync()
        for index in 0..<15 { try a.delete("doc \(index).txt") }
        #expect(throws: SyncError.self) { try a.sync() }
        #expect(try a.opened().pauseReason?.contains("15 of 20") == true)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: remoteFolder.path).filter {
                !$0.hasPrefix(".")
            }.count == 20)
        #expect(throws: SyncError.self) { try a.sync() }
        try a.opened().resume()
        #expect(try a.sync().deletedRemotely == 15)
        // The other device guards its own documents the same way.
        #expect(throws: SyncError.self) { try b.sync() }
        #expect(b.exists("doc 0.txt"))
        try b.opened().resume()
        #expect(try b.sync().deletedLocally == 15)
        #expect(try !a.sync().didWork && !b.sync().didWork)
    }

    // MARK: - Renames

    @Test func aRenameOnEitherSideIsAMoveNotAnUploadAndADelete() throws {
        let remote = SimulatedRemote(displayName: "sim")
        let devices = try devices("a", "b", remote: remote)
        let (a, b) = (devices[0], devices[1])
        try a.write("draft.txt", String(repeating: "words ", count: 1000))
        try a.sync()
        try b.sync()
        try FileManager.default.moveItem(at: a.url("draft.txt"), to: a.url("final.txt"))
        remote.resetOperationCounts()
        let moved = try a.sync()
        #expect(moved.moved == 1 && moved.uploaded == 0 && moved.deletedRemotely == 0, "\(moved)")
        // No document's bytes went up: the one write is the change marker's few bytes.
        let counts = remote.operationCounts
        #expect(counts.write == 1 && counts.bytesWritten < 100, "\(counts)")
        let inode = FileStatus(path: b.url("draft.txt").path)?.inode
        #expect(try b.sync().moved == 1)
        #expect(!b.exists("draft.txt") && b.exists("final.txt"))
        #expect(FileStatus(path: b.url("final.txt").path)?.inode == inode, "moved, not downloaded")
    }

    // MARK: - Crashes and faults

    @Test(arguments: SyncStep.allCases)
    func aCrashAtAnyStepOfAnUploadConvergesWithNothingLostAndNoConflict(_ step: SyncStep) throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("notes.txt", "v1")
        try a.sync()
        try b.sync()
        try a.write("notes.txt", "v2 from a")
        var crashed = false
        try a.opened().checkpoint = { current in
            if current == step, !crashed {
                crashed = true
                throw SyncInterruption()
            }
        }
        _ = try? a.opened().pass()
        a.crash()
        try a.sync()
        try b.sync()
        #expect(a.read("notes.txt") == "v2 from a")
        #expect(b.read("notes.txt") == "v2 from a")
        #expect(a.conflicts("notes.txt").isEmpty && b.conflicts("notes.txt").isEmpty)
        #expect(try a.opened().journal.pendingIntents().isEmpty)
    }

    @Test func aWriteTheRemoteAppliedBeforeTimingOutIsRecordedOnce() throws {
        let remote = SimulatedRemote(displayName: "sim")
        let devices = try devices("a", remote: remote)
        let a = devices[0]
        try a.write("notes.txt", "v1")
        remote.schedule(.timeoutAfterApplying, on: .write, at: RemotePath("notes.txt"))
        let summary = try a.sync()
        #expect(summary.failures.isEmpty && summary.uploaded == 1, "\(summary)")
        #expect(remote.snapshot().files[RemotePath("notes.txt")] == Data("v1".utf8))
        #expect(try !a.sync().didWork)
    }

    @Test func aLostJournalRescansWithoutDeletingAndKeepsDifferencesAsConflicts() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        try a.write("same.txt", "same")
        try a.write("changed.txt", "before")
        try a.sync()
        try b.sync()
        try b.write("changed.txt", "changed on b while its journal was lost")
        b.crash()
        let journal = SyncJournal.url(forContainer: b.container, stateHome: b.stateHome)
        try Data("this is no database".utf8).write(to: journal)
        let rescan = try b.sync()
        #expect(rescan.notes.contains { $0.contains("rescanned") })
        #expect(rescan.deletedLocally == 0 && rescan.deletedRemotely == 0)
        #expect(b.read("same.txt") == "same")
        #expect(b.read("changed.txt") == "before", "the remote's stays at the path")
        #expect(b.conflicts("changed.txt") == ["changed on b while its journal was lost"])
        try a.sync()
        #expect(a.conflicts("changed.txt") == ["changed on b while its journal was lost"])
    }

    /// A file URL with a host part (`file://notes/x`, typed for a relative path) is refused
    /// naming the host, never taken for the folder its path part names; `localhost` is this
    /// computer.
    @Test func aFileURLWithAHostIsRefusedNotReadAsItsPath() throws {
        let inside = try folder.folder("x")
        let error = #expect(throws: RemoteSetupError.self) {
            try SyncRemotes.remote(for: "file://notes" + inside.path)
        }
        #expect(error?.message.contains("names the host “notes”") == true, "\(String(describing: error))")
        #expect(
            try SyncRemotes.remote(for: "file://localhost" + inside.path).displayName.hasSuffix(inside.path))
    }

    /// A journal remembers the remote whole; one of an older version, which kept only its
    /// display name, still names the remote it synced with, and is not reset by the new form.
    @Test func theJournalRemembersTheRemoteWholeAndAnOlderJournalStillWorks() throws {
        let state = try folder.folder("state")
        let container = try folder.folder("container")
        try Data("one".utf8).write(to: container.appendingPathComponent("a.txt"))
        let configuration = SyncConfiguration(stateHome: state)
        let url = URL(fileURLWithPath: remoteFolder.path).absoluteString
        // A folder has no setting beyond its URL (the WebDAV and S3 ones: docs's tests).
        let remote = try SyncRemotes.remote(for: RemoteAddress(url: url))
        var engine: SyncEngine? = try SyncEngine(
            container: container, remote: remote, configuration: configuration)
        #expect(try engine?.sync().uploaded == 1)
        #expect(
            try SyncJournal(url: SyncJournal.url(forContainer: container, stateHome: state)).setting(
                .remoteAddress)
                == #"{"allowsInsecureHTTP":false,"allowsUnsafeServer":false,"encrypted":false,"url":"\#(url)"}"#
        )
        #expect(
            try SyncEngine.rememberedRemote(ofContainer: container, configuration: configuration)
                == RemoteAddress(url: url))

        // As an older version left it: the display name only.
        try engine?.journal.setSetting(.remoteAddress, nil)
        engine = nil
        #expect(
            try SyncEngine.rememberedRemote(ofContainer: container, configuration: configuration)
                == RemoteAddress(url: url))
        engine = try SyncEngine(
            container: container, remote: try SyncRemotes.remote(for: url), configuration: configuration)
        let again = try #require(try engine?.sync())
        #expect(!again.didWork && !again.notes.contains { $0.contains("rescanned") }, "\(again)")
        engine = nil

        // An older version's S3 display name lacks the store's settings: refused, not read as
        // the bucket on AWS.
        let journal = try SyncJournal(url: SyncJournal.url(forContainer: container, stateHome: state))
        try journal.setSetting(.remoteAddress, nil)
        try journal.setSetting(.remoteURL, "s3://notes/prefix at http://127.0.0.1:9000")
        #expect {
            _ = try SyncEngine.rememberedRemote(ofContainer: container, configuration: configuration)
        } throws: { error in
            (error as? SyncError)?.kind == .unusable && "\(error)".contains("give the remote once again")
        }
    }

    @Test func aSecondSyncOfTheSameContainerIsRefused() throws {
        let devices = try devices("a")
        let a = devices[0]
        _ = try a.opened()
        #expect {
            _ = try SyncEngine(container: a.container, remote: a.remote, configuration: a.configuration)
        } throws: { error in
            (error as? SyncError)?.kind == .busy
        }
        a.crash()
        _ = try SyncEngine(container: a.container, remote: a.remote, configuration: a.configuration)
    }

    @Test func aContainerInsideTheRemoteFolderIsRefused() throws {
        let inside = try folder.folder("remote/Documents")
        #expect {
            _ = try SyncEngine(
                container: inside, remote: LocalFolderRemote(root: remoteFolder),
                configuration: SyncConfiguration(stateHome: try folder.folder("state")))
        } throws: { error in
            (error as? SyncError)?.kind == .unusable && "\(error)".contains("overlap")
        }
    }

    /// However the two folders are reached, one inside the other is refused: a pass would copy
    /// the container into itself, one level deeper each time.
    @Test func aContainerAndARemoteFolderReachedThroughAliasesAreRefusedWhenTheyOverlap() throws {
        let home = try folder.folder("home")
        let documents = try folder.folder("home/Documents")
        let container = try folder.folder("home/Documents/Simple Text Editor")
        try folder.folder("home/Documents/Simple Text Editor/inner")
        let elsewhere = try folder.folder("elsewhere")
        func link(_ name: String, to target: String) throws -> URL {
            let url = folder.file(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target)
            return url
        }
        // The issue's case: a link to the folder holding the container.
        let toDocuments = try link("link", to: documents.path)
        // Links at several levels, one of them relative.
        _ = try link("a/home", to: "../home")
        let twoLevels = try link("b", to: folder.file("a").path).appendingPathComponent("home/Documents")
        // `..` taken after the link before it, as the kernel takes it: the container itself
        // (read as written, x/y/deep/.. would be x/y, apart from it).
        try folder.folder("x/y")
        let intoContainer = try link("x/y/deep", to: container.appendingPathComponent("inner").path)
        let dotDot = URL(fileURLWithPath: intoContainer.path + "/..")
        // A remote folder inside the container, reached from outside.
        let toInner = try link("inner", to: container.appendingPathComponent("inner").path)
        // The container reached through a link, the remote being the folder above it.
        let containerLink = try link("container", to: container.path)
        let cases: [(container: URL, remote: URL)] = [
            (container, toDocuments), (container, twoLevels), (container, dotDot), (container, toInner),
            (containerLink, documents), (containerLink, home), (toInner, containerLink),
        ]
        for (container, root) in cases {
            let remote = try SyncRemotes.remote(for: URL(fileURLWithPath: root.path).absoluteString)
            #expect {
                _ = try SyncEngine(
                    container: container, remote: remote,
                    configuration: SyncConfiguration(stateHome: try folder.folder("state")))
            } throws: { error in
                (error as? SyncError)?.kind == .unusable && "\(error)".contains("overlap")
            }
        }
        // Separate folders, one reached through a link, still sync.
        let apart = try link("apart", to: elsewhere.path)
        let engine = try SyncEngine(
            container: container,
            remote: try SyncRemotes.remote(for: URL(fileURLWithPath: apart.path).absoluteString),
            configuration: SyncConfiguration(stateHome: try folder.folder("state")))
        #expect(try engine.sync().failures.isEmpty)
    }
}

/// Progress reports, from whichever thread gives them.
private final class Recorded: Sendable {
    private let reports = Mutex<[SyncProgress]>([])
    func append(_ report: SyncProgress) { reports.withLock { $0.append(report) } }
    var all: [SyncProgress] { reports.withLock { $0 } }
}
