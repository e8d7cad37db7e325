import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// A pass that would delete most documents, or finds a folder gone, pauses naming what it
/// would delete; the user's "delete them" deletes only that, "keep them" brings it all back.
@Suite struct SyncPauseTests {
    let folder: TemporaryFolder
    let remoteFolder: URL

    init() throws {
        folder = try TemporaryFolder()
        remoteFolder = try folder.folder("remote")
    }

    func devices(_ names: String...) throws -> [SyncDevice] {
        let remote = LocalFolderRemote(root: remoteFolder)
        return try names.map { try SyncDevice($0, remote: remote, in: folder) }
    }

    /// The documents on the remote, by path, with their text (none of sync's own files).
    func remoteTree() throws -> [String: String] {
        var tree: [String: String] = [:]
        for (path, entry) in try SyncTrees.remote(LocalFolderRemote(root: remoteFolder), expected: 0)
        where entry.kind == .file {
            tree[path.string] = try String(
                contentsOf: remoteFolder.appendingPathComponent(path.string), encoding: .utf8)
        }
        return tree
    }

    /// Twenty documents, five of them in a folder, synced to `devices`.
    func twentyDocuments(on devices: [SyncDevice]) throws -> [String: String] {
        var written: [String: String] = [:]
        for index in 0..<20 {
            let path = index < 5 ? "Projects/plan \(index).txt" : "doc \(index).txt"
            try devices[0].write(path, "text \(index)")
            written[path] = "text \(index)"
        }
        for device in devices { try device.sync() }
        return written
    }

    /// The fifteen paths deleted on purpose: the whole Projects folder and ten more.
    let fifteen = (0..<5).map { "Projects/plan \($0).txt" } + (5..<15).map { "doc \($0).txt" }

    func deleteFifteen(on device: SyncDevice) throws {
        try FileManager.default.removeItem(at: device.url("Projects"))
        for path in fifteen where !path.hasPrefix("Projects/") { try device.delete(path) }
    }

    func pauseError(_ body: () throws -> Void) -> SyncError? {
        do {
            try body()
            return nil
        } catch let error as SyncError {
            return error
        } catch {
            return nil
        }
    }

