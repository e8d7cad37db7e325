import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A live query of the documents in one or more folders, with `NSMetadataQuery`'s API.
///
/// A query gathers the items below its ``searchScopes`` (recursively) that pass its
/// ``fileNamePattern`` and ``predicate``, posts ``didFinishGatheringNotification``, and then
/// stays live through inotify: items created, written, renamed or deleted by any process
/// are reported in ``didUpdateNotification``, each change once.
///
/// What is an item: files, symbolic links (reported, never followed) and package folders
/// (a folder whose extension ``FileTypes`` registers with `isPackage`: one item, never
/// searched inside). Plain folders are searched but are items only with
/// ``includesDirectories``. Names with a leading dot, and everything inside such folders,
/// are left out unless ``includesHiddenItems``; DocumentKit's temporary names always are.
///
/// A rename inside the scopes is a *changed* item, as on Apple platforms: the item keeps
/// its ``Item/id`` and has its new URL. A rename that takes it out of the scopes or out of
/// the filter is a removal, one into them an addition.
///
/// Where notifications go: Apple posts them on the main queue. A command-line tool on
/// Linux often runs no main run loop, so by default (``operationQueue`` nil) they are
/// posted on a private serial queue; set ``operationQueue`` to `OperationQueue.main` in an
/// app whose main run loop runs. Use a serial queue to see them in order.
///
/// For example:
///
/// ```swift
/// let query = MetadataQuery()
/// query.searchScopes = [documentsFolder]
/// query.fileNamePattern = "*.txt"
/// query.sortDescriptors = [.init(.fileName)]
/// NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidUpdate, object: query, queue: nil) { _ in
///     print(query.items.map(\.fileName))
/// }
/// guard query.start() else { throw query.lastError! }
/// for await snapshot in query.snapshots() { show(snapshot.results) }
/// ```
///
/// A scope that does not exist or is not a folder makes ``start()`` return false, with the
/// reason in ``lastError``. Configuration is read when ``start()`` is called; changes made
/// while the query runs apply from the next ``start()``, except that a new ``predicate`` or
/// new ``sortDescriptors`` start the query again at once, as Apple's do.
public final class DocumentQuery: Sendable {
    /// The query's configuration and everything its users read, under one lock.
    struct PublicState {
        var searchScopes: [Scope] = []
        var predicate: Unchecked<NSPredicate>?
        var fileNamePattern: String?
        var sortDescriptors: [Unchecked<NSSortDescriptor>] = []
        var includesHiddenItems = false
        var versionStore: VersionStore?? = .none
        var includesDirectories = false
        var notificationBatchingInterval: TimeInterval = 0.05
        var operationQueue: OperationQueue?

        var phase = Phase.idle
        var updatesDisabled = 0
        var results: [Item] = []
        var lastError: DocumentKitError?
        var engine: Engine?
        var generation = 0
        var continuations: [Int: AsyncStream<Snapshot>.Continuation] = [:]
        var nextContinuation = 0
    }

    enum Phase { case idle, gathering, live, stopped }

    let state = Mutex(PublicState())
    /// Where notifications are posted when ``operationQueue`` is nil.
    let notificationQueue = DispatchQueue(label: "DocumentKit.DocumentQuery.notifications")

    /// Creates a query with no scopes; set ``searchScopes`` before ``start()``.
    public init() {}

    /// Creates a query of `searchScopes`: folder URLs, paths, or scope constants, as
    /// ``searchScopes`` takes them.
    public convenience init(searchScopes: [Any]) {
        self.init()
        self.searchScopes = searchScopes
    }

    deinit {
        let (engine, continuations) = state.withLock { ($0.engine, $0.continuations) }
        engine?.cancel()
        for continuation in continuations.values { continuation.finish() }
    }

    // MARK: Configuration

    /// Where the query searches, recursively: folder URLs, paths (`String`), and Apple's
    /// scope constants.
    ///
    /// - `NSMetadataQueryUserHomeScope` is the user's home folder.
    /// - `NSMetadataQueryUbiquitousDocumentsScope`, `NSMetadataQueryUbiquitousDataScope` and
    ///   `NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope` name no folder yet: until
    ///   sync provides ubiquity containers, a query of them alone gathers no results, as on a
    ///   device signed out of iCloud.
    /// - `NSMetadataQueryLocalComputerScope`, `NSMetadataQueryNetworkScope` and their indexed
    ///   forms are not supported: Linux has no index of the whole computer, and a query
    ///   watches every folder it searches. ``start()`` returns false and says so in
    ///   ``lastError``, as it does for anything else that is not a file URL or a path.
    ///
    /// A scope that is a symbolic link is resolved once, when the query starts; results are
    /// under the resolved path. Unlike Apple's, an empty array searches nothing: ``start()``
    /// returns false.
    ///
    /// For example:
    ///
    /// ```swift
    /// query.searchScopes = [documentsFolder, "/srv/shared/notes", NSMetadataQueryUbiquitousDocumentsScope]
    /// ```
    public var searchScopes: [Any] {
        get { state.withLock { $0.searchScopes.map(\.value) } }
        set {
            let scopes = newValue.map(Scope.init)
            state.withLock { $0.searchScopes = scopes }
        }
    }

