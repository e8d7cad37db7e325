import DocumentKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a ``SyncEngine`` keeps its journal, its versions and its pace.
public struct SyncConfiguration: Sendable {
    /// Where journals are kept: `$XDG_STATE_HOME` (by default `~/.local/state`) when nil.
    public var stateHome: URL?
    /// Where replaced, deleted and conflicting contents go, and the merge bases.
    public var versionStore: VersionStore
    /// A file modified more recently than this is left for a later pass: a program that
    /// does not coordinate may still be writing it.
    public var settleTime: Duration
    /// The name conflict versions made here carry to other devices, for people. Whose a
    /// conflict version is ("mine" or "theirs") is told by ``versionStore``'s device identity,
    /// which each shared conflict carries too: another device may have the same name.
    public var computerName: String
    /// The most passes ``SyncEngine/sync()`` makes before it returns.
    public var mostPasses: Int
    /// Where documents the remote deleted are moved, when set (an app's Deleted folder);
    /// they are kept in ``versionStore`` either way.
    public var deletedItemsFolder: URL?
    /// The ubiquitous key-value store synced with the container's, when set: the file an
    /// ``UbiquitousKeyValueStore`` keeps (see ``SyncConfiguration/ubiquityContainer(_:)``).
    public var keyValueStore: URL?
    /// This device's name among the key-value stores on the remote: by default the
    /// identifier of its ``DeviceIdentity`` kept in the state folder, made once.
    public var deviceIdentifier: String
    /// Whether the engine publishes the container's status (``UbiquityStatus``) for other
    /// processes, as a sync agent does: at the start and end of every pass, and as
    /// transfers go.
    public var publishesStatus = false
    /// Whether documents new from the remote stay on the server, with a placeholder
    /// (`.NAME.icloud`) here, until an app asks for them (`startDownloadingUbiquitousItem`,
    /// or opening the document); false downloads every document at once.
    public var downloadsOnDemand = false

    public init(
        stateHome: URL? = nil, versionStore: VersionStore = .shared, settleTime: Duration = .seconds(1),
        computerName: String = ProcessInfo.processInfo.hostName, mostPasses: Int = 8,
        deletedItemsFolder: URL? = nil, keyValueStore: URL? = nil, deviceIdentifier: String? = nil
    ) {
        self.deletedItemsFolder = deletedItemsFolder
        self.keyValueStore = keyValueStore
        self.deviceIdentifier = deviceIdentifier ?? DeviceIdentity.kept(inStateFolder: stateHome).identifier
        self.stateHome = stateHome
        self.versionStore = versionStore
        self.settleTime = settleTime
        self.computerName = computerName
        self.mostPasses = mostPasses
    }
}

