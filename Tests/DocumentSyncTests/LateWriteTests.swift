import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A remote whose first write gets no answer and lands only when the test says so, as a store
/// that goes on with a request its client gave up on.
final class LateWritingRemote: Remote {
    let base: LocalFolderRemote
    private let late = Mutex<(path: RemotePath, bytes: Data)?>(nil)
    private let first = Mutex(true)
    private let landsDuringListing = Mutex(false)
    private let failedReads = Mutex(0)
    private let failedLookups = Mutex(0)
    private let lookupsFailingAfterLanding = Mutex(0)

    init(_ base: LocalFolderRemote) { self.base = base }

    /// Puts the write that got no answer in place.
    func land() throws {
        guard let write = late.withLock({ $0.take() }) else { return }
        try base.write(write.path, from: UploadSource(write.bytes), condition: .absent)
    }

    /// Puts the write that got no answer in place as the next listing starts: after the
    /// engine looked for it, before it sees the remote.
    ///
    /// - Parameter failingLookups: How many lookups of an item (`entry(at:)`) then fail as a
    ///   broken connection would.
    func landDuringNextListing(failingLookups: Int = 0) {
        landsDuringListing.withLock { $0 = true }
        lookupsFailingAfterLanding.withLock { $0 = failingLookups }
    }

    /// Makes the next `count` reads of a file fail as a broken connection would.
    func failReads(_ count: Int) { failedReads.withLock { $0 = count } }

    var displayName: String { base.displayName }
    var hasFileIDs: Bool { base.hasFileIDs }
    func list(_ folder: RemotePath) throws -> RemoteListing {
        let lands = landsDuringListing.withLock { lands in
            defer { lands = false }
            return lands
        }
        if lands {
            try land()
            failedLookups.withLock { $0 = lookupsFailingAfterLanding.withLock { $0 } }
        }
        return try base.list(folder)
    }
    func entry(at path: RemotePath) throws -> RemoteEntry? {
        let fails = failedLookups.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
        if fails { throw RemoteError(.connectionLost, operation: .entry, path: path, remote: displayName) }
        return try base.entry(at: path)
    }
    func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        let fails = failedReads.withLock { count in
            defer { count = max(0, count - 1) }
            return count > 0
        }
        if fails { throw RemoteError(.connectionLost, operation: .read, path: path, remote: displayName) }
        return try base.read(path, into: sink)
    }
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws -> RemoteTag?
    {
        guard !path.isMetadata,
            first.withLock({ first in
                defer { first = false }
                return first
            })
        else {
            return try base.write(path, from: source, condition: condition)
        }
        var bytes = Data()
        while let chunk = try source.nextChunk() { bytes.append(chunk) }
        late.withLock { $0 = (path, bytes) }
        throw RemoteError(.timedOut, operation: .write, path: path, remote: displayName)
    }
    func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try base.delete(path, condition: condition)
    }
    func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try base.move(source, to: destination, condition: condition)
    }
    func makeFolder(_ path: RemotePath) throws { try base.makeFolder(path) }
}

@Suite struct LateWriteTests {
    /// Devices a and b on a remote whose first write gets no answer; a's draft.txt was sent
    /// in a pass that failed on it. The folder holds everything: keep it while testing.
    static func draftWhoseUploadGotNoAnswer() throws -> (
        TemporaryFolder, LateWritingRemote, SyncDevice, SyncDevice
    ) {
        let folder = try TemporaryFolder()
        let remote = LateWritingRemote(LocalFolderRemote(root: try folder.folder("remote")))
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        try Data("a draft\n".utf8).write(to: a.url("draft.txt"))
        #expect(try a.sync().failures.count == 1)
        return (folder, remote, a, b)
    }

    @Test func anUploadThatLandsAfterItTimedOutIsKnownAsOursAndItsDeletionHolds() throws {
        let (folder, remote, a, b) = try Self.draftWhoseUploadGotNoAnswer()
        defer { withExtendedLifetime(folder) {} }
        // Deleted here before any answer came.
        try FileManager.default.removeItem(at: a.url("draft.txt"))
        _ = try a.sync()
        // The store puts the write in place late.
        try remote.land()
        #expect(try remote.entry(at: RemotePath("draft.txt")) != nil)
        _ = try a.sync()
        #expect(try remote.entry(at: RemotePath("draft.txt")) == nil)
        _ = try b.sync()
        #expect(!FileManager.default.fileExists(atPath: b.url("draft.txt").path))
        #expect(!FileManager.default.fileExists(atPath: a.url("draft.txt").path))
    }

    /// The write lands during the listing, and looking it up again then breaks: the pass fails
    /// as one that could not reach the remote does (a `SyncError`, never a bare
    /// `RemoteError`), nothing is planned on bytes not known yet, and the next pass settles them
    /// as ours: the deletion made here holds on both devices.
    @Test func aLookupThatBreaksWhileALandedUploadIsSettledFailsThePassAsUnreachable() throws {
        let (folder, remote, a, b) = try Self.draftWhoseUploadGotNoAnswer()
        defer { withExtendedLifetime(folder) {} }
        try FileManager.default.removeItem(at: a.url("draft.txt"))
        remote.landDuringNextListing(failingLookups: 1)
        let error = #expect(throws: SyncError.self) { try a.sync() }
        #expect(
            error?.message.contains("cannot settle what an earlier pass left") == true,
            "\(String(describing: error))")
        _ = try a.sync()
        #expect(try remote.entry(at: RemotePath("draft.txt")) == nil)
        _ = try b.sync()
        #expect(!FileManager.default.fileExists(atPath: b.url("draft.txt").path))
        #expect(!FileManager.default.fileExists(atPath: a.url("draft.txt").path))
    }

    /// The write lands after the pass looked for it and before it listed the remote; read back
    /// at once, or (`readFails`) only a pass later, after a read that broke.
    @Test(arguments: [false, true])
    func anUploadThatLandsBetweenItsLookupAndTheListingIsNotTakenForANewFile(readFails: Bool) throws {
        let (folder, remote, a, b) = try Self.draftWhoseUploadGotNoAnswer()
        defer { withExtendedLifetime(folder) {} }
        try FileManager.default.removeItem(at: a.url("draft.txt"))
        remote.landDuringNextListing()
        if readFails { remote.failReads(1) }
        let held = try a.sync()
        #expect(try remote.entry(at: RemotePath("draft.txt")) != nil || !readFails)
        #expect(!FileManager.default.fileExists(atPath: a.url("draft.txt").path))
        if readFails {
            #expect(held.notes.contains { $0.contains("waiting to learn whether an earlier upload landed") })
            _ = try a.sync()
        }
        #expect(try remote.entry(at: RemotePath("draft.txt")) == nil)
        #expect(!FileManager.default.fileExists(atPath: a.url("draft.txt").path))
        _ = try b.sync()
        #expect(!FileManager.default.fileExists(atPath: b.url("draft.txt").path))
    }
}
