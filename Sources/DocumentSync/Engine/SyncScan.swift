import DocumentKit
import Foundation
import Synchronization

/// Both sides of a container as they are, and what a pass would do about them: the one scan
/// that a pass acts on and that ``SyncEngine/status(ofContainer:remote:configuration:)``
/// reports.
///
/// A pass's scan (``init(changesIn:journal:remote:configuration:leftovers:)``) holds what
/// changed, not the container: a file as the journal last saw it on both sides is left out of
/// both trees and of ``known`` as it is found, so that a pass over 100,000 documents with one
/// changed holds one document's rows, not three tables of 100,000.
struct SyncScan {
    var local: [RemotePath: LocalEntry]
    var remote: [RemotePath: RemoteEntry]
    var plan: SyncPlan
    /// The items here sync leaves alone, and why.
    var notes: [String]
    /// The documents kept on the server only, which placeholders stand for here.
    var placeholders: Set<RemotePath>
    /// The documents an app asked to download that the remote's listing does not have.
    var requestsGoneFromRemote: Set<RemotePath>
    /// The journal's rows the plan was made from: all of them, or in a pass's scan those of
    /// the items not as the journal last saw them on both sides.
    var known: [RemotePath: JournalItem]
    /// How many files the journal knows, left out or not: what the mass-delete guard counts.
    var knownFiles: Int
    /// The remote's folders that could not be listed, each with why: each, and everything
    /// inside it, is left out of both trees, of ``known`` and of the plan (see
    /// ``SyncTrees/remote(_:expected:unlisted:keeping:)``), so that nothing is deleted,
    /// downloaded or uploaded over what the pass could not see.
    var unlisted: [RemotePath: RemoteError]

    /// Lists the container and the remote whole and plans a pass from `known`, every row of
    /// the journal; with no remote, plans from the remote as the journal last saw it (what is
    /// waiting here while the remote cannot be reached).
    ///
    /// - Parameter leftovers: Called with each temporary file a crash left in the container.
    /// - Throws: `RemoteError` when the remote cannot be listed.
    init(
        _ container: URL, known: [RemotePath: JournalItem], remote: (any Remote)?,
        configuration: SyncConfiguration, leftovers: ((URL) -> Void)? = nil
    ) throws {
        var notes: [String] = []
        var placeholders: Set<RemotePath> = []
        let local = try SyncTrees.local(
            container, expected: known.count, leftovers: leftovers, placeholders: { placeholders.insert($0) },
            unsyncable: { url, reason in notes.append(Self.unsyncableNote(url, reason)) })
        let requested = Self.downloadRequests(container, configuration)
        let remoteTree: [RemotePath: RemoteEntry]
        var unlisted: [RemotePath: RemoteError] = [:]
        if let remote {
            remoteTree = try SyncTrees.remote(remote, expected: known.count, unlisted: { unlisted[$0] = $1 })
        } else {
            var lastSeen: [RemotePath: RemoteEntry] = [:]
            for (path, item) in known where item.kind == .folder || item.remoteTag != nil {
                lastSeen[path] = RemoteEntry(
                    name: path.name, kind: item.kind, size: item.remoteSize ?? 0, tag: item.remoteTag,
                    fileID: item.remoteFileID)
            }
            remoteTree = lastSeen
        }
        self = try SyncScan(
            container, known: known, knownFiles: known.values.count { $0.kind == .file }, local: local,
            remote: remoteTree, unlisted: unlisted, notes: notes, placeholders: placeholders,
            requested: requested, configuration: configuration)
    }

