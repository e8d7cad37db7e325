import Foundation

extension SimulatedRemote {
    /// How often each fault strikes on its own, drawn from the remote's seeded generator: a
    /// probability per call to which the fault applies.
    ///
    /// For example:
    ///
    /// ```swift
    /// let remote = SimulatedRemote(
    ///     faults: .init(serverError: 0.05, timeoutAfterApplying: 0.05),
    ///     generator: SeededGenerator(seed: seed))
    /// ```
    public struct Faults: Hashable, Sendable {
        /// A `503` before anything is applied; any operation.
        public var serverError: Double
        /// The connection breaks mid-body: a read gives part of the bytes, a write consumes part
        /// of its source; neither applies anything. Reads and writes.
        public var connectionCut: Double
        /// Another client writes the path just before the call is applied, so that its
        /// condition fails. Writes, deletes and conditional moves of a file.
        public var racingWriter: Double
        /// A listing (or an entry) as the tree was some mutations ago, up to
        /// ``maximumStaleness``. Lists and entries.
        public var staleListing: Double
        /// The call is applied, then throws ``RemoteError/Kind/timedOut``. Writes, deletes,
        /// moves and new folders.
        public var timeoutAfterApplying: Double
        /// How many mutations back a stale listing may look.
        public var maximumStaleness: Int
        /// The folder listed holds, besides its items, a file whose name is not a name or is one
        /// of sync's own (``SimulatedRemote/hostileNames``), as a hostile server would list and
        /// serve it; it is gone at the folder's next listing. Lists.
        public var hostileName: Double

        public init(
            serverError: Double = 0, connectionCut: Double = 0, racingWriter: Double = 0,
            staleListing: Double = 0, timeoutAfterApplying: Double = 0, maximumStaleness: Int = 8,
            hostileName: Double = 0
        ) {
            self.serverError = serverError
            self.connectionCut = connectionCut
            self.racingWriter = racingWriter
            self.staleListing = staleListing
            self.timeoutAfterApplying = timeoutAfterApplying
            self.maximumStaleness = maximumStaleness
            self.hostileName = hostileName
        }

        /// No fault strikes on its own; scheduled ones still do.
        public static let none = Faults()
    }

    /// One fault, scheduled with ``SimulatedRemote/schedule(_:on:at:)`` to strike the next
    /// matching call.
    public enum Fault: Hashable, Sendable {
        /// The call is applied, then throws ``RemoteError/Kind/timedOut`` (a call that changes
        /// nothing, such as a list, does its work and throws).
        case timeoutAfterApplying
        /// The call throws ``RemoteError/Kind/server(status:)`` and applies nothing.
        case serverError(status: Int)
        /// A read gives the first `afterBytes` bytes then throws
        /// ``RemoteError/Kind/connectionLost``; a write consumes that many bytes of its source
        /// then throws and applies nothing; any other call throws without applying.
        case connectionCut(afterBytes: Int)
        /// A list or entry answers from the tree as it was `age` mutations ago (from the oldest
        /// kept if there were fewer); no effect on other calls.
        case staleListing(age: Int)
        /// Another client writes these bytes at the path (the source of a move) just before
        /// the call is applied; nothing is raced when a folder is there or the path's folder
        /// is missing.
        case racingWrite(Data)
        /// A list finds a file of this name in the folder, besides its items: one of
        /// ``SimulatedRemote/hostileNames``. No effect on other calls.
        case hostileName(String)
    }

    /// Names a hostile server gives (``Faults/hostileName``): names that climb out of the
    /// folder ("/" inside one name, "..", "."), hold NUL or a terminal's escape (C0, C1), are
    /// empty, or are one of sync's own. Each but the dots and the empty one says "hostile", so
    /// that a run can look for anything a name like it made anywhere.
    public static let hostileNames = [
        "x/../../hostile-slash.txt", "../hostile-up.txt", "..", ".", "", "hostile-nul\u{0}.txt",
        "hostile-escape\u{1B}[2J.txt", "hostile-csi\u{9B}31m.txt", ".documentsync-hostile.download",
    ]

    /// How many calls of each kind the remote answered, and how many bytes moved: for tests
    /// and benchmarks.
    public struct OperationCounts: Hashable, Sendable {
        public var list = 0
        public var entry = 0
        public var read = 0
        public var write = 0
        public var delete = 0
        public var move = 0
        public var makeFolder = 0
        /// Bytes given to read sinks.
        public var bytesRead: Int64 = 0
        /// Bytes consumed from upload sources.
        public var bytesWritten: Int64 = 0
        /// Faults that struck, scheduled or drawn.
        public var faults = 0

