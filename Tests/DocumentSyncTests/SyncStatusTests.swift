import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// What an engine publishes of its container's status (``UbiquityStatus``), as a sync agent
/// does for the query, `docs status` and the editor.
@Suite struct SyncStatusTests {
    /// A folder remote that can be cut off, as a network goes down, or refuse one file's writes.
    final class FlakyRemote: Remote, @unchecked Sendable {
        let inner: LocalFolderRemote
        let offline = Mutex(false)
        let refused = Mutex<String?>(nil)
        init(_ inner: LocalFolderRemote) { self.inner = inner }
        var displayName: String { inner.displayName }
        func check(_ operation: RemoteError.Operation, _ path: RemotePath) throws {
            if offline.withLock({ $0 }) {
                throw RemoteError(.connectionLost, operation: operation, path: path, remote: displayName)
            }
        }
        func list(_ folder: RemotePath) throws -> RemoteListing {
            try check(.list, folder)
            return try inner.list(folder)
        }
        func entry(at path: RemotePath) throws -> RemoteEntry? {
            try check(.entry, path)
            return try inner.entry(at: path)
        }
        func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
            try check(.read, path)
            return try inner.read(path, into: sink)
        }
        func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
            -> RemoteTag?
        {
            try check(.write, path)
            if refused.withLock({ $0 }) == path.string {
                throw RemoteError(.outOfSpace, operation: .write, path: path, remote: displayName)
            }
            return try inner.write(path, from: source, condition: condition)
        }
        func delete(_ path: RemotePath, condition: WriteCondition) throws {
            try check(.delete, path)
            try inner.delete(path, condition: condition)
        }
        func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
            -> RemoteTag?
        {
            try check(.move, source)
            return try inner.move(source, to: destination, condition: condition)
        }
        func makeFolder(_ path: RemotePath) throws {
            try check(.makeFolder, path)
            try inner.makeFolder(path)
        }
    }

    @Test func anAgentPublishesWhatIsSyncedWhatFailedAndWhenTheRemoteIsOffline() throws {
        let folder = try TemporaryFolder()
        let remote = FlakyRemote(LocalFolderRemote(root: try folder.folder("remote")))
        let device = try SyncDevice("a", remote: remote, in: folder)
        device.publishesStatus = true
        let statusFile = SyncStateFiles.status(forContainer: device.container, stateHome: device.stateHome)
        func status() throws -> UbiquityStatus { try #require(UbiquityStatus.read(statusFile)) }

        try device.write("notes.txt", "notes")
        try device.write("Deep/plan.txt", "plan")
        try device.write("full.txt", "too big for the server")
        remote.refused.withLock { $0 = "full.txt" }
        try device.sync()
        var published = try status()
        #expect(published.state == .error)
        #expect(published.uploadErrors.keys.sorted() == ["full.txt"])
        #expect(published.uploadErrors["full.txt"]?.contains("full.txt") == true)
        #expect(published.synced.keys.sorted() == ["Deep/plan.txt", "notes.txt"])
        let notes = try #require(FileStatus(path: device.url("notes.txt").path))
        #expect(published.synced["notes.txt"] == UbiquityStatus.record(of: notes))
        #expect(published.item("notes.txt", status: notes).isUploaded)
        #expect(!published.item("full.txt", status: FileStatus(path: device.url("full.txt").path)).isUploaded)
        let mode =
            try FileManager.default.attributesOfItem(atPath: statusFile.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The server takes it now: up to date, the error gone.
        remote.refused.withLock { $0 = nil }
        try device.sync()
        published = try status()
        #expect(published.state == .upToDate && published.uploadErrors.isEmpty)
        #expect(published.summary == "up to date")
        #expect(published.synced.count == 3)

        // The network goes: offline since then, in words, and the synced files stay known.
        remote.offline.withLock { $0 = true }
        try device.write("notes.txt", "notes, edited offline")
        #expect(throws: SyncError.self) { try device.sync() }
        published = try status()
        #expect(published.state == .offline)
        let since = try #require(published.offlineSince)
        #expect(published.summary.hasPrefix("offline since "))
        #expect(published.message?.contains(remote.displayName) == true)
        #expect(published.synced.count == 3)
        // An edit made meanwhile reads as not uploaded.
        #expect(
            !published.item("notes.txt", status: FileStatus(path: device.url("notes.txt").path)).isUploaded)
        #expect(throws: SyncError.self) { try device.sync() }
        #expect(try status().offlineSince == since)
        // A new agent (the last one stopped), offline too: the synced files it has not listed
        // yet stay as the last one published them.
        device.crash()
        #expect(throws: SyncError.self) { try device.sync() }
        #expect(try status().synced.count == 3)

        // Back: the edit goes up and the container is up to date.
        remote.offline.withLock { $0 = false }
        try device.sync()
        published = try status()
        #expect(published.state == .upToDate && published.offlineSince == nil)
        #expect(
            published.item("notes.txt", status: FileStatus(path: device.url("notes.txt").path)).isUploaded)
    }

    /// The list of synced files is made again from the journal only when the journal's items
    /// changed since the list on disk was made (its stamp), or the list is gone, or the status
    /// on disk names another stamp (a crash between writing the list and the status): a pass
    /// that changed nothing leaves it as it is, in this engine and in a new one.
    @Test func theListOfSyncedFilesIsMadeAgainOnlyWhenTheJournalChanged() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let device = try SyncDevice("a", remote: remote, in: folder)
        device.publishesStatus = true
        for name in ["a.txt", "b.txt", "c.txt"] { try device.write(name, name) }
        try device.sync()
        let statusFile = SyncStateFiles.status(forContainer: device.container, stateHome: device.stateHome)
        let listFile = UbiquityStatus.syncedURL(of: statusFile)
        func listed() throws -> [String] {
            try #require(UbiquityStatus.read(statusFile)).synced.keys.sorted()
        }
        #expect(try listed() == ["a.txt", "b.txt", "c.txt"])
        // A list that is not the journal's: left alone while nothing changes, so a pass that
        // remade it would put the journal's back.
        let marker = UbiquityStatus.encodeSynced(["marker.txt": [1, 2, 3]])
        try marker.write(to: listFile)
        try device.sync()
        #expect(try Data(contentsOf: listFile) == marker)
        device.crash()
        try device.sync()
        #expect(try Data(contentsOf: listFile) == marker)
        #expect(try #require(UbiquityStatus.read(statusFile)).state == .upToDate)

        // Gone: made again.
        try FileManager.default.removeItem(at: listFile)
        try device.sync()
        #expect(try listed() == ["a.txt", "b.txt", "c.txt"])

        // The journal changed: made again.
        try marker.write(to: listFile)
        try device.write("d.txt", "d")
        try device.sync()
        #expect(try listed() == ["a.txt", "b.txt", "c.txt", "d.txt"])

        // The status names another stamp than the journal's: made again, in a new engine.
        try marker.write(to: listFile)
        var status = try #require(UbiquityStatus.read(statusFile, withSynced: false))
        status.syncedStamp = "another:1"
        try status.write(to: statusFile, withSynced: false)
        device.crash()
        try device.sync()
        #expect(try listed() == ["a.txt", "b.txt", "c.txt", "d.txt"])
    }

    @Test func aPassPublishesWhatItHasLeftAsItGoes() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let device = try SyncDevice("a", remote: remote, in: folder)
        device.publishesStatus = true
        for index in 0..<5 {
            try device.write("n\(index).txt", String(repeating: "x", count: 3 * RemoteChunk.size))
        }
        let statusFile = SyncStateFiles.status(forContainer: device.container, stateHome: device.stateHome)
        // What the status said at each upload's start, read as another process would.
        let seen = Mutex<[UbiquityStatus]>([])
        try device.opened().checkpoint = { step in
            if step == .beforeRemoteWrite, let status = UbiquityStatus.read(statusFile) {
                seen.withLock { $0.append(status) }
            }
        }
        try device.sync()
        let statuses = seen.withLock { $0 }
        #expect(statuses.count >= 5)
        #expect(statuses.first?.state == .syncing)
        #expect(statuses.first?.uploading.count == 5)
        #expect(statuses.first?.summary == "5 to upload")
        // Files leave the list as they go up.
        #expect(statuses.map(\.uploading.count) == statuses.map(\.uploading.count).sorted(by: >))
        #expect(try #require(UbiquityStatus.read(statusFile)).state == .upToDate)
    }
}
