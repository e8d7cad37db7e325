import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// One device of a sync test: a real container folder, its own journal (state folder) and
/// version store, and an engine on a shared remote, opened again after a crash.
final class SyncDevice: @unchecked Sendable {
    let name: String
    /// The name the device's computer has: its own name unless it shares another's.
    let computerName: String
    let container: URL
    let stateHome: URL
    let store: VersionStore
    /// Where documents the remote deleted go.
    let deleted: URL
    let remote: any Remote
    private(set) var engine: SyncEngine?
    /// How many conflict identifiers this device's engines made, across crashes: they are
    /// counted, not random, so that a simulated run replays.
    private let identifiers = Counter()

    private final class Counter {
        var value = 0
    }

    /// A device called `name`, whose computer is called `computerName` (by default `name`;
    /// devices may share one, as cloned machines do). Its identity is made from `name`, not
    /// random, so that a simulated run replays byte for byte.
    init(_ name: String, remote: any Remote, in folder: TemporaryFolder, computerName: String? = nil) throws {
        self.name = name
        self.computerName = computerName ?? name
        self.remote = remote
        container = try folder.folder("\(name)/Documents")
        stateHome = try folder.folder("\(name)/state")
        store = VersionStore(
            root: try folder.folder("\(name)/Versions"),
            device: DeviceIdentity(identifier: "device-\(name)", name: self.computerName))
        deleted = folder.file("\(name)/Deleted")
    }

    /// Whether the device's engine syncs its key-value store (``keyValueStore``) too.
    var syncsKeyValues = false
    /// Whether the device's engine publishes its status, as an agent does.
    var publishesStatus = false
    /// Whether documents new from the remote stay on the server, with a placeholder here.
    var downloadsOnDemand = false
    /// The clock the device's engine reads, when not the system's: the simulation's devices
    /// share a ``ManualSyncClock`` it moves.
    var clock: (any SyncClock)?
    /// When set, the seed each engine of the device shuffles the actions of every batch with
    /// (``SyncEngine/arrangeBatch``) and draws how they interleave from
    /// (``SyncEngine/executionOrder``): the simulation's, so that a run replays.
    var batchShuffleSeed: UInt64?

    /// The device's ubiquitous key-value store file.
    var keyValueStore: URL { stateHome.appendingPathComponent("keyvalue.plist") }

    var configuration: SyncConfiguration {
        var configuration = SyncConfiguration(
            stateHome: stateHome, versionStore: store, settleTime: .zero, computerName: computerName,
            mostPasses: 12,
            deletedItemsFolder: deleted, keyValueStore: syncsKeyValues ? keyValueStore : nil,
            deviceIdentifier: name)
        configuration.publishesStatus = publishesStatus
        configuration.downloadsOnDemand = downloadsOnDemand
        if let clock { configuration.clock = clock }
        return configuration
    }

    /// The device's engine, opened if it has none (at first, and after a crash).
    func opened() throws -> SyncEngine {
        if let engine { return engine }
        let engine = try openEngine()
        let (identifiers, name) = (identifiers, name)
        engine.makeIdentifier = {
            identifiers.value += 1
            return "\(name)-\(identifiers.value)"
        }
        if let seed = batchShuffleSeed {
            var generator = SeededGenerator(seed: seed)
            engine.arrangeBatch = { batch in batch.shuffle(using: &generator) }
            // One to eight actions at once, taking turns at every checkpoint in an order the
            // seed draws: completions in any order, and crashes between any two of them.
            let workers = 1 + Int(generator.next() % 8)
            engine.executionOrder = .interleaved(seed: generator.next(), workers: workers)
            // Half the devices record their uploads at the end of each batch, together, as an
            // engine on a remote that flushes its writes together does: a crash before then
            // leaves the batch's intents for the next pass. (From the seed's bits, not a draw,
            // so that every draw of a seed stays as it was.)
            engine.recordsUploadsTogether = seed & 1 == 1
        } else {
            // One at a time, in the plan's order: the steps a test names happen as it names them.
            engine.executionOrder = .interleaved(seed: 0, workers: 1)
        }
        self.engine = engine
        return engine
    }

