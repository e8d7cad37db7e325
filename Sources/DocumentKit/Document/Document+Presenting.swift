import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a save shares with threads off the main actor beside the document's
/// ``PresentedItem`` (which file it shows, and what it last read or wrote of it).
struct DocumentFileRecord: Sendable {
    /// The file the last save wrote, as it was before it was renamed into place.
    var writtenState: FileStatus?
    /// No change counted and no editor editing, as of the main actor's last change.
    var isClean = true
}

extension Document: FilePresenter, UncoordinatedDeletionPresenter, PresentedItemOwner {
    nonisolated func presentedItemWasDeletedWithoutCoordination() {
        Task { @MainActor in await self.itemDeletedElsewhere(coordinated: false) }
    }

    // MARK: - Reacting

    /// Takes a change of the file's status alone (a rename, a mode or an identity attribute
    /// set, by this document's own version store or by anyone) as known: it is no content
    /// change, and must not make the next save see another writer.
    ///
    /// - Returns: Whether the file is the same file with the same contents as known.
    @discardableResult
    nonisolated func noteMetadataChange(at url: URL) -> Bool {
        presentedItem.state.withLock { record in
            guard let known = record.seenState, let now = FileStatus(path: url.path),
                now.isSameFileAndContents(as: known)
            else { return false }
            record.seenState = now
            return true
        }
    }

    /// What the document holds now, to keep: ``contents(forType:)`` of the saving type.
    func currentContents() throws -> DocumentContents {
        DocumentContents(
            value: try contents(forType: savingFileType ?? "public.data"), modificationDate: nil)
    }

    /// ``currentContents()``, with a failure handed to ``handleError(_:userInteractionPermitted:)``.
    func currentContentsReportingFailure() -> DocumentContents? {
        do {
            return try currentContents()
        } catch {
            handleError(error, userInteractionPermitted: false)
            return nil
        }
    }

    /// The file changed and another writer did it: reload, keeping unsaved work safe.
    func fileChangedElsewhere() async {
        guard !documentState.contains(.closed) else { return }
        let url = fileURL
        // Gone: a deletion or move will be reported.
        guard let current = FileStatus(path: url.path) else { return }
        if current == presentedItem.seenState { return }
        if noteMetadataChange(at: url) {
            // Only its status changed; a chmod may have made it read-only or writable.
            if case .success(let info) = Syscall.fstatat(AT_FDCWD, url.path, followLinks: true) {
                isLocked = !DocumentContents.isWritable(url, info)
            }
            return
        }
        _ = await inTurn {
            // A save or revert before this one may have read the change already.
            guard !self.documentState.contains(.closed), let now = FileStatus(path: self.fileURL.path),
                now != self.presentedItem.seenState
            else { return true }
            await self.takeFileFromElsewhere()
            return true
        }
        // Another process may have added or resolved conflict versions along with the change.
        updateConflictState()
    }

    /// Another writer's file replaces what the document shows. This is the rule for unsaved
    /// changes when the file changes elsewhere: the other writer's file stays and is loaded,
    /// and everything unsaved (an editor's pending typing included, whatever its age) is first
    /// kept as a conflict version from this computer, "mine"; the document then enters
    /// ``DocumentState/inConflict`` and ``handleError(_:userInteractionPermitted:)`` hears
    /// an ``DocumentKitError/Code/editedElsewhere`` error naming where the text is. Unsaved
    /// contents equal to the new file are no conflict. If the text cannot be kept anywhere,
    /// nothing is loaded: the document stays as it is, dirty.
    ///
    /// A document with nothing unsaved keeps what it showed (the text it last saved or
    /// loaded, which the other program replaced) as a history version, so even an
    /// overwrite in place by a program that keeps no history costs no word.
    func takeFileFromElsewhere() async {
        let url = fileURL
        var kept: KeptChanges?
        // Typing that arrives while the text is being kept is kept too: the load is refused
        // and the round runs again. Bounded, so a flood of typing cannot hold off the reload
        // for ever; a refused last round leaves the document dirty and unreloaded.
        for _ in 0..<8 {
            commitPendingEdits()
            let generation = editGeneration
            let isDirty = hasUnsavedChanges
            let shown: DocumentContents
            if isDirty {
                guard let contents = currentContentsReportingFailure() else { return }
                shown = contents
            } else {
                shown = (try? currentContents()) ?? DocumentContents(value: Data(), modificationDate: nil)
            }
            let store = versionStore
            let result = await withFileAccess { [self] in
                defer { self.noteMetadataChange(at: url) }
                if isDirty { return try self.keepUnsavedChanges(shown, of: url, in: store) }
                if let store { self.keepAsHistory(shown, of: url, in: store) }
                return nil
            }
            switch result {
            case .success(let now):
                // The earlier round's version holds a text the user has since changed:
                // only the newest unsaved text is theirs to resolve.
                if let earlier = kept, !(now.map(earlier.isSame) ?? false) { earlier.discard() }
                if isDirty { kept = now }
            case .failure(let error):
                handleError(error, userInteractionPermitted: false)
                return
            }
            reloadKeptGeneration = generation
            let outcome = await reloadFromDisk()
            reloadKeptGeneration = nil
            if case .interrupted = outcome { continue }
            if case .failed = outcome, let earlier = kept {
                // Not loaded (the file went away meanwhile): the text is still the document's,
                // and a conflict version of it would repeat what its next save writes.
                earlier.discard()
                kept = nil
            }
            break
        }
        guard let kept else { return }
        preservedUnsavedChanges.append(kept.url)
        updateConflictState()
        handleError(
            DocumentKitError(
                .editedElsewhere, operation: "save the document", url: url,
                detail:
                    "another program changed the file; its version is shown, and your unsaved changes were kept "
                    + {
                        switch kept {
                        case .version: "as a conflict version"
                        case .file(let file): "in “\(file.path)”"
                        }
                    }()),
            userInteractionPermitted: false)
    }

