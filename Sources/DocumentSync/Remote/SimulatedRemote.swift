import Foundation
import Synchronization

/// An in-memory remote for the deterministic simulation, with faults that strike by plan.
///
/// It behaves as a strict server: writes are atomic compare-and-swaps, tags are `s-1`,
/// `s-2`... from one counter and never reused (a folder's tag changes when its contents do; a
/// move keeps the moved item's tag and file ID), listings are sorted by name. Nothing depends
/// on the clock, on unseeded randomness or on dictionary order, so the same calls with the same
/// ``SeededGenerator`` give the same answers, faults included.
///
/// Faults come from two places: a ``Faults`` plan whose probabilities are drawn from the
/// generator on every call, and faults scheduled for the next matching call. Tests play
/// another client with ``directWrite(_:_:)`` and friends, which bypass faults and counts.
///
/// For example:
///
/// ```swift
/// let remote = SimulatedRemote(generator: SeededGenerator(seed: 1))
/// remote.schedule(.timeoutAfterApplying, on: .write, at: RemotePath("a.txt"))
/// // The write happens, and the call throws .timedOut:
/// try? remote.write(RemotePath("a.txt"), from: UploadSource(bytes), condition: .absent)
/// remote.snapshot().files[RemotePath("a.txt")]   // bytes
/// ```
public final class SimulatedRemote: Remote {
    public let displayName: String
    /// How many bytes a read gives its sink at a time.
    public let chunkSize: Int
    /// Characters no name on this remote may hold, as some servers refuse `:` or `|`: a name
    /// with one is ``RemoteError/Kind/invalidName``.
    public let refusedCharacters: Set<Character>

    private let state: Mutex<State>

    /// An empty remote (the root folder only).
    ///
    /// - Parameters:
    ///   - displayName: The name in messages.
    ///   - faults: The faults that strike on their own.
    ///   - generator: Where every random draw comes from.
    ///   - chunkSize: How many bytes a read gives at a time.
    ///   - refusedCharacters: Characters no name may hold.
    ///   - historyLimit: How many past trees to keep for stale listings. Each mutation then
    ///     copies the tree's index: give 0 for a tree of thousands of items that needs no stale
    ///     listings (a benchmark).
    public init(
        displayName: String = "simulated remote", faults: Faults = .none,
        generator: SeededGenerator = SeededGenerator(seed: 0), chunkSize: Int = RemoteChunk.size,
        historyLimit: Int = 64, refusedCharacters: Set<Character> = []
    ) {
        self.displayName = displayName
        self.chunkSize = max(chunkSize, 1)
        self.refusedCharacters = refusedCharacters
        state = Mutex(State(faults: faults, generator: generator, historyLimit: max(historyLimit, 0)))
    }

