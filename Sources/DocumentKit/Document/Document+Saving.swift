import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Document {
    /// Saves the document to `url`: takes ``contents(forType:)`` on the main actor, then
    /// writes it off the main actor with a safe save.
    ///
    /// `.forCreating` fails if anything exists at `url` and leaves it untouched;
    /// `.forOverwriting` replaces the file. A successful save to another URL moves the
    /// document there. Saves of one document run one after another.
    ///
    /// - Returns: Whether the save succeeded. On failure the document keeps its unsaved
    ///   changes, ``documentState`` gains ``DocumentState/savingError`` and
    ///   ``handleError(_:userInteractionPermitted:)`` has the reason.
    public func save(to url: URL, for saveOperation: SaveOperation) async -> Bool {
        await withCheckedContinuation { done in
            self.save(to: url, for: saveOperation) { done.resume(returning: $0) }
        }
    }

    /// Runs `operation` once the saves, reverts and reloads queued before it have finished:
    /// two of them never interleave at their suspension points, so a revert never reloads in
    /// the middle of another writer's change being taken, nor a save write between them.
    func inTurn(_ operation: @escaping @MainActor () async -> Bool) async -> Bool {
        await enqueueFileOperation(operation).value
    }

    /// Queues `operation` behind the file operations queued before it, now: its place in the
    /// line is taken when this is called, not when a task gets round to it.
    func enqueueFileOperation(_ operation: @escaping @MainActor () async -> Bool) -> Task<Bool, Never> {
        let previous = lastFileOperation
        let task = Task { @MainActor in
            _ = await previous?.value
            return await operation()
        }
        lastFileOperation = task
        return task
    }

    /// Saves the document to its file if it has unsaved changes.
    ///
    /// - Returns: Whether the document is saved now: true when there was nothing to save.
    /// A ``isLocked`` (read-only) document is not written: the call fails with
    /// ``DocumentKitError/Code/permissionDenied`` and the changes stay unsaved.
    public func autosave() async -> Bool {
        await withCheckedContinuation { done in self.autosave { done.resume(returning: $0) } }
    }

    func performAutosave() async -> Bool {
        commitPendingEdits()
        guard hasUnsavedChanges else { return true }
        if isLocked {
            documentState.insert(.savingError)
            handleError(lockedError(operation: "autosave the document"), userInteractionPermitted: false)
            return false
        }
        nextSaveIsAutosave = true
        return await save(to: fileURL, for: .forOverwriting)
    }

    func lockedError(operation: String) -> DocumentKitError {
        DocumentKitError(
            .permissionDenied, operation: operation, url: fileURL,
            detail: "the file is read-only; only an explicit save writes it")
    }

    /// Saves unsaved changes, then closes the document.
    ///
    /// Unlike UIKit, a document whose save fails stays open, dirty and in
    /// ``DocumentState/savingError``, so that nothing the user typed is dropped; the app
    /// decides what to do next. A locked (read-only) document is not written: its unsaved
    /// changes are kept as a conflict version from this computer, which the user can restore.
    ///
    /// - Returns: Whether the changes were saved (or kept) and the document closed.
    public func close() async -> Bool {
        await withCheckedContinuation { done in self.close { done.resume(returning: $0) } }
    }

    func performClose() async -> Bool {
        if documentState.contains(.closed) { return true }
        commitPendingEdits()
        if hasUnsavedChanges && isLocked {
            guard await keepUnsavedChangesAsVersion() else { return false }
        } else if hasUnsavedChanges {
            guard await autosave() else { return false }
        } else {
            _ = await lastFileOperation?.value
        }
        autosaveTimer?.cancel()
        autosaveTimer = nil
        autosave.becameClean()
        // History versions are stored after each save returns; a closed document's are on
        // disk before close returns, so a tool that exits right after loses none.
        if let store = versionStore {
            _ = await withFileAccess { store.waitUntilIdle() }
        }
        documentState.insert(.closed)
        DocumentController.shared.remove(self)
        stopPresenting()
        return true
    }

    // MARK: - The save itself

    /// One save, after the saves before it have finished.
    ///
    /// - Parameter onPurpose: Not an autosave: the contents replaced are kept through the
    ///   thinning of the first hour (``VersionRecord/isOnPurpose``).
    func performSave(to url: URL, for saveOperation: SaveOperation, onPurpose: Bool = false) async -> Bool {
        let url = url.standardizedFileURL
        commitPendingEdits()
        autosave.saveStarted()
        let token = changeCountToken(for: saveOperation)
        let snapshot: DocumentContents
        let attributes: SendableAttributes
        do {
            let typeName = savingFileType ?? "public.data"
            snapshot = DocumentContents(value: try contents(forType: typeName), modificationDate: nil)
            attributes = SendableAttributes(value: try fileAttributesToWrite(to: url, for: saveOperation))
        } catch {
            return finishSave(failedWith: error, url: url)
        }
        // Only the document's own file is checked: a save elsewhere creates or replaces on purpose.
        let checksOriginal = saveOperation == .forOverwriting && url == fileURL
        let versionStore = checksOriginal ? self.versionStore : nil
        let result: Result<SaveWrite, any Error> = await withFileAccess { [self] in
            try self.coordinatedWrite(
                snapshot, attributes: attributes, to: url, for: saveOperation, checksOriginal: checksOriginal,
                versionStore: versionStore, onPurpose: onPurpose)
        }
        switch result {
        case .success(.changedElsewhere):
            // Another writer replaced the file since this document read it: never overwrite
            // blindly. Theirs stays and is shown; everything unsaved (the snapshot and any
            // typing since) becomes a conflict version.
            await takeFileFromElsewhere()
            perform(
                autosave.saveFinished(
                    at: autosaveConfiguration.clock.elapsed(), stillDirty: hasUnsavedChanges))
            return false
        case .success(.missing):
            // Gone from where the access was granted, with no coordinated move of it: deleted,
            // or moved by a program that does not coordinate, in a moment when inotify's news
            // of it is muted (this write was pending). Which it was shows shortly.
            confirmDeletion()
            return finishSave(
                failedWith: DocumentKitError(
                    .fileNotFound, operation: "save the document", url: url,
                    detail: "the file was moved or deleted while the save waited; the changes are kept"),
                url: url)
        case .success(.gone):
            // Moved while this save waited for the lock: writing now would bring the old
            // name back. The changes stay unsaved; the news of the move, already on its
            // way, decides where the next save goes.
            return finishSave(
                failedWith: DocumentKitError(
                    .fileNotFound, operation: "save the document", url: url,
                    detail: "the file was moved or deleted while the save waited; the changes are kept"),
                url: url)
        case .success(.written(let written, let modificationDate)):
            // Where the file was written: the URL asked for, or where a coordinated move
            // that this save waited behind took the document.
            if written != fileURL { fileURL = written }
            fileModificationDate = modificationDate
            documentState.remove(.savingError)
            if saveOperation == .forCreating, documentState.contains(.closed) {
                documentState.remove(.closed)
                DocumentController.shared.add(self)
                startPresenting()
            }
            updateChangeCount(withToken: token, for: saveOperation)
            perform(
                autosave.saveFinished(
                    at: autosaveConfiguration.clock.elapsed(), stillDirty: hasUnsavedChanges))
            // Until the coordinated write ended, inotify's news of the file was muted (it
            // would have been this save's own): a change or deletion by another writer in
            // that moment is found by looking once more, after this save's turn.
            Task { @MainActor in
                if FileManager.default.fileExists(atPath: written.path) {
                    await self.fileChangedElsewhere()
                } else {
                    self.confirmDeletion()
                }
            }
            return true
        case .failure(let error):
            return finishSave(failedWith: error, url: url)
        }
    }

    /// The file was found missing where no news of a deletion could come: takes it as
    /// deleted by a program that does not coordinate, unless the news of a move arrives
    /// meanwhile (a coordinated mover tells its presenters only once its access ends) or the
    /// file is back.
    func confirmDeletion() {
        Task { @MainActor in
            try? await Task.sleep(for: .milliseconds(200))
            guard !self.documentState.contains(.closed),
                !FileManager.default.fileExists(atPath: self.presentedItem.url?.path ?? "")
            else { return }
            await self.itemDeletedElsewhere(coordinated: false)
        }
    }

    private func finishSave(failedWith error: any Error, url: URL) -> Bool {
        documentState.insert(.savingError)
        let reported: any Error
        if error is DocumentKitError {
            reported = error
        } else {
            reported = DocumentKitError(
                .ioFailure, operation: "save the document", url: url, detail: "\(error)",
                underlying: error)
        }
        handleError(reported, userInteractionPermitted: false)
        perform(autosave.saveFinished(at: autosaveConfiguration.clock.elapsed(), stillDirty: true))
        return false
    }

    nonisolated static func modificationDate(of url: URL) -> Date? {
        try? Syscall.fstatat(AT_FDCWD, url.path, followLinks: true).get().modificationDate
    }

    // MARK: - Autosave timing

    /// Carries out what the autosave state machine asked for.
    func perform(_ action: AutosaveStateMachine.Action) {
        switch action {
        case .none:
            return
        case .save:
            Task { @MainActor in
                self.commitPendingEdits()
                // Cleaned (by an undo, say) since the timer fired, or read-only: no save will
                // run to end the one the machine began, so end it here or autosave stops for
                // good. A locked document's next edit schedules (and skips) the next one.
                guard self.hasUnsavedChanges, !self.isLocked else {
                    let now = self.autosaveConfiguration.clock.elapsed()
                    self.perform(self.autosave.saveFinished(at: now, stillDirty: false))
                    return
                }
                self.nextSaveIsAutosave = true
                _ = await self.save(to: self.fileURL, for: .forOverwriting)
            }
        case .waitUntil(let deadline):
            guard autosaveConfiguration.isEnabled, !documentState.contains(.closed) else { return }
            // A timer already due earlier will look again when it fires; deadlines only move later.
            if autosaveTimer != nil, let current = autosaveTimerDeadline, current <= deadline { return }
            autosaveTimer?.cancel()
            autosaveTimerDeadline = deadline
            let clock = autosaveConfiguration.clock
            autosaveTimer = Task { @MainActor [weak self] in
                do { try await clock.sleepUntil(deadline) } catch { return }
                self?.autosaveTimerFired()
            }
        }
    }

    private func autosaveTimerFired() {
        autosaveTimer = nil
        autosaveTimerDeadline = nil
        perform(autosave.timerFired(at: autosaveConfiguration.clock.elapsed()))
    }

    /// The write at the heart of a save, on the file-access queue: coordinated with other
    /// writers and presenters; with `checksOriginal`, refused when the document's file moved
    /// or another program changed it since the document read it, and the contents it replaces
    /// kept as a history version in `versionStore`.
    nonisolated func coordinatedWrite(
        _ snapshot: DocumentContents, attributes: SendableAttributes, to url: URL,
        for saveOperation: SaveOperation,
        checksOriginal: Bool, versionStore: VersionStore?, onPurpose: Bool = false
    ) throws -> SaveWrite {
        let coordinator = FileCoordinator(filePresenter: self)
        return try coordinator.coordinate(writingItemAt: url, options: .forReplacing) { url in
            let (expected, presentedURL) = self.presentedItem.state.withLock { ($0.seenState, $0.url) }
            // The document's file moved while this save waited: writing here would bring the
            // old name back. Failing leaves the edit unsaved for a save at the new place.
            if checksOriginal, presentedURL != url.standardizedFileURL { return .gone }
            if checksOriginal, let expected {
                guard let current = FileStatus(path: url.path) else { return .missing }
                // Only the status-change time moved (a sync agent or version store stamped
                // an attribute, a chmod, a link): the bytes are the ones the document read.
                // A writer in place that also put the modification time back is not caught
                // here, but its file is kept as a history version below, so no word is lost.
                if !current.isSameFileAndContents(as: expected) { return .changedElsewhere }
            }
            // The file about to be replaced becomes a history version: linked now, stored after.
            var previous = checksOriginal ? versionStore?.capture(itemAt: url) : nil
            previous?.isOnPurpose = onPurpose
            self.fileRecord.withLock { $0.writtenState = nil }
            do {
                try self.writeContents(
                    snapshot.value, andAttributes: attributes.value, safelyTo: url, for: saveOperation)
            } catch {
                versionStore?.discard(previous)
                if previous != nil {
                    // Linking and stamping the identity touched the file's status-change
                    // time: that is this document's doing, not another writer's.
                    self.noteMetadataChange(at: url)
                }
                throw error
            }
            versionStore?.commit(previous, savedAt: url)
            let now = FileStatus(path: url.path)
            // Another writer can replace or delete the file between the rename and this stat,
            // where inotify's news of it is muted (the write is pending): a file that is not
            // the one written is their change, to be taken as such once this save is done.
            let written = self.fileRecord.withLock(\.writtenState)
            let seen: FileStatus?
            if let written, !(now.map(written.isSameFileAndContents) ?? false) {
                seen = written
            } else {
                seen = now
            }
            self.presentedItem.state.withLock { $0.seenState = seen }
            return .written(url.standardizedFileURL, Self.modificationDate(of: url))
        }
    }

    // MARK: - Saving at termination

    /// Saves synchronously, for the termination hook: no later turn of the main actor will come.
    ///
    /// Waits (bounded) for file access already queued so an older save cannot land last.
    func saveForTermination(timeout: DispatchTime) -> Bool {
        commitPendingEdits()
        guard hasUnsavedChanges else { return true }
        let token = changeCountToken(for: .forOverwriting)
        let url = fileURL
        do {
            let contents = try currentContents()
            let attributes = SendableAttributes(
                value: try fileAttributesToWrite(to: url, for: .forOverwriting))
            let versionStore = self.versionStore
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var outcome: Result<SaveWrite, any Error> = .failure(
                DocumentKitError(.timedOut, operation: "save the document at exit", url: url))
            let isLocked = self.isLocked
            performAsynchronousFileAccess { [self] in
                outcome = Result {
                    if isLocked {
                        // Read-only: not written, but not lost either.
                        let kept = try self.keepUnsavedChangesNow(contents, of: url, in: versionStore)
                        DocumentLog.write(
                            "\(url.path) is read-only; the unsaved changes were kept in \(kept?.path ?? url.path)"
                        )
                        return .changedElsewhere
                    }
                    // The same write as any save: coordinated, never over another writer's
                    // change, and the replaced contents kept as a version.
                    var target = url
                    var write = try self.coordinatedWrite(
                        contents, attributes: attributes, to: target, for: .forOverwriting,
                        checksOriginal: true,
                        versionStore: versionStore)
                    // Moved while the main actor was busy here: the presenter has recorded
                    // where, though `fileURL` cannot follow before the process ends.
                    let presented = self.presentedItem.url ?? target
                    if case .gone = write, presented != target.standardizedFileURL {
                        target = presented
                        write = try self.coordinatedWrite(
                            contents, attributes: attributes, to: target, for: .forOverwriting,
                            checksOriginal: true, versionStore: versionStore)
                    }
                    if case .written = write { return write }
                    // Changed elsewhere or deleted: nothing more will run to resolve it, so the
                    // unsaved text is kept where the user can find it.
                    let kept = try self.keepUnsavedChangesNow(contents, of: target, in: versionStore)
                    DocumentLog.write(
                        "\(target.path) changed elsewhere before the process ended; the unsaved changes were kept in \(kept?.path ?? target.path)"
                    )
                    return write
                }
                done.signal()
            }
            if done.wait(timeout: timeout) == .timedOut {
                throw DocumentKitError(.timedOut, operation: "save the document at exit", url: url)
            }
            _ = try outcome.get()
            updateChangeCount(withToken: token, for: .forOverwriting)
            return true
        } catch {
            documentState.insert(.savingError)
            userInteractionNoLongerPermitted(forError: error)
            DocumentLog.write("\(error)")
            return false
        }
    }
}

