import DocumentKit
import Foundation

/// What a pass does for one item, decided three-way from the journal, the container and the
/// remote. Executed in the order of ``phase``.
///
/// The cases that carry a remote entry or a file's status keep it in a box of its own
/// (`indirect`), as a move does, so that an action takes 64 bytes, not 128: a first sync of 100,000 documents
/// plans 100,000 uploads, and every byte of an action is a plan's 100 KB.
enum SyncAction: Hashable, Sendable {
    /// The local file is new or changed and the remote's is not: written on `condition`.
    case upload(RemotePath, condition: WriteCondition, note: String?)
    /// The remote file is new or changed and the local one is not.
    indirect case download(RemotePath, RemoteEntry, note: String?)
    /// Both sides changed (or both made the item): equal bytes are recorded, text is merged,
    /// anything else is a conflict.
    indirect case reconcile(RemotePath, RemoteEntry)
    /// The local file's status changed but not its bytes: the journal notes the new status.
    indirect case recordLocalStatus(RemotePath, FileStatus)
    case deleteRemote(RemotePath, tag: RemoteTag?)
    case deleteLocal(RemotePath)
    /// Gone from both sides: the journal forgets it.
    case forget(RemotePath)
    /// Deleted here, and the remote's listing has it no more: a conditional delete on the tag
    /// last seen confirms it, since a stale listing may leave out what is still there (which
    /// would otherwise be downloaded again, a deletion undone).
    case forgetIfGone(RemotePath, tag: RemoteTag?)
    indirect case moveRemote(from: RemotePath, to: RemotePath, tag: RemoteTag?)
    indirect case moveLocal(from: RemotePath, to: RemotePath, RemoteEntry)
    case makeRemoteFolder(RemotePath)
    case makeLocalFolder(RemotePath)
    /// A folder both sides have that the journal does not know yet.
    case recordFolder(RemotePath)
    case deleteRemoteFolder(RemotePath)
    case deleteLocalFolder(RemotePath)
    /// The remote file is kept on the server only: a placeholder here stands for it (made, or
    /// written again with its new size), and the journal records it as evicted.
    indirect case placeholder(RemotePath, RemoteEntry)
    /// A placeholder that stands for nothing any more (its document arrived, or is gone from
    /// the remote): removed, and the journal forgets the item when `forget`.
    case removePlaceholder(RemotePath, forget: Bool)

    /// Folders first, shallowest first; then moves, transfers, file deletions; folder
    /// deletions last, deepest first, once their files are gone.
    var phase: (Int, Int, RemotePath) {
        switch self {
        case .makeRemoteFolder(let path), .makeLocalFolder(let path), .recordFolder(let path):
            return (0, path.depth, path)
        case .moveRemote(let path, _, _), .moveLocal(let path, _, _): return (1, 0, path)
        case .upload(let path, _, _), .download(let path, _, _), .reconcile(let path, _),
            .recordLocalStatus(let path, _), .forget(let path), .placeholder(let path, _):
            return (2, 0, path)
        case .deleteRemote(let path, _), .deleteLocal(let path), .forgetIfGone(let path, _),
            .removePlaceholder(let path, _):
            return (3, 0, path)
        case .deleteRemoteFolder(let path), .deleteLocalFolder(let path):
            return (4, -path.depth, path)
        }
    }

    var path: RemotePath { phase.2 }
}

/// The actions of one pass, with the deletions counted for the mass-delete guard.
struct SyncPlan: Sendable {
    var actions: [SyncAction] = []
    var notes: [String] = []
    /// The files here that are new, or another file than the journal knew at their path (by
    /// inode): where a conflicted document that moved unseen may be.
    var newLocalFiles: [RemotePath] = []
    /// What the scan saw here of each item an action replaces, merges with, moves or deletes
    /// here: a pass acts on what it planned from (a file changed since is left for the next
    /// pass), and once planned it lets go of the scan, which holds every item of the container.
    var scannedHere: [RemotePath: FileStatus] = [:]
    /// The tag the listing gave each remote folder the plan deletes.
    var scannedFolderTags: [RemotePath: RemoteTag] = [:]
    /// The bytes the plan's uploads and downloads move, by the sizes the scan saw
    /// (``countBytes(uploadSize:)``).
    var byteTotal: Int64 = 0

    /// Counts ``byteTotal`` again from the actions: a download's size is its entry's, an
    /// upload's is `uploadSize` of its path (the scan's).
    mutating func countBytes(uploadSize: (RemotePath) -> Int64?) {
        byteTotal = 0
        for action in actions {
            switch action {
            case .upload(let path, _, _): byteTotal += uploadSize(path) ?? 0
            case .download(_, let entry, _), .reconcile(_, let entry): byteTotal += entry.size
            default: break
            }
        }
    }

