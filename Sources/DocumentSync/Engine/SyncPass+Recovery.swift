import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SyncPass {
    /// How long an upload whose outcome is unknown is looked for on the remote before it is
    /// taken as never done.
    static let lateWriteWindow: TimeInterval = 600

    /// Settles the intents a crash left: each remote write that may or may not have happened
    /// is looked up on the remote and compared by hash, never retried blindly. A write found
    /// done is recorded; one not found is dropped, and the pass after decides afresh.
    func resolvePendingIntents() throws {
        for intent in try journal.pendingIntents() {
            switch intent.operation {
            case .upload:
                try resolveUpload(intent)
            case .delete:
                if try remote.entry(at: intent.path) == nil {
                    try journal.transaction { journal in
                        try journal.remove(intent.path)
                        try journal.completeIntent(intent.id)
                    }
                } else {
                    try journal.completeIntent(intent.id)
                }
            case .move:
                let entry = try intent.destination.flatMap { try remote.entry(at: $0) }
                // The tag after the move is the synced bytes' only if they are still what is
                // there; otherwise the old tag makes the next pass fetch what changed.
                let unchanged =
                    entry?.kind == .file && intent.hash != nil
                    && (try? intent.destination.flatMap(remoteHash))?.0 == intent.hash
                // A move made as a copy and a delete (S3) may have stopped between the two: the
                // source, still there with what was copied, goes now.
                if !remote.movesAreAtomic, let destination = intent.destination, let entry,
                    unchanged || entry.kind == .folder
                {
                    try remote.finishMove(intent.path, to: destination, condition: intent.condition)
                }
                // Done if the source is gone, or if the moved bytes are at the destination: another
                // device may have written the source again since (an edit it kept), and taking
                // the move for undone would fetch the moved file as new, undoing what was done
                // here to it since (a deletion).
                if let destination = intent.destination, let entry,
                    try unchanged || remote.entry(at: intent.path) == nil
                {
                    try journal.transaction { journal in
                        try journal.renameItem(from: intent.path, to: destination)
                        var moved = try journal.item(at: destination)
                        if moved == nil, unchanged {
                            // No row to move: it went with its old folder, deleted in the pass the
                            // move failed on (empty on the remote once the move was done). The
                            // moved bytes are known by their hash all the same.
                            moved = JournalItem(
                                path: destination, kind: .file, remoteSize: entry.size,
                                syncedHash: intent.hash)
                        }
                        if var item = moved {
                            if unchanged { item.remoteTag = entry.tag }
                            item.remoteFileID = entry.fileID
                            // The move followed a rename here: the file was at the destination.
                            item.local = .unseen
                            try journal.upsert(item)
                        }
                        try journal.completeIntent(intent.id)
                    }
                } else {
                    try journal.completeIntent(intent.id)
                }
            case .download:
                try resolveDownload(intent)
            case .makeFolder, .conflictUpload:
                // Both are made again if missing: the conflict's row says whether it is shared.
                try journal.completeIntent(intent.id)
            }
        }
    }

    /// Settles an upload whose outcome is unknown: found with its bytes, it is recorded as
    /// synced; not there (or not readable now) within ``lateWriteWindow``, it waits; otherwise
    /// it is dropped, and the pass after decides afresh.
    ///
    /// - Returns: Whether the journal took the upload as done.
    @discardableResult
    func resolveUpload(_ intent: SyncIntent) throws -> Bool {
        let found = try remote.entry(at: intent.path)
        // The file's bytes, when there is one; nil also when it could not be read now.
        let read = found?.kind == .file ? try? remoteHash(intent.path) : nil
        if let hash = intent.hash, let entry = found, let (remoteHash, tag) = read, remoteHash == hash {
            try journal.transaction { journal in
                var item =
                    try journal.item(at: intent.path) ?? JournalItem(path: intent.path, kind: .file)
                item.remoteTag = tag
                item.remoteSize = entry.size
                item.remoteFileID = entry.fileID
                item.syncedHash = hash
                // Whether the local file still holds these bytes is for the scan to tell; it
                // was here, so none found there is a deletion (nil would read as never here).
                item.local = .unseen
                item.baseVersion = nil
                try journal.upsert(item)
                try journal.completeIntent(intent.id)
            }
            return true
        } else if found == nil || (found?.kind == .file && read == nil),
            clock.now.timeIntervalSince(intent.created) < Self.lateWriteWindow
        {
            // Not there yet, but a write that got no answer may still land: a store goes on
            // with a request its client gave up on (SeaweedFS does, with a volume server down).
            // The intent waits, so that the bytes, if they come, are known as ours: a file
            // deleted here since is then deleted there, not taken for another device's new one.
            // A file there that could not be read (a broken connection) waits too.
        } else {
            try journal.completeIntent(intent.id)
        }
        return false
    }

    /// Settles again the uploads still waiting whose paths `remote` (a listing taken since
    /// they were looked up) shows: a write that got no answer can land between the lookup and
    /// the listing, and its bytes must be known as ours before anything is planned on them.
    ///
    /// - Returns: Whether one was taken as done (the journal changed: plan again).
    func resolveLandedUploads(in remote: [RemotePath: RemoteEntry]) throws -> Bool {
        var settled = false
        for intent in try journal.pendingIntents()
        where intent.operation == .upload && remote[intent.path] != nil {
            settled = try resolveUpload(intent) || settled
        }
        return settled
    }

    /// The paths of uploads whose outcome is still unknown.
    func uploadsAwaitingOutcome() throws -> Set<RemotePath> {
        Set(try journal.pendingIntents().filter { $0.operation == .upload }.map(\.path))
    }

    /// A download was put in place if the temporary file it was renamed from is gone from its
    /// folder: the journal then takes its bytes as synced at the tag they were read at,
    /// whatever the user did to the file since (a deletion is a deletion, an edit an edit).
    /// Otherwise nothing was put in place, and the temporary file is removed.
    private func resolveDownload(_ intent: SyncIntent) throws {
        let temporary = intent.destination
        // Gone from a folder that is still there: renamed into place. (A folder moved or
        // deleted since took the temporary file along, and says nothing.)
        let placed =
            temporary.map {
                localStatus($0) == nil && ($0.parent.isRoot || localStatus($0.parent)?.isDirectory == true)
            } ?? false
        guard placed, let hash = intent.hash, case .matches(let tag)? = intent.condition else {
            if let temporary {
                try? containerFolder().removeItem(temporary.components, operation: "remove what a crash left")
            }
            return try journal.completeIntent(intent.id)
        }
        let url = localURL(intent.path)
        let status = localStatus(intent.path)
        let holds = status?.isRegularFile == true && (try? ContentHash(contentsOf: url).hex) == hash
        let base = holds ? try keepBase(of: url, size: status?.size ?? 0) : nil
        try journal.transaction { journal in
            var item = try journal.item(at: intent.path) ?? JournalItem(path: intent.path, kind: .file)
            item.remoteTag = tag
            item.remoteSize = holds ? status?.size : nil
            item.syncedHash = hash
            // Holding the bytes: the status it has now (the scan may not come, if the pass fails
            // on). Not: the file was here, as the journal never saw it, and what is there now (or
            // nothing) is the user's change.
            item.local = holds ? status.map(JournalItem.LocalStatus.init) : .unseen
            item.baseVersion = base
            try journal.upsert(item)
            try journal.completeIntent(intent.id)
        }
    }
}