    /// Which items are results; nil for all.
    ///
    /// A predicate from a format string changes one word from Apple's,
    /// `NSPredicate(metadataFormat: "%K LIKE %@", NSMetadataItemFSNameKey, "*.txt")` (see
    /// `NSPredicate/init(metadataFormat:_:)`); Swift code can filter with a closure,
    /// `NSPredicate { $0.fileSize > 1024 }`. Predicates made with `NSPredicate(block:)` are
    /// given each ``Item``; compound predicates of these work too.
    ///
    /// The predicate is evaluated on the query's private queue, so a block must be safe to
    /// run there. It is kept as given (Apple's copies it; a predicate cannot change). Setting
    /// it while the query runs stops the query, discards its results and starts it again, as
    /// Apple's does.
    public var predicate: NSPredicate? {
        get { state.withLock { $0.predicate?.value } }
        set {
            let predicate = newValue.map { Unchecked(value: $0) }
            state.withLock { $0.predicate = predicate }
            restartIfRunning()
        }
    }

    /// A shell pattern that file names must match, such as `"*.txt"`, as `fnmatch(3)`
    /// matches it (case-sensitive); nil for any name. Checked before ``predicate``.
    public var fileNamePattern: String? {
        get { state.withLock { $0.fileNamePattern } }
        set { state.withLock { $0.fileNamePattern = newValue } }
    }

    /// How ``results`` are ordered, first descriptor first. Items that compare equal are
    /// ordered by path; with no descriptors, results are in path order.
    ///
    /// Descriptors by attribute change one word from Apple's,
    /// `NSSortDescriptor(metadataKey: NSMetadataItemFSNameKey, ascending: true)` (see
    /// `NSSortDescriptor/init(metadataKey:ascending:)`); Swift code can write
    /// `[.init(.modificationDate, ascending: false), .init(.fileName)]`. Descriptors made with
    /// `NSSortDescriptor(keyPath:ascending:)` over ``Item`` work too; their comparators run
    /// on the query's private queue.
    ///
    /// Setting them while the query runs stops the query, discards its results and starts
    /// it again, as Apple's does.
    public var sortDescriptors: [NSSortDescriptor] {
        get { state.withLock { $0.sortDescriptors.map(\.value) } }
        set {
            let descriptors = newValue.map { Unchecked(value: $0) }
            state.withLock { $0.sortDescriptors = descriptors }
            restartIfRunning()
        }
    }

    /// The version store whose conflict versions set items' ``Item/hasUnresolvedConflicts``:
    /// ``VersionStore/shared`` unless set; nil to leave every item's false and skip the work.
    /// Items are updated when conflicts appear or are resolved, in this process or another:
    /// a running query hears the store's news of versions of items in its scopes (see
    /// ``VersionNews``), and reads nothing of the store but its conflict summary.
    public var versionStore: VersionStore? {
        get { state.withLock { $0.versionStore } ?? VersionStore.shared }
        set { state.withLock { $0.versionStore = .some(newValue) } }
    }

    /// Whether items whose name starts with a dot, and the contents of such folders, are
    /// results. False by default. DocumentKit's temporary files never are.
    public var includesHiddenItems: Bool {
        get { state.withLock { $0.includesHiddenItems } }
        set { state.withLock { $0.includesHiddenItems = newValue } }
    }

    /// Whether plain folders are results too. False by default: folders are searched, and
    /// packages are always results.
    public var includesDirectories: Bool {
        get { state.withLock { $0.includesDirectories } }
        set { state.withLock { $0.includesDirectories = newValue } }
    }

    /// The least time between two did-update notifications, in seconds; 0.05 by default.
    ///
    /// A change that follows a quiet period is posted at once; changes that come while the
    /// interval since the last notification runs are gathered into the next one.
    public var notificationBatchingInterval: TimeInterval {
        get { state.withLock { $0.notificationBatchingInterval } }
        set { state.withLock { $0.notificationBatchingInterval = max(0, newValue) } }
    }

    /// Where notifications are posted; nil (the default) posts them on a private serial queue.
    public var operationQueue: OperationQueue? {
        get { state.withLock { $0.operationQueue } }
        set { state.withLock { $0.operationQueue = newValue } }
    }

    // MARK: State

