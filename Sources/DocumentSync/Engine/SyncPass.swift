import DocumentKit
import Foundation
import Synchronization

/// One pass of a ``SyncEngine``: made for the pass, dropped after it, so that nothing of one
/// pass leaks into the next.
///
/// A pass goes in four steps:
///
/// 1. Recover: the intents a crash left are settled by reading the remote
///    (`resolvePendingIntents()`), never retried blindly.
/// 2. Scan: the journal, the container and the remote, each read whole; a listing of the
///    remote that fails ends the pass with nothing changed, and a vanished side pauses sync,
///    except for a folder below the root whose own answer cannot be taken
///    (``RemoteError/failsOnlyItsFolder``): it and everything inside it are left as they are,
///    named in the summary's failures, and the rest is synced.
/// 3. Plan: ``SyncPlanner`` decides, three-way, what to do; the mass-delete guard pauses the
///    pass before anything is done.
/// 4. Execute and record: the plan's batches one after another (``SyncPlan/batches``), the
///    actions of each at once on threads, as many as the engine's request window allows
///    (``BatchExecution``); each action with its intent before its remote write and its record
///    after. Then the merge bases of what was uploaded, the conflicts shared
///    (``ConflictSharing``), the key-value store (``KeyValueSync``) and the status
///    (``StatusPublisher``).
///
/// What the pass did is its ``summary``. Everything it changes in the container goes through
/// the container opened once for the pass (``containerFolder()``).
final class SyncPass: @unchecked Sendable {
    let engine: SyncEngine
    var journal: SyncJournal { engine.journal }
    var remote: any Remote { engine.remote }
    var container: URL { engine.container }
    var store: VersionStore { engine.store }
    var configuration: SyncConfiguration { engine.configuration }
    var clock: any SyncClock { engine.configuration.clock }

    /// What the actions of a batch share while they run on threads of their own (see
    /// ``BatchExecution``): every access goes through ``Guarded``'s lock. (The pass is
    /// `@unchecked Sendable` for this: its other stored properties are constants, or set
    /// only on the pass's own thread while no batch runs.)
    private struct Shared {
        var summary = SyncSummary()
        var remoteFolders: Set<RemotePath> = []
        var arrived: Set<RemotePath> = []
        var pendingBases: [(path: RemotePath, hash: String, status: FileStatus)] = []
        var uploadsToRecord: [(path: RemotePath, record: (SyncJournal.Transaction) throws -> Void)] = []
        var placeholders: Set<RemotePath> = []
        var openedContainer: ContainedFolder?
        var changedRemote = false
    }

    /// A value read and changed only under its lock, one access at a time (recursive: an
    /// access may read another part of the value).
    private final class Guarded<Value>: @unchecked Sendable {
        private let lock = NSRecursiveLock()
        private var stored: Value

        init(_ value: Value) { stored = value }

        var value: Value {
            _read {
                lock.lock()
                defer { lock.unlock() }
                yield stored
            }
            _modify {
                lock.lock()
                defer { lock.unlock() }
                yield &stored
            }
        }
    }
    private let shared = Guarded(Shared())
    /// Held while the uploads waiting are recorded (`recordUploadsWaiting()`).
    private let recordingUploads = NSLock()