extension SyncConfiguration {
    /// The settings for the ubiquity container `container`: its key-value store synced with
    /// the container, documents downloaded at once or on demand as it says, and the rest as
    /// given.
    public static func ubiquityContainer(
        _ container: UbiquityContainer, stateHome: URL? = nil, deletedItemsFolder: URL? = nil
    ) -> SyncConfiguration {
        var settings = SyncConfiguration(
            stateHome: stateHome, deletedItemsFolder: deletedItemsFolder,
            keyValueStore: SyncStateFiles.keyValueStore(forContainer: container.url, stateHome: stateHome))
        settings.downloadsOnDemand = !container.downloadsEagerly
        return settings
    }
}

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
/// One engine per container at a time, across processes: a second one throws
/// ``SyncError/Kind/busy``. Use an engine from one thread.
public final class SyncEngine {
    public let container: URL
    public let remote: any Remote
    private(set) var journal: SyncJournal
    let store: VersionStore
    let configuration: SyncConfiguration
    /// Held with an exclusive `flock` while the engine lives.
    private let lock: FileDescriptor
    /// Called between the steps of every change, for the simulation's crashes: an error it
    /// throws ends the pass at once.
    package var checkpoint: (SyncStep) throws -> Void = { _ in }
    /// Told, during a pass, how many of its actions are done and how many it has, and how
    /// many bytes of its uploads and downloads have gone: for a progress bar. Called on the
    /// engine's thread, but for the bytes of a large upload, which the remote may read on
    /// its own.
    public var progress: ((SyncProgress) -> Void)?
    /// Where the pass's progress stands; guarded, since a remote may read an upload's
    /// bytes on a thread of its own.
    let progressState = Mutex(SyncProgress())
    /// Names the conflict versions this engine shares through the remote. Random by default;
    /// the simulation counts instead, because the names order the remote calls that share
    /// conflicts, and a seed replays only if the calls come in the same order.
    package var makeIdentifier: () -> String = { UUID().uuidString }
    /// What the pass under way did.
    var summary = SyncSummary()
    /// Folders known to exist on the remote during this pass.
    var remoteFolders: Set<RemotePath> = []
    /// Files this pass downloaded or moved into place here: where a conflicted document that
    /// moved elsewhere may now be.
    var arrived: Set<RemotePath> = []
    /// Files this pass uploaded whose merge base is kept at the end of the pass, together
    /// (see `keepPendingBases()`), with the hash and status they were uploaded at.
    var pendingBases: [(path: RemotePath, hash: String, status: FileStatus)] = []
    /// The conflicts whose document this engine looked for among every file here, once
    /// each (see `shareConflicts(newFiles:allFiles:)`).
    var conflictsSearched: Set<String> = []
    /// The status this engine publishes (see ``SyncConfiguration/publishesStatus``); guarded,
    /// since a remote may report an upload's bytes on a thread of its own.
    let publication: Mutex<StatusPublication>
    /// The documents kept on the server only that this pass found placeholders of.
    var placeholders: Set<RemotePath> = []
    /// How the last listing of the remote failed, if it did: whether the remote is offline.
    var lastListingFailure: RemoteError?
    /// The container, opened once a pass (see ``containerFolder()``).
    private var openedContainer: ContainedFolder?

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
        guard let status = FileStatus(path: container.path), status.isDirectory else {
            throw SyncError(.unusable, "the container \(container.path) is not a folder")
        }
        try Self.checkSeparate(container: container, remote: remote)
        self.container = container
        self.remote = remote
        self.configuration = configuration
        publication = Mutex(
            StatusPublication(
                status: UbiquityStatus.read(
                    SyncStateFiles.status(forContainer: container, stateHome: configuration.stateHome))
                    ?? UbiquityStatus(state: .syncing, remote: remote.displayName)))
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
        do {
            journal = try SyncJournal(url: url)
        } catch SyncJournalError.corrupt {
            journal = try SyncJournal.reset(at: url)
            summary.notes.append(
                "the sync journal \(url.path) was damaged; it was set aside and everything rescanned")
        }
        try journal.setSetting(.container, container.path)
        // A journal of another remote describes none of this one's tags: starting from it
        // would read every item as changed or deleted. Set it aside and rescan instead.
        if let previous = try journal.setting(.remoteURL), previous != remote.displayName {
            journal = try journal.reset()
            try journal.setSetting(.container, container.path)
            summary.notes.append(
                "\(container.path) synced with \(previous) before; everything was rescanned against \(remote.displayName)"
            )
        }
        try journal.setSetting(.remoteURL, remote.displayName)
        if let address = remote.address { try journal.setSetting(.remoteAddress, address.encoded) }
    }

    /// Refuses a container and a remote folder that are one folder or hold one another,
    /// however either is reached (``CanonicalPath/foldersOverlap(_:_:)``: links at any level,
    /// `..` after a link, another mount of the same folder): each pass would copy the
    /// container into itself, one level deeper every time.
    ///
    /// - Throws: ``SyncError`` of kind `.unusable` naming both folders.
    public static func checkSeparate(container: URL, remote: any Remote) throws {
        guard let local = remote as? LocalFolderRemote else { return }
        guard CanonicalPath.foldersOverlap(container.path, local.root.path) else { return }
        let (folder, root) = (CanonicalPath.resolved(container.path), CanonicalPath.resolved(local.root.path))
        let shownContainer = container.path == folder ? folder : "\(container.path) (the folder \(folder))"
        let shownRemote = remote.displayName == root ? root : "\(remote.displayName) (the folder \(root))"
        throw SyncError(
            .unusable,
            "the container \(shownContainer) and the remote folder \(shownRemote) overlap; sync needs two separate folders"
        )
    }

    /// Passes until one finds nothing to do, at most ``SyncConfiguration/mostPasses``.
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
        var total = SyncSummary()
        let passes = max(1, configuration.mostPasses)
        for _ in 0..<passes {
            let summary: SyncSummary
            do {
                summary = try pass()
            } catch {
                if !(error is SyncInterruption) { publishFailure(error) }
                throw error
            }
            total.add(summary)
            total.failures = summary.failures
            total.settling = summary.settling
            total.changedDuringPass = summary.changedDuringPass
            total.changed = summary.changed
            if summary.settling > 0 && !summary.didWork {
                // Files still being written: wait for them rather than leave them behind.
                Thread.sleep(forTimeInterval: configuration.settleTime.seconds)
                continue
            }
            if !summary.didWork && summary.changedDuringPass == 0 { break }
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

    /// Both sides of a container as they are, and what a pass would do about them.
    struct SyncScan {
        var local: [RemotePath: LocalEntry]
        var remote: [RemotePath: RemoteEntry]
        var plan: SyncPlan
        /// The items here sync leaves alone, and why.
        var notes: [String]
        /// The documents kept on the server only, which placeholders stand for here.
        var placeholders: Set<RemotePath>
    }

    /// Lists the container and the remote and plans a pass: the one scan that a pass acts on
    /// and that ``status(ofContainer:remote:configuration:)`` reports.
    ///
    /// - Parameter leftovers: Called with each temporary file a crash left in the container.
    /// - Throws: `RemoteError` when the remote cannot be listed.
    static func scan(
        _ container: URL, known: [RemotePath: JournalItem], remote: any Remote,
        configuration: SyncConfiguration, leftovers: ((URL) -> Void)? = nil
    ) throws -> SyncScan {
        var notes: [String] = []
        var placeholders: Set<RemotePath> = []
        let local = try SyncTrees.local(
            container, expected: known.count, leftovers: leftovers, placeholders: { placeholders.insert($0) }
        ) { url, reason in
            notes.append("\(RemotePath.escaped(url.path)): not synced: \(reason)")
        }
        let requested = UbiquityDownloadRequests(forContainer: container, stateHome: configuration.stateHome)
            .load().map(RemotePath.init)
        let remoteTree = try SyncTrees.remote(remote, expected: known.count)
        var hashes: [RemotePath: String] = [:]
        let plan = try SyncPlanner(
            journal: known, local: local, remote: remoteTree,
            hash: { path in
                if let hash = hashes[path] { return hash }
                let hash = try ContentHash(contentsOf: container.appendingPathComponent(path.string)).hex
                hashes[path] = hash
                return hash
            }, placeholders: placeholders, requested: Set(requested),
            downloadsOnDemand: configuration.downloadsOnDemand,
            placeholderOrigin: { path in
                UbiquityPlaceholder(
                    contentsOf: UbiquityPlaceholder.placeholderURL(
                        for: container.appendingPathComponent(path.string))
                )?.path
            }
        ).plan()
        return SyncScan(
            local: local, remote: remoteTree, plan: plan, notes: notes, placeholders: placeholders)
    }

    /// One pass: recover what a crash left, scan both sides, decide, act.
    ///
    /// - Throws: ``SyncError`` when sync is paused (or this pass pauses it), or the remote or
    ///   the container cannot be listed; nothing is changed then.
    @discardableResult
    public func pass() throws -> SyncSummary {
        defer {
            (summary, arrived, pendingBases, placeholders) = (SyncSummary(), [], [], [])
            openedContainer = nil
        }
        openedContainer = nil
        try checkPause()
        try resolvePendingIntents()
        var (known, scanned) = try scanBothSides()
        // An upload that got no answer can land between its lookup above and the listing:
        // settled now, its bytes are known as ours, and the pass plans again with them.
        if try resolveLandedUploads(in: scanned.remote) {
            (known, scanned) = try scanBothSides()
        }
        // One there that cannot be read now keeps its path out of this pass: what is there may
        // be our own bytes, and taking them for another device's would bring back a file
        // deleted here.
        var plan = scanned.plan
        let awaiting = try uploadsAwaitingOutcome().filter { scanned.remote[$0] != nil }
        if !awaiting.isEmpty {
            plan.actions.removeAll { awaiting.contains($0.path) }
            plan.notes += awaiting.sorted().map { "\($0): waiting to learn whether an earlier upload landed" }
        }
        let (local, remoteTree) = (scanned.local, scanned.remote)
        placeholders = scanned.placeholders
        remoteFolders = [.root]
        for (path, entry) in remoteTree where entry.kind == .folder { remoteFolders.insert(path) }
        try guardAgainstMassDeletion(plan, known: known)
        summary.notes += scanned.notes + plan.notes
        var byteTotal: Int64 = 0
        for action in plan.actions {
            switch action {
            case .upload(let path, _, _): byteTotal += local[path]?.status.size ?? 0
            case .download(_, let entry, _), .reconcile(_, let entry): byteTotal += entry.size
            default: break
            }
        }
        progressState.withLock { $0 = SyncProgress(total: plan.actions.count, byteTotal: byteTotal) }
        publishPlan(plan)
        for (index, action) in plan.actions.enumerated() {
            reportProgress { $0.done = index }
            defer { if index == plan.actions.count - 1 { reportProgress { $0.done = plan.actions.count } } }
            switch action {
            case .upload(let path, _, _): publishStart(of: action, size: local[path]?.status.size ?? 0)
            case .download(_, let entry, _), .reconcile(_, let entry):
                publishStart(of: action, size: entry.size)
            default: break
            }
            do {
                try perform(action, local: local, known: known, remoteTree: remoteTree)
                publishEnd(of: action, error: nil)
            } catch let interruption as SyncInterruption {
                throw interruption
            } catch let skipped as SkippedItem where skipped.isSettling {
                summary.settling += 1
                publishEnd(of: action, error: nil)
            } catch let skipped as SkippedItem {
                summary.changedDuringPass += 1
                summary.changed.append("\(RemotePath.escaped(action.path.description)): \(skipped.reason)")
                publishEnd(of: action, error: nil)
            } catch {
                summary.failures.append("\(action.path): \(error)")
                publishEnd(of: action, error: error)
            }
        }
        do {
            try keepPendingBases()
        } catch let interruption as SyncInterruption {
            throw interruption
        } catch {
            summary.failures.append("merge bases: \(error)")
        }
        do {
            try shareConflicts(
                newFiles: plan.newLocalFiles.sorted(),
                allFiles: { local.filter { $0.value.kind == .file }.keys.sorted() })
        } catch let interruption as SyncInterruption {
            throw interruption
        } catch {
            summary.failures.append("conflict versions: \(error)")
        }
        do {
            try syncKeyValues()
        } catch let interruption as SyncInterruption {
            throw interruption
        } catch {
            summary.failures.append("key-value store: \(error)")
        }
        settleDownloadRequests(remoteTree: remoteTree)
        publishEnd(of: summary)
        return summary
    }

    /// Reads the journal and scans the container and the remote, planning the pass.
    private func scanBothSides() throws -> (known: [RemotePath: JournalItem], scan: SyncScan) {
        let known = try journal.itemsByPath()
        guard FileStatus(path: container.path)?.isDirectory == true else {
            throw try pauseForVanishedRoot(.containerGone, known: known)
        }
        do {
            // What a crash left of downloads and merges: the intents that named them are settled.
            let scanned = try Self.scan(container, known: known, remote: remote, configuration: configuration)
            { leftover in
                let operation = "remove what a crash left"
                guard let folder = try? self.containerFolder(),
                    let components = try? folder.components(of: leftover, operation: operation)
                else { return }
                try? folder.removeItem(components, operation: operation)
            }
            lastListingFailure = nil
            return (known, scanned)
        } catch let error as RemoteError where error.kind == .notFound && error.path.isRoot && !known.isEmpty
        {
            throw try pauseForVanishedRoot(.remoteGone, known: known)
        } catch let error as RemoteError {
            lastListingFailure = error
            throw SyncError(.failed, "cannot list \(remote.displayName): \(error); nothing was changed")
        }
    }

    /// The container URL of `path`, for reading and naming: every write goes through
    /// ``containerFolder()``, which refuses a path that is not inside.
    func localURL(_ path: RemotePath) -> URL {
        // With a hint, so that Foundation does not look at the file system to make a URL.
        path.isRoot ? container : container.appendingPathComponent(path.string, isDirectory: false)
    }

    /// The container, opened once a pass: every local write of sync (downloads, merges, moves,
    /// deletions, folders, placeholders, what a crash left) is made through it, so that no
    /// name from a remote or the journal, and no symbolic link in the container, can make sync
    /// write outside the container (see ``ContainedFolder``).
    func containerFolder() throws -> ContainedFolder {
        if let openedContainer { return openedContainer }
        let folder = try ContainedFolder(at: container, operation: "open the container")
        openedContainer = folder
        return folder
    }

    /// What is at `path` in the container, itself (a link is a link), or nil: nothing there,
    /// or no path inside it.
    func localStatus(_ path: RemotePath) -> FileStatus? {
        (try? containerFolder().status(of: path.components, operation: "look at")) ?? nil
    }
}