    /// The faults that strike on their own; change them at any time.
    public var faults: Faults {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// Makes `fault` strike the next call of `operation` (on `path`, or on any path), before
    /// any drawn fault. Scheduled faults strike in the order they were scheduled.
    public func schedule(_ fault: Fault, on operation: RemoteError.Operation, at path: RemotePath? = nil) {
        state.withLock { $0.scheduled.append(ScheduledFault(fault: fault, operation: operation, path: path)) }
    }

    /// The calls answered so far.
    public var operationCounts: OperationCounts { state.withLock { $0.counts } }

    /// Sets every count back to zero.
    public func resetOperationCounts() { state.withLock { $0.counts = OperationCounts() } }

    /// The bytes racing writers (``Faults/racingWriter``, ``Fault/racingWrite(_:)``) wrote
    /// over, in order: another client's blind writes, which a test's model of what was lost
    /// must know of.
    public var bytesReplacedByRacingWriters: [Data] { state.withLock { $0.replacedByRaces } }

    /// Every file's bytes and every folder, as they are now.
    public func snapshot() -> Snapshot {
        state.withLock { state in
            var snapshot = Snapshot()
            for (path, node) in state.tree where !path.isRoot {
                switch node.kind {
                case .file: snapshot.files[path] = node.bytes
                case .folder: snapshot.folders.insert(path)
                }
            }
            return snapshot
        }
    }

    // MARK: Another client

    /// Writes `bytes` at `path` as another client would, making missing folders; no condition,
    /// fault or count.
    ///
    /// - Returns: The new tag.
    /// - Throws: ``RemoteError`` `.notAFile` when a folder is at the path or on the way.
    @discardableResult
    public func directWrite(_ path: RemotePath, _ bytes: Data) throws -> RemoteTag {
        try state.withLock { state in
            try state.makeFolders(path.parent, remote: displayName)
            return try state.put(path, bytes, remote: displayName)
        }
    }

    /// Removes the item at `path` and everything inside as another client would.
    ///
    /// - Returns: Whether there was an item.
    @discardableResult
    public func directDelete(_ path: RemotePath) -> Bool {
        state.withLock { state in
            guard !path.isRoot, state.tree[path] != nil else { return false }
            state.remove(path)
            return true
        }
    }

    /// Removes every file of a hostile name (``Faults/hostileName``): for the quiet end of a run.
    public func removeHostileNames() {
        state.withLock { $0.removeHostileNames(in: nil) }
    }

    /// Makes the folder at `path` and any missing folder above it, as another client would.
    public func directMakeFolder(_ path: RemotePath) throws {
        try state.withLock { try $0.makeFolders(path, remote: displayName) }
    }

    /// Moves the item at `source` to `destination` as another client would, replacing nothing.
    public func directMove(_ source: RemotePath, to destination: RemotePath) throws {
        _ = try state.withLock { state in
            try state.move(source, to: destination, condition: nil, remote: displayName)
        }
    }

    // MARK: Remote

    public func list(_ folder: RemotePath) throws -> RemoteListing {
        try state.withLock { state in
            let fault = state.begin(.list, folder)
            try fail(fault, .list, folder)
            try state.race(fault, at: folder, remote: displayName)
            state.removeHostileNames(in: folder)
            if case .hostileName(let name) = fault, state.tree[folder]?.kind == .folder {
                state.hostileNamesMade.insert(Array(name.utf8))
                _ = try state.put(
                    RemotePath(components: folder.components + [name]), Data("hostile\n".utf8),
                    remote: displayName)
            }
            let tree = state.tree(age: fault.staleAge)
            guard let node = tree[folder] else { throw failure(.notFound, .list, folder) }
            guard node.kind == .folder else { throw failure(.notAFolder, .list, folder) }
            let entries = tree.filter { $0.key.parent == folder && !$0.key.isRoot }
                .map { $0.value.entry(named: $0.key.name) }
            if case .timeoutAfterApplying = fault { throw failure(.timedOut, .list, folder) }
            return try checkedListing(folder, entries, folderTag: node.tag)
        }
    }

    public func entry(at path: RemotePath) throws -> RemoteEntry? {
        try state.withLock { state in
            let fault = state.begin(.entry, path)
            try fail(fault, .entry, path)
            try state.race(fault, at: path, remote: displayName)
            let entry = state.tree(age: fault.staleAge)[path]?.entry(named: path.name)
            if case .timeoutAfterApplying = fault { throw failure(.timedOut, .entry, path) }
            return entry
        }
    }

    public func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        let (bytes, tag, fault) = try state.withLock { state -> (Data, RemoteTag, Fault?) in
            let size = Int64(state.tree[path]?.bytes.count ?? 0)
            let fault = state.begin(.read, path, size: size)
            if case .connectionCut = fault {} else { try fail(fault, .read, path) }
            try state.race(fault, at: path, remote: displayName)
            guard let node = state.tree[path] else { throw failure(.notFound, .read, path) }
            guard node.kind == .file else { throw failure(.notAFile, .read, path) }
            return (node.bytes, node.tag, fault)
        }
        // The sink runs outside the lock: it may call the remote.
        var limit = bytes.count
        if case .connectionCut(let afterBytes) = fault { limit = min(max(afterBytes, 0), bytes.count) }
        var offset = 0
        while offset < limit {
            let end = min(offset + chunkSize, limit)
            try sink(bytes.subdata(in: offset..<end))
            state.withLock { $0.counts.bytesRead += Int64(end - offset) }
            offset = end
        }
        if case .connectionCut = fault { throw failure(.connectionLost, .read, path) }
        if case .timeoutAfterApplying = fault { throw failure(.timedOut, .read, path) }
        return tag
    }

