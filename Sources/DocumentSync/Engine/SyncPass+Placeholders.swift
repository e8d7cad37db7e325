import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Documents kept on the server only: a placeholder (`.NAME.icloud`, see
/// ``UbiquityPlaceholder``) stands for each here, the journal records it as evicted, and it
/// is downloaded when an app asks (``UbiquityDownloadRequests``).
extension SyncPass {

    /// Leaves the remote's file `entry` on the server: its placeholder is written (with the
    /// size the remote gives), and the journal records the document as evicted at its tag.
    func keepOnServer(_ path: RemotePath, _ entry: RemoteEntry, known: JournalItem?) throws {
        let operation = "keep on the server only"
        let container = try containerFolder()
        let (folder, name) = try container.parent(of: path.components, creating: true, operation: operation)
        // A file put at the path since the scan is the next pass's to reconcile.
        guard try folder.status(of: name, operation: operation) == nil else {
            throw SkippedItem(reason: "a file appeared where a placeholder was to be")
        }
        let placeholderName = UbiquityPlaceholder.placeholderName(forDocumentName: name)
        let url = folder.url(of: placeholderName)
        let placeholder = UbiquityPlaceholder(name: path.name, size: entry.size, path: path.string)
        if UbiquityPlaceholder(contentsOf: url) != placeholder {
            let bytes = try placeholder.encoded()
            try checkpoint(.beforeLocalWrite)
            try SafeSave.write(
                named: placeholderName, in: folder.descriptor, url: url,
                newFilePermissions: container.newFilePermissions
            ) { try $0.write(bytes) }
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
        let operation = "remove the placeholder of"
        let container = try containerFolder()
        try checkpoint(.beforeLocalWrite)
        if !path.isRoot {
            try? container.removeItem(
                path.parent.components + [UbiquityPlaceholder.placeholderName(forDocumentName: path.name)],
                operation: operation)
        }
        try checkpoint(.afterLocalWrite)
        guard forgetting, try container.status(of: path.components, operation: operation) == nil else {
            return
        }
        try journal.remove(path)
        summary.deletedLocally += 1
    }

    /// Clears the download requests the pass met: the document is here now, or the remote
    /// has it no more.
    func settleDownloadRequests() {
        let requests = UbiquityDownloadRequests(forContainer: container, stateHome: configuration.stateHome)
        do {
            try requests.remove { relative in
                let path = RemotePath(relative)
                return FileStatus(path: localURL(path).path) != nil || requestsGoneFromRemote.contains(path)
            }
        } catch {
            summary.failures.append("download requests: \(error)")
        }
    }
}