/// A point between two steps of a change, where the simulation may crash the engine.
package enum SyncStep: String, Sendable, CaseIterable {
    case beforeRemoteWrite, afterRemoteWrite, beforeLocalWrite, afterLocalWrite, afterJournal
}

/// Thrown by a ``SyncEngine/checkpoint`` to stop the engine where it stands, as a crash would.
package struct SyncInterruption: Error {
    package init() {}
}

/// An item left for the next pass: it changed while the pass looked at it.
struct SkippedItem: Error {
    var reason: String
    /// Left because it was modified too recently, not because it changed under the pass.
    var isSettling = false
}

/// How far a pass has got: its actions, and the bytes its uploads and downloads move.
public struct SyncProgress: Sendable, Equatable {
    /// The actions done, of ``total``.
    public var done = 0
    public var total = 0
    /// The bytes uploaded and downloaded so far, of about ``byteTotal`` (the sizes the scan
    /// saw).
    public var bytes: Int64 = 0
    public var byteTotal: Int64 = 0

    public init(done: Int = 0, total: Int = 0, bytes: Int64 = 0, byteTotal: Int64 = 0) {
        self.done = done
        self.total = total
        self.bytes = bytes
        self.byteTotal = byteTotal
    }
}

extension SyncEngine {
    /// Changes the progress and tells ``progress``.
    func reportProgress(_ change: (inout SyncProgress) -> Void) {
        let now = progressState.withLock { state in
            change(&state)
            return state
        }
        progress?(now)
    }

    /// Counts bytes an upload or a download moved.
    func moved(_ count: Int) {
        guard count > 0 else { return }
        publishBytes(count)
        guard progress != nil else { return }
        reportProgress { $0.bytes += Int64(count) }
    }
}