    /// What the pass did.
    var summary: SyncSummary {
        _read { yield shared.value.summary }
        _modify { yield &shared.value.summary }
    }
    /// Folders known to exist on the remote during this pass.
    var remoteFolders: Set<RemotePath> {
        _read { yield shared.value.remoteFolders }
        _modify { yield &shared.value.remoteFolders }
    }
    /// Files this pass downloaded or moved into place here: where a conflicted document that
    /// moved elsewhere may now be.
    var arrived: Set<RemotePath> {
        _read { yield shared.value.arrived }
        _modify { yield &shared.value.arrived }
    }
    /// Files this pass uploaded whose merge base is kept at the end of the pass, together
    /// (see `keepPendingBases()`), with the hash and status they were uploaded at.
    var pendingBases: [(path: RemotePath, hash: String, status: FileStatus)] {
        _read { yield shared.value.pendingBases }
        _modify { yield &shared.value.pendingBases }
    }
    /// The documents kept on the server only that this pass found placeholders of.
    var placeholders: Set<RemotePath> {
        _read { yield shared.value.placeholders }
        _modify { yield &shared.value.placeholders }
    }
    /// Where the pass's progress stands; guarded, since a remote may read an upload's bytes on
    /// a thread of its own.
    let progressState = Mutex(SyncProgress())
    /// Delivers progress to ``SyncEngine/progress`` one call at a time.
    private let progressDelivery = NSLock()
    /// The batch running now, whose actions' checkpoints it hears; set on the pass's thread
    /// before the batch's threads start.
    private var running: BatchExecution?
    /// How many uploaded files' merge bases wait before an upload keeps them: the engine's
    /// ``SyncEngine/basesKeptTogether``, whatever the number of uploads (the version store
    /// writes a group's identity rows in one transaction, not the whole index), so that what
    /// waits is bounded by the group, not by the pass. Set on the pass's thread before the
    /// batches run.
    private(set) var basesKeptTogether = 200
    /// The download requests the scan found for documents the remote's listing did not have:
    /// met at the end of the pass (see `settleDownloadRequests()`). Set on the pass's thread
    /// before the batches run.
    private(set) var requestsGoneFromRemote: Set<RemotePath> = []

    /// A pass of `engine`, whose summary starts with `notes`.
    init(engine: SyncEngine, notes: [String] = []) {
        self.engine = engine
        summary.notes = notes
    }

    /// Recovers, scans, plans, executes and records.
    ///
    /// - Throws: ``SyncError`` when sync is paused (or this pass pauses it), or the remote or
    ///   the container cannot be listed; nothing is changed then.
    func run() throws -> SyncSummary {
        // What a crash left held (a file replaced here, not yet stored as a version): stored
        // first. A failure is named by the end of the pass, which tries again.
        try? store.storeHeldVersions()
        summary.notes += try engine.checkPause()
        try settlingEarlierIntents { try resolvePendingIntents() }
        var (known, knownFiles, plan) = try scanAndPlan()
        // The scan is let go of: what it held between the plan's blocks is given back.
        ProcessMemory.returnFreePages()
        try engine.guardAgainstMassDeletion(plan, knownFiles: knownFiles)
        summary.notes += plan.notes
        try execute(&plan, known: known)
        // What the journal knew before the pass, let go of before recording it: after a pass
        // that changed the journal nothing else holds these items (its cache was dropped), and
        // they need not stay beside the list of synced files the status reads next.
        known = [:]
        try record(plan)
        if shared.value.changedRemote { announceChange() }
        return summary
    }

    /// Rewrites ``RemotePath/changeMarker`` after a pass that changed the remote, so that
    /// the other devices, asking for its tag every second or two
    /// (``SyncEngine/keepSyncing(every:until:report:)``), pass at once. Written over whatever
    /// is there: a device that wrote it meanwhile changed it too, which is all that counts. A
    /// failure only delays the others to their next pass at their interval.
    private func announceChange() {
        for _ in 0..<3 {
            do {
                let tag = try remote.entry(at: .changeMarker)?.tag
                let announcement = engine.changesAnnounced.add(1, ordering: .relaxed).newValue
                // Never the bytes there: a remote whose tags are digests (S3) changes its tag.
                let bytes =
                    "\(configuration.deviceIdentifier) \(announcement) after \(tag?.rawValue ?? "none")\n"
                try remote.write(
                    .changeMarker, from: UploadSource(Data(bytes.utf8)),
                    condition: tag.map { .matches($0) } ?? .absent)
                return
            } catch let error as RemoteError where error.kind == .parentMissing {
                // Made here, not as the pass's folders are: the journal keeps no row for it.
                do { try remote.makeFolder(RemotePath.metadataFolder) } catch let error as RemoteError
                    where error.kind == .exists
                {} catch { return }
            } catch let error as RemoteError where error.kind == .preconditionFailed || error.kind == .exists
            {
                continue
            } catch {
                return
            }
        }
    }

    // MARK: - Scanning and planning

