import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Document {
    /// Opens the document: reads its file off the main actor and hands the contents to
    /// ``load(fromContents:ofType:)`` on it.
    ///
    /// - Returns: Whether the document opened. On failure ``handleError(_:userInteractionPermitted:)``
    ///   has the reason, a ``DocumentKitError`` naming the file, and the file is untouched.
    public func open() async -> Bool {
        await withCheckedContinuation { done in self.open { done.resume(returning: $0) } }
    }

    func performOpen() async -> Bool {
        if !documentState.contains(.closed) { return true }
        let url = fileURL
        do {
            try await downloadIfOnServerOnly(url)
        } catch {
            handleError(error, userInteractionPermitted: true)
            return false
        }
        let result: Result<Void, any Error> = await withFileAccess { [self] in
            try self.read(from: url)
        }
        switch result {
        case .success:
            documentState.remove(.closed)
            DocumentController.shared.add(self)
            startPresenting()
            return true
        case .failure(let error):
            handleError(error, userInteractionPermitted: true)
            return false
        }
    }

    func loadLoggingNothing(_ contents: Any, from url: URL, modificationDate: Date?) throws {
        if let kept = reloadKeptGeneration {
            // Another writer's file replaces unsaved changes that were kept a moment ago: if
            // the user typed since, that typing is not kept yet, and loading would lose it.
            commitPendingEdits()
            if editGeneration != kept { throw ReloadInterrupted() }
        }
        let undo = undoManager!
        undo.disableUndoRegistration()
        do {
            defer { undo.enableUndoRegistration() }
            try load(
                fromContents: contents,
                ofType: FileTypes.shared.typeIdentifier(forFilenameExtension: url.pathExtension))
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw DocumentKitError(
                .corruptFile, operation: "load the document", url: url,
                detail: "\(type(of: self)) could not read its contents (\(error))", underlying: error)
        }
        fileModificationDate = modificationDate
        // After the enable: removeAllActions re-enables registration itself, as Apple's does.
        undo.removeAllActions()
        updateChangeCount(.clear)
    }

    /// Discards unsaved changes and reloads the file at `url`, with editing disabled meanwhile.
    ///
    /// Unlike UIKit's, the discarded changes stay recoverable: they are kept as a history
    /// version of the file first.
    ///
    /// - Returns: Whether the document reloaded. The undo stack is emptied either way.
    public func revert(toContentsOf url: URL) async -> Bool {
        await withCheckedContinuation { done in
            self.revert(toContentsOf: url) { done.resume(returning: $0) }
        }
    }

    func performRevert(toContentsOf url: URL) async -> Bool {
        if hasUnsavedChanges || hasEditsInProgress {
            guard await keepUnsavedChangesAsVersion(asConflict: false) else { return false }
        }
        disableEditing()
        defer { enableEditing() }
        let result: Result<Void, any Error> = await withFileAccess { [self] in
            try self.read(from: url)
        }
        switch result {
        case .success:
            if url.standardizedFileURL != fileURL { fileURL = url.standardizedFileURL }
            documentState.remove(.savingError)
            return true
        case .failure(let error):
            handleError(error, userInteractionPermitted: true)
            return false
        }
    }

    /// Runs `body` on the file-access queue and returns its outcome on the main actor.
    func withFileAccess<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error>
    {
        await withCheckedContinuation { continuation in
            performAsynchronousFileAccess {
                continuation.resume(returning: Result { try body() })
            }
        }
    }
}

/// A reload refused because the user typed after the unsaved changes were kept.
struct ReloadInterrupted: Error {}

/// What a document's file held when read: bytes for a file, a wrapper for a package.
struct DocumentContents: @unchecked Sendable {
    // Handed from the reading queue to the main actor once, and never touched by the reader again.
    let value: Any
    let modificationDate: Date?
    /// The file as it was when read, taken before the bytes so a change during the read shows.
    var state: FileStatus? = nil
    /// Whether the file's mode lets this user write it: see ``Document/isLocked``.
    var isWritable = true

    static func read(from url: URL) throws -> DocumentContents {
        let info: stat
        switch Syscall.fstatat(AT_FDCWD, url.path, followLinks: true) {
        case .success(let status): info = status
        case .failure(let errno): throw DocumentKitError(errno, operation: "open the document", url: url)
        }
        if info.isDirectory {
            let state = FileStatus(path: url.path)
            let wrapper = try FileWrapper(url: url, options: .immediate)
            return DocumentContents(
                value: wrapper, modificationDate: info.modificationDate, state: state,
                isWritable: isWritable(url, info))
        }
        guard info.isRegularFile else {
            throw DocumentKitError(
                .unsupportedFileType, operation: "open the document", url: url,
                detail: "it is not a regular file or a package folder")
        }
        let file = try FileDescriptor.open(url, O_RDONLY | O_NONBLOCK, operation: "open the document")
        let opened = try file.stat(operation: "open the document")
        let data = try file.readToEnd(sizeHint: Int(opened.st_size), operation: "read the document")
        return DocumentContents(
            value: data, modificationDate: opened.modificationDate, state: FileStatus(opened),
            isWritable: isWritable(url, opened))
    }

    /// Whether the item's mode lets this user write it. Root may write anything, so a file
    /// with no write permission at all counts as read-only for root too: someone made it so.
    static func isWritable(_ url: URL, _ info: stat) -> Bool {
        guard info.st_mode & 0o222 != 0 else { return false }
        return geteuid() == 0 || Syscall.isAccessible(url.path, W_OK)
    }
}

extension Document {
    /// A document kept on the server only (a placeholder stands for it in its ubiquity
    /// container) is downloaded before it opens: the container's agent is asked for it, and
    /// while it comes ``documentState`` contains ``DocumentState/progressAvailable`` and
    /// ``progress`` counts its bytes. Nothing happens for a document whose file is here.
    ///
    /// - Throws: ``DocumentKitError`` naming the document: `.timedOut` when it has not arrived
    ///   within ``downloadTimeout`` or the remote is offline, with what the agent says.
    func downloadIfOnServerOnly(_ url: URL) async throws {
        guard !FileManager.default.fileExists(atPath: url.path),
            let placeholder = UbiquityPlaceholder(contentsOf: UbiquityPlaceholder.placeholderURL(for: url)),
            let container = try? UbiquityConfiguration.load().container(holding: url)
        else { return }
        let asked = Date()
        try FileManager.default.startDownloadingUbiquitousItem(at: url)
        let relative = FileManager.relativePath(of: url, in: container)
        let statusFile = SyncStateFiles.status(forContainer: container.url)
        let progress = Progress(totalUnitCount: max(placeholder.size, 1))
        self.progress = progress
        documentState.insert(.progressAvailable)
        defer {
            documentState.remove(.progressAvailable)
            self.progress = nil
        }
        let deadline = ContinuousClock.now + downloadTimeout
        while !FileManager.default.fileExists(atPath: url.path) {
            let status = UbiquityStatus.read(statusFile)
            if let percent = status?.percent[relative] {
                progress.completedUnitCount = Int64(Double(progress.totalUnitCount) * percent / 100)
            }
            let offline = status.map { $0.state == .offline && $0.updated > asked } ?? false
            if offline || ContinuousClock.now >= deadline {
                throw DocumentKitError(
                    .timedOut, operation: "download the document before opening it", url: url,
                    detail: offline
                        ? "the server is \(status?.summary ?? "offline")"
                        : "it did not arrive within \(downloadTimeout) (\(status?.summary ?? "no sync agent runs"))"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        progress.completedUnitCount = progress.totalUnitCount
    }
}