    enum ReloadOutcome {
        case loaded, interrupted, failed
    }

    /// Reloads the file's contents without the editing-disabled dance of a user's revert.
    @discardableResult
    func reloadFromDisk() async -> ReloadOutcome {
        let url = fileURL
        let result: Result<Void, any Error> = await withFileAccess { [self] in
            try self.read(from: url)
        }
        switch result {
        case .success:
            documentState.remove(.savingError)
            return .loaded
        case .failure(let error) where error is ReloadInterrupted:
            return .interrupted
        case .failure(let error):
            handleError(error, userInteractionPermitted: false)
            return .failed
        }
    }

    /// Keeps the unsaved changes in the version store (or, failing that, beside the file)
    /// without writing the file, and leaves the document clean.
    ///
    /// - Parameter asConflict: true (for a locked document closing) keeps them as a conflict
    ///   version from this computer, "mine", for the user to resolve; false (for changes the
    ///   user chose to discard, as by quitting without saving) as a history version.
    /// - Returns: Whether the changes are kept somewhere.
    public func keepUnsavedChangesAsVersion(asConflict: Bool = true) async -> Bool {
        commitPendingEdits()
        guard hasUnsavedChanges else { return true }
        guard let contents = currentContentsReportingFailure() else { return false }
        let url = fileURL
        let store = versionStore
        let result = await withFileAccess { [self] in
            // Keeping a version stamps the file's identity, which is no change of its contents.
            defer { self.noteMetadataChange(at: url) }
            return try self.keepUnsavedChanges(contents, of: url, in: store, asConflict: asConflict)
        }
        switch result {
        case .success(let kept):
            if let kept, asConflict { preservedUnsavedChanges.append(kept.url) }
            updateChangeCount(.clear)
            updateConflictState()
            return true
        case .failure(let error):
            handleError(error, userInteractionPermitted: false)
            return false
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
        // Beside the file, or, when its folder is gone too, in DocumentKit's recovery folder.
        var folder = url.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: folder.path) {
            folder = recoveryFolder
            try? FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var candidate = folder.appendingPathComponent(ext.isEmpty ? stem : "\(stem).\(ext)")
        var counter = 2
        while FileManager.default.fileExists(atPath: candidate.path) {
            let name = "\(stem) \(counter)"
            candidate = folder.appendingPathComponent(ext.isEmpty ? name : "\(name).\(ext)")
            counter += 1
        }
        return candidate
    }

    /// Where unsaved changes go when neither the version store nor the document's folder can
    /// take them: `applicationSupport/DocumentKit/Unsaved Changes`.
    nonisolated static var recoveryFolder: URL {
        StandardDirectories.current.applicationSupport(for: "DocumentKit")
            .appendingPathComponent("Unsaved Changes", isDirectory: true)
    }

    /// The rule for unsaved changes when the file is deleted:
    ///
    /// - With nothing unsaved, the document closes, as Apple's does.
    /// - Deleted by a coordinated writer (the file is still there: it is about to go), the
    ///   unsaved changes are saved into the file first, so that the deletion takes them
    ///   along (into the Deleted folder or trash a deleting app moves it to); then it closes.
    /// - Deleted by a program that does not coordinate (`rm`, `git checkout`), an edit beats
    ///   a delete: the document saves itself again at its path and stays open.
    /// - When neither works, the unsaved changes are kept in a file beside the old one (or in
    ///   ``recoveryFolder``) and the document closes.
    ///
    /// ``handleError(_:userInteractionPermitted:)`` hears a
    /// ``DocumentKitError/Code/deletedElsewhere`` error saying which happened.
    func itemDeletedElsewhere(coordinated: Bool) async {
        // In turn with saves and reloads: a save already waiting must not race the decision.
        _ = await inTurn {
            await self.takeDeletion(coordinated: coordinated)
            return true
        }
    }

    /// The deletion rule above, inside the document's turn. `coordinated` says whether a
    /// writer announced it (the file is still there, about to go) or inotify saw it done.
    func takeDeletion(coordinated: Bool) async {
        let url = fileURL
        // Typing that arrives while the text is being saved or kept is never closed away: the
        // round runs again with it. Bounded; a document still being typed into stays open.
        for _ in 0..<8 {
            guard !documentState.contains(.closed) else { return }
            commitPendingEdits()
            if !coordinated, let now = FileStatus(path: url.path) {
                // Seen gone, but there again by now: moved away and back (the same file), or
                // another file in its place, which is a change like any other.
                if noteMetadataChange(at: url) || now == presentedItem.seenState { return }
                await takeFileFromElsewhere()
                updateConflictState()
                return
            }
            let generation = editGeneration
            let outcome: String
            if !hasUnsavedChanges {
                // Its last text stays recoverable: a file that appears at the path again finds it.
                if let store = versionStore, let shown = try? currentContents() {
                    _ = await withFileAccess { [self] in self.keepAsHistory(shown, of: url, in: store) }
                }
                outcome = "the document was closed"
            } else if coordinated {
                let saved =
                    isLocked
                    ? await keepUnsavedChangesAsVersion() : await performSave(to: url, for: .forOverwriting)
                // Not saved because the file changed first: that change is taken; go round again.
                if !saved && !hasUnsavedChanges { continue }
                if saved {
                    outcome = "your unsaved changes were saved into it first, and the document was closed"
                } else {
                    guard let kept = await keepUnsavedChangesOutsideTheStore(of: url) else { return }
                    outcome = "your unsaved changes were kept in “\(kept.path)”, and the document was closed"
                }
            } else if FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path),
                await performSave(to: url, for: .forCreating)
            {
                report(deletion: "your unsaved changes were saved to it again", of: url)
                return
            } else if FileManager.default.fileExists(atPath: url.path) {
                continue  // another file appeared meanwhile: the next round takes it as a change
            } else {
                guard let kept = await keepUnsavedChangesOutsideTheStore(of: url) else { return }
                outcome = "your unsaved changes were kept in “\(kept.path)”, and the document was closed"
            }
            commitPendingEdits()
            if hasUnsavedChanges && editGeneration != generation { continue }
            closeAfterDeletion()
            report(deletion: outcome, of: url, announced: coordinated)
            return
        }
    }

    /// Writes the unsaved changes beside the file (or in ``recoveryFolder``).
    ///
    /// - Returns: Where they are; nil (reported) when they could be kept nowhere, and the
    ///   document must stay open with the text on screen.
    private func keepUnsavedChangesOutsideTheStore(of url: URL) async -> URL? {
        guard let contents = currentContentsReportingFailure() else { return nil }
        let result = await withFileAccess { [self] in try self.keepUnsavedChanges(contents, of: url, in: nil)
        }
        switch result {
        case .success(let kept):
            guard let kept else { return url }
            preservedUnsavedChanges.append(kept.url)
            return kept.url
        case .failure(let error):
            handleError(error, userInteractionPermitted: false)
            return nil
        }
    }

    /// `announced`: a coordinated writer said it is deleting the file, which may still be there.
    private func report(deletion outcome: String, of url: URL, announced: Bool = false) {
        let what = announced ? "another program is deleting it" : "another program deleted it"
        handleError(
            DocumentKitError(
                .deletedElsewhere, operation: "keep the document", url: url, detail: "\(what); \(outcome)"),
            userInteractionPermitted: false)
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