    /// Scans both sides and plans the pass, leaving out the paths of uploads whose outcome is
    /// not known yet.
    ///
    /// The scan is let go of once planned: the plan keeps what its actions need of it
    /// (``SyncPlan/scannedHere``), so that a pass holds the container's items while it plans,
    /// not while its actions run. The scan's notes are the plan's first.
    private func scanAndPlan() throws -> (known: [RemotePath: JournalItem], knownFiles: Int, plan: SyncPlan) {
        var (known, scanned) = try scanBothSides()
        // An upload that got no answer can land between its lookup above and the listing:
        // settled now, its bytes are known as ours, and the pass plans again with them.
        if try settlingEarlierIntents({ try resolveLandedUploads(in: scanned.remote) }) {
            (known, scanned) = try scanBothSides()
        }
        // One there that cannot be read now keeps its path out of this pass: what is there may
        // be our own bytes, and taking them for another device's would bring back a file
        // deleted here.
        // The pass's one copy of the plan: the scan lets go of its own, so that the actions can
        // be let go of as they are batched (see `execute`).
        var plan = scanned.plan
        scanned.plan = SyncPlan()
        let awaiting = try uploadsAwaitingOutcome().filter { scanned.remote[$0] != nil }
        if !awaiting.isEmpty {
            plan.actions.removeAll { awaiting.contains($0.path) }
            plan.notes += awaiting.sorted().map { "\($0): waiting to learn whether an earlier upload landed" }
            plan.countBytes { scanned.local[$0]?.status.size }
        }
        plan.notes = scanned.notes + plan.notes
        for (folder, error) in scanned.unlisted.sorted(by: { $0.key < $1.key }) {
            summary.failures.append(
                "\(folder): cannot be listed, so it and everything in it are left as they are this time: \(error)"
            )
        }
        placeholders = scanned.placeholders
        remoteFolders = [.root]
        for (path, entry) in scanned.remote where entry.kind == .folder { remoteFolders.insert(path) }
        requestsGoneFromRemote = scanned.requestsGoneFromRemote
        return (known, scanned.knownFiles, plan)
    }