    /// The files the pass would delete here (a document kept on the server only counts too:
    /// its placeholder going is the document leaving this device's list), and on the remote.
    var deletions: SyncJournal.PauseDeletions {
        var deletions = SyncJournal.PauseDeletions()
        for action in actions {
            switch action {
            case .deleteLocal(let path), .removePlaceholder(let path, forget: true):
                deletions.here.insert(path)
            case .deleteRemote(let path, _): deletions.remote.insert(path)
            default: break
            }
        }
        return deletions
    }
}

/// Decides a pass: a pure function of the journal, the two trees, and the hashes of local
/// files whose status changed since the journal saw them (`hash`).
///
/// A local edit is a content change (a status change alone is recorded, not uploaded); a
/// remote edit is a tag change. A deletion propagates only when the other side is unchanged;
/// an edit beats a delete. A rename is found by inode and hash here, by the remote's file
/// identity (or tag and size) there, and propagated as a move. Nothing is decided by time.
struct SyncPlanner {
    var journal: [RemotePath: JournalItem]
    var local: [RemotePath: LocalEntry]
    var remote: [RemotePath: RemoteEntry]
    /// The SHA-256 (hex) of the local file at a path.
    var hash: (RemotePath) throws -> String
    /// The documents kept on the server only: a placeholder stands for each here.
    var placeholders: Set<RemotePath> = []
    /// The documents kept on the server only that an app asked to download.
    var requested: Set<RemotePath> = []
    /// Whether a document new from the remote is left on the server, with a placeholder
    /// here, until it is asked for (rather than downloaded at once).
    var downloadsOnDemand = false
    /// Where the document a placeholder stands for was left on the server from (its
    /// ``UbiquityPlaceholder/path``): read only for placeholders no side knows.
    var placeholderOrigin: (RemotePath) -> String? = { _ in nil }

    private enum LocalChange: Equatable {
        case absent, created, unchanged, deleted
        /// Only a placeholder is here: the document is kept on the server.
        case evicted
        /// Boxed, as ``SyncAction``'s statuses are: a first sync notes a change for every
        /// file, and the table of them is a pass's largest while it plans.
        indirect case touched(FileStatus)
        case modified(String)
    }

    private enum RemoteChange: Equatable { case absent, created, unchanged, modified, deleted }

    func plan() throws -> SyncPlan {
        var plan = SyncPlan()
        var handled = Set<RemotePath>()
        var localChanges: [RemotePath: LocalChange] = [:]
        var remoteChanges: [RemotePath: RemoteChange] = [:]
        var folders: [RemotePath] = []
        // How many local and remote items the visits saw: once all of a side's, no path of
        // it is left unvisited, and the lookups that would look for one are saved.
        var (localSeen, remoteSeen) = (0, 0)
        // Whether a path visited now may take part in a move, whose changes are then held until
        // every path is visited. A move starts from a path the journal knows that is gone from
        // one side; once the journal's paths are visited with none gone, every later path's
        // action is decided at once (a first sync holds no change for each of its files).
        var movesPossible = true
        // Placeholders with a file at their path now.
        var placeholdersReplaced: [RemotePath] = []
        func visit(_ path: RemotePath, _ known: JournalItem?) throws {
            let here = local[path]
            let there = remote[path]
            if here != nil { localSeen += 1 }
            if there != nil { remoteSeen += 1 }
            if let here, here.kind == .file, known?.local?.inode != here.status.inode {
                plan.newLocalFiles.append(path)
            }
            if here != nil, placeholders.contains(path) { placeholdersReplaced.append(path) }
            let kind =
                known?.kind ?? here?.kind ?? there?.kind ?? (placeholders.contains(path) ? .file : nil)
            if (known.map { $0.kind != kind } ?? false) || (here.map { $0.kind != kind } ?? false)
                || (there.map { $0.kind != kind } ?? false)
            {
                plan.notes.append("\(path): a file on one side and a folder on the other; left as it is")
                handled.insert(path)
                return
            }
            guard kind == .file else { return folders.append(path) }
            // Most files of a pass are as the journal left them: one comparison each, no hash.
            if let known, let here, let there, let seen = known.local,
                seen == JournalItem.LocalStatus(here.status), there.tag == known.remoteTag
            {
                return
            }
            let (localChange, remoteChange) = (try localChange(path), remoteChange(path))
            if movesPossible {
                localChanges[path] = localChange
                remoteChanges[path] = remoteChange
            } else if let action = fileAction(path, localChange, remoteChange) {
                plan.actions.append(action)
            }
        }
        // Every path once: the journal's, then those only here, then those only there.
        for (path, known) in journal { try visit(path, known) }
        movesPossible =
            localChanges.values.contains(.deleted) || remoteChanges.values.contains(.deleted)
        if localSeen < local.count {
            for path in local.keys where journal.index(forKey: path) == nil { try visit(path, nil) }
        }
        if remoteSeen < remote.count {
            for path in remote.keys
            where journal.index(forKey: path) == nil && local.index(forKey: path) == nil {
                try visit(path, nil)
            }
        }
        // A placeholder no side knows of: it stands for nothing.
        for path in placeholders
        where journal.index(forKey: path) == nil && local.index(forKey: path) == nil
            && remote.index(forKey: path) == nil
        {
            try visit(path, nil)
        }
        try findMoves(&plan, &handled, localChanges, remoteChanges)

        for path in folders where !handled.contains(path) {
            folderAction(path).map { plan.actions.append($0) }
        }
        for (path, localChange) in localChanges where !handled.contains(path) {
            guard let remoteChange = remoteChanges[path] else { continue }
            if let action = fileAction(path, localChange, remoteChange) {
                plan.actions.append(action)
            }
        }
        // The document is here again (downloaded, or put back): its placeholder goes. A file
        // reconciled with the remote's takes it away once reconciled: until then it says that
        // the file is not an edit of the remote's, whatever the journal knows (a reconcile that
        // fails must not leave the next pass an edit to write over the remote's version).
        let reconciled = Set(
            plan.actions.compactMap { action -> RemotePath? in
                if case .reconcile(let path, _) = action { return path }
                return nil
            })
        for path in placeholdersReplaced where !reconciled.contains(path) {
            plan.actions.append(.removePlaceholder(path, forget: false))
        }
        plan.actions.sort { $0.phase < $1.phase }
        plan.notes.sort()
        noteWhatTheScanSaw(in: &plan)
        return plan
    }

