import DocumentKit
import Foundation

extension SyncEngine {
    /// Settles the intents a crash left: each remote write that may or may not have happened
    /// is looked up on the remote and compared by hash, never retried blindly. A write found
    /// done is recorded; one not found is dropped, and the pass after decides afresh.
    func resolvePendingIntents() throws {
        for intent in try journal.pendingIntents() {
            switch intent.operation {
            case .upload:
                if let hash = intent.hash, let entry = try remote.entry(at: intent.path), entry.kind == .file,
                    let (remoteHash, tag) = try? remoteHash(intent.path), remoteHash == hash
                {
                    try journal.transaction { journal in
                        var item =
                            try journal.item(at: intent.path) ?? JournalItem(path: intent.path, kind: .file)
                        item.remoteTag = tag
                        item.remoteSize = entry.size
                        item.remoteFileID = entry.fileID
                        item.syncedHash = hash
                        // Whether the local file still holds these bytes is for the scan to tell.
                        item.local = nil
                        item.baseVersion = nil
                        try journal.upsert(item)
                        try journal.completeIntent(intent.id)
                    }
                } else {
                    try journal.completeIntent(intent.id)
                }
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
                if let destination = intent.destination, try remote.entry(at: intent.path) == nil,
                    let entry = try remote.entry(at: destination)
                {
                    try journal.transaction { journal in
                        try journal.renameItem(from: intent.path, to: destination)
                        if var item = try journal.item(at: destination) {
                            item.remoteTag = entry.tag
                            item.remoteFileID = entry.fileID
                            item.local = nil
                            try journal.upsert(item)
                        }
                        try journal.completeIntent(intent.id)
                    }
                } else {
                    try journal.completeIntent(intent.id)
                }
            case .download:
                // Put in place if the file holds the bytes fetched: the journal takes them as
                // synced at the tag they were read at.
                let url = localURL(intent.path)
                if let hash = intent.hash, case .matches(let tag)? = intent.condition,
                    let status = FileStatus(path: url.path), status.isRegularFile,
                    (try? ContentHash(contentsOf: url).hex) == hash
                {
                    try journal.transaction { journal in
                        var item =
                            try journal.item(at: intent.path) ?? JournalItem(path: intent.path, kind: .file)
                        item.remoteTag = tag
                        item.remoteSize = status.size
                        item.syncedHash = hash
                        item.local = nil
                        item.baseVersion = try keepBase(of: url, size: status.size)
                        try journal.upsert(item)
                        try journal.completeIntent(intent.id)
                    }
                } else {
                    try journal.completeIntent(intent.id)
                }
            case .makeFolder, .conflictUpload:
                // Both are made again if missing: the conflict's row says whether it is shared.
                try journal.completeIntent(intent.id)
            }
        }
    }
}