    /// Runs `body`, which settles intents an earlier pass left by asking the remote: a remote
    /// that cannot be asked (offline, refusing) fails the pass as a listing that failed does,
    /// so that the status tells an offline remote from an error.
    ///
    /// - Throws: ``SyncError`` for a ``RemoteError``; what `body` throws otherwise.
    private func settlingEarlierIntents<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as RemoteError {
            engine.status.listed(failure: error)
            throw SyncError(
                .failed,
                "cannot settle what an earlier pass left on \(remote.displayName): \(error); the next sync tries again"
            )
        }
    }

    /// Reads the journal and scans the container and the remote, planning the pass.
    private func scanBothSides() throws -> (known: [RemotePath: JournalItem], scan: SyncScan) {
        guard FileStatus(path: container.path)?.isDirectory == true else {
            throw try engine.pauseForVanishedRoot(.containerGone, known: journal.itemsByPath())
        }
        do {
            // What a crash left of downloads and merges: the intents that named them are settled.
            let scanned = try SyncScan(
                changesIn: container, journal: journal, remote: remote, configuration: configuration
            ) { leftover in
                let operation = "remove what a crash left"
                guard let folder = try? self.containerFolder(),
                    let components = try? folder.components(of: leftover, operation: operation)
                else { return }
                try? folder.removeItem(components, operation: operation)
            }
            engine.status.listed(failure: nil)
            return (scanned.known, scanned)
        } catch let error as RemoteError {
            if error.kind == .notFound, error.path.isRoot, case let known = try journal.itemsByPath(),
                !known.isEmpty
            {
                throw try engine.pauseForVanishedRoot(.remoteGone, known: known)
            }
            engine.status.listed(failure: error)
            throw SyncError(.failed, "cannot list \(remote.displayName): \(error); nothing was changed")
        }
    }

    // MARK: - Executing

    /// Runs the plan's batches (``SyncPlan/batches``) one after another, the actions of each
    /// taken in the order ``SyncEngine/arrangeBatch`` gives (the plan's, unless the simulation
    /// shuffles them) and run as ``SyncEngine/executionOrder`` says (at once on threads, or
    /// taking turns in the simulation): an action that fails is named in the summary and the
    /// pass goes on, but a crash (``SyncInterruption``) stops the batch's other actions at
    /// their next checkpoint and ends the pass.
    ///
    /// The plan's actions are taken out of `plan` once batched, and each batch is let go of
    /// once it is done: a pass holds its actions once, never twice.
    private func execute(_ plan: inout SyncPlan, known: [RemotePath: JournalItem]) throws {
        if ProcessInfo.processInfo.environment["DEBUGPLAN"] != nil {
            FileHandle.standardError.write(
                Data("PLAN \(configuration.deviceIdentifier): \(plan.actions)\n".utf8))
        }
        basesKeptTogether = engine.basesKeptTogether
        progressState.withLock { $0 = SyncProgress(total: plan.actions.count, byteTotal: plan.byteTotal) }
        engine.status.plan(plan)
        if !plan.actions.isEmpty {
            reportProgress { _ in }
            // Opened before the threads start, which then share it.
            _ = try? containerFolder()
        }
        // A batch of many actions runs a part at a time (``SyncEngine/actionsHeldAtOnce``).
        let part = max(1, engine.actionsHeldAtOnce)
        var batches = plan.batches.flatMap { batch in
            stride(from: 0, to: batch.count, by: part).map { Array(batch[$0..<min($0 + part, batch.count)]) }
        }
        plan.actions = []
        let scanned = ScannedItems(here: plan.scannedHere, folderTags: plan.scannedFolderTags)
        for index in batches.indices {
            var batch: [SyncAction] = []
            swap(&batch, &batches[index])
            engine.arrangeBatch(&batch)
            let execution = BatchExecution(batch, order: engine.executionOrder) { action in
                let outcome = self.run(action, scanned: scanned, known: known)
                if outcome != .interrupted { self.reportProgress { $0.done += 1 } }
                return outcome
            }
            running = execution
            defer { running = nil }
            try execution.run(window: engine.requestWindow)
            recordUploadsWaiting()
        }
    }

    /// Records an upload's outcome (`record`, given the journal): at once, or where the engine
    /// records uploads together (``SyncEngine/recordsUploadsTogether``), with the others of its
    /// batch once the batch is done (`recordUploadsWaiting()`), after one flush of the
    /// remote's writes. A crash before then leaves the upload's intent, which the next pass
    /// settles by reading the remote, as after any crash between a write and its record.
    func recordUpload(at path: RemotePath, _ record: @escaping (SyncJournal.Transaction) throws -> Void)
        throws
    {
        if engine.recordsUploadsTogether {
            shared.value.uploadsToRecord.append((path, record))
        } else {
            try journal.transactionTogether(record)
        }
    }

    /// Records the uploads waiting (`recordUpload(at:_:)`) in one transaction, which the
    /// journal begins by making the remote's writes durable
    /// (``SyncJournal/flushBeforeRecording(_:)``). One that cannot be recorded is named in the
    /// summary, its intent left for the next pass.
    func recordUploadsWaiting() {
        // One at a time: a caller that returns knows every upload handed in before it called
        // is recorded (or failed), not still being recorded by another thread.
        recordingUploads.lock()
        defer { recordingUploads.unlock() }
        var waiting: [(path: RemotePath, record: (SyncJournal.Transaction) throws -> Void)] = []
        swap(&waiting, &shared.value.uploadsToRecord)
        guard !waiting.isEmpty else { return }
        do {
            let failures = try journal.transaction(each: waiting.map(\.record))
            for (upload, failure) in zip(waiting, failures) {
                if let failure { summary.failures.append("\(upload.path): \(failure)") }
            }
        } catch {
            for upload in waiting { summary.failures.append("\(upload.path): \(error)") }
        }
    }

    /// Runs one action, telling the status, and counts what it left; says whether the remote
    /// asked for fewer requests, or a crash stopped it.
    private func run(
        _ action: SyncAction, scanned: ScannedItems, known: [RemotePath: JournalItem]
    ) -> BatchExecution.Outcome {
        switch action {
        case .download(let path, let entry, _), .reconcile(let path, let entry):
            engine.status.start(ofTransferAt: path, size: entry.size)
        default: break  // an upload tells the status once it has looked at its file
        }
        do {
            try perform(action, scanned: scanned, known: known)
            engine.status.end(of: action, error: nil)
        } catch is SyncInterruption {
            return .interrupted
        } catch let skipped as SkippedItem where skipped.isSettling {
            summary.settling += 1
            if let ready = skipped.settledAt { summary.settledAt = max(summary.settledAt ?? ready, ready) }
            engine.status.end(of: action, error: nil)
        } catch let skipped as SkippedItem {
            summary.changedDuringPass += 1
            summary.changed.append("\(RemotePath.escaped(action.path.description)): \(skipped.reason)")
            engine.status.end(of: action, error: nil)
        } catch {
            summary.failures.append("\(action.path): \(error)")
            engine.status.end(of: action, error: error)
            if let error = error as? RemoteError, error.asksForFewerRequests { return .congested }
        }
        return .done
    }

    // MARK: - Recording

    /// What a pass does once its actions are done: the merge bases of its uploads, the
    /// conflicts shared, the key-value store, the download requests met, the status. Each
    /// part that fails is named in the summary; a crash ends the pass at once.
    private func record(_ plan: SyncPlan) throws {
        func attempt(_ part: String, _ body: () throws -> Void) throws {
            do {
                try body()
            } catch let interruption as SyncInterruption {
                throw interruption
            } catch {
                summary.failures.append("\(part): \(error)")
            }
        }
        // The files downloads replaced, held while the downloads were put in place.
        try attempt("versions of replaced files") { try store.storeHeldVersions() }
        try attempt("merge bases") { try keepPendingBases() }
        try attempt("conflict versions") {
            try ConflictSharing(pass: self).share(
                newFiles: plan.newLocalFiles.sorted(),
                allFiles: { [container] in
                    // Wanted once an engine at most: the container is listed again rather
                    // than its scan held through the pass.
                    ((try? SyncTrees.local(container)) ?? [:]).filter { $0.value.kind == .file }.keys.sorted()
                })
        }
        try attempt("key-value store") { try KeyValueSync(pass: self).sync() }
        settleDownloadRequests()
        if let note = engine.status.end(
            of: summary, stamp: try? journal.itemsStamp(), list: try? journal.encodedSyncedFiles())
        {
            summary.notes.append(note)
        }
    }

    // MARK: - The container

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
        try {
            if let opened = $0.openedContainer { return opened }
            let folder = try ContainedFolder(at: container, operation: "open the container")
            $0.openedContainer = folder
            return folder
        }(&shared.value)
    }

    /// What is at `path` in the container, itself (a link is a link), or nil: nothing there,
    /// or no path inside it.
    func localStatus(_ path: RemotePath) -> FileStatus? {
        (try? containerFolder().status(of: path.components, operation: "look at")) ?? nil
    }

    /// A point between two steps of a change: the running batch's other actions may take
    /// their turn here (``BatchExecution/checkpoint()``), a crash of one of them stops this
    /// one here, and the engine's ``SyncEngine/checkpoint`` is called for `step`.
    func checkpoint(_ step: SyncStep) throws {
        if step == .afterRemoteWrite { shared.value.changedRemote = true }
        try running?.checkpoint()
        try engine.checkpoint(step)
    }

    // MARK: - Progress

    /// Changes the progress and tells ``SyncEngine/progress``, one call at a time.
    func reportProgress(_ change: (inout SyncProgress) -> Void) {
        progressDelivery.lock()
        defer { progressDelivery.unlock() }
        let now = progressState.withLock { state in
            change(&state)
            return state
        }
        engine.progress?(now)
    }

    /// Counts bytes an upload or a download moved.
    func moved(_ count: Int) {
        guard count > 0 else { return }
        engine.status.bytes(count)
        guard engine.progress != nil else { return }
        reportProgress { $0.bytes += Int64(count) }
    }
}

/// What a pass's actions read of the scan they were planned from (``SyncPlan/scannedHere``,
/// ``SyncPlan/scannedFolderTags``), once the scan is let go of.
struct ScannedItems: Sendable {
    var here: [RemotePath: FileStatus]
    var folderTags: [RemotePath: RemoteTag]
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
    /// When an item left to settle will have settled, if nothing writes it again.
    var settledAt: Date?
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
