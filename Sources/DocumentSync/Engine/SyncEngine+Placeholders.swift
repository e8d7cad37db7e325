import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Documents kept on the server only: a placeholder (`.NAME.icloud`, see
/// ``UbiquityPlaceholder``) stands for each here, the journal records it as evicted, and it
/// is downloaded when an app asks (``UbiquityDownloadRequests``).
extension SyncEngine {
    /// The placeholder that stands for the document at `path`.
    func placeholderURL(_ path: RemotePath) -> URL {
        UbiquityPlaceholder.placeholderURL(for: localURL(path))
    }

    /// Leaves the remote's file `entry` on the server: its placeholder is written (with the
    /// size the remote gives), and the journal records the document as evicted at its tag.
    func keepOnServer(_ path: RemotePath, _ entry: RemoteEntry, known: JournalItem?) throws {
        // A file put at the path since the scan is the next pass's to reconcile.
        guard FileStatus(path: localURL(path).path, followingLinks: false) == nil else {
            throw SkippedItem(reason: "a file appeared where a placeholder was to be")
        }
        let url = placeholderURL(path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let placeholder = UbiquityPlaceholder(name: path.name, size: entry.size, path: path.string)
        if UbiquityPlaceholder(contentsOf: url) != placeholder {
            try checkpoint(.beforeLocalWrite)
            try SafeSave.write(try placeholder.encoded(), to: url)
            try checkpoint(.afterLocalWrite)
        }
        let sameBytes = known?.remoteTag == entry.tag
        try journal.upsert(
            JournalItem(
                path: path, kind: .file, remoteTag: entry.tag, remoteSize: entry.size,
                remoteFileID: entry.fileID, syncedHash: sameBytes ? known?.syncedHash : nil,
                local: .evicted, baseVersion: sameBytes ? known?.baseVersion : nil))
        try checkpoint(.afterJournal)
        summary.keptOnServer += 1
    }

    /// Removes the placeholder of `path`; with `forgetting`, the journal forgets the
    /// document too (it is gone from the remote), unless a file was put at its path since.
    func removePlaceholder(of path: RemotePath, forgetting: Bool) throws {
        try checkpoint(.beforeLocalWrite)
        _ = Syscall.unlinkat(AT_FDCWD, placeholderURL(path).path)
        try checkpoint(.afterLocalWrite)
        guard forgetting, FileStatus(path: localURL(path).path, followingLinks: false) == nil else { return }
        try journal.remove(path)
        summary.deletedLocally += 1
    }

    /// Clears the download requests the pass met: the document is here now, or the remote
    /// has it no more.
    func settleDownloadRequests(remoteTree: [RemotePath: RemoteEntry]) {
        let requests = UbiquityDownloadRequests(forContainer: container, stateHome: configuration.stateHome)
        do {
            try requests.remove { relative in
                let path = RemotePath(relative)
                return FileStatus(path: localURL(path).path) != nil || remoteTree[path] == nil
            }
        } catch {
            summary.failures.append("download requests: \(error)")
        }
    }
}