    @discardableResult
    public func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
        -> RemoteTag?
    {
        try validate(path, .write)
        let fault = state.withLock { $0.begin(.write, path, size: source.size, conditional: true) }
        if case .connectionCut = fault {} else { try fail(fault, .write, path) }
        var bytes = Data()
        var cut = Int.max
        if case .connectionCut(let afterBytes) = fault { cut = max(afterBytes, 0) }
        while bytes.count < cut, let chunk = try source.nextChunk() {
            bytes.append(chunk)
            state.withLock { $0.counts.bytesWritten += Int64(chunk.count) }
        }
        if case .connectionCut = fault { throw failure(.connectionLost, .write, path) }
        guard Int64(bytes.count) == source.size else {
            throw failure(
                .sourceChanged, .write, path,
                detail: "\(bytes.count) bytes where the source said \(source.size)")
        }
        return try state.withLock { state in
            try state.race(fault, at: path, remote: displayName)
            guard state.tree[path.parent]?.kind == .folder else {
                throw failure(.parentMissing, .write, path)
            }
            try state.check(condition, at: path, .write, remote: displayName)
            if state.tree[path]?.kind == .folder { throw failure(.notAFile, .write, path) }
            let tag = try state.put(path, bytes, remote: displayName)
            if case .timeoutAfterApplying = fault { throw failure(.timedOut, .write, path) }
            return tag
        }
    }

    public func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try validate(path, .delete)
        try state.withLock { state in
            let fault = state.begin(.delete, path, conditional: true)
            try fail(fault, .delete, path)
            try state.race(fault, at: path, remote: displayName)
            guard let node = state.tree[path] else { throw failure(.notFound, .delete, path) }
            try state.check(condition, at: path, .delete, remote: displayName)
            if node.kind == .folder, state.tree.keys.contains(where: { $0.parent == path }) {
                throw failure(.notEmpty, .delete, path)
            }
            state.remove(path)
            if case .timeoutAfterApplying = fault { throw failure(.timedOut, .delete, path) }
        }
    }

    @discardableResult
    public func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try validate(source, .move, destination: destination)
        try validate(destination, .move, destination: destination)
        return try state.withLock { state in
            let fault = state.begin(.move, source, conditional: condition != nil)
            try fail(fault, .move, source, destination: destination)
            try state.race(fault, at: source, remote: displayName)
            let tag = try state.move(source, to: destination, condition: condition, remote: displayName)
            if case .timeoutAfterApplying = fault {
                throw failure(.timedOut, .move, source, destination: destination)
            }
            return tag
        }
    }

    public func makeFolder(_ path: RemotePath) throws {
        try validate(path, .makeFolder)
        try state.withLock { state in
            let fault = state.begin(.makeFolder, path)
            try fail(fault, .makeFolder, path)
            try state.race(fault, at: path, remote: displayName)
            if state.tree[path] != nil { throw failure(.exists, .makeFolder, path) }
            guard state.tree[path.parent]?.kind == .folder else {
                throw failure(.parentMissing, .makeFolder, path)
            }
            state.insertFolder(path)
            if case .timeoutAfterApplying = fault { throw failure(.timedOut, .makeFolder, path) }
        }
    }

    // MARK: Helpers

    /// Throws for a fault that strikes before anything is applied.
    private func fail(
        _ fault: Fault?, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil
    ) throws {
        switch fault {
        case .serverError(let status):
            throw failure(.status(status), operation, path, destination: destination)
        case .connectionCut: throw failure(.connectionLost, operation, path, destination: destination)
        default: return
        }
    }

    private func validate(
        _ path: RemotePath, _ operation: RemoteError.Operation, destination: RemotePath? = nil
    ) throws {
        guard !path.isRoot,
            path.components.allSatisfy({
                RemotePath.isValidComponent($0) && !$0.contains(where: refusedCharacters.contains)
            })
        else {
            throw failure(.invalidName, operation, path, destination: destination)
        }
    }

}

extension SimulatedRemote.Fault? {
    fileprivate var staleAge: Int {
        if case .staleListing(let age) = self { return max(age, 1) }
        return 0
    }
}