    @Test func deletingMostDocumentsOnPurposePausesNamingEachOneAndItsSide() throws {
        let devices = try devices("a")
        let a = devices[0]
        let written = try twentyDocuments(on: devices)
        try deleteFifteen(on: a)
        let error = try #require(pauseError { try a.sync() })
        #expect(error.kind == .paused)
        #expect(error.message.contains("15 of 20 documents would be deleted on the remote"), "\(error)")
        let pause = try #require(try a.opened().pause)
        #expect(pause.reason == .deletingOnRemote)
        #expect(pause.documentCount == 20)
        #expect(pause.deletionsOnRemote == fifteen.sorted())
        #expect(
            pause.deletionCountOnRemote == 15 && pause.deletionCountHere == 0 && pause.deletionsHere.isEmpty)
        #expect(pause.message == error.message)
        // Nothing was deleted on the remote, and the pause is in the journal, not the process:
        // another engine, and a reader while this one holds the container, see the same names.
        #expect(try remoteTree() == written)
        a.crash()
        #expect(try a.opened().pause == pause)
        #expect(try SyncEngine.pause(ofContainer: a.container, configuration: a.configuration) == pause)
        #expect(pauseError { try a.sync() }?.kind == .paused, "every pass stops at it")
    }

    @Test func deleteThemDeletesWhatWasNamedOnTheRemoteAndTheOtherDeviceAsksToo() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        let written = try twentyDocuments(on: devices)
        try deleteFifteen(on: a)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        let outcome = try a.opened().resume(.delete)
        #expect(outcome?.contains("delete 15 documents on the remote") == true, "\(outcome ?? "")")
        #expect(try a.opened().pause == nil)
        let done = try a.sync()
        #expect(done.deletedRemotely == 15)
        #expect(try remoteTree() == written.filter { !fifteen.contains($0.key) })
        #expect(!FileManager.default.fileExists(atPath: remoteFolder.appendingPathComponent("Projects").path))
        // The other device is asked in its turn, naming the same documents, here.
        #expect(pauseError { try b.sync() }?.kind == .paused)
        let asked = try #require(try b.opened().pause)
        #expect(asked.reason == .deletingHere && asked.deletionsHere == fifteen.sorted())
        #expect(b.exists("doc 5.txt"))
        try b.opened().resume(.delete)
        #expect(try b.sync().deletedLocally == 15)
        #expect(try b.tree() == a.tree())
        #expect(try !a.sync().didWork && !b.sync().didWork, "the approval ended with the pass that used it")
    }

    @Test func keepThemDownloadsTheDocumentsAndTheirFolderAgain() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        let written = try twentyDocuments(on: devices)
        try deleteFifteen(on: a)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        let outcome = try a.opened().resume(.keep)
        #expect(outcome?.contains("download 15 documents again") == true, "\(outcome ?? "")")
        let kept = try a.sync()
        #expect(kept.downloaded == 15 && kept.deletedRemotely == 0, "\(kept)")
        #expect(try a.tree() == written)
        #expect(try remoteTree() == written)
        #expect(try !a.sync().didWork)
        #expect(try !b.sync().didWork, "nothing happened on the remote")
        #expect(try a.opened().pause == nil)
    }

    @Test func keepThemUploadsAgainWhatTheRemoteLost() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        let written = try twentyDocuments(on: devices)
        // Gone from the remote: another client deleted them, or a listing lost them.
        try FileManager.default.removeItem(at: remoteFolder.appendingPathComponent("Projects"))
        for path in fifteen where !path.hasPrefix("Projects/") {
            try FileManager.default.removeItem(at: remoteFolder.appendingPathComponent(path))
        }
        #expect(pauseError { try a.sync() }?.kind == .paused)
        let pause = try #require(try a.opened().pause)
        #expect(pause.reason == .deletingHere && pause.deletionsHere == fifteen.sorted())
        #expect(try a.tree() == written, "nothing deleted here")
        try a.opened().resume(.keep)
        let kept = try a.sync()
        #expect(kept.uploaded == 15 && kept.deletedLocally == 0, "\(kept)")
        #expect(try remoteTree() == written)
        try b.sync()
        #expect(try b.tree() == written)
        #expect(try !a.sync().didWork && !b.sync().didWork)
    }

    @Test func deleteThemNeverDeletesADocumentThatWasNotNamed() throws {
        let devices = try devices("a")
        let a = devices[0]
        let written = try twentyDocuments(on: devices)
        try deleteFifteen(on: a)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        let shown = try #require(try a.opened().pause)
        // Deleted after the user was shown the fifteen: "delete them" does not cover it.
        try a.delete("doc 15.txt")
        try a.opened().resume(.delete, pause: shown.identifier)
        let error = try #require(pauseError { try a.sync() })
        #expect(error.message.contains("16 of 20") && error.message.contains("changed since"), "\(error)")
        let again = try #require(try a.opened().pause)
        #expect(again.identifier != shown.identifier)
        #expect(again.deletionsOnRemote == (fifteen + ["doc 15.txt"]).sorted())
        #expect(try remoteTree() == written, "nothing deleted")
        // An answer given for the first pause is not one for the second.
        #expect(throws: SyncError.self) { try a.opened().resume(.delete, pause: shown.identifier) }
        #expect(try a.opened().pause == again)
        try a.opened().resume(.delete, pause: again.identifier)
        #expect(try a.sync().deletedRemotely == 16)
    }

    @Test func deleteThemGoesOnWhenSomeOfTheNamedDocumentsCameBack() throws {
        let devices = try devices("a")
        let a = devices[0]
        let written = try twentyDocuments(on: devices)
        try deleteFifteen(on: a)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        try a.opened().resume(.delete)
        // Three put back before the pass: twelve deletions still trip the guard, but
        // all were shown.
        for path in ["doc 5.txt", "doc 6.txt", "doc 7.txt"] { try a.write(path, written[path]!) }
        let done = try a.sync()
        #expect(done.deletedRemotely == 12, "\(done)")
        #expect(try remoteTree().count == 8)
    }

    @Test func anAnswerLeftForTheAgentIsTakenOnlyForThePauseItAnswers() throws {
        let devices = try devices("a")
        let a = devices[0]
        let written = try twentyDocuments(on: devices)
        try deleteFifteen(on: a)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        let pause = try #require(try a.opened().pause)
        // An answer to another pause: dropped, the pause stays.
        try SyncResumeRequest(decision: .delete, pause: "an older pause")
            .write(forContainer: a.container, stateHome: a.stateHome)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        #expect(try a.opened().pause == pause)
        let file = SyncStateFiles.resumeRequest(forContainer: a.container, stateHome: a.stateHome)
        #expect(!FileManager.default.fileExists(atPath: file.path), "taken and dropped")
        // The answer to this one, written by another process while the engine holds the
        // container: the running engine takes it at its next pass and goes on.
        try SyncResumeRequest(decision: .keep, pause: pause.identifier)
            .write(forContainer: a.container, stateHome: a.stateHome)
        let kept = try a.sync()
        #expect(kept.downloaded == 15, "\(kept)")
        #expect(kept.notes.contains { $0.contains("sync resumed") }, "\(kept.notes)")
        #expect(try a.tree() == written)
        // A file that is not a request is removed and said, and does not resume anything.
        try deleteFifteen(on: a)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        try Data("{\"decision\":\"delete\"".utf8).write(to: file)
        #expect(pauseError { try a.sync() }?.kind == .paused)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try remoteTree() == written)
    }

    @Test func aVanishedContainerIsMadeAgainByKeepThemAndDeleteThemWaitsForIt() throws {
        let devices = try devices("a")
        let a = devices[0]
        let written = try twentyDocuments(on: devices)
        try FileManager.default.removeItem(at: a.container)
        let error = try #require(pauseError { try a.sync() })
        #expect(error.message.contains("is gone"), "\(error)")
        let pause = try #require(try a.opened().pause)
        #expect(pause.reason == .containerGone)
        #expect(pause.deletionsOnRemote == written.keys.sorted() && pause.deletionCountOnRemote == 20)
        // Delete them: not while it is gone.
        let refused = try #require(pauseError { try a.opened().resume(.delete) })
        #expect(refused.kind == .paused && refused.message.contains("still gone"), "\(refused)")
        #expect(try a.opened().pause == pause)
        try a.opened().resume(.keep)
        #expect(FileStatus(path: a.container.path)?.isDirectory == true)
        #expect((FileStatus(path: a.container.path)?.mode ?? 0) & 0o077 == 0, "made private")
        #expect(try a.sync().downloaded == 20)
        #expect(try a.tree() == written)
        #expect(try remoteTree() == written)
    }
}

