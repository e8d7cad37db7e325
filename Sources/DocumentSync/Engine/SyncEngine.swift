import DocumentKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps one container (a local folder of documents) in sync with one ``Remote``, with no
/// lost update.
///
/// Each pass compares three things: the container, the remote, and the journal of how they
/// were when they last agreed (SQLite, outside the container). A side that changed is
/// propagated to the other; both changed to the same bytes is only recorded; both changed
/// differently is merged when the document is text and the changes do not overlap, and is
/// otherwise a conflict: the remote's version stays at the path and this device's becomes a
/// conflict version (`FileVersion.isConflict`) that every device shows. Nothing is decided
/// by modification time. Every local read and write is coordinated, so open documents save
/// before an upload and reload after a download; every remote write is conditional and
/// preceded by an intent row, so a crash at any point is resolved by reading the remote.
///
/// The rules it keeps for the files here:
///
/// - Nothing leaves the container. Every local write (a download and its temporary file, a
///   merge, a move, a deletion or set-aside, a folder, a placeholder, the removal of what a
///   crash left) is made through the container opened once a pass as a ``ContainedFolder``:
///   a name from a remote (or a conflict's description, or the journal) that is not one
///   component is refused before any file is touched, and no symbolic link in the container
///   is followed, so a name with "/" or "..", or a link pointing out, fails that item (named
///   in ``SyncSummary/failures``) and the pass goes on.
/// - Private stays private. A file put in place keeps the mode (and owner) of the one it
///   replaces; a new file gets the container's read and write bits less the umask, and a new
///   folder the container's bits (no group or other bits in a 0700 container); temporary
///   files are 0600 until put in place; documents set aside in
///   ``SyncConfiguration/deletedItemsFolder`` are 0600 in a 0700 folder (``PrivateFolder``).
/// - A rename is a move. A rename made on another device is applied here as a coordinated
///   move whenever the file here holds the bytes last synced (its status alone may have
///   changed): it keeps its inode and its history, and presenters hear
///   `presentedItemDidMove(to:)`. The same bytes under a new tag are recorded, never
///   downloaded again.
///
/// For example:
///
/// ```swift
/// let remote = LocalFolderRemote(root: URL(fileURLWithPath: "/mnt/share/Notes"))
/// let engine = try SyncEngine(container: documentsFolder, remote: remote)
/// let summary = try engine.sync()
/// print(summary)      // "2 uploaded, 1 downloaded"
/// ```
///
/// A pass that would delete more than half of the documents (and more than 10) on one side,
/// or that finds the container or the remote's folder gone, pauses before it changes
/// anything, naming every document it would delete (``pause``); the user answers "delete
/// them" or "keep them" (``resume(_:pause:)``), and only what was named is ever deleted.
///
/// The journal remembers the remote whole (its ``Remote/address``: the URL and every setting
/// it was given, never a secret), so that a later sync that names no remote reaches the same
/// one the same way (``rememberedRemote(ofContainer:configuration:)``). The journal starts
/// again only when the remote's display name changes, as it did before the address was kept,
/// so that a journal of an older version goes on as it was.
///
/// A container and a folder remote that are one folder, or one inside the other, however
/// either is reached (links at any level, `..` after a link, another mount of the folder),
/// are refused before anything is done (``checkSeparate(container:remote:)``): each pass
/// would copy the container into itself.
///
/// The engine is the long-lived part: the journal, the remote, the settings and the lock on
/// the container. Each pass is a ``SyncPass`` of its own, made for the pass and dropped after
/// it (scan, plan, execute, record); what conflicts are shared (``ConflictSharing``), how the
/// key-value store is synced (``KeyValueSync``) and how the status is published
/// (``StatusPublisher``) are types of their own. Time is read through
/// ``SyncConfiguration/clock``.
///
/// ``sync()-(_)`` (`try await engine.sync()`) is the API to use from Swift concurrency: the
/// passes run on a thread of their own, since every remote call and every file access blocks
/// its thread, and the concurrency pool's few threads must never be blocked. The synchronous
/// ``sync()-()`` and ``pass()`` are for command-line tools and tests.
///
/// One engine per container at a time, across processes: a second one throws
/// ``SyncError/Kind/busy``. Within a process, an engine runs one pass at a time: a second
/// call waits for the first.
public final class SyncEngine: @unchecked Sendable {
    public let container: URL
    public let remote: any Remote
    private(set) var journal: SyncJournal
    let store: VersionStore
    let configuration: SyncConfiguration
    /// Where the engine reads the time and waits (``SyncConfiguration/clock``).
    var clock: any SyncClock { configuration.clock }
    /// Held with an exclusive `flock` while the engine lives.
    let lock: FileDescriptor
    /// Held while a pass runs: one at a time, whichever thread calls.
    private let passing = NSLock()
    /// Called between the steps of every change, for the simulation's crashes: an error it
    /// throws ends the pass at once.
    package var checkpoint: (SyncStep) throws -> Void = { _ in }
    /// Told, during a pass, how many of its actions are done and how many it has, and how
    /// many bytes of its uploads and downloads have gone: for a progress bar. Called one call
    /// at a time, on the threads that run the pass's actions (several at once) or the
    /// remote's own.
    public var progress: ((SyncProgress) -> Void)?
    /// Names the conflict versions this engine shares through the remote. Random by default;
    /// the simulation counts instead, because the names order the remote calls that share
    /// conflicts, and a seed replays only if the calls come in the same order.
    package var makeIdentifier: () -> String = { UUID().uuidString }
    /// Orders the actions of each batch before they run: as planned by default; the simulation
    /// shuffles them with its seed, since a batch must come out the same in any order.
    var arrangeBatch: (inout [SyncAction]) -> Void = { _ in }
    /// How the actions of a batch run: at once on threads by default; the simulation has
    /// them take turns in an order its seed draws, so that a run replays.
    package var executionOrder = ExecutionOrder.concurrent
    /// How many uploaded files' merge bases a pass lets wait, at least, before it keeps them,
    /// a group at a time (``SyncPass/keepPendingBases()``): what a pass holds for them. The
    /// upload that fills a group keeps it while the batch's other uploads go on, so that
    /// keeping overlaps sending: at 200, a first sync of 1,000 local documents took 320-415 ms
    /// against 362-459 ms at 1,024 (all kept at the end, on one core), and 370-440 ms at 64
    /// (a pack and a flush per group).
    package var basesKeptTogether = 200
    /// The most actions of one batch a pass runs together: a larger batch (a first sync's
    /// uploads) runs a part after another, each let go of once done, so that what a pass holds
    /// of its plan shrinks as it goes. A part waits for the one before it to end, which costs
    /// the last few requests' overlap once per part.
    package var actionsHeldAtOnce = 4096
    /// Whether a pass records its uploads at the end of each batch, together, after one flush
    /// of the remote's writes (``Remote/deferDurability()``), rather than each as it is done.
    /// Set when the engine is made; the tests may set it.
    package var recordsUploadsTogether = false
    /// How many requests the passes keep in flight, adapted to the remote's answers across
    /// passes (see ``RequestWindow``).
    let requestWindow: SharedRequestWindow
    /// How many times this engine rewrote the remote's change marker: its bytes differ each
    /// time (a remote whose tags are digests of the bytes would otherwise keep its tag).
    let changesAnnounced = Atomic(0)
    /// What this engine remembers of conflicts from one pass to the next.
    let conflicts = ConflictSharing.Memory()
    /// Publishes the container's status (see ``SyncConfiguration/publishesStatus``).
    let status: StatusPublisher
    /// What opening the engine found that the first pass tells (a journal set aside).
    private var openingNotes: [String] = []