    /// Whether the query is gathering its initial results.
    public var isGathering: Bool { state.withLock { $0.phase == .gathering } }
    /// Whether the query has started and not stopped.
    public var isStarted: Bool { state.withLock { $0.phase == .gathering || $0.phase == .live } }
    /// Whether ``stop()`` was called since the last start.
    public var isStopped: Bool { state.withLock { $0.phase == .stopped } }

    /// Why the last ``start()`` returned false, or why the query stopped being live (a scope
    /// deleted, the watch limit reached); nil otherwise.
    public var lastError: DocumentKitError? { state.withLock { $0.lastError } }

    /// The results, sorted, each an ``Item``, typed as Apple's `NSMetadataQuery.results`
    /// is (`[Any]`), so that `query.results as? [NSMetadataItem]` ports; ``items`` gives them
    /// typed. They change only when a notification is about to be posted, and not at all
    /// between ``disableUpdates()`` and ``enableUpdates()``.
    public var results: [Any] { items }

    /// The results, sorted, as ``Item``s: ``results`` typed.
    public var items: [Item] { state.withLock { $0.results } }

    /// The number of results.
    public var resultCount: Int { state.withLock { $0.results.count } }

    /// The result at `index`, an ``Item``, typed as Apple's `result(at:)` is (`Any`);
    /// ``item(at:)`` gives it typed.
    public func result(at index: Int) -> Any { item(at: index) }

    /// The result at `index`.
    public func item(at index: Int) -> Item { state.withLock { $0.results[index] } }

    /// The index in ``results`` of the item equal to `result` (the same item, perhaps as it
    /// was before it changed), or `NSNotFound`.
    public func index(ofResult result: Any) -> Int {
        guard let item = result as? Item else { return NSNotFound }
        return state.withLock { $0.results.firstIndex { $0.id == item.id } } ?? NSNotFound
    }

    /// The value of the attribute `attributeName` of the result at `index`, or nil.
    public func value(ofAttribute attributeName: String, forResultAt index: Int) -> Any? {
        item(at: index).value(forAttribute: attributeName)
    }

    /// Calls `block` with each result and its index, in order, until it sets its last
    /// argument to true.
    public func enumerateResults(_ block: (Any, Int, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerateResults(options: [], using: block)
    }

    /// Calls `block` with each result and its index, until it sets its last argument to
    /// true; `.reverse` goes from the last. The results are those of the moment of the call;
    /// `.concurrent` is accepted and the block is called in turn.
    public func enumerateResults(
        options: NSEnumerationOptions = [], using block: (Any, Int, UnsafeMutablePointer<ObjCBool>) -> Void
    ) {
        let results = items
        var stop = ObjCBool(false)
        let indices = options.contains(.reverse) ? Array(results.indices.reversed()) : Array(results.indices)
        for index in indices {
            block(results[index], index, &stop)
            if stop.boolValue { break }
        }
    }

    // MARK: Running

    /// Starts gathering results and then watching for changes.
    ///
    /// Returns false, with the reason in ``lastError``, when the query already runs, has no
    /// scopes, a scope does not exist or is not a folder, or the folders cannot be watched
    /// (inotify limits). After ``stop()``, starting again gathers afresh.
    @discardableResult
    public func start() -> Bool {
        let configuration: Engine.Configuration
        let generation: Int
        do {
            (configuration, generation) = try state.withLock { state in
                guard state.phase != .gathering && state.phase != .live else {
                    throw DocumentKitError(
                        DocumentKitError.Code.invalidArgument, operation: "start query", url: nil,
                        detail: "the query already runs"
                    )
                }
                guard !state.searchScopes.isEmpty else {
                    throw DocumentKitError(
                        DocumentKitError.Code.invalidArgument, operation: "start query", url: nil,
                        detail: "no search scopes")
                }
                state.generation += 1
                let (folders, excluded) = try Self.folders(of: state.searchScopes)
                return (
                    Engine.Configuration(
                        scopes: try folders.map(Self.resolvedScope),
                        excludedFolders: excluded.compactMap { try? Self.resolvedScope($0) },
                        predicate: state.predicate, fileNamePattern: state.fileNamePattern,
                        orderings: state.sortDescriptors.map { Ordering($0.value) },
                        includesHiddenItems: state.includesHiddenItems,
                        includesDirectories: state.includesDirectories,
                        batchingInterval: state.notificationBatchingInterval,
                        versionStore: state.versionStore ?? VersionStore.shared),
                    state.generation
                )
            }
        } catch let error as DocumentKitError {
            state.withLock { $0.lastError = error }
            return false
        } catch {
            return false
        }
        let engine: Engine
        do {
            engine = try Engine(configuration: configuration, generation: generation, query: self)
        } catch let error as DocumentKitError {
            state.withLock { $0.lastError = error }
            return false
        } catch {
            return false
        }
        let started = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.phase = .gathering
            state.results = []
            state.lastError = nil
            state.engine = engine
            return true
        }
        guard started else {
            engine.cancel()
            return false
        }
        post(Self.didStartGatheringNotification, generation: generation)
        engine.gather()
        return true
    }