extension BlockingSyncTests {
    /// A remote folder gone (a WebDAV collection deleted on the server): a local folder missing
    /// is a disk not mounted (offline), so this is WebDAV's, on real Apache.
    @Suite struct SyncPauseWebDAVTests {
        func pauseError(_ body: () throws -> Void) -> SyncError? {
            do {
                try body()
                return nil
            } catch let error as SyncError {
                return error
            } catch {
                return nil
            }
        }

        @Test func aVanishedRemoteFolderIsMadeAgainAndFilledFromHereByKeepThem() throws {
            let folder = try TemporaryFolder()
            let (remote, _, onDisk) = try WebDAVServers.collection(on: .default)
            let a = try SyncDevice("a", remote: remote, in: folder)
            var written: [String: String] = [:]
            for index in 0..<12 {
                let path = index < 3 ? "Projects/plan \(index).txt" : "doc \(index).txt"
                try a.write(path, "text \(index)")
                written[path] = "text \(index)"
            }
            #expect(try a.sync().uploaded == 12)
            try FileManager.default.removeItem(at: onDisk)
            let gone = pauseError { try a.sync() }
            #expect(gone?.kind == .paused, "\(gone.map { "\($0)" } ?? "no error")")
            let pause = try #require(try a.opened().pause)
            #expect(pause.reason == .remoteGone && pause.deletionsHere == written.keys.sorted())
            #expect(pause.deletionCountHere == 12 && pause.documentCount == 12)
            let refused = try #require(pauseError { try a.opened().resume(.delete) })
            #expect(refused.message.contains("still gone"), "\(refused)")
            #expect(try a.tree() == written, "nothing deleted here")
            let outcome = try a.opened().resume(.keep)
            #expect(outcome?.contains("upload 12 documents") == true, "\(outcome ?? "")")
            let uploaded = try a.sync()
            #expect(uploaded.uploaded == 12 && uploaded.deletedLocally == 0, "\(uploaded)")
            for (path, text) in written {
                #expect(try String(contentsOf: onDisk.appendingPathComponent(path), encoding: .utf8) == text)
            }
            #expect(try !a.sync().didWork)
        }

        @Test func keepThemDoesNotRebuildARemoteFolderWhoseParentIsGoneToo() throws {
            let folder = try TemporaryFolder()
            let (outer, outerURL, onDisk) = try WebDAVServers.collection(on: .default)
            try outer.makeFolder(RemotePath("inner"))
            var configuration = WebDAVRemote.Configuration(
                url: outerURL.appendingPathComponent("inner", isDirectory: true),
                credentials: try WebDAVServers.credentials())
            configuration.timeout = 10
            configuration.hasFileIDs = false
            let a = try SyncDevice("a", remote: try WebDAVRemote(configuration), in: folder)
            for index in 0..<3 { try a.write("doc \(index).txt", "\(index)") }
            try a.sync()
            try FileManager.default.removeItem(at: onDisk)
            #expect(pauseError { try a.sync() }?.kind == .paused)
            let refused = try #require(pauseError { try a.opened().resume(.keep) })
            #expect(refused.message.contains("gone too"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: onDisk.path))
            #expect(try a.opened().pause?.reason == .remoteGone)
        }
    }
}