        public init() {}

        /// Every call, of any kind.
        public var total: Int { list + entry + read + write + delete + move + makeFolder }

        mutating func record(_ operation: RemoteError.Operation) {
            switch operation {
            case .list: list += 1
            case .entry: entry += 1
            case .read: read += 1
            case .write: write += 1
            case .delete: delete += 1
            case .move: move += 1
            case .makeFolder: makeFolder += 1
            case .publish: break
            }
        }
    }

    /// The whole tree at one moment: for the simulation's check that every device converged.
    public struct Snapshot: Hashable, Sendable {
        /// Every file's bytes.
        public var files: [RemotePath: Data]
        /// Every folder but the root.
        public var folders: Set<RemotePath>

        public init(files: [RemotePath: Data] = [:], folders: Set<RemotePath> = []) {
            self.files = files
            self.folders = folders
        }

        /// The files outside ``RemotePath/metadataFolder``: the documents, without what sync
        /// keeps for itself (conflicts, key-value stores, the change marker).
        public var documents: [RemotePath: Data] { files.filter { !$0.key.isMetadata } }
        /// The folders outside ``RemotePath/metadataFolder``.
        public var documentFolders: Set<RemotePath> { folders.filter { !$0.isMetadata } }
    }

    struct ScheduledFault {
        var fault: Fault
        var operation: RemoteError.Operation
        var path: RemotePath?
    }
}

extension SimulatedRemote.State {
    /// Records a call and picks the fault that strikes it: the first scheduled one that
    /// matches, else one drawn from the fault plan. Every draw happens here, under the lock,
    /// in call order: the same seed and the same calls give the same faults.
    mutating func begin(
        _ operation: RemoteError.Operation, _ path: RemotePath, size: Int64 = 0, conditional: Bool = false
    ) -> SimulatedRemote.Fault? {
        counts.record(operation)
        if let index = scheduled.firstIndex(where: {
            $0.operation == operation && ($0.path == nil || $0.path == path)
        }) {
            counts.faults += 1
            return scheduled.remove(at: index).fault
        }
        guard let fault = drawFault(operation, size: size, conditional: conditional) else { return nil }
        counts.faults += 1
        return fault
    }

    private mutating func drawFault(
        _ operation: RemoteError.Operation, size: Int64, conditional: Bool
    ) -> SimulatedRemote.Fault? {
        let mutating: Set<RemoteError.Operation> = [.write, .delete, .move, .makeFolder]
        if strikes(faults.serverError) { return .serverError(status: 503) }
        if operation == .read || operation == .write, strikes(faults.connectionCut) {
            return .connectionCut(afterBytes: Int(Int64.random(in: 0...max(size - 1, 0), using: &generator)))
        }
        if conditional, strikes(faults.racingWriter) {
            raceCount += 1
            return .racingWrite(Data("racing writer \(raceCount)\n".utf8))
        }
        if operation == .list || operation == .entry, !history.isEmpty, strikes(faults.staleListing) {
            let oldest = min(max(faults.maximumStaleness, 1), history.count)
            return .staleListing(age: Int.random(in: 1...oldest, using: &generator))
        }
        if mutating.contains(operation), strikes(faults.timeoutAfterApplying) { return .timeoutAfterApplying }
        if operation == .list, strikes(faults.hostileName) {
            let names = SimulatedRemote.hostileNames
            return .hostileName(names[Int.random(in: 0..<names.count, using: &generator)])
        }
        return nil
    }

    /// Removes the files of hostile names (``SimulatedRemote/Faults/hostileName``) from
    /// `folder`, or from everywhere when nil.
    mutating func removeHostileNames(in folder: RemotePath?) {
        // A look at every path only in a run that ever had one: a benchmark's listings cost none.
        guard !hostileNamesMade.isEmpty else { return }
        for path in tree.keys.sorted()
        where !path.isRoot && (folder == nil || path.parent == folder)
            && hostileNamesMade.contains(Array(path.name.utf8))
        {
            remove(path)
        }
    }

    private mutating func strikes(_ probability: Double) -> Bool {
        guard probability > 0 else { return false }
        return Double.random(in: 0..<1, using: &generator) < probability
    }

    /// The tree a stale read sees, `age` mutations back.
    func tree(age: Int) -> [RemotePath: SimulatedRemote.Node] {
        guard age > 0, !history.isEmpty else { return tree }
        return history[max(history.count - age, 0)]
    }
}