    /// Stops gathering and updating. ``results`` keep what they held; no notification is
    /// posted after this returns, and ``snapshots()`` streams finish.
    public func stop() {
        let (engine, continuations) = state.withLock { state in
            defer {
                state.engine = nil
                state.continuations = [:]
                if state.phase != .idle { state.phase = .stopped }
                state.generation += 1
            }
            return (state.engine, state.continuations)
        }
        engine?.cancel()
        for continuation in continuations.values { continuation.finish() }
    }

    /// Apple's rule for a new predicate or new sort descriptors: a running query stops,
    /// drops its results and gathers again. ``snapshots()`` streams go on, and get the new
    /// gathering.
    private func restartIfRunning() {
        let engine = state.withLock { state -> Engine?? in
            guard state.phase == .gathering || state.phase == .live else { return .none }
            defer {
                state.engine = nil
                state.phase = .idle
                state.generation += 1
            }
            return .some(state.engine)
        }
        guard let engine else { return }
        engine?.cancel()
        if !start() {
            // As if stopped, with the reason in `lastError`: the streams end.
            let continuations = state.withLock { state in
                defer {
                    state.continuations = [:]
                    state.phase = .stopped
                }
                return state.continuations
            }
            for continuation in continuations.values { continuation.finish() }
        }
    }

    /// Holds ``results`` as they are, for example while iterating them. Changes are gathered
    /// and delivered in one notification by ``enableUpdates()``. Calls nest: updates resume
    /// when each has been balanced by ``enableUpdates()``.
    public func disableUpdates() {
        state.withLock { $0.updatesDisabled += 1 }
    }

    /// Lets ``results`` change again, delivering the changes made while they were held.
    public func enableUpdates() {
        let engine = state.withLock { state in
            state.updatesDisabled = max(0, state.updatesDisabled - 1)
            return state.updatesDisabled == 0 ? state.engine : nil
        }
        engine?.requestPublish()
    }

    /// The results as a sequence of snapshots: the current results first (once gathering
    /// is done), then one snapshot for each update. It finishes when the query stops.
    ///
    /// For example:
    ///
    /// ```swift
    /// for await snapshot in query.snapshots() {
    ///     list.reload(snapshot.results)
    /// }
    /// ```
    public func snapshots() -> AsyncStream<Snapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot.self)
        let key = state.withLock { state -> Int? in
            if state.phase == .live || state.phase == .stopped {
                continuation.yield(
                    Snapshot(results: state.results, added: state.results, changed: [], removed: []))
            }
            guard state.phase == .live || state.phase == .gathering || state.phase == .idle else {
                continuation.finish()
                return nil
            }
            state.nextContinuation += 1
            state.continuations[state.nextContinuation] = continuation
            return state.nextContinuation
        }
        if let key {
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.continuations.removeValue(forKey: key) }
            }
        }
        return stream
    }

    // MARK: Internals

    /// The exact path of a scope, symbolic links resolved.
    static func resolvedScope(_ url: URL) throws -> [UInt8] {
        let path = DirectoryWatcher.fileSystemPath(of: url)
        let bytes: [UInt8]
        switch Syscall.realPath(path) {
        case .success(let resolved): bytes = resolved
        case .failure(let error): throw DocumentKitError(error, operation: "start query", url: url)
        }
        let status = Syscall.withCString(bytes) { Syscall.fileStatus(AT_FDCWD, $0, followingLinks: false) }
        switch status {
        case .failure(let error): throw DocumentKitError(error, operation: "start query", url: url)
        case .success(let status) where !status.isDirectory:
            throw DocumentKitError(
                DocumentKitError.Code.wrongFileType, operation: "start query", url: url,
                detail: "the search scope is not a folder"
            )
        case .success: return bytes
        }
    }

    /// Posts a notification unless the query stopped or restarted since `generation`.
    func post(
        _ name: Notification.Name, generation: Int, added: [Item] = [], changed: [Item] = [],
        removed: [Item] = []
    ) {
        let queue = state.withLock { $0.operationQueue }
        let send: @Sendable () -> Void = { [self] in
            guard state.withLock({ $0.generation == generation }) else { return }
            var userInfo: [AnyHashable: Any]?
            if name == Self.didUpdateNotification {
                userInfo = [
                    Self.updateAddedItemsKey: added, Self.updateChangedItemsKey: changed,
                    Self.updateRemovedItemsKey: removed,
                ]
            }
            NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
        }
        if let queue {
            queue.addOperation(send)
        } else {
            notificationQueue.async(execute: send)
        }
    }
}