    /// Lists the container and the remote for a pass, leaving out every file as the journal
    /// last saw it on both sides (the same inode, size and times here, the same tag there),
    /// and plans the pass from the rest.
    ///
    /// The two sides are scanned at once, the remote's listing on a thread of its own. A file
    /// found as the journal saw it here is left out of the local tree, and one listed as the
    /// journal saw it there (its tag) out of the remote's tree, each as it is found; one left
    /// out of both is not planned and its row is not read. One as the journal saw it here
    /// whose remote side changed (or is gone) is looked at again once the remote is listed: a
    /// look later than the scan, which the plan takes as the scan's. One as the journal saw
    /// it there whose local side changed gets the remote entry its row holds: the tag listed,
    /// with the size and file identity recorded with that tag. Never left out: folders, and
    /// the paths of intents, placeholders and download requests, which a pass reads beside
    /// its plan.
    ///
    /// - Parameter listingAfterTheScan: The remote listed once the local side is scanned, not
    ///   beside it: a test's listing that changes the container then meets a scan that is done.
    /// A folder below the root that cannot be listed (``RemoteError/failsOnlyItsFolder``) is
    /// left out with everything inside it (``unlisted``); the others are planned.
    ///
    /// - Throws: `RemoteError` when the remote cannot be listed, or lists one path twice
    ///   differently.
    init(
        changesIn container: URL, journal: SyncJournal, remote: any Remote, configuration: SyncConfiguration,
        leftovers: ((URL) -> Void)? = nil, listingAfterTheScan: Bool = false
    ) throws {
        // Each attempt reads the journal's references, then its rows once the sides are
        // scanned; a journal another process changed in between is read again.
        var attempt = 1
        while true {
            let stamp = try journal.itemsStamp()
            let references = ScanReferences()
            try journal.forEachReference { references.add($0, $1) }
            let requested = Self.downloadRequests(container, configuration)
            var keptWhole = Set(requested)
            for intent in try journal.pendingIntents() {
                keptWhole.insert(intent.path)
                if let destination = intent.destination { keptWhole.insert(destination) }
            }
            var notes: [String] = []
            var placeholders: Set<RemotePath> = []
            // The two sides at once: the remote's listing on a thread of its own leaves out
            // what it lists as the journal last saw it there, whatever the local side is; what
            // the local side needs back is made from the journal's row below.
            let keptThere = keptWhole
            // Set by the listing's thread before it signals; an error until then.
            let listing = Mutex<Result<[RemotePath: RemoteEntry], any Error>>(.failure(CancellationError()))
            let unlistedThere = Mutex<[RemotePath: RemoteError]>([:])
            let listed = DispatchSemaphore(value: 0)
            let list: @Sendable () -> Void = {
                let result = Result {
                    try SyncTrees.remote(
                        remote, unlisted: { folder, error in unlistedThere.withLock { $0[folder] = error } }
                    ) { path, entry in
                        keptThere.contains(path) || !references.isAsSeen(there: path, entry)
                    }
                }
                listing.withLock { $0 = result }
                listed.signal()
            }
            if !listingAfterTheScan { Thread.detachNewThread(list) }
            let scanned = Result {
                try SyncTrees.local(
                    container, leftovers: leftovers, placeholders: { placeholders.insert($0) },
                    unsyncable: { url, reason in notes.append(Self.unsyncableNote(url, reason)) },
                    keeping: { path, entry in
                        keptWhole.contains(path) || placeholders.contains(path)
                            || !references.isAsSeen(here: path, entry.status)
                    })
            }
            if listingAfterTheScan { list() }
            // Waited for whatever the local side found: no listing outlives the scan.
            listed.wait()
            var local = try scanned.get()
            var remoteTree = try listing.withLock { $0 }.get()
            for (path, entry) in remoteTree where references.isAsSeenThere(path) {
                // A file and a folder of one name keep the folder: the file's row is read.
                guard entry.kind == .folder else {
                    throw remote.failure(
                        .badAnswer, .list, .root,
                        detail:
                            "it lists \(path) twice, and differently (two keys that spell one path, or one key with two tags)"
                    )
                }
                references.keep(path)
            }
            for path in placeholders { references.keep(path) }
            let (changed, knownFiles, lookAgain, leftOutThere) = references.changed()
            let operation = "look again at a file whose remote side changed"
            let folder = lookAgain.isEmpty ? nil : try ContainedFolder(at: container, operation: operation)
            for path in lookAgain {
                // Beneath the container, as the scan went: a link on the way leads to none of it.
                guard let status = try? folder?.status(of: path.components, operation: operation) else {
                    continue
                }
                if status.isRegularFile {
                    local[path] = LocalEntry(kind: .file, status: status)
                } else if status.isDirectory {
                    local[path] = LocalEntry(kind: .folder, status: status)
                }
            }
            let known = try journal.items(at: changed)
            // Listed as the journal last saw it there but changed here (or a placeholder): its
            // entry, as the listing had it, from the row.
            for path in leftOutThere {
                guard remoteTree[path] == nil, let item = known[path], item.kind == .file else { continue }
                remoteTree[path] = RemoteEntry(
                    name: path.name, kind: .file, size: item.remoteSize ?? 0, tag: item.remoteTag,
                    fileID: item.remoteFileID)
            }
            let unchanged = try journal.itemsStamp() == stamp
            guard unchanged || attempt >= Self.attempts else {
                attempt += 1
                continue
            }
            self = try SyncScan(
                container, known: known, knownFiles: knownFiles, local: local, remote: remoteTree,
                unlisted: unlistedThere.withLock { $0 }, notes: notes, placeholders: placeholders,
                requested: requested, configuration: configuration)
            return
        }
    }

    /// How many times a pass's scan reads the journal again when another process changed it
    /// meanwhile, before it plans from the rows it has.
    private static let attempts = 3

