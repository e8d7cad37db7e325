import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A remote whose writes are flushed together (``Remote/deferDurability()``): the engine must
/// make them durable before its journal records them, or a power loss after the record could
/// take back a write the journal says happened (and the next pass would read the missing file
/// as deleted on the remote, and delete it here).
@Suite struct SyncDurabilityTests {
    /// A local-folder remote that remembers which new files were written and not yet flushed,
    /// and checks, at every flush and when asked, that the journal records none of them.
    final class FlushWatchingRemote: Remote {
        let inner: LocalFolderRemote
        /// The tag the journal records at a path; set once the engine is made.
        let recordedTag = Mutex<(@Sendable (RemotePath) -> RemoteTag?)?>(nil)
        private let state = Mutex<(unflushed: [(RemotePath, RemoteTag)], flushes: Int, violations: [String])>(
            ([], 0, []))

        init(root: URL) { inner = LocalFolderRemote(root: root) }

        var displayName: String { inner.displayName }
        var mostRequestsAtOnce: Int { inner.mostRequestsAtOnce }
        var flushes: Int { state.withLock { $0.flushes } }
        var violations: [String] { state.withLock { $0.violations } }

        func list(_ folder: RemotePath) throws -> RemoteListing { try inner.list(folder) }
        func listTree() throws -> [RemotePath: RemoteEntry]? { try inner.listTree() }
        func entry(at path: RemotePath) throws -> RemoteEntry? { try inner.entry(at: path) }
        func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
            try inner.read(path, into: sink)
        }
        func delete(_ path: RemotePath, condition: WriteCondition) throws {
            try inner.delete(path, condition: condition)
        }
        func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
            -> RemoteTag?
        {
            try inner.move(source, to: destination, condition: condition)
        }
        func makeFolder(_ path: RemotePath) throws { try inner.makeFolder(path) }

        func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
            -> RemoteTag?
        {
            let tag = try inner.write(path, from: source, condition: condition)
            if condition == .absent, let tag { state.withLock { $0.unflushed.append((path, tag)) } }
            return tag
        }

        func deferDurability() -> Bool { inner.deferDurability() }

        func makeWritesDurable() throws {
            checkNoneRecorded(when: "before the flush")
            try inner.makeWritesDurable()
            state.withLock {
                if !$0.unflushed.isEmpty { $0.flushes += 1 }
                $0.unflushed.removeAll()
            }
        }

        /// Notes every write not yet flushed that the journal already records.
        func checkNoneRecorded(when moment: String) {
            guard let recordedTag = recordedTag.withLock({ $0 }) else { return }
            let unflushed = state.withLock { $0.unflushed }
            let recorded = unflushed.filter { recordedTag($0.0) == $0.1 }.map { "\($0.0) recorded \(moment)" }
            state.withLock { $0.violations += recorded }
        }
    }

    private func device(in folder: TemporaryFolder) throws -> (SyncDevice, FlushWatchingRemote) {
        let remote = FlushWatchingRemote(root: try folder.folder("remote"))
        let device = try SyncDevice("a", remote: remote, in: folder)
        let engine = try device.opened()
        let journal = engine.journal
        remote.recordedTag.withLock { $0 = { try? journal.item(at: $0)?.remoteTag } }
        return (device, remote)
    }

    /// Every upload is recorded only once its write is flushed, and a batch's writes are
    /// flushed once, not once each: this fails if the engine records before the flush, or
    /// never flushes.
    @Test(arguments: [ExecutionOrder.concurrent, .interleaved(seed: 7, workers: 4)])
    func uploadsAreRecordedOnlyOnceTheirBatchIsFlushed(_ order: ExecutionOrder) throws {
        let folder = try TemporaryFolder()
        let (device, remote) = try device(in: folder)
        #expect(try device.opened().recordsUploadsTogether)
        try device.opened().executionOrder = order
        for index in 0..<60 { try device.write("doc\(index).txt", "document \(index)\n") }
        let summary = try device.sync()
        #expect(summary.uploaded == 60 && summary.failures.isEmpty, "\(summary.failures.prefix(3))")
        remote.checkNoneRecorded(when: "and never flushed")
        #expect(remote.violations.isEmpty, "\(remote.violations.prefix(3))")
        // One flush for the batch of 60 (the journal's other commits find nothing waiting).
        #expect(remote.flushes == 1)
        let journal = try device.opened().journal
        #expect(try journal.pendingIntents().isEmpty)
        for index in 0..<60 {
            #expect(try journal.item(at: RemotePath("doc\(index).txt"))?.remoteTag != nil)
        }
        #expect(try !device.sync().didWork)
    }

    /// A pass killed after some writes of a batch, before the batch is recorded, leaves their
    /// intents: the next pass finds the files written and records them, uploading nothing
    /// twice, and another device gets every document whole.
    @Test func aCrashBeforeTheBatchIsRecordedLeavesIntentsTheNextPassSettles() throws {
        let folder = try TemporaryFolder()
        let (a, remote) = try device(in: folder)
        for index in 0..<12 { try a.write("doc\(index).txt", "document \(index)\n") }
        let written = Atomic(0)
        try a.opened().checkpoint = { step in
            guard step == .afterJournal else { return }
            if written.add(1, ordering: .relaxed).newValue == 5 { throw SyncInterruption() }
        }
        #expect(throws: SyncInterruption.self) { try a.opened().pass() }
        let journal = try a.opened().journal
        #expect(try journal.pendingIntents().count == 5)
        #expect(try journal.allItems().filter { $0.kind == .file }.isEmpty)
        a.crash()
        let summary = try a.sync()
        #expect(summary.failures.isEmpty, "\(summary.failures.prefix(3))")
        #expect(summary.uploaded == 7)
        #expect(try a.opened().journal.pendingIntents().isEmpty)
        #expect(try !a.sync().didWork)
        #expect(remote.violations.isEmpty, "\(remote.violations.prefix(3))")
        let b = try SyncDevice("b", remote: remote, in: folder)
        #expect(try b.sync().downloaded == 12)
        #expect(try b.tree() == a.tree())
    }

    /// New files wait for one flush of the folder's file system; the flush finds nothing the
    /// second time.
    @Test func newFilesWaitForOneFlush() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        #expect(remote.writesAwaitingFlush.load(ordering: .relaxed) == 0)
        try remote.write(RemotePath("a.txt"), from: UploadSource(Data("a".utf8)), condition: .absent)
        // Durable at once until deferred.
        #expect(remote.writesAwaitingFlush.load(ordering: .relaxed) == 0)
        #expect(remote.deferDurability())
        let tag = try #require(
            try remote.write(RemotePath("b.txt"), from: UploadSource(Data("b".utf8)), condition: .absent))
        // A replacement is flushed before its rename, whatever waits.
        try remote.write(
            RemotePath("a.txt"), from: UploadSource(Data("A".utf8)),
            condition: .matches(
                try #require(try remote.entry(at: RemotePath("a.txt"))?.tag)))
        #expect(remote.writesAwaitingFlush.load(ordering: .relaxed) == 1)
        #expect(try remote.entry(at: RemotePath("b.txt"))?.tag == tag)
        try remote.makeWritesDurable()
        #expect(remote.writesAwaitingFlush.load(ordering: .relaxed) == 0)
        try remote.makeWritesDurable()
        var bytes = Data()
        _ = try remote.read(RemotePath("b.txt")) { bytes.append($0) }
        #expect(bytes == Data("b".utf8))
    }
}