    /// Opens the journal of `container` and takes the container for this process.
    ///
    /// A journal that is corrupt is set aside and started again: the next pass rescans, and
    /// equal contents count as synced, different contents become conflicts, nothing is
    /// deleted.
    ///
    /// - Throws: ``SyncError`` when the container is not a folder, overlaps the remote's
    ///   folder, or another sync of it runs; ``SyncJournalError`` when the journal cannot be
    ///   opened.
    public init(container: URL, remote: any Remote, configuration: SyncConfiguration = SyncConfiguration())
        throws
    {
        let container = URL(fileURLWithPath: CanonicalPath.of(container), isDirectory: true)
        guard let folder = FileStatus(path: container.path), folder.isDirectory else {
            throw SyncError(.unusable, "the container \(container.path) is not a folder")
        }
        try Self.checkSeparate(container: container, remote: remote)
        self.container = container
        self.remote = remote
        self.configuration = configuration
        requestWindow = SharedRequestWindow(ceiling: remote.mostRequestsAtOnce)
        self.status = StatusPublisher(container: container, remote: remote, configuration: configuration)
        store = configuration.versionStore
        let url = SyncJournal.url(forContainer: container, stateHome: configuration.stateHome)
        try PrivateFolder.open(
            at: url.deletingLastPathComponent(), operation: "make the folder of the sync journal")
        lock = try FileDescriptor.open(
            SyncStateFiles.lock(forContainer: container, stateHome: configuration.stateHome),
            O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600,
            operation: "open the sync lock of")
        if case .failure(let error) = Syscall.flock(lock.rawValue, LOCK_EX | LOCK_NB) {
            if error == .resourceTemporarilyUnavailable {
                throw SyncError(.busy, "another sync of \(container.path) is running; this one stops")
            }
            throw SyncError(.failed, "cannot lock the sync journal \(url.path): \(error)")
        }
        SyncLockHolder(pid: getpid(), container: container.path, isAgent: false).write(
            toLockAt: lock.rawValue)
        do {
            journal = try SyncJournal(url: url)
        } catch SyncJournalError.corrupt {
            journal = try SyncJournal.reset(at: url, now: configuration.clock.now)
            openingNotes.append(
                "the sync journal \(url.path) was damaged; it was set aside and everything rescanned")
        }
        try journal.setSetting(.container, container.path)
        // A journal of another remote describes none of this one's tags: starting from it
        // would read every item as changed or deleted. Set it aside and rescan instead.
        if let previous = try journal.setting(.remoteURL), previous != remote.displayName {
            journal = try journal.reset(now: configuration.clock.now)
            try journal.setSetting(.container, container.path)
            openingNotes.append(
                "\(container.path) synced with \(previous) before; everything was rescanned against \(remote.displayName)"
            )
        }
        try journal.setSetting(.remoteURL, remote.displayName)
        if let address = remote.address { try journal.setSetting(.remoteAddress, address.encoded) }
        // A remote that can flush many writes at once does, before the journal records any:
        // the uploads of a batch are recorded together at its end (see
        // `SyncPass.recordCompletion(_:)`), after one flush.
        if remote.deferDurability() {
            journal.flushBeforeRecording { [remote] in try remote.makeWritesDurable() }
            recordsUploadsTogether = true
        }
    }