extension Document {
    /// Keeps unsaved contents without the main actor: as a conflict version of the file from
    /// this computer when the store takes it, else in a new file beside it (or in the
    /// recovery folder when the file's folder is gone too).
    ///
    /// Contents equal to the file's are not kept (both sides made the same change), nor is
    /// a second conflict version with the contents of one not yet resolved.
    ///
    /// - Returns: Where the contents are, or nil when they are the file's own.
    nonisolated func keepUnsavedChangesNow(
        _ contents: DocumentContents, of url: URL, in versionStore: VersionStore?
    ) throws -> URL? {
        try keepUnsavedChanges(contents, of: url, in: versionStore)?.url
    }

    /// Where ``keepUnsavedChangesNow(_:of:in:)`` kept the contents.
    enum KeptChanges {
        /// A conflict version, and whether this call made it (not found it already there).
        case version(FileVersion, isNew: Bool)
        case file(URL)

        var url: URL {
            switch self {
            case .version(let version, _): version.url
            case .file(let url): url
            }
        }

        func isSame(as other: KeptChanges) -> Bool {
            switch (self, other) {
            case (.version(let a, _), .version(let b, _)): a.persistentIdentifier == b.persistentIdentifier
            case (.file(let a), .file(let b)): a == b
            default: false
            }
        }