    /// Keeps in `plan` what its actions need of the scan (see ``SyncPlan/scannedHere``).
    private func noteWhatTheScanSaw(in plan: inout SyncPlan) {
        plan.countBytes { local[$0]?.status.size }
        for action in plan.actions {
            switch action {
            case .download(let path, _, _), .reconcile(let path, _), .deleteLocal(let path),
                .moveLocal(let path, _, _):
                plan.scannedHere[path] = local[path]?.status
            case .deleteRemoteFolder(let path):
                plan.scannedFolderTags[path] = remote[path]?.tag
            default: break
            }
        }
    }

    private func localChange(_ path: RemotePath) throws -> LocalChange {
        let known = journal[path]
        guard let entry = local[path] else {
            if placeholders.contains(path) { return .evicted }
            return known?.local != nil ? .deleted : .absent
        }
        guard let known, known.local != nil || known.syncedHash != nil else { return .created }
        // A file put where a document kept on the server only stands (not by a download,
        // which records what it put there): new here, reconciled with the remote's.
        if known.local == .evicted { return .created }
        if known.local == JournalItem.LocalStatus(entry.status) { return .unchanged }
        let current = try hash(path)
        if current == known.syncedHash { return .touched(entry.status) }
        // Other bytes beside a placeholder: a file put where the document was evicted (or an
        // edit after an eviction cut short). Not an edit of the remote's: reconciled.
        return placeholders.contains(path) ? .created : .modified(current)
    }

    private func remoteChange(_ path: RemotePath) -> RemoteChange {
        let known = journal[path]
        guard let entry = remote[path] else { return known?.remoteTag != nil ? .deleted : .absent }
        guard let knownTag = known?.remoteTag else { return .created }
        return entry.tag == knownTag ? .unchanged : .modified
    }

    private func fileAction(
        _ path: RemotePath, _ localChange: LocalChange, _ remoteChange: RemoteChange
    ) -> SyncAction? {
        let known = journal[path]
        let entry = remote[path]
        let keptNote = "\(path): deleted on the remote but changed here; the change is kept and uploaded"
        let restoredNote = "\(path): deleted here but changed on the remote; the change is kept"
        switch localChange {
        case .absent:
            switch remoteChange {
            case .absent, .deleted: return known != nil ? .forget(path) : nil
            case .created, .unchanged, .modified:
                if downloadsOnDemand, !requested.contains(path) {
                    return entry.map { .placeholder(path, $0) }
                }
                return entry.map { .download(path, $0, note: nil) }
            }
        case .evicted:
            switch remoteChange {
            case .absent, .deleted: return .removePlaceholder(path, forget: known != nil)
            case .unchanged, .created, .modified:
                if requested.contains(path) { return entry.map { .download(path, $0, note: nil) } }
                // Already recorded as on the server only, at this tag: nothing to do.
                if remoteChange == .unchanged, known?.local == .evicted { return nil }
                return entry.map { .placeholder(path, $0) }
            }
        case .created:
            switch remoteChange {
            case .absent, .deleted: return .upload(path, condition: .absent, note: nil)
            case .created, .unchanged, .modified: return entry.map { .reconcile(path, $0) }
            }
        case .unchanged, .touched:
            switch remoteChange {
            case .absent: return .upload(path, condition: .absent, note: nil)
            case .created: return entry.map { .reconcile(path, $0) }
            case .unchanged:
                if case .touched(let status) = localChange { return .recordLocalStatus(path, status) }
                return nil
            case .modified: return entry.map { .download(path, $0, note: nil) }
            case .deleted: return .deleteLocal(path)
            }
        case .modified:
            switch remoteChange {
            case .absent: return .upload(path, condition: .absent, note: nil)
            case .deleted: return .upload(path, condition: .absent, note: keptNote)
            case .unchanged:
                return .upload(
                    path, condition: known?.remoteTag.map(WriteCondition.matches) ?? .absent, note: nil)
            case .created, .modified: return entry.map { .reconcile(path, $0) }
            }
        case .deleted:
            switch remoteChange {
            case .absent: return .forget(path)
            case .deleted: return .forgetIfGone(path, tag: known?.remoteTag)
            case .unchanged: return .deleteRemote(path, tag: known?.remoteTag)
            case .created, .modified: return entry.map { .download(path, $0, note: restoredNote) }
            }
        }
    }