    private init(
        _ container: URL, known: [RemotePath: JournalItem], knownFiles: Int, local: [RemotePath: LocalEntry],
        remote remoteTree: [RemotePath: RemoteEntry], unlisted: [RemotePath: RemoteError], notes: [String],
        placeholders: Set<RemotePath>, requested: [RemotePath], configuration: SyncConfiguration
    ) throws {
        var (known, local, remoteTree, placeholders, requested) = (
            known, local, remoteTree, placeholders, requested
        )
        if !unlisted.isEmpty {
            // What the pass cannot see there is left as it is on both sides: the journal's rows
            // are kept, and no side's item is taken for new, changed or deleted.
            known = known.filter { !SyncTrees.isWithin(unlisted, $0.key) }
            local = local.filter { !SyncTrees.isWithin(unlisted, $0.key) }
            remoteTree = remoteTree.filter { !SyncTrees.isWithin(unlisted, $0.key) }
            placeholders = placeholders.filter { !SyncTrees.isWithin(unlisted, $0) }
            requested = requested.filter { !SyncTrees.isWithin(unlisted, $0) }
        }
        var hashes: [RemotePath: String] = [:]
        plan = try SyncPlanner(
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
        (self.local, self.remote, self.notes, self.placeholders) = (local, remoteTree, notes, placeholders)
        (self.known, self.knownFiles, self.unlisted) = (known, knownFiles, unlisted)
        requestsGoneFromRemote = Set(requested.filter { remoteTree[$0] == nil })
    }

    private static func downloadRequests(_ container: URL, _ configuration: SyncConfiguration) -> [RemotePath]
    {
        UbiquityDownloadRequests(forContainer: container, stateHome: configuration.stateHome).load()
            .map(RemotePath.init)
    }

    private static func unsyncableNote(_ url: URL, _ reason: String) -> String {
        "\(RemotePath.escaped(url.path)): not synced: \(reason)"
    }
}

/// The journal's references while a pass scans, each with what the scan found of it: read on
/// the listing's threads.
private final class ScanReferences: Sendable {
    private struct Entry {
        var reference: JournalReference
        /// Found here as the journal last saw it.
        var isAsSeenHere = false
        /// Listed there as the journal last saw it: left out of the remote's tree.
        var isAsSeenThere = false
        /// Taken back into the pass whatever the sides found (a placeholder, a folder listed
        /// where the file was).
        var isKept = false
        /// Found as the journal last saw it on both sides: left out of both trees, its row not
        /// read.
        var isLeftOut: Bool { isAsSeenHere && isAsSeenThere && !isKept }
    }

    private let entries = Mutex<[RemotePath: Entry]>([:])

    func add(_ path: RemotePath, _ reference: JournalReference) {
        entries.withLock { $0[path] = Entry(reference: reference) }
    }

    /// Whether the file found here at `path` is as the journal last saw it: noted.
    func isAsSeen(here path: RemotePath, _ status: FileStatus) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[path], entry.reference.kind == .file,
                entry.reference.local == JournalItem.LocalStatus(status)
            else { return false }
            entries[path]?.isAsSeenHere = true
            return true
        }
    }

    /// Whether the remote's file at `path` is as the journal last saw it there: noted.
    func isAsSeen(there path: RemotePath, _ remote: RemoteEntry) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[path], entry.reference.kind == .file, remote.kind == .file,
                entry.reference.remoteTag != nil, entry.reference.remoteTag == remote.tag
            else { return false }
            entries[path]?.isAsSeenThere = true
            return true
        }
    }

    func isAsSeenThere(_ path: RemotePath) -> Bool { entries.withLock { $0[path]?.isAsSeenThere ?? false } }

    /// Takes `path` back into the pass: its row is read and its file looked at again.
    func keep(_ path: RemotePath) { entries.withLock { $0[path]?.isKept = true } }

    /// The paths whose rows the pass reads (every one not left out), how many files the
    /// journal knows, the files found here as the journal saw them to look at again (their
    /// remote side changed), and those listed there as the journal saw them whose entry the
    /// pass makes from their rows (their local side changed).
    func changed() -> (
        paths: Set<RemotePath>, knownFiles: Int, lookAgain: [RemotePath], leftOutThere: [RemotePath]
    ) {
        entries.withLock { entries in
            var (paths, knownFiles) = (Set<RemotePath>(), 0)
            var (lookAgain, leftOutThere) = ([RemotePath](), [RemotePath]())
            for (path, entry) in entries {
                if entry.reference.kind == .file { knownFiles += 1 }
                guard !entry.isLeftOut else { continue }
                paths.insert(path)
                if entry.isAsSeenHere { lookAgain.append(path) }
                if entry.isAsSeenThere { leftOutThere.append(path) }
            }
            return (paths, knownFiles, lookAgain, leftOutThere)
        }
    }
}