    /// Refuses a container and a remote folder that are one folder or hold one another,
    /// however either is reached (``CanonicalPath/foldersOverlap(_:_:)``: links at any level,
    /// `..` after a link, another mount of the same folder): each pass would copy the
    /// container into itself, one level deeper every time.
    ///
    /// - Throws: ``SyncError`` of kind `.unusable` naming both folders.
    public static func checkSeparate(container: URL, remote: any Remote) throws {
        // A vault's folder is the folder its encrypted remote keeps it in.
        guard let local = ((remote as? EncryptedRemote)?.inner ?? remote) as? LocalFolderRemote else {
            return
        }
        guard CanonicalPath.foldersOverlap(container.path, local.root.path) else { return }
        let (folder, root) = (CanonicalPath.resolved(container.path), CanonicalPath.resolved(local.root.path))
        let shownContainer = container.path == folder ? folder : "\(container.path) (the folder \(folder))"
        let shownRemote = remote.displayName == root ? root : "\(remote.displayName) (the folder \(root))"
        throw SyncError(
            .unusable,
            "the container \(shownContainer) and the remote folder \(shownRemote) overlap; sync needs two separate folders"
        )
    }

    /// Passes until one finds nothing to do or settles all it found, at most
    /// ``SyncConfiguration/mostPasses``, on a thread of their own: the calling task is
    /// suspended, never blocked.
    ///
    /// For example:
    ///
    /// ```swift
    /// let summary = try await engine.sync()
    /// ```
    ///
    /// - Returns: What the passes did, as ``sync()-()``.
    /// - Throws: ``SyncError`` when sync is paused or a whole pass failed.
    @discardableResult
    public func sync() async throws -> SyncSummary {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try self.sync() }) }
            thread.name = "DocumentSync pass"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Passes until one finds nothing to do or settles all it found, at most
    /// ``SyncConfiguration/mostPasses``, on the calling thread, which it blocks.
    ///
    /// Items that changed under the last pass (a listing that leaves out files that are there,
    /// a document written while it was uploaded) are named in a note saying why sync stopped
    /// with them left, never passed over in silence.
    ///
    /// - Returns: What the passes did; ``SyncSummary/failures`` lists the items the last pass
    ///   could not sync.
    /// - Throws: ``SyncError`` when sync is paused or a whole pass failed.
    @discardableResult
    public func sync() throws -> SyncSummary {
        passing.lock()
        defer { passing.unlock() }
        var total = SyncSummary()
        let passes = max(1, configuration.mostPasses)
        for _ in 0..<passes {
            let summary: SyncSummary
            do {
                summary = try runPass()
            } catch {
                if !(error is SyncInterruption) { status.failure(error, pause: try? pause) }
                throw error
            }
            total.add(summary)
            total.failures = summary.failures
            total.settling = summary.settling
            total.changedDuringPass = summary.changedDuringPass
            total.changed = summary.changed
            if summary.settling > 0 && !summary.didWork {
                // Files still being written: wait for them rather than leave them behind, as
                // long as they need and no longer (a save is uploaded a settle time after it).
                let left = summary.settledAt.map { Duration.seconds($0.timeIntervalSince(clock.now)) }
                clock.sleep(
                    for: min(
                        configuration.settleTime, max(left ?? configuration.settleTime, .milliseconds(20))))
                continue
            }
            if !summary.didWork && summary.changedDuringPass == 0 { break }
            // Nothing left that the pass saw: another would only scan both sides again (what
            // changed since is the next sync's, as it would be after that pass too).
            if summary.settledWhatItSaw { break }
        }
        if total.settling > 0 {
            total.notes.append(
                "\(total.settling) documents were still being written; the next sync takes them")
        }
        if total.changedDuringPass > 0 {
            let shown = total.changed.prefix(10).joined(separator: "; ")
            let more = total.changed.count > 10 ? "; and \(total.changed.count - 10) more" : ""
            total.notes.append(
                "sync stopped after \(passes) passes with \(total.changedDuringPass) items that changed under each; the next sync tries them again: \(shown)\(more)"
            )
        }
        return total
    }

    /// One pass (see ``SyncPass``): recover what a crash left, scan both sides, decide, act,
    /// record.
    ///
    /// - Throws: ``SyncError`` when sync is paused (or this pass pauses it), or the remote or
    ///   the container cannot be listed; nothing is changed then.
    @discardableResult
    public func pass() throws -> SyncSummary {
        passing.lock()
        defer { passing.unlock() }
        return try runPass()
    }

    private func runPass() throws -> SyncSummary {
        let notes = openingNotes
        openingNotes = []
        return try SyncPass(engine: self, notes: notes).run()
    }
}