        /// Removes what this call made, once newer unsaved text superseded it: a version found
        /// already there stays.
        func discard() {
            switch self {
            case .version(let version, true): try? version.remove()
            case .version: break
            case .file(let url): try? FileManager.default.removeItem(at: url)
            }
        }
    }

    /// With `asConflict` false the contents become a history version instead: text the user
    /// chose to discard, kept recoverable.
    nonisolated func keepUnsavedChanges(
        _ contents: DocumentContents, of url: URL, in versionStore: VersionStore?, asConflict: Bool = true
    ) throws -> KeptChanges? {
        let exists = FileManager.default.fileExists(atPath: url.path)
        if exists, let data = contents.value as? Data, let current = try? Data(contentsOf: url),
            current == data
        {
            return nil
        }
        // A file just deleted is still known to the store by its path.
        if let versionStore {
            do {
                let (version, isNew) = try storedVersion(
                    of: url, holding: contents, in: versionStore, isConflict: asConflict)
                return .version(version, isNew: isNew)
            } catch {
                // A deleted file the store never knew is no store failure: kept beside it.
                if exists {
                    versionStore.report(error, operation: "keep unsaved changes as a conflict version")
                }
            }
        }
        let destination = Self.unsavedChangesURL(for: url)
        try writeContents(contents.value, andAttributes: nil, safelyTo: destination, for: .forCreating)
        return .file(destination)
    }
}

