import Foundation

extension Document {
    /// Stores `contents`, the document's unsaved state, as a conflict version of its file and
    /// returns where the version's contents are, or nil if the store could not take them.
    func keepAsConflictVersion(_ contents: DocumentContents) async -> URL? {
        guard let store = versionStore else { return nil }
        let url = fileURL
        let result: Result<URL, any Error> = await withFileAccess { [self] in
            let staging = try store.stagingURL()
            defer { store.removeStaged(staging) }
            try self.writeContents(contents.value, to: staging, for: .forCreating, originalContentsURL: nil)
            let version = try store.addVersion(
                ofItemAt: url, contentsOf: staging, isConflict: true, savingComputer: nil,
                modificationDate: nil,
                byMoving: true)
            return version.url
        }
        switch result {
        case .success(let kept):
            updateConflictState()
            return kept
        case .failure(let error):
            store.report(error, operation: "keep unsaved changes as a conflict version")
            return nil
        }
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
