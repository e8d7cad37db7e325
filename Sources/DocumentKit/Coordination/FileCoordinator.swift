import Foundation
import Synchronization

/// Coordinates reading and writing of files and folders among presenters and coordinators
/// in this process and in every other, with `NSFileCoordinator`'s API and semantics.
///
/// Readers share an item; a writer excludes readers and writers; a package folder is one
/// item; moving or deleting a folder excludes everything inside it. Before a write,
/// presenters of the item (and of the folders that contain it) in every process are asked
/// to save and relinquish it, and they are told afterwards what happened. A presenter that
/// does not answer within ``presenterTimeout`` is skipped with a warning rather than hanging
/// the writer. Locks belong to the process, so a crash blocks no one.
///
/// Coordination state lives in the private runtime folder; nothing is written beside the
/// user's files.
///
/// For example:
///
/// ```swift
/// let coordinator = FileCoordinator(filePresenter: nil)
/// try coordinator.coordinate(writingItemAt: url, options: .forReplacing) { newURL in
///     try SafeSave.write(data, to: newURL)
/// }
/// ```
public final class FileCoordinator: Sendable {
    /// Options for coordinated reading.
    public struct ReadingOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Don't ask presenters to save first: read what is on disk now.
        public static let withoutChanges = ReadingOptions(rawValue: 1 << 0)
        /// If the item is a symbolic link, coordinate and read its destination.
        public static let resolvesSymbolicLink = ReadingOptions(rawValue: 1 << 1)
        /// Only metadata (size, dates) is read: presenters are not asked to save.
        public static let immediatelyAvailableMetadataOnly = ReadingOptions(rawValue: 1 << 2)
        /// The accessor gets a private copy of the item, valid during the accessor, to
        /// upload or copy without holding up writers afterwards.
        public static let forUploading = ReadingOptions(rawValue: 1 << 3)
    }

    /// Options for coordinated writing.
    public struct WritingOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The item will be deleted: presenters accommodate the deletion, and a folder's
        /// contents are excluded too.
        public static let forDeleting = WritingOptions(rawValue: 1 << 0)
        /// The item will be moved: a folder's contents are excluded too, and presenters
        /// follow the item to where ``FileCoordinator/item(at:didMoveTo:)`` says it went.
        public static let forMoving = WritingOptions(rawValue: 1 << 1)
        /// The writer reads the item and merges: presenters save first.
        public static let forMerging = WritingOptions(rawValue: 1 << 2)
        /// The item will be replaced whole, as a safe save does. Presenters save first —
        /// unlike Apple, which treats this as a deletion, so that an open document is
        /// never closed by another writer's safe save and nothing unsaved is lost.
        public static let forReplacing = WritingOptions(rawValue: 1 << 3)
        /// Only metadata that does not depend on the contents changes: presenters are not
        /// asked to save.
        public static let contentIndependentMetadataOnly = WritingOptions(rawValue: 1 << 4)
    }

    /// The presenter this coordinator acts for: it is never messaged about this
    /// coordinator's own accesses.
    public var filePresenter: (any FilePresenter)? { givenPresenter?.presenter }
    private let givenPresenter: PresenterReference?
    /// The registered presenter this coordinator's accesses leave out: the given one, or the
    /// one it stands in for (an `NSDocument`'s machinery).
    private let ownPresenter: PresenterReference?

    /// How long a presenter may take to answer before the access goes on without it.
    public static var presenterTimeout: Duration {
        get { timeoutSetting.withLock { $0 } }
        set { timeoutSetting.withLock { $0 = newValue } }
    }
    private static let timeoutSetting = Mutex<Duration>(.seconds(3))

    private let cancelled = Atomic<Bool>(false)
    /// Accesses this coordinator holds now, so that a nested access to the same item from
    /// inside an accessor never waits for itself.
    private let held = Mutex<[String: CoordinationLock.Mode]>([:])
    private let moves = Mutex<[String: String]>([:])

    /// Creates a coordinator acting for `filePresenter`, or for no presenter.
    public init(filePresenter: (any FilePresenter)? = nil) {
        givenPresenter = filePresenter.map(PresenterReference.init)
        ownPresenter = filePresenter.map {
            PresenterReference(($0 as? any PresenterStandIn)?.presenterStoodInFor ?? $0)
        }
    }

    /// A string naming what this coordinator's accesses are for, as Apple's is: coordinators
    /// with the same one do not block each other there. Here it is kept and read back only:
    /// every coordinator excludes the others, so setting it changes nothing.
    public var purposeIdentifier: String {
        get { purpose.withLock { $0 } }
        set { purpose.withLock { $0 = newValue } }
    }
    private let purpose = Mutex(UUID().uuidString)

    // MARK: - Presenters

    /// Registers a presenter: from now on coordinated accesses in every process, and writes
    /// by programs that do not coordinate, reach it.
    public static func addFilePresenter(_ filePresenter: any FilePresenter) {
        PresenterRegistry.shared.add(filePresenter)
    }

    /// Unregisters a presenter.
    public static func removeFilePresenter(_ filePresenter: any FilePresenter) {
        PresenterRegistry.shared.remove(filePresenter)
    }

    /// The presenters registered in this process.
    public static var filePresenters: [any FilePresenter] {
        PresenterRegistry.shared.presenters
    }

    // MARK: - Coordinated access

    /// Reads an item once presenters have saved, excluding writers meanwhile.
    ///
    /// - Parameters:
    ///   - url: The item to read.
    ///   - options: How to read.
    ///   - reader: Reads the item at the URL it is given.
    /// - Returns: What `reader` returns.
    /// - Throws: ``DocumentKitError`` if coordination fails or is cancelled, or what `reader` throws.
    public func coordinate<Result>(
        readingItemAt url: URL, options: ReadingOptions = [], byAccessor reader: (URL) throws -> Result
    ) throws -> Result {
        let target = options.contains(.resolvesSymbolicLink) ? url.resolvingSymlinksInPath() : url
        let access = Access(url: target, event: .read, options: options.rawValue)
        return try perform([access]) { urls in
            if options.contains(.forUploading) {
                return try withUploadCopy(of: urls[0]) { try reader($0) }
            }
            return try reader(urls[0])
        }
    }

    /// Writes an item once presenters have saved and relinquished it, excluding readers and
    /// writers meanwhile; presenters hear afterwards what changed.
    ///
    /// - Throws: ``DocumentKitError`` if coordination fails or is cancelled, or what `writer` throws.
    public func coordinate<Result>(
        writingItemAt url: URL, options: WritingOptions = [], byAccessor writer: (URL) throws -> Result
    ) throws -> Result {
        try perform([Access(url: url, event: .write, options: options.rawValue)]) { try writer($0[0]) }
    }

    /// Reads one item and writes another in one coordinated access, such as a copy.
    public func coordinate<Result>(
        readingItemAt readingURL: URL, options readingOptions: ReadingOptions = [],
        writingItemAt writingURL: URL, options writingOptions: WritingOptions = [],
        byAccessor readerWriter: (URL, URL) throws -> Result
    ) throws -> Result {
        let accesses = [
            Access(url: readingURL, event: .read, options: readingOptions.rawValue),
            Access(url: writingURL, event: .write, options: writingOptions.rawValue),
        ]
        return try perform(accesses) { try readerWriter($0[0], $0[1]) }
    }

    /// Writes two items in one coordinated access, such as a move from one to the other.
    public func coordinate<Result>(
        writingItemAt url1: URL, options options1: WritingOptions = [],
        writingItemAt url2: URL, options options2: WritingOptions = [],
        byAccessor writer: (URL, URL) throws -> Result
    ) throws -> Result {
        let accesses = [
            Access(url: url1, event: .write, options: options1.rawValue),
            Access(url: url2, event: .write, options: options2.rawValue),
        ]
        return try perform(accesses) { try writer($0[0], $0[1]) }
    }

    /// Coordinates the accesses `intents` describe, then runs `accessor` on `queue` with
    /// nil, or with the error that stopped coordination.
    public func coordinate(
        with intents: [FileAccessIntent], queue: OperationQueue,
        byAccessor accessor: @escaping @Sendable ((any Error)?) -> Void
    ) {
        DispatchQueue.global().async { [self] in
            let accesses = intents.map(\.access)
            let finished = DispatchSemaphore(value: 0)
            do {
                try perform(accesses) { urls in
                    for (intent, url) in zip(intents, urls) where url != intent.url { intent.moved(to: url) }
                    queue.addOperation {
                        accessor(nil)
                        finished.signal()
                    }
                    finished.wait()
                }
            } catch {
                queue.addOperation { accessor(error) }
            }
        }
    }

    /// Coordinates the accesses `intents` describe and runs `accessor` within them, off the
    /// calling task's executor so a blocked lock never stalls the cooperative pool.
    ///
    /// - Returns: What `accessor` returns.
    public func coordinate<Result: Sendable>(
        with intents: [FileAccessIntent], byAccessor accessor: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { [self] in
                continuation.resume(
                    with: Swift.Result {
                        try perform(intents.map(\.access)) { urls in
                            for (intent, url) in zip(intents, urls) where url != intent.url {
                                intent.moved(to: url)
                            }
                            return try accessor()
                        }
                    })
            }
        }
    }

    /// Tells presenters, from inside a `.forMoving` accessor, that the item at `oldURL` is
    /// about to move to `newURL`.
    public func item(at oldURL: URL, willMoveTo newURL: URL) {}

    /// Tells presenters, from inside a `.forMoving` accessor, that the item at `oldURL` moved
    /// to `newURL`; they follow it when the access ends.
    public func item(at oldURL: URL, didMoveTo newURL: URL) {
        let (old, new) = (CanonicalPath.of(oldURL), CanonicalPath.of(newURL))
        moves.withLock { $0[old] = new }
        // Accesses waiting for this one's locks, in any process, follow the item.
        MoveJournal.shared?.record(from: old, to: new)
        // So does its history.
        VersionStore.itemDidMoveInEveryStore(from: oldURL, to: newURL)
    }

    /// Cancels the coordinated accesses this coordinator is waiting for; they throw
    /// `CancellationError`. An accessor already running is not interrupted.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    // MARK: - The protocol

    struct Access: Sendable {
        var url: URL
        var event: AccessEvent.Kind
        var options: UInt

        var lockMode: CoordinationLock.Mode {
            guard event == .write else { return .read }
            let writing = WritingOptions(rawValue: options)
            return writing.contains(.forDeleting) || writing.contains(.forMoving) ? .writeSubtree : .write
        }
    }

    /// Asks presenters, takes the locks, runs `body`, releases the locks and tells presenters.
    ///
    /// If an item, or a folder above it, moved while the access waited for its locks, the
    /// access starts again at the new location and `body` is given it: at most twice, so
    /// an item moved on and on is at last read where the caller said.
    func perform<Result>(_ accesses: [Access], _ body: ([URL]) throws -> Result) throws -> Result {
        var accesses = accesses
        var retargets = 0
        while true {
            do {
                return try performOnce(accesses, mayRetarget: retargets < 2, body)
            } catch let moved as Retarget {
                accesses = moved.accesses
                retargets += 1
            }
        }
    }

    /// The items of an access moved while it waited; it starts again with `accesses`.
    private struct Retarget: Error {
        var accesses: [Access]
    }

    private func performOnce<Result>(
        _ accesses: [Access], mayRetarget: Bool, _ body: ([URL]) throws -> Result
    ) throws -> Result {
        if cancelled.load(ordering: .acquiring) { throw CancellationError() }
        let paths = accesses.map { CanonicalPath.of($0.url) }
        var events = zip(accesses, paths).map { access, path in
            AccessEvent(kind: access.event, path: path, options: access.options, itemExisted: false)
        }
        // Nested accesses to items this coordinator already holds strongly enough are granted
        // at once: a coordinator never waits for itself, nor messages its presenters twice.
        let alreadyHeld = held.withLock { held in
            zip(accesses, paths).allSatisfy { access, path in Self.covers(held, path, access.lockMode) }
        }
        if alreadyHeld { return try body(accesses.map(\.url)) }
        if let own = ownPresenter?.presenter {
            PresenterRegistry.shared.beginOwnAccess(of: own)
        }
        defer {
            if let own = ownPresenter?.presenter { PresenterRegistry.shared.endOwnAccess(of: own) }
        }

        let timeout = Self.presenterTimeout
        let others = PresenterIndex.otherProcesses()
        let remoteProcesses = events.map {
            others.processes(relatedTo: $0.path, includingDescendants: $0.affectsDescendants)
        }
        // Whether an item existed only matters to presenters of it or near it (an appearing
        // subitem is not a changed one), so the stat is skipped when there are none.
        for index in events.indices
        where !remoteProcesses[index].isEmpty
            || PresenterRegistry.shared.hasPresenters(
                relatedTo: events[index].path, includingDescendants: events[index].affectsDescendants)
        {
            events[index].itemExisted = FileStatus(path: events[index].path) != nil
        }
        let sessions = events.map {
            LocalPresenterSession(event: $0, excluding: ownPresenter?.presenter, timeout: timeout)
        }
        let remote = events.indices.map {
            RemotePresenters.shared.prepare(events[$0], processes: remoteProcesses[$0], timeout: timeout)
        }
        for session in sessions { session.prepare() }
        // inotify will see these writes too; the sessions report them, once.
        for event in events where event.kind == .write { PendingWrites.shared.begin(event.path) }
        defer {
            let moved = moves.withLock { moves in
                defer { moves = [:] }
                return moves
            }
            for (index, session) in sessions.enumerated() {
                let event = events[index]
                let destination = moved[event.path]
                // Whether the item is still there is news only to presenters that were asked;
                // with none, nobody reads it and the stat is skipped.
                let told = !session.isEmpty || !remote[index].processes.isEmpty
                let outcome = AccessOutcome(
                    movedTo: destination,
                    itemExists: told && FileStatus(path: destination ?? event.path) != nil)
                session.finish(outcome)
                remote[index].finish(outcome)
                if event.kind == .write, let own = ownPresenter?.presenter {
                    // Never messaged about its own access, but it must not hear of it from inotify either.
                    if let destination {
                        PresenterRegistry.shared.updatePath(of: own, to: destination)
                    } else {
                        PresenterRegistry.shared.noteKnownState(of: own, FileStatus(path: event.path))
                    }
                }
            }
            for event in events where event.kind == .write { PendingWrites.shared.end(event.path) }
        }

        // Only what this coordinator does not hold already: its own locks would exclude it.
        let requests = held.withLock { held in
            CoordinationLock.merged(
                zip(accesses, paths).map { CoordinationLock(path: $1, mode: $0.lockMode) },
                pathsAreCanonical: true
            )
            .filter { !Self.covers(held, $0.path, $0.mode) }
        }
        // Where the move journal ended when this access first had to wait: moves recorded
        // after that happened while it waited. An access that never waits reads nothing.
        var journalOffset: off_t?
        let manager: LockManager
        do {
            manager = try LockManager.shared()
        } catch let error as DocumentKitError where requests.allSatisfy({ $0.mode == .read }) {
            // With no private runtime folder, no process of this user can take locks. A read
            // then goes ahead as any program that does not coordinate reads, rather than
            // failing; a write still fails, since it could undo another writer's change.
            UncoordinatedReads.warnOnce(error)
            return try body(accesses.map(\.url))
        }
        let locks = try manager.acquire(requests, pathsAreCanonical: true) {
            if journalOffset == nil { journalOffset = MoveJournal.shared?.end ?? -1 }
            return self.cancelled.load(ordering: .acquiring)
        }
        if mayRetarget, let offset = journalOffset, offset >= 0, let journal = MoveJournal.shared {
            let moves = journal.moves(since: offset)
            let moved = zip(accesses, paths).map { access, path in
                let location = MoveJournal.location(of: path, after: moves)
                guard location != path else { return access }
                var moved = access
                moved.url = URL(fileURLWithPath: location, isDirectory: access.url.hasDirectoryPath)
                return moved
            }
            if moved.map(\.url) != accesses.map(\.url) {
                locks.release()
                throw Retarget(accesses: moved)
            }
        }
        let added = held.withLock { held in
            requests.filter { request in
                defer { held[request.path] = max(held[request.path] ?? .read, request.mode) }
                return held[request.path] == nil
            }
        }
        defer {
            held.withLock { held in for request in added { held.removeValue(forKey: request.path) } }
            locks.release()
        }
        return try body(accesses.map(\.url))
    }

    /// Whether locks this coordinator holds grant `mode` on `path`: its own lock on the item,
    /// as strong or stronger, or a move or deletion of a folder that contains it.
    private static func covers(
        _ held: [String: CoordinationLock.Mode], _ path: String, _ mode: CoordinationLock.Mode
    )
        -> Bool
    {
        if let own = held[path], own >= mode { return true }
        return held.contains { $0.value == .writeSubtree && CanonicalPath.isAncestor($0.key, of: path) }
    }

    private func withUploadCopy<Result>(of url: URL, _ body: (URL) throws -> Result) throws -> Result {
        let folder = StandardDirectories.current.caches
            .appendingPathComponent("DocumentKit/Uploading/\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(url.lastPathComponent)
        do {
            try FileManager.default.copyItem(at: url, to: copy)
        } catch {
            throw DocumentKitError(.ioFailure, operation: "copy for uploading", url: url, detail: "\(error)")
        }
        return try body(copy)
    }
}

