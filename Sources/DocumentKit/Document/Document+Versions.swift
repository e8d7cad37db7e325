import Foundation

extension Document {
    /// Stores `contents` as a version of the file at `url` from this computer and program, on
    /// the calling thread: a conflict version, or a history version.
    ///
    /// - Returns: The version, and whether it is new: contents equal to an unresolved conflict
    ///   version of the file give that version back.
    ///
    /// - Parameter formerState: For a file just deleted, what it was: the store finds the
    ///   item by the inode it had when the path is new to it.
    nonisolated func storedVersion(
        of url: URL, holding contents: DocumentContents, in store: VersionStore, isConflict: Bool,
        formerState: FileStatus? = nil, creatingMissingItem: Bool = false
    ) throws -> (FileVersion, isNew: Bool) {
        let staging = try store.stagingURL()
        defer { store.removeStaged(staging) }
        try writeContents(contents.value, to: staging, for: .forCreating, originalContentsURL: nil)
        return try store.storeVersion(
            ofItemAt: url, contentsOf: staging, isConflict: isConflict, origin: nil,
            savingProgram: ProcessInfo.processInfo.processName, modificationDate: nil, byMoving: true,
            formerInode: formerState.map { ($0.device, $0.inode) }, creatingMissingItem: creatingMissingItem)
    }

    /// Sets or clears ``DocumentState/inConflict`` from the store: set while unresolved
    /// conflict versions of the file exist. Reads a few small records; a store that cannot
    /// be read counts as no conflict, so it never blocks the document.
    /// Updates the conflict state after the file operations already in line: a conflict
    /// version this document kept while taking another writer's file is announced once that
    /// file is loaded, so an observer of ``DocumentState/inConflict`` sees theirs as the
    /// current text, never the text just kept.
    func updateConflictStateInTurn() {
        _ = enqueueFileOperation { [self] in
            updateConflictState()
            return true
        }
    }

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

}
