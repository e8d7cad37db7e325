import Foundation

extension Document {
    /// Stores `contents` as a conflict version of the file at `url`, on the calling thread.
    nonisolated func conflictVersion(of url: URL, holding contents: DocumentContents, in store: VersionStore)
        throws -> URL
    {
        let staging = try store.stagingURL()
        defer { store.removeStaged(staging) }
        try writeContents(contents.value, to: staging, for: .forCreating, originalContentsURL: nil)
        let version = try store.addVersion(
            ofItemAt: url, contentsOf: staging, isConflict: true, savingComputer: nil, modificationDate: nil,
            byMoving: true)
        return version.url
    }

    /// Sets or clears ``DocumentState/inConflict`` from the store: set while unresolved
    /// conflict versions of the file exist. Reads a few small records; a store that cannot
    /// be read counts as no conflict, so it never blocks the document.
    func updateConflictState() {
        guard !documentState.contains(.closed) else { return }
        let inConflict =
            versionStore.map { !$0.unresolvedConflictVersionsOfItem(at: fileURL).isEmpty } ?? false
        if inConflict {
            documentState.insert(.inConflict)
        } else {
            documentState.remove(.inConflict)
        }
    }

    nonisolated public func presentedItemDidGain(_ version: FileVersion) {
        Task { @MainActor in self.updateConflictState() }
    }

    nonisolated public func presentedItemDidLose(_ version: FileVersion) {
        Task { @MainActor in self.updateConflictState() }
    }

    nonisolated public func presentedItemDidResolveConflict(_ version: FileVersion) {
        Task { @MainActor in self.updateConflictState() }
    }
}