    /// A new engine on the container. The one a crash dropped closed its lock's descriptor,
    /// but a child process another test spawned at that moment may still hold a copy: a fork
    /// copies every descriptor, and close-on-exec closes it only at the child's exec, so the
    /// `flock` stays held until then (a loop of close and relock beside a loop of `Process`
    /// runs sees it about once in a thousand). A refusal as busy is tried again for up to ten
    /// seconds.
    private func openEngine() throws -> SyncEngine {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                return try SyncEngine(container: container, remote: remote, configuration: configuration)
            } catch let error as SyncError where error.kind == .busy && ContinuousClock.now < deadline {
                usleep(10_000)
            }
        }
    }

    @discardableResult
    func sync() throws -> SyncSummary {
        let summary = try opened().sync()
        store.waitUntilIdle()
        return summary
    }

    /// Drops the engine where it stands, as a killed process leaves things: once this returns,
    /// the engine is gone, its journal's connection and its lock closed. A thread that ran a
    /// pass's batch or listing may hold it a moment after the pass returned (on a loaded
    /// machine, long enough for a test to damage the journal first, and for the connection's
    /// last checkpoint to write valid pages back over the damage), so this waits for it.
    func crash() {
        weak let dropped = engine
        engine = nil
        let deadline = ContinuousClock.now + .seconds(60)
        while dropped != nil, ContinuousClock.now < deadline { usleep(1000) }
        #expect(dropped == nil, "the dropped engine is still held after 60 s")
    }

    /// A pass killed at the first `step` it reaches: the engine is dropped there.
    func crashPass(at step: SyncStep) throws {
        try opened().checkpoint = { if $0 == step { throw SyncInterruption() } }
        #expect(throws: SyncInterruption.self) { try self.opened().pass() }
        crash()
    }

    func url(_ path: String) -> URL { container.appendingPathComponent(path) }

    /// Writes as an editor that does not coordinate writes: in place.
    func write(_ path: String, _ text: String) throws {
        let url = url(path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func read(_ path: String) -> String? {
        (try? Data(contentsOf: url(path))).map { String(decoding: $0, as: UTF8.self) }
    }

    func delete(_ path: String) throws {
        try FileManager.default.removeItem(at: url(path))
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: url(path).path) }

    /// The placeholder that stands for the document at `path`, if one does.
    func placeholder(_ path: String) -> UbiquityPlaceholder? {
        UbiquityPlaceholder(contentsOf: UbiquityPlaceholder.placeholderURL(for: url(path)))
    }

    /// Asks the agent to download the document at `path`, as `startDownloadingUbiquitousItem`.
    func requestDownload(_ path: String) throws {
        try downloadRequests.add([path])
    }

    var downloadRequests: UbiquityDownloadRequests {
        UbiquityDownloadRequests(forContainer: container, stateHome: stateHome)
    }

    /// Leaves the document at `path` on the server only, as `evictUbiquitousItem` does once it
    /// has checked the document is uploaded: the placeholder, then the file goes.
    func evict(_ path: String) throws {
        let size = try #require(FileStatus(path: url(path).path)).size
        try SafeSave.write(
            try UbiquityPlaceholder(name: url(path).lastPathComponent, size: size, path: path).encoded(),
            to: UbiquityPlaceholder.placeholderURL(for: url(path)))
        try delete(path)
    }

    /// The texts of the item's unresolved conflict versions, sorted.
    func conflicts(_ path: String) -> [String] {
        store.unresolvedConflictVersionsOfItem(at: url(path)).compactMap { version in
            (try? Data(contentsOf: version.url)).map { String(decoding: $0, as: UTF8.self) }
        }.sorted()
    }

    /// Every file of the container, by path, with its text.
    func tree() throws -> [String: String] {
        var result: [String: String] = [:]
        for (path, entry) in try SyncTrees.local(container) where entry.kind == .file {
            result[path.string] = read(path.string)
        }
        return result
    }
}

/// A pass that fails: its message (the error's, or its items' failures), or nil when it did
/// not fail.
func passFailure(_ body: () throws -> SyncSummary) -> String? {
    do {
        let summary = try body()
        return summary.failures.isEmpty ? nil : summary.failures.joined(separator: "; ")
    } catch {
        return String(describing: error)
    }
}