    private func folderAction(_ path: RemotePath) -> SyncAction? {
        let known = journal[path] != nil
        switch (local[path] != nil, remote[path] != nil) {
        case (true, true): return known ? nil : .recordFolder(path)
        case (true, false): return known ? .deleteLocalFolder(path) : .makeRemoteFolder(path)
        case (false, true): return known ? .deleteRemoteFolder(path) : .makeLocalFolder(path)
        case (false, false): return known ? .forget(path) : nil
        }
    }

    /// Whether the local file holds the bytes last synced: unchanged, or only its status
    /// changed (an app that opened it stamped it, a `chmod`).
    private static func holdsSyncedBytes(_ change: LocalChange) -> Bool {
        switch change {
        case .unchanged, .touched: return true
        default: return false
        }
    }

    /// Renames: a file gone from one side whose other side is unchanged, and a new file on
    /// the same side that is the same file (here: the inode and the bytes; there: the file
    /// identity, or the tag and size), where the other side has nothing. A remote rename is
    /// applied as a local move whenever the local file holds the bytes last synced (its status
    /// alone may have changed), so that it keeps its inode, its history and its open documents.
    private func findMoves(
        _ plan: inout SyncPlan, _ handled: inout Set<RemotePath>, _ localChanges: [RemotePath: LocalChange],
        _ remoteChanges: [RemotePath: RemoteChange]
    ) throws {
        let newHere = localChanges.filter { $0.value == .created && remote[$0.key] == nil }.map(\.key)
            .sorted()
        let newThere = remoteChanges.filter { $0.value == .created && local[$0.key] == nil }.map(\.key)
            .sorted()
        // Placeholders no side knows: documents kept on the server only, moved here.
        let movedPlaceholders = localChanges.filter {
            $0.value == .evicted && journal[$0.key] == nil && remote[$0.key] == nil
        }.map(\.key).sorted()
        guard !newHere.isEmpty || !newThere.isEmpty || !movedPlaceholders.isEmpty else { return }
        let gone =
            localChanges.filter { $0.value == .deleted }.map(\.key)
            + remoteChanges.filter { $0.value == .deleted }.map(\.key)
        for path in Set(gone).sorted() {
            guard let known = journal[path], known.kind == .file else { continue }
            if localChanges[path] == .deleted, remoteChanges[path] == .unchanged,
                let inode = known.local?.inode,
                let destination = try newHere.first(where: { candidate in
                    guard !handled.contains(candidate), local[candidate]?.status.inode == inode else {
                        return false
                    }
                    return try hash(candidate) == known.syncedHash
                })
            {
                plan.actions.append(.moveRemote(from: path, to: destination, tag: known.remoteTag))
                handled.formUnion([path, destination])
            } else if localChanges[path] == .deleted, remoteChanges[path] == .unchanged,
                let destination = movedPlaceholders.first(where: { candidate in
                    !handled.contains(candidate) && placeholderOrigin(candidate) == path.string
                })
            {
                // A document kept on the server only, whose placeholder was moved or renamed.
                plan.actions.append(.moveRemote(from: path, to: destination, tag: known.remoteTag))
                handled.formUnion([path, destination])
            } else if remoteChanges[path] == .deleted, localChanges[path].map(Self.holdsSyncedBytes) == true,
                let destination = newThere.first(where: { candidate in
                    guard !handled.contains(candidate), let entry = remote[candidate] else { return false }
                    if let id = entry.fileID, let knownID = known.remoteFileID { return id == knownID }
                    return entry.tag == known.remoteTag && entry.size == known.remoteSize
                }), let entry = remote[destination]
            {
                plan.actions.append(.moveLocal(from: path, to: destination, entry))
                handled.formUnion([path, destination])
            }
        }
    }
}
