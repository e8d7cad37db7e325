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

    /// Lists the container and the remote whole and plans a pass from `known`, every row of
    /// the journal.
    ///
    /// - Parameter leftovers: Called with each temporary file a crash left in the container.
    /// - Throws: `RemoteError` when the remote cannot be listed.
    init(
        _ container: URL, known: [RemotePath: JournalItem], remote: any Remote,
        configuration: SyncConfiguration, leftovers: ((URL) -> Void)? = nil
    ) throws {
        var notes: [String] = []
        var placeholders: Set<RemotePath> = []
        let local = try SyncTrees.local(
            container, expected: known.count, leftovers: leftovers, placeholders: { placeholders.insert($0) },
            unsyncable: { url, reason in notes.append(Self.unsyncableNote(url, reason)) })
        let requested = Self.downloadRequests(container, configuration)
        let remoteTree = try SyncTrees.remote(remote, expected: known.count)
        self = try SyncScan(
            container, known: known, knownFiles: known.values.count { $0.kind == .file }, local: local,
            remote: remoteTree, notes: notes, placeholders: placeholders, requested: requested,
            configuration: configuration)
    }

    /// Lists the container and the remote for a pass, leaving out every file as the journal
    /// last saw it on both sides (the same inode, size and times here, the same tag there),
    /// and plans the pass from the rest.
    ///
    /// A file found as the journal saw it here is left out of the local tree as it is found;
    /// if the remote's is too, it is left out of the remote's tree and its row is not read.
    /// One as the journal saw it here whose remote side changed (or is gone) is looked at
    /// again once the remote is listed: a look later than the scan, which the plan takes as
    /// the scan's. Never left out: folders, and the paths of intents, placeholders and
    /// download requests, which a pass reads beside its plan.
    ///
    /// - Throws: `RemoteError` when the remote cannot be listed, or lists one path twice
    ///   differently.
    init(
        changesIn container: URL, journal: SyncJournal, remote: any Remote, configuration: SyncConfiguration,
        leftovers: ((URL) -> Void)? = nil
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
            var local = try SyncTrees.local(
                container, leftovers: leftovers, placeholders: { placeholders.insert($0) },
                unsyncable: { url, reason in notes.append(Self.unsyncableNote(url, reason)) },
                keeping: { path, entry in
                    keptWhole.contains(path) || placeholders.contains(path)
                        || !references.isAsSeen(here: path, entry.status)
                })
            let alwaysKept = keptWhole.union(placeholders)
            let remoteTree = try SyncTrees.remote(remote) { path, entry in
                alwaysKept.contains(path) || !references.isLeftOut(there: path, entry)
            }
            for (path, entry) in remoteTree where references.isLeftOut(path) {
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
            let (changed, knownFiles, lookAgain) = references.changed()
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
            let unchanged = try journal.itemsStamp() == stamp
            guard unchanged || attempt >= Self.attempts else {
                attempt += 1
                continue
            }
            self = try SyncScan(
                container, known: known, knownFiles: knownFiles, local: local, remote: remoteTree,
                notes: notes, placeholders: placeholders, requested: requested, configuration: configuration)
            return
        }
    }

    /// How many times a pass's scan reads the journal again when another process changed it
    /// meanwhile, before it plans from the rows it has.
    private static let attempts = 3

    private init(
        _ container: URL, known: [RemotePath: JournalItem], knownFiles: Int, local: [RemotePath: LocalEntry],
        remote remoteTree: [RemotePath: RemoteEntry], notes: [String], placeholders: Set<RemotePath>,
        requested: [RemotePath], configuration: SyncConfiguration
    ) throws {
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
        (self.known, self.knownFiles) = (known, knownFiles)
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
        /// Found as the journal last saw it on both sides: left out of both trees.
        var isLeftOut = false
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

    /// Whether the remote's file at `path` is as the journal last saw it, and the local one
    /// too: noted as left out.
    func isLeftOut(there path: RemotePath, _ remote: RemoteEntry) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[path], entry.isAsSeenHere, remote.kind == .file,
                entry.reference.remoteTag != nil, entry.reference.remoteTag == remote.tag
            else { return false }
            entries[path]?.isLeftOut = true
            return true
        }
    }

    func isLeftOut(_ path: RemotePath) -> Bool { entries.withLock { $0[path]?.isLeftOut ?? false } }

    /// Takes `path` back into the pass: its row is read and its file looked at again.
    func keep(_ path: RemotePath) { entries.withLock { $0[path]?.isLeftOut = false } }

    /// The paths whose rows the pass reads (every one not left out), how many files the
    /// journal knows, and the files left out here to look at again (their remote side
    /// changed).
    func changed() -> (paths: Set<RemotePath>, knownFiles: Int, lookAgain: [RemotePath]) {
        entries.withLock { entries in
            var (paths, knownFiles, lookAgain) = (Set<RemotePath>(), 0, [RemotePath]())
            for (path, entry) in entries {
                if entry.reference.kind == .file { knownFiles += 1 }
                guard !entry.isLeftOut else { continue }
                paths.insert(path)
                if entry.isAsSeenHere { lookAgain.append(path) }
            }
            return (paths, knownFiles, lookAgain)
        }
    }
}
