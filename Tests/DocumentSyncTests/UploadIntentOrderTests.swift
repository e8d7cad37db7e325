import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A simulated remote that lets a test act at two points of a document's upload: as the
/// engine's source hands out the last chunk (the remote has every byte but the last chunk's,
/// and has applied nothing), and once the remote has applied the write (before the engine
/// hears of it).
final class ObservedUploadRemote: Remote {
    let base: SimulatedRemote
    /// Called with the path and how many chunks the source gave, the last one included, as
    /// the last chunk comes out of the source.
    let onLastChunk = Mutex<(@Sendable (RemotePath, Int) throws -> Void)?>(nil)
    /// Called with the path once the remote has applied a write.
    let onApplied = Mutex<(@Sendable (RemotePath) throws -> Void)?>(nil)

    init(_ base: SimulatedRemote) { self.base = base }

    var displayName: String { base.displayName }
    var hasFileIDs: Bool { base.hasFileIDs }
    var mostRequestsAtOnce: Int { base.mostRequestsAtOnce }
    var movesAreAtomic: Bool { base.movesAreAtomic }
    func wantsHashBeforeUpload(ofSize size: Int64) -> Bool { base.wantsHashBeforeUpload(ofSize: size) }
    func list(_ folder: RemotePath) throws -> RemoteListing { try base.list(folder) }
    func listTree() throws -> [RemotePath: RemoteEntry]? { try base.listTree() }
    func entry(at path: RemotePath) throws -> RemoteEntry? { try base.entry(at: path) }
    func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try base.read(path, into: sink)
    }
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws -> RemoteTag?
    {
        guard !path.isMetadata else { return try base.write(path, from: source, condition: condition) }
        let (lastChunk, applied) = (onLastChunk.withLock { $0 }, onApplied.withLock { $0 })
        var given: Int64 = 0
        var chunks = 0
        var observed = UploadSource(size: source.size) {
            guard let chunk = try source.nextChunk() else { return nil }
            given += Int64(chunk.count)
            chunks += 1
            if given >= source.size { try lastChunk?(path, chunks) }
            return chunk
        }
        observed.sha256 = source.sha256
        let tag = try base.write(path, from: observed, condition: condition)
        try applied?(path)
        return tag
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

/// An upload of many chunks records its intent, with the hash of every byte sent, before the
/// remote can hold those bytes: the engine hashes the file as it reads it for sending, so the
/// hash is known only as the last chunk is read. A crash at that point, or once the remote has
/// applied the write, loses nothing: on restart the bytes found there are known as ours.
@Suite struct UploadIntentOrderTests {
    /// Where the upload of a document stops, as a killed process stops, and what the user does
    /// before sync runs again.
    enum Crash: String, CaseIterable, CustomTestStringConvertible {
        /// No crash.
        case none
        /// As the source hands out the last chunk: the remote applies nothing.
        case asTheLastChunkGoes
        /// Likewise, and the user edits the document again before sync runs again.
        case asTheLastChunkGoesThenEdited
        /// Once the remote has applied the write, before the engine hears of it.
        case onceTheRemoteApplied
        /// Likewise, and the user edits the document again before sync runs again.
        case onceTheRemoteAppliedThenEdited

        var testDescription: String { rawValue }
        var editsAfter: Bool {
            self == .asTheLastChunkGoesThenEdited || self == .onceTheRemoteAppliedThenEdited
        }
    }

    /// `count` bytes that differ from one `seed` to another.
    static func bytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(seed: seed)
        let words = (0..<(count + 7) / 8).map { _ in generator.next() }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// Three chunks and part of a fourth.
    static let size = 3 * RemoteChunk.size + 12_345

    @Test(arguments: Crash.allCases, [false, true])
    func aMultiChunkUploadsIntentIsJournaledBeforeTheRemoteHasItsLastChunk(crash: Crash, replacing: Bool)
        throws
    {
        let folder = try TemporaryFolder()
        let simulated = SimulatedRemote(displayName: "sim://observed")
        let remote = ObservedUploadRemote(simulated)
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        let path = RemotePath("film.bin")
        if replacing {
            try Self.bytes(Self.size, seed: 1).write(to: a.url("film.bin"))
            try a.sync()
            try b.sync()
        }
        let sent = Self.bytes(Self.size, seed: 2)
        let sentHash = ContentHash(of: sent).hex
        try sent.write(to: a.url("film.bin"))

        let journalURL = SyncJournal.url(forContainer: a.container, stateHome: a.stateHome)
        // What the journal, read from a connection of its own (as a restarted process would
        // read it), held as the last chunk went; and how many chunks there were.
        let seen = Observation()
        remote.onLastChunk.withLock {
            $0 = { path, chunks in
                let intents = try SyncJournal(url: journalURL).pendingIntents()
                let remoteHadIt = simulated.snapshot().files[path].map { ContentHash(of: $0).hex } == sentHash
                seen.state.withLock { $0 = (intents, chunks, remoteHadIt) }
                if crash == .asTheLastChunkGoes || crash == .asTheLastChunkGoesThenEdited {
                    throw SyncInterruption()
                }
            }
        }
        remote.onApplied.withLock {
            $0 = { _ in
                if crash == .onceTheRemoteApplied || crash == .onceTheRemoteAppliedThenEdited {
                    throw SyncInterruption()
                }
            }
        }
        if crash == .none {
            let summary = try a.sync()
            #expect(summary.failures.isEmpty && summary.uploaded == 1, "\(summary)")
        } else {
            #expect(throws: SyncInterruption.self) { try a.opened().pass() }
            a.crash()
        }
        remote.onLastChunk.withLock { $0 = nil }
        remote.onApplied.withLock { $0 = nil }

        let observed = try #require(
            seen.state.withLock { $0 }, "the remote was given no last chunk of film.bin")
        #expect(observed.chunks == 4, "a file of many chunks")
        #expect(!observed.remoteHadIt)
        let upload = observed.intents.filter { $0.operation == .upload && $0.path == path }
        #expect(
            upload.map(\.hash) == [sentHash], "the intent, with the hash of every byte sent, was journaled")
        let condition: WriteCondition = replacing ? .matches(try #require(try b.syncedTag(path))) : .absent
        #expect(upload.first?.condition == condition)

        // What the user has last is everywhere after a restart, with no conflict.
        var last = sent
        if crash.editsAfter {
            last = Self.bytes(Self.size + 1, seed: 3)
            try last.write(to: a.url("film.bin"))
        }
        let restarted = try a.sync()
        #expect(restarted.failures.isEmpty, "\(restarted)")
        try b.sync()
        let lastHash = ContentHash(of: last).hex
        #expect(simulated.snapshot().files[path].map { ContentHash(of: $0).hex } == lastHash)
        for device in [a, b] {
            #expect(
                ContentHash(of: try Data(contentsOf: device.url("film.bin"))).hex == lastHash,
                "\(device.name)")
            #expect(device.conflicts("film.bin").count == 0, "\(device.name)")
        }
        // A new file's upload that never landed leaves its intent waiting (a write that got no
        // answer may land late); the pass after settles it against what is there, moving nothing.
        let after = try a.sync()
        #expect(after.uploaded == 0 && after.downloaded == 0 && after.conflicts == 0, "\(after)")
        #expect(try a.opened().journal.pendingIntents().isEmpty)
    }
}

/// What a test saw at a point of an upload.
private final class Observation: Sendable {
    let state = Mutex<(intents: [SyncIntent], chunks: Int, remoteHadIt: Bool)?>(nil)
}

extension SyncDevice {
    /// The remote tag the journal has for `path`, if any.
    fileprivate func syncedTag(_ path: RemotePath) throws -> RemoteTag? {
        try opened().journal.item(at: path)?.remoteTag
    }
}
