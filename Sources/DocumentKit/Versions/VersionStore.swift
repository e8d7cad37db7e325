import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where versions of documents are kept: the history each save leaves behind and the
/// conflict versions of other writers, outside the user's folders.
///
/// The store lives in `applicationSupport/DocumentKit/Versions` (``defaultRoot``) and holds:
///
/// - `chunks/`: file contents cut into content-defined chunks, each stored once under its
///   SHA-256, so unchanged bytes cost nothing and a one-line edit of a big file costs a
///   chunk or two;
/// - `items/ITEM/VERSION.json`: one record per version listing its chunks;
/// - `index.N.sqlite`: where each item was last seen, the identity fallback for file systems
///   without extended attributes (``IdentityIndex``);
/// - `held/ITEM.VERSION/`: a replaced file's old contents, hard-linked with their record
///   until they are stored (``hold(itemAt:in:named:)``). A listing of an item's versions
///   stores what is held first, so a held version is never missing from a list, also when
///   a crash left it.
///
/// Every file is written with ``SafeSave``. A damaged record or index is reported once
/// (``lastRecoveryError`` and standard error) and rebuilt from what is on disk. Nothing the
/// store does can fail a document's open or save: an unwritable store means no new version,
/// reported through ``lastError``.
///
/// An item's identity is a UUID in its `user.documentkit.id` extended attribute, which safe
/// saves carry over and renames keep. Where extended attributes are not supported the
/// store's table maps the item's device and inode, then its last known path, to the UUID and
/// is updated at each save; a move within the volume followed by a save from a program that
/// does not use DocumentKit then loses the item's history.
///
/// For example:
///
/// ```swift
/// let store = VersionStore(root: folder)
/// document.versionStore = store
/// _ = await document.save(to: url, for: .forOverwriting)
/// for version in store.otherVersionsOfItem(at: url) {
///     print(version.modificationDate, version.url)
/// }
/// ```
public final class VersionStore: Sendable {
    /// The folder the store keeps everything in.
    public let root: URL
    /// The device whose user this store's "mine" means: versions it stores as this device's
    /// carry its identifier, and a conflict version is "mine" (``FileVersion/isFromThisComputer``)
    /// only when its identifier is this one.
    public var device: DeviceIdentity {
        // Read once: finding the default state folder reads the whole environment.
        knownDevice.withLock { known in
            if let known { return known }
            let current = DeviceIdentity.current
            known = current
            return current
        }
    }
    private let knownDevice: Mutex<DeviceIdentity?>
    /// `chunks/` as a path: a save checks dozens of chunks, and building a `URL` for each
    /// costs more than reading it.
    let chunksPath: String
    let now: @Sendable () -> Date
    private let settings: Mutex<ThinningPolicy>
    private let reports = Mutex(Reports())
    /// Serializes this process's use of the store; a lock file serializes processes.
    let queue = DispatchQueue(label: "DocumentKit.VersionStore")
    /// Which items have unresolved conflicts, as last read; see `hasUnresolvedConflicts(itemAt:)`.
    let conflictCache = Mutex<ConflictSummary?>(nil)
    /// The identity index this store object has open; see `usingIndex(creating:_:)`.
    let openedIndex = Mutex<IdentityIndex?>(nil)
    /// Whether the thread holding the store's lock found no index on disk: no process can
    /// make one while the lock is held, so its next lookups do not list the store's folder
    /// again (a first sync looks up every document before the first index is made). Cleared
    /// when an index is kept open and when the lock is let go.
    let indexSeenMissing = Mutex(false)
    /// The unchanging part of each item's records, by item and record file name, as last
    /// read; see `recordSummaries(ofItem:)`.
    let recordSummaryCache = Mutex<[String: [String: RecordSummary]]>([:])
    /// The last stored contents of a few items, so their next versions are cut and hashed
    /// only where they changed; used on the queue.
    let rememberedContents = Mutex(RememberedContents())
    /// Chunks whose bytes this store object compared with their names, with the status each
    /// file had then: a chunk whose file has not been touched since is not read again. See
    /// `storesChunk(_:_:comparingThrough:batch:homes:)`.
    let verifiedChunks = Mutex<[String: FileStatus]>([:])
    /// Versions captured by saves, waiting for the queue; see `storePendingCommits()`.
    let pendingCommits = Mutex<[PendingCommit]>([])
    /// Merge bases waiting for the queue; see ``keepBases(_:)``.
    let pendingBaseRequests = Mutex<[BaseRequest]>([])
    /// The store's packs as last listed; see `packCatalog()`.
    let packs = Mutex(PackCatalog())
    /// Damage found in packs and reported, so that each is reported once.
    let packDamageReported = Mutex<Set<String>>([])
    /// The thread of this process that holds the store's lock, if one does: no other writer
    /// can change the store meanwhile. A thread, not the store object: saves look items up
    /// off the queue while the queue holds the lock, and a lookup that must rebuild the index
    /// takes the lock for itself.
    let storeLockOwner = Mutex<pthread_t?>(nil)
    /// Whether the calling thread holds the store's lock.
    var holdsStoreLock: Bool {
        storeLockOwner.withLock { owner in owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
    /// Whether this store object has swept what killed processes left; see `sweepOnce()`.
    let swept = Mutex(false)
    /// How much of rebuilt versions' contents `contents/` keeps.
    let rebuiltVersionsCache = Mutex(RebuiltVersionsCache())

    /// The bound on the copies a version's ``FileVersion/url`` is rebuilt into.
    struct RebuiltVersionsCache {
        /// The most bytes kept; the least recently used go first. 64 MiB.
        var bytes: Int64 = 64 << 20
        /// Copies used this recently stay whatever the bound: a URL just handed out must
        /// still work for its reader. A minute.
        var grace: TimeInterval = 60
    }
    /// Identities this process gave or found, by path, until the index records them: it
    /// learns of them only when the version is committed, on the store's queue, and a save
    /// right after (of a file another program replaced, without the attribute) must find the
    /// same item, not make a new one. Forgotten once the index has the item, so that a new
    /// file where the item was before it moved is a new item.
    let identitiesGiven = Mutex<[String: String]>([:])

    /// Called at each step of a write (see ``StoreStep``), for tests that crash a process
    /// between two steps.
    private let stepHook = Mutex<(@Sendable (StoreStep) -> Void)?>(nil)

    /// Has `hook` called at each step of the store's writes, from the thread making them: a
    /// test's child process ends itself there to crash between two steps.
    package func onEachStep(_ hook: (@Sendable (StoreStep) -> Void)?) {
        stepHook.withLock { $0 = hook }
    }

    func reachedStep(_ step: StoreStep) {
        stepHook.withLock { $0 }?(step)
    }

    struct Reports {
        var lastError: DocumentKitError?
        var lastRecoveryError: DocumentKitError?
        var logged: Set<String> = []
    }

    /// Creates a store in `root`, made on first write.
    ///
    /// - Parameters:
    ///   - root: The store's folder.
    ///   - thinningPolicy: How history is thinned as it ages.
    ///   - device: The device the store's user is on (see ``device``); nil for
    ///     ``DeviceIdentity/current``, read when first needed.
    ///   - now: The clock that dates versions and ages them; tests pass their own.
    public init(
        root: URL, thinningPolicy: ThinningPolicy = ThinningPolicy(), device: DeviceIdentity? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.knownDevice = Mutex(device)
        self.root = root.standardizedFileURL
        self.chunksPath = self.root.appendingPathComponent("chunks", isDirectory: true).path
        self.now = now
        self.settings = Mutex(thinningPolicy)
        Self.openStores.withLock { stores in
            stores.removeAll { $0.store == nil }
            stores.append(WeakStore(store: self))
        }
    }

    /// Every store this process has made and still uses, so that news every store must hear
    /// (a coordinated move) reaches a store an app made for itself, not only ``shared``.
    static var liveStores: [VersionStore] {
        openStores.withLock { $0.compactMap(\.store) }
    }
    private struct WeakStore: @unchecked Sendable {
        // Read and written only under `openStores`' lock.
        weak var store: VersionStore?
    }
    private static let openStores = Mutex<[WeakStore]>([])

    /// `applicationSupport/DocumentKit/Versions` of ``StandardDirectories/current``.
    public static var defaultRoot: URL {
        StandardDirectories.current.applicationSupport(for: "DocumentKit")
            .appendingPathComponent("Versions", isDirectory: true)
    }

    private static let sharedStore = Mutex<VersionStore?>(nil)

    /// The store documents and ``FileVersion``'s class methods use, in ``defaultRoot`` unless
    /// the app sets another.
    public static var shared: VersionStore {
        get {
            sharedStore.withLock { stored in
                if let stored { return stored }
                let store = VersionStore(root: defaultRoot)
                stored = store
                return store
            }
        }
        set { sharedStore.withLock { $0 = newValue } }
    }

    /// How history is thinned; applied at the next version added.
    public var thinningPolicy: ThinningPolicy {
        get { settings.withLock { $0 } }
        set { settings.withLock { $0 = newValue } }
    }

    /// The last error that kept the store from recording a version, or nil.
    public var lastError: DocumentKitError? { reports.withLock { $0.lastError } }

    /// The last damage found in the store and repaired (a corrupt index or record), or nil.
    public var lastRecoveryError: DocumentKitError? { reports.withLock { $0.lastRecoveryError } }

    /// Posted on the main queue, with the store as the object and the item's URL under `"url"`,
    /// when a version is added, resolved or removed.
    public static let versionsDidChangeNotification = Notification.Name("DocumentKitVersionsDidChange")

    /// Waits until versions captured by saves so far are in the store.
    public func waitUntilIdle() {
        queue.sync {}
    }

    /// Waits as ``waitUntilIdle()`` does, but no later than `deadline`.
    ///
    /// - Returns: Whether the store became idle in time.
    func waitUntilIdle(deadline: DispatchTime) -> Bool {
        let idle = DispatchSemaphore(value: 0)
        queue.async { idle.signal() }
        return idle.wait(timeout: deadline) == .success
    }

    /// The bytes the store's files take, summed over every file under ``root``.
    public func diskUsage() -> Int64 {
        waitUntilIdle()
        return Self.bytes(under: root)
    }

    // MARK: - Folders

    var chunksURL: URL { root.appendingPathComponent("chunks", isDirectory: true) }
    var itemsURL: URL { root.appendingPathComponent("items", isDirectory: true) }
    /// Generation `generation` of the identity index; see ``IdentityIndex``.
    func indexURL(generation: Int) -> URL { root.appendingPathComponent("index.\(generation).sqlite") }
    /// The identity index of stores before ``IdentityIndex``: imported, then removed.
    var legacyIndexURL: URL { root.appendingPathComponent("index.json") }
    var incomingURL: URL { root.appendingPathComponent("incoming", isDirectory: true) }
    /// Replaced files' contents waiting to be stored: see `hold(itemAt:in:named:)`.
    var heldURL: URL { root.appendingPathComponent("held", isDirectory: true) }
    var contentsURL: URL { root.appendingPathComponent("contents", isDirectory: true) }
    var damagedURL: URL { root.appendingPathComponent("damaged", isDirectory: true) }
    var packsURL: URL { root.appendingPathComponent("packs", isDirectory: true) }

    func packURL(_ name: String) -> URL { packsURL.appendingPathComponent(name) }

    func itemFolder(_ itemID: String) -> URL { itemsURL.appendingPathComponent(itemID, isDirectory: true) }

    func recordURL(_ itemID: String, _ versionID: String) -> URL {
        itemFolder(itemID).appendingPathComponent("\(versionID).json")
    }

    func chunkPath(_ name: String) -> String {
        "\(chunksPath)/\(name.prefix(2))/\(name)"
    }

    func chunkURL(_ name: String) -> URL {
        chunksURL.appendingPathComponent(String(name.prefix(2)), isDirectory: true).appendingPathComponent(
            name)
    }

    /// Creates `url` and the parents it lacks, each private (0700) whatever the umask: the
    /// store holds old contents of documents and the paths of the user's files. Names the
    /// folder that could not be made.
    func makeFolder(_ url: URL) throws {
        var missing: [URL] = []
        var probe = url.standardizedFileURL
        while probe.path != "/", case .failure = Syscall.fstatat(AT_FDCWD, probe.path, followLinks: false) {
            missing.append(probe)
            probe.deleteLastPathComponent()
        }
        do {
            for folder in missing.reversed() {
                if case .failure(let error) = Syscall.mkdirat(AT_FDCWD, folder.path, 0o700),
                    error != .fileExists
                {
                    throw error
                }
                // Against a umask that takes the owner's bits, and for a folder another process
                // made first. The folder is usable without it, so this is reported, not thrown.
                if case .failure(let error) = Syscall.chmod(folder.path, 0o700) {
                    report(
                        DocumentKitError(
                            error, operation: "make the version store folder private", url: folder),
                        operation: "make the version store folder private")
                }
            }
        } catch {
            var errno = Errno.noSuchFileOrDirectory
            // Find the deepest existing ancestor to say why: a file in the way, no permission.
            var probe = url
            while probe.path != "/" {
                if case .success(let info) = Syscall.fstatat(AT_FDCWD, probe.path, followLinks: false) {
                    errno = info.isDirectory ? .permissionDenied : .notDirectory
                    if info.isDirectory, Syscall.isAccessible(probe.path, W_OK) {
                        errno = .readOnlyFileSystem
                    }
                    break
                }
                probe.deleteLastPathComponent()
            }
            throw DocumentKitError(
                errno, operation: "create the version store folder", url: url,
                detail: "new versions cannot be kept (\(probe.path) is in the way)")
        }
    }

    // MARK: - Locking across processes

    /// Runs `body` holding the store's lock file, so processes do not interleave their writes
    /// and a collection of unused chunks never races a version being added.
    func withStoreLock<T>(_ body: () throws -> T) throws -> T {
        try makeFolder(root)
        sweepOnce()
        let lockURL = root.appendingPathComponent("lock")
        let lock = try FileDescriptor.open(
            lockURL, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600, operation: "lock the version store")
        // Closing the descriptor releases the lock: it must live until the body is done.
        return try withExtendedLifetime(lock) {
            _ = try Syscall.flock(lock.rawValue, LOCK_EX).get("lock the version store", lockURL)
            let outer = storeLockOwner.withLock { owner in
                if let owner, pthread_equal(owner, pthread_self()) != 0 { return true }
                owner = pthread_self()
                return false
            }
            defer {
                if !outer {
                    indexSeenMissing.withLock { $0 = false }
                    storeLockOwner.withLock { $0 = nil }
                }
            }
            return try body()
        }
    }

    // MARK: - Reporting

    /// Records an error that cost a version, and logs it the first time it is seen.
    func report(_ error: any Error, operation: String) {
        let reported =
            (error as? DocumentKitError)
            ?? DocumentKitError(
                .ioFailure, operation: operation, url: root, detail: "\(error)", underlying: error)
        let first = reports.withLock { reports in
            reports.lastError = reported
            return reports.logged.insert("\(reported)").inserted
        }
        if first {
            DocumentLog.write("version store: \(reported)")
        }
    }

    /// Records damage found and repaired, and logs it.
    func reportRecovery(_ error: DocumentKitError) {
        reports.withLock { $0.lastRecoveryError = error }
        DocumentLog.write("version store repaired: \(error)")
    }
}

/// The steps of the store's writes, in the order they happen; a crash between two of them
/// must leave every version already reported kept readable and nothing half-written read.
package enum StoreStep: Sendable, Equatable, CaseIterable {
    /// New loose chunks are in `chunks/`, their folders flushed; no pack or record names them yet.
    case chunksPlaced
    /// A batch's packs and records are in place and flushed: its versions are kept. The
    /// identity index is not written yet.
    case versionsPlaced
    /// The identity index is written; history is not thinned yet.
    case indexWritten
    /// A pack holding the versions another one kept, less those removed, is in place; the
    /// one it replaces is not removed yet.
    case packReplaced
    /// Versions are removed (records and packs); unused chunks are not collected yet.
    case versionsRemoved
    /// A replaced file's contents are held in `held/` (linked, with their record), flushed;
    /// not stored yet.
    case held
    /// Held versions are stored and their holds let go.
    case heldStored
}