/// Says once per process that reads go on without coordination, and why.
enum UncoordinatedReads {
    private static let warned = OnceFlag()

    static func warnOnce(_ error: DocumentKitError) {
        guard warned.claim() else { return }
        CoordinationLog.warning(
            "reading without file coordination (reads do not wait for writers; coordinated writes fail): \(error); set XDG_RUNTIME_DIR to a private folder of yours"
        )
    }
}

/// One item a ``FileCoordinator/coordinate(with:queue:byAccessor:)`` call accesses
/// (`NSFileAccessIntent`).
///
/// Like Apple's, it is an object whose ``url`` is updated when the item moves while the
/// access waits: the accessor reads ``url`` to find the item.
public final class FileAccessIntent: Sendable {
    let access: FileCoordinator.Access
    private let location: Mutex<URL>

    private init(_ access: FileCoordinator.Access) {
        self.access = access
        location = Mutex(access.url)
    }

    /// The item, as the accessor should use it.
    public var url: URL { location.withLock { $0 } }

    func moved(to url: URL) { location.withLock { $0 = url } }

    /// An intent to read the item at `url`.
    public static func readingIntent(with url: URL, options: FileCoordinator.ReadingOptions = [])
        -> FileAccessIntent
    {
        FileAccessIntent(.init(url: url, event: .read, options: options.rawValue))
    }

    /// An intent to write the item at `url`.
    public static func writingIntent(with url: URL, options: FileCoordinator.WritingOptions = [])
        -> FileAccessIntent
    {
        FileAccessIntent(.init(url: url, event: .write, options: options.rawValue))
    }
}