extension Document {
    /// Keeps `contents`, what the document showed with nothing unsaved, as a history version
    /// of the file at `url` before another writer's change replaces or deletes it. Kept even
    /// when the file holds them still: it may not by the time the change is read. Never fails
    /// the caller: a store failure is reported.
    nonisolated func keepAsHistory(_ contents: DocumentContents, of url: URL, in store: VersionStore) {
        // A file deleted under a path the store never saw (it was moved there) is still known
        // by the inode it had.
        let former = presentedItem.seenState
        do {
            _ = try storedVersion(
                of: url, holding: contents, in: store, isConflict: false, formerState: former,
                creatingMissingItem: true)
        } catch {
            store.report(error, operation: "keep the replaced text as a version")
        }
    }
}

/// File attributes handed from the main actor to the writing queue.
struct SendableAttributes: @unchecked Sendable {
    // Built fresh by fileAttributesToWrite for this one save and not shared.
    let value: [AnyHashable: Any]
}

extension Document {
    /// The attribute `key` in `attributes`, keyed by the key itself or by its raw value (as
    /// Apple's bridged keys are).
    nonisolated static func attribute(_ key: FileAttributeKey, in attributes: [AnyHashable: Any]?) -> Any? {
        attributes?[AnyHashable(key)] ?? attributes?[AnyHashable(key.rawValue)]
    }

    /// The POSIX permissions asked for in `attributes`, as a number or an `Int`.
    nonisolated static func permissions(in attributes: [AnyHashable: Any]?) -> mode_t? {
        let requestedMode = attribute(.posixPermissions, in: attributes)
        return (requestedMode as? NSNumber).map { mode_t($0.uint32Value) }
            ?? (requestedMode as? Int).map { mode_t($0) }
    }

    /// Gives the item at `url` the modification date asked for in `attributes`, if any: a
    /// date that cannot be set is not worth failing a save for.
    nonisolated static func applyModificationDate(in attributes: [AnyHashable: Any]?, to url: URL) {
        if let modificationDate = attribute(.modificationDate, in: attributes) as? Date {
            try? FileManager.default.setAttributes(
                [.modificationDate: modificationDate], ofItemAtPath: url.path)
        }
    }
}

/// What a coordinated save found and did.
enum SaveWrite: Sendable {
    /// Written at the URL (the one asked for, or where a coordinated move took the item
    /// while the save waited), with the file's new modification date.
    case written(URL, Date?)
    case changedElsewhere
    /// The document's file moved: the presenter knows where.
    case gone
    /// No file is where the document's file was, and no move of it is known.
    case missing
}
