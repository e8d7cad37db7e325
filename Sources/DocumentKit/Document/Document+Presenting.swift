import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a document shares with threads off the main actor: where its file is, and what the
/// file was when the document last read or wrote it.
struct DocumentFileRecord: Sendable {
    var url: URL
    /// The file as last read or written by this document; a different file there now means
    /// another writer changed it.
    var knownState: ItemState?
}

extension Document: FilePresenter {
    nonisolated public var presentedItemURL: URL? {
        fileRecord.withLock { $0.url }
    }

    nonisolated public var presentedItemOperationQueue: OperationQueue {
        presenterQueue
    }

    nonisolated public func savePresentedItemChanges(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        Task { @MainActor in
            let saved = await self.autosave()
            completionHandler(
                saved
                    ? nil
                    : DocumentKitError(.ioFailure, operation: "save for another writer", url: self.fileURL))
        }
    }

    nonisolated public func relinquishPresentedItem(
        toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        // Saves wait behind the writer's lock and then check the file, so nothing more is needed.
        writer(nil)
    }

    nonisolated public func presentedItemDidChange() {
        Task { @MainActor in await self.fileChangedElsewhere() }
    }

    nonisolated public func presentedItemDidMove(to newURL: URL) {
        let moved = newURL.standardizedFileURL
        // A rename changes the file's status-change time but not the file: without this, the
        // next save would take the moved file for another writer's and refuse to write it.
        fileRecord.withLock { record in
            // At once, not on the main actor's next turn: a save waiting for the mover's lock
            // must see that its file is gone elsewhere.
            record.url = moved
            if let known = record.knownState, let now = ItemState(path: moved.path),
                now.isSameFileAndContents(as: known)
            {
                record.knownState = now
            }
        }
        Task { @MainActor in
            self.fileURL = moved
        }
    }

    nonisolated public func accommodatePresentedItemDeletion(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        Task { @MainActor in
            self.closeAfterDeletion()
            completionHandler(nil)
        }
    }

    // MARK: - Reacting

    /// The file changed and another writer did it: reload, keeping unsaved work safe.
    func fileChangedElsewhere() async {
        guard !documentState.contains(.closed) else { return }
        let url = fileURL
        let current = ItemState(path: url.path)
        guard let current else { return }  // gone: a deletion or move will be reported
        if current == fileRecord.withLock({ $0.knownState }) { return }
        _ = await lastSave?.value
        if current == fileRecord.withLock({ $0.knownState }) { return }
        if hasUnsavedChanges {
            await preserveUnsavedChanges()
        }
        _ = await reloadFromDisk()
        // Another process may have added or resolved conflict versions along with the change.
        updateConflictState()
    }

    /// Reloads the file's contents without the editing-disabled dance of a user's revert.
    func reloadFromDisk() async -> Bool {
        let url = fileURL
        let result: Result<Void, any Error> = await withFileAccess { [self] in
            try self.read(from: url)
        }
        switch result {
        case .success:
            documentState.remove(.savingError)
            return true
        case .failure(let error):
            handleError(error, userInteractionPermitted: false)
            return false
        }
    }

    /// Keeps the document's unsaved state as a conflict version of its file, so that another
    /// writer's change never costs the user a word; the document enters
    /// ``DocumentState/inConflict``. Without a usable version store the state is written
    /// beside the file under a name that says what it is.
    func preserveUnsavedChanges(_ snapshot: DocumentContents? = nil) async {
        let contents: DocumentContents
        if let snapshot {
            contents = snapshot
        } else {
            do {
                contents = DocumentContents(
                    value: try self.contents(forType: savingFileType() ?? "public.data"),
                    modificationDate: nil)
            } catch {
                handleError(error, userInteractionPermitted: false)
                return
            }
        }
        let url = fileURL
        let store = versionStore
        let result: Result<URL, any Error> = await withFileAccess { [self] in
            try self.keepUnsavedChangesNow(contents, of: url, in: store)
        }
        switch result {
        case .success(let kept):
            preservedUnsavedChanges.append(kept)
            updateConflictState()
        case .failure(let error):
            handleError(error, userInteractionPermitted: false)
        }
    }

    nonisolated static func unsavedChangesURL(for url: URL) -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
        let host = ProcessInfo.processInfo.hostName
        let base = url.deletingPathExtension().lastPathComponent
        let ext = url.pathExtension
        let stem = "\(base) (unsaved changes from \(host), \(formatter.string(from: Date())))"
        var candidate = url.deletingLastPathComponent().appendingPathComponent(
            ext.isEmpty ? stem : "\(stem).\(ext)")
        var counter = 2
        while FileManager.default.fileExists(atPath: candidate.path) {
            let name = "\(stem) \(counter)"
            candidate = url.deletingLastPathComponent().appendingPathComponent(
                ext.isEmpty ? name : "\(name).\(ext)")
            counter += 1
        }
        return candidate
    }

    func closeAfterDeletion() {
        guard !documentState.contains(.closed) else { return }
        autosaveTimer?.cancel()
        autosaveTimer = nil
        autosave.becameClean()
        changeCount = 0
        documentState.insert(.closed)
        FileCoordinator.removeFilePresenter(self)
        DocumentController.shared.remove(self)
    }

    func startPresenting() {
        FileCoordinator.addFilePresenter(self)
        updateConflictState()
    }

    func stopPresenting() {
        FileCoordinator.removeFilePresenter(self)
    }
}
