import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SyncPass {
    func perform(_ action: SyncAction, scanned: ScannedItems, known: [RemotePath: JournalItem]) throws {
        switch action {
        case .upload(let path, let condition, let note):
            try upload(path, condition: condition, base: known[path])
            note.map { summary.notes.append($0) }
        case .download(let path, let entry, let note):
            // Deleted here: brought back only for a change the remote really has. A document
            // kept on the server only is not deleted: its placeholder is here.
            let replacing = scanned.here[path]
            let deletedHere = replacing == nil && known[path]?.local != nil && !placeholders.contains(path)
            let downloaded = try download(
                path, entry, replacing: replacing, known: known[path],
                unlessStillAt: deletedHere ? known[path].map { ($0.remoteTag, $0.syncedHash) } : nil)
            if downloaded { note.map { summary.notes.append($0) } }
        case .reconcile(let path, let entry):
            guard let status = scanned.here[path] else { return }
            // A file put where a document kept on the server only stood is a new document, not
            // an edit of one this device did not hold: never merged into the remote's (which
            // would drop the remote's lines it lacks), but equal bytes or a conflict.
            let base = known[path]?.local == .evicted || placeholders.contains(path) ? nil : known[path]
            try reconcile(path, entry, local: status, known: base)
            if placeholders.contains(path) { try removePlaceholder(of: path, forgetting: false) }
        case .recordLocalStatus(let path, let status):
            guard var item = known[path] else { return }
            item.local = JournalItem.LocalStatus(status)
            try journal.upsert(item)
        case .deleteRemote(let path, let tag):
            try deleteRemote(path, tag: tag)
        case .deleteLocal(let path):
            guard let status = scanned.here[path] else { return }
            try deleteLocal(path, status: status)
        case .forget(let path):
            try journal.remove(path)
        case .forgetIfGone(let path, let tag):
            try deleteRemote(path, tag: tag, confirming: true)
        case .moveRemote(let from, let to, let tag):
            try moveRemote(from, to: to, tag: tag, known: known[from])
        case .moveLocal(let from, let to, let entry):
            guard let status = scanned.here[from] else { return }
            try moveLocal(from, to: to, entry, status: status)
        case .makeRemoteFolder(let path):
            try makeRemoteFolder(path)
        case .makeLocalFolder(let path):
            _ = try containerFolder().folder(path.components, creating: true, operation: "make the folder")
            try journal.upsert(JournalItem(path: path, kind: .folder))
            summary.foldersMade += 1
        case .recordFolder(let path):
            try journal.upsert(JournalItem(path: path, kind: .folder))
        case .deleteRemoteFolder(let path):
            guard try deleteRemoteFolder(path, tag: scanned.folderTags[path]) else { return }
            try journal.remove(path)
            summary.foldersDeleted += 1
        case .placeholder(let path, let entry):
            try keepOnServer(path, entry, known: known[path])
        case .removePlaceholder(let path, let forget):
            try removePlaceholder(of: path, forgetting: forget)
        case .deleteLocalFolder(let path):
            // Only an empty folder: anything left inside was kept for a reason.
            guard
                (try? containerFolder().removeItem(
                    path.components, folder: true, operation: "delete the folder")) != nil
            else {
                return
            }
            try journal.remove(path)
            summary.foldersDeleted += 1
        }
    }

    /// Deletes the remote folder if it is empty; returns whether it is gone.
    ///
    /// The tag the listing gave changes when this pass deletes what was inside (the files
    /// first, then the folders, deepest first): a refused condition is tried once more on the
    /// folder's tag now. A folder is deleted only when empty, so nothing made inside since is
    /// taken along.
    private func deleteRemoteFolder(_ path: RemotePath, tag: RemoteTag?) throws -> Bool {
        var tag = tag
        for attempt in 1...2 {
            do {
                try remote.delete(path, condition: tag.map(WriteCondition.matches) ?? .absent)
                return true
            } catch let error as RemoteError where error.kind == .notFound {
                return true
            } catch let error as RemoteError where error.kind == .preconditionFailed && attempt == 1 {
                guard let entry = try remote.entry(at: path) else { return true }
                guard entry.kind == .folder else { return false }
                tag = entry.tag
            } catch let error as RemoteError
                where error.kind == .notEmpty || error.kind == .preconditionFailed
            {
                return false  // something new is inside: it stays, and so does the folder
            }
        }
        return false
    }

    // MARK: - Uploading

    /// Uploads the local file at `path` on `condition`, as a coordinated read (presenters of
    /// the file save first), and records it with its intent.
    func upload(_ path: RemotePath, condition: WriteCondition, base: JournalItem?) throws {
        let url = localURL(path)
        guard let status = FileStatus(path: url.path), status.isRegularFile else {
            throw SkippedItem(reason: "gone before it was uploaded")
        }
        engine.status.start(ofTransferAt: path, size: status.size)
        if configuration.settleTime > .zero,
            clock.now.timeIntervalSince(status.modification.date) < configuration.settleTime.seconds
        {
            throw SkippedItem(
                reason: "still being written", isSettling: true,
                settledAt: status.modification.date.addingTimeInterval(configuration.settleTime.seconds))
        }
        try makeRemoteParents(of: path)
        let coordinator = FileCoordinator()
        let folder = try containerFolder()
        var basesWaiting = 0
        var goneMeanwhile = false
        try coordinator.coordinate(readingItemAt: url) { url in
            let file = try folder.open(
                folder.components(of: url, operation: "read for upload"), O_RDONLY,
                operation: "read for upload")
            let before = try Syscall.fileStatus(of: file.rawValue).get("read for upload", url)
            let (written, hash, intent) = try write(
                path, from: file, url: url, size: before.size, condition: condition)
            try checkpoint(.afterRemoteWrite)
            let after = try Syscall.fileStatus(of: file.rawValue).get("read for upload", url)
            // Written while it was read (a program that does not coordinate): what went up may
            // be torn, so the journal does not take it as this file's state, and the next pass
            // uploads it again. Deleted or renamed meanwhile is no change to the bytes read.
            let unchanged = after.size == before.size && after.modification == before.modification
            let local = unchanged ? JournalItem.LocalStatus(before) : nil
            // Deleted or renamed meanwhile: the bytes read went up, and a pass after this one
            // takes the change (a deletion to propagate, a file to find elsewhere).
            goneMeanwhile = FileStatus(path: url.path)?.inode != before.inode
            try recordUpload(at: path) { journal in
                try journal.upsert(
                    JournalItem(
                        path: path, kind: .file, remoteTag: written.tag, remoteSize: before.size,
                        remoteFileID: written.fileID, syncedHash: hash, local: local, baseVersion: nil))
                try journal.completeIntent(intent.id)
            }
            try checkpoint(.afterJournal)
            if unchanged, before.size <= Int64(TextMerge.mostBytes) {
                basesWaiting = {
                    $0.append((path, hash, before))
                    return $0.count
                }(&pendingBases)
            }
        }
        summary.uploaded += 1
        if goneMeanwhile {
            summary.changedDuringPass += 1
            summary.changed.append(
                "\(RemotePath.escaped(path.description)): deleted or renamed while it was uploaded")
        }
        // Kept as they come, a group at a time (outside the coordinated read): what a pass
        // holds does not grow with the number of documents it uploads.
        if basesWaiting >= basesKeptTogether {
            do { try keepPendingBases() } catch { summary.failures.append("merge bases: \(error)") }
            ProcessMemory.returnFreePages()
        }
    }

    /// Writes the open file to the remote, with the upload's intent recorded before the
    /// remote can hold the bytes; an answer that leaves the outcome unknown (a timeout, a cut
    /// connection, a refused condition) is settled by reading the remote back.
    ///
    /// The intent carries the hash of the bytes sent. A remote applies a write only once it
    /// has every byte (``UploadSource``), so the hash is made as the file is read for sending,
    /// and the intent recorded when the last chunk has been read and before it is given: the
    /// file is read once. The hash is made on the sending thread: on a thread of its own
    /// (``HashingQueue``) it measured no faster, at 200 MiB or 1 GiB over WebDAV, and held 2-3
    /// MiB more. A remote that wants the hash before the first byte (S3 signs a large payload
    /// with it) gets it from a read of its own first, as does an empty file (no chunk to wait
    /// for).
    ///
    /// - Returns: What the remote answered, the hash of the bytes sent and the intent.
    private func write(
        _ path: RemotePath, from file: FileDescriptor, url: URL, size: Int64, condition: WriteCondition
    ) throws -> (written: (tag: RemoteTag?, fileID: String?), hash: String, intent: SyncIntent) {
        var hash: String?
        var intent: SyncIntent?
        func begin(hashed digest: String) throws {
            hash = digest
            intent = try journal.beginIntent(
                SyncIntent(
                    operation: .upload, path: path, hash: digest, condition: condition, created: clock.now))
            try checkpoint(.beforeRemoteWrite)
        }
        let hashesAsItReads = size > 0 && !remote.wantsHashBeforeUpload(ofSize: size)
        var hashing: ContentHash.Hasher?
        if hashesAsItReads {
            hashing = ContentHash.Hasher()
        } else {
            try begin(hashed: Self.hash(file, url: url, size: size))
        }
        var offset: Int64 = 0
        // Read into buffers used again chunk after chunk, handed on without a copy.
        let buffers = ChunkBuffers(size: RemoteChunk.bufferSize(forFileOf: size))
        var source = UploadSource(size: size) {
            guard
                let chunk = try buffers.fill({
                    try Syscall.pread(file.rawValue, $0, off_t(offset)).get("read for upload", url)
                })
            else { return nil }
            offset += Int64(chunk.count)
            self.moved(chunk.count)
            if hashesAsItReads {
                // Grown since: no byte past the size said goes out, and no intent is recorded.
                guard offset <= size else { throw SkippedItem(reason: "written while it was uploaded") }
                hashing?.update(chunk)
                if offset == size, let hasher = hashing.take() { try begin(hashed: hasher.finalize().hex) }
            }
            return chunk
        }
        // The journal's hash is the payload's: S3 signs a large file with it, once.
        source.sha256 = hash
        let written = try write(path, from: source, hash: { hash }, condition: condition)
        guard let hash, let intent else {
            // Every remote reads a source to its end before it applies it.
            throw SkippedItem(reason: "the remote took the file without reading all of it")
        }
        return (written, hash, intent)
    }

    /// Writes `source` to the remote, settling an unknown outcome by reading the remote back
    /// for the bytes whose `hash` is known by then (none known: none can have been written).
    private func write(
        _ path: RemotePath, from source: UploadSource, hash: () -> String?, condition: WriteCondition
    ) throws -> (tag: RemoteTag?, fileID: String?) {
        do {
            let tag: RemoteTag?
            do {
                // The pass's listing (or this pass's own folders) vouches for the file's
                // folder: a remote that would look for it again need not.
                tag = try remote.write(
                    path, from: source, condition: condition, placeListed: remoteFolders.contains(path.parent)
                )
            } catch let error as RemoteError where error.kind == .sourceChanged {
                throw SkippedItem(reason: "written while it was uploaded")
            }
            // A remote without file identities has nothing more to tell about a write whose
            // tag it gave: one request less per upload.
            if let tag, !remote.hasFileIDs { return (tag, nil) }
            let entry = try remote.entry(at: path)
            // The entry read after the write belongs to it only if it carries its tag.
            if let tag { return (tag, entry?.tag == tag ? entry?.fileID : nil) }
            return (entry?.tag, entry?.fileID)
        } catch let error as RemoteError where error.leavesOutcomeUnknown {
            if let hash = hash(), let (remoteHash, tag) = try? remoteHash(path), remoteHash == hash {
                return (tag, try? remote.entry(at: path)?.fileID)
            }
            throw error
        }
    }

    // MARK: - Downloading

    /// Downloads the remote file at `path` beside its place, verified, and puts it in place
    /// as a coordinated write (open documents reload), keeping the replaced bytes as a version.
    ///
    /// - Parameter expected: The local file as the scan saw it, nil for none: anything else
    ///   there now is a change made since, left for the next pass.
    /// - Parameter known: What the journal knows of the file: a local file whose bytes are the
    ///   ones last synced is not replaced by the same bytes under a new tag (a remote whose tags
    ///   change with a rename, or a store that copied a file in place); the tag is recorded.
    /// - Parameter unchanged: For a file deleted here, the tag and hash it was synced at: if
    ///   what is read still has the tag (the listing that said "changed" was behind, a stale
    ///   one) or the same bytes (another device wrote them again, a merge that came out as
    ///   they were), the deletion made here is propagated instead of undone: nothing the
    ///   remote has is an edit made since.
    /// - Returns: Whether it was downloaded.
    @discardableResult
    func download(
        _ path: RemotePath, _ entry: RemoteEntry, replacing expected: FileStatus?, known: JournalItem? = nil,
        unlessStillAt unchanged: (tag: RemoteTag?, hash: String?)? = nil
    ) throws -> Bool {
        let fetched = try fetch(path, besides: path, expectedSize: entry.size)
        if let unchanged, fetched.tag == unchanged.tag || fetched.hash == unchanged.hash {
            fetched.temporary.remove()
            try deleteRemote(path, tag: fetched.tag)
            return false
        }
        if expected != nil, var item = known, item.local != nil, item.syncedHash == fetched.hash {
            fetched.temporary.remove()
            item.remoteTag = fetched.tag
            item.remoteSize = entry.size
            item.remoteFileID = entry.fileID ?? item.remoteFileID
            try journal.upsert(item)
            summary.recorded += 1
            return false
        }
        try removing(fetched.temporary) {
            let intent = try beginDownload(path, fetched)
            let placed = try place(
                fetched.temporary, at: path, expecting: expected, keeping: .history, intent: intent)
            try recordDownload(
                path, hash: fetched.hash, tag: fetched.tag, entry: entry, base: placed.base, intent: intent)
        }
        summary.downloaded += 1
        arrived.insert(path)
        if placeholders.contains(path) { try removePlaceholder(of: path, forgetting: false) }
        return true
    }

    /// Runs `body`, then removes `temporary` if it is still there; unless a crash (the
    /// simulation's ``SyncInterruption``) stopped it, which leaves things as a killed process
    /// does, for the next pass to settle.
    func removing<Result>(_ temporary: LocalTemporary, after body: () throws -> Result) throws -> Result {
        do {
            let result = try body()
            temporary.remove()
            return result
        } catch let interruption as SyncInterruption {
            throw interruption
        } catch {
            temporary.remove()
            throw error
        }
    }

    /// Records, before a download is put in place, what it puts there and the temporary file
    /// it is renamed from: a crash between the rename and the journal leaves a file the
    /// journal does not know, which would otherwise read as a new document here (and come back
    /// on a remote that deleted it since). The temporary file gone says the rename happened.
    func beginDownload(_ path: RemotePath, _ fetched: FetchedFile) throws -> SyncIntent {
        try journal.beginIntent(
            SyncIntent(
                operation: .download, path: path, destination: path.parent.appending(fetched.temporary.name),
                hash: fetched.hash, condition: .matches(fetched.tag), created: clock.now))
    }

    /// Records a file whose local bytes now hash to `hash` and whose remote tag is `tag`, and
    /// settles the download's intent.
    func recordDownload(
        _ path: RemotePath, hash: String, tag: RemoteTag, entry: RemoteEntry, base: String?,
        intent: SyncIntent
    ) throws {
        let status = localStatus(path)
        try journal.transactionTogether { journal in
            try journal.upsert(
                JournalItem(
                    path: path, kind: .file, remoteTag: tag, remoteSize: entry.size,
                    remoteFileID: entry.fileID,
                    syncedHash: hash, local: status.map(JournalItem.LocalStatus.init), baseVersion: base))
            try journal.completeIntent(intent.id)
        }
        try checkpoint(.afterJournal)
    }

    /// What becomes of the local file a download replaces.
    enum Replaced {
        /// A history version: the replaced bytes were synced or are being replaced by a merge.
        case history
        /// A conflict version from this computer: this device's edit the remote's replaces;
        /// `base` is the SHA-256 of the bytes both started from, when known.
        case conflict(base: String?)
    }

    /// A hidden file sync writes in the folder of the item it becomes (a download, a merge),
    /// in a folder opened beneath the container, private (0600) until it is put in place; open
    /// until then.
    struct LocalTemporary {
        let folder: ContainedFolder.Directory
        let name: String
        let file: FileDescriptor

        var url: URL { folder.url(of: name) }

        /// Removes the file, if it is still there.
        func remove() { try? folder.removeItem(name, operation: "remove the temporary file") }
    }

    /// A remote file fetched into a ``LocalTemporary``, with the hash of what arrived and the
    /// tag of what was read.
    struct FetchedFile {
        let temporary: LocalTemporary
        let hash: String
        let tag: RemoteTag

        var url: URL { temporary.url }
    }

    /// Makes a ``LocalTemporary`` in the folder of `path` (made, with the folders it lacks,
    /// when missing), beneath the container: a path that is not inside it is refused before
    /// anything is made.
    func makeTemporary(besides path: RemotePath, kind: String, operation: String) throws -> LocalTemporary {
        let (folder, _) = try containerFolder().parent(
            of: path.components, creating: true, operation: operation)
        let name = SyncTrees.temporaryPrefix + "\(UUID().uuidString).\(kind)"
        let file = try folder.open(
            name, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600, operation: operation)
        return LocalTemporary(folder: folder, name: name, file: file)
    }

    /// Streams the remote file at `path` into a temporary file in the folder of `local`,
    /// flushed, with the hash of what arrived and the tag of what was read.
    func fetch(_ path: RemotePath, besides local: RemotePath, expectedSize: Int64? = nil) throws
        -> FetchedFile
    {
        let temporary = try makeTemporary(besides: local, kind: "download", operation: "download into")
        // Hashed on a thread of its own while this one writes and receives.
        let hashing = HashingQueue()
        var pacer = WritebackPacer()
        do {
            let tag = try remote.read(path, expectedSize: expectedSize) { data in
                moved(data.count)
                hashing.add(data)
                try data.withUnsafeBytes {
                    try temporary.file.writeAll($0, operation: "write the download into")
                }
                pacer.wrote(data.count, to: temporary.file)
            }
            try temporary.file.sync(operation: "flush (fsync) the download")
            return FetchedFile(temporary: temporary, hash: hashing.finalize().hex, tag: tag)
        } catch {
            temporary.remove()
            throw error
        }
    }

    /// Renames `temporary` over the file at `path` as a coordinated write, if the local file
    /// is still `expected`, keeping what it replaces in the version store.
    ///
    /// The file put in place has the mode of the one it replaces (private stays private), or,
    /// replacing none, the container's (``ContainedFolder/newFilePermissions``).
    ///
    /// - Parameters:
    ///   - intent: The intent recorded for this download; settled here when nothing is put in
    ///     place (the caller settles it with the journal's record otherwise).
    ///   - beforeReplacing: Runs once the replaced file is kept, before the rename: the
    ///     caller's chance to record what the kept version is for.
    /// - Returns: The conflict version made of the replaced file, and the merge base kept of
    ///   the bytes put in place: kept right after the rename, so that a crash before the
    ///   journal records the download, and an edit before sync starts again, lose no bytes.
    @discardableResult
    func place(
        _ temporary: LocalTemporary, at path: RemotePath, expecting expected: FileStatus?,
        keeping replaced: Replaced, intent: SyncIntent? = nil,
        beforeReplacing: (FileVersion?) throws -> Void = { _ in }
    ) throws -> (conflict: FileVersion?, base: String?) {
        do {
            return try replace(
                temporary, at: path, expecting: expected, keeping: replaced, beforeReplacing: beforeReplacing)
        } catch let error where !(error is SyncInterruption) {
            // A crash leaves the intent for the next pass; any other failure placed nothing.
            if let intent { try journal.completeIntent(intent.id) }
            throw error
        }
    }

    private func replace(
        _ temporary: LocalTemporary, at path: RemotePath, expecting expected: FileStatus?,
        keeping replaced: Replaced, beforeReplacing: (FileVersion?) throws -> Void
    ) throws -> (conflict: FileVersion?, base: String?) {
        let operation = "put in place"
        let container = try containerFolder()
        let (folder, name) = try container.parent(of: path.components, operation: operation)
        let url = folder.url(of: name)
        try checkpoint(.beforeLocalWrite)
        let coordinator = FileCoordinator()
        var version: FileVersion?
        var base: String?
        try coordinator.coordinate(writingItemAt: url, options: .forReplacing) { accessed in
            try Self.requireSame(accessed, url)
            let original = try folder.information(about: name, operation: operation)
            let current = original.map(FileStatus.init)
            guard current.map(JournalItem.LocalStatus.init) == expected.map(JournalItem.LocalStatus.init)
            else {
                throw SkippedItem(reason: "changed here while the remote's version was fetched")
            }
            var held: HeldVersion?
            if let current {
                switch replaced {
                case .history:
                    held = try holdReplaced(name, in: folder, at: url, status: current)
                case .conflict(let base):
                    version = try store.addConflictOfItem(
                        at: url, withContentsOf: url,
                        origin: VersionOrigin(
                            computer: configuration.computerName, device: store.device.identifier),
                        modificationDate: current.modification.date, mergeBase: base)
                }
            }
            do {
                try beforeReplacing(version)
                try SafeSave.carryOver(
                    from: original, name: name, in: folder.descriptor, to: temporary.file, target: url,
                    permissions: original == nil ? container.newFilePermissions : nil,
                    options: .discardingExtendedAttributes)
                try temporary.folder.moveItem(
                    temporary.name, to: folder, as: name, replacing: true, operation: operation)
            } catch {
                // Nothing replaced: what is held is still the file's.
                if let held { store.release(held) }
                throw error
            }
            try folder.sync(operation: "flush (fsync) the folder of")
            base = try keepBase(of: url, size: localStatus(path)?.size ?? 0)
        }
        try checkpoint(.afterLocalWrite)
        return (version, base)
    }

    /// Keeps the file `name` in `folder` (the item at `url`, whose status was `status`)
    /// before sync replaces or deletes it: held in the version store by a hard link, a cheap
    /// step whatever its size, and stored as a version by the end of the pass
    /// (``VersionStore/storeHeldVersions()``), or by the next pass or listing of versions
    /// after a crash; where it cannot be linked (another volume), stored now.
    func holdReplaced(_ name: String, in folder: ContainedFolder.Directory, at url: URL, status: FileStatus)
        throws -> HeldVersion?
    {
        guard let held = try store.hold(itemAt: url, in: folder.descriptor, named: name) else {
            _ = try store.addOfItem(at: url, withContentsOf: url)
            return nil
        }
        guard held.device == status.device, held.inode == status.inode else {
            store.release(held)
            throw SkippedItem(reason: "replaced here while sync was about to keep its old contents")
        }
        return held
    }

    /// Refuses an access whose URL the coordinator changed: the item moved while the access
    /// waited (a coordinated move), and the next pass finds it where it went.
    static func requireSame(_ accessed: URL, _ url: URL) throws {
        guard accessed.standardizedFileURL.path == url.standardizedFileURL.path else {
            throw SkippedItem(reason: "moved to \(accessed.path) while sync waited for it")
        }
    }

    // MARK: - Both sides changed

    /// Both sides changed the file: equal bytes are recorded; text changes that do not
    /// overlap are merged and written to both sides; anything else keeps the remote's version
    /// at the path and this device's as a conflict version, shared with every device.
    func reconcile(_ path: RemotePath, _ entry: RemoteEntry, local: FileStatus, known: JournalItem?) throws {
        let theirs = try fetch(path, besides: path, expectedSize: entry.size)
        try removing(theirs.temporary) {
            try reconcile(path, entry, local: local, known: known, theirs: theirs)
        }
    }

    private func reconcile(
        _ path: RemotePath, _ entry: RemoteEntry, local: FileStatus, known: JournalItem?, theirs: FetchedFile
    ) throws {
        let url = localURL(path)
        let mineHash = try ContentHash(contentsOf: url).hex
        if mineHash == theirs.hash {
            try journal.upsert(
                JournalItem(
                    path: path, kind: .file, remoteTag: theirs.tag, remoteSize: entry.size,
                    remoteFileID: entry.fileID, syncedHash: mineHash, local: JournalItem.LocalStatus(local),
                    baseVersion: nil))
            summary.recorded += 1
            return
        }
        if let base = baseBytes(of: known, at: url), let mine = try? Data(contentsOf: url),
            let theirsBytes = try? Data(contentsOf: theirs.url),
            case .merged(let merged) = TextMerge.merge(base: base, mine: mine, theirs: theirsBytes)
        {
            try writeMerge(merged, path, over: theirs, entry: entry, local: local)
            summary.merged += 1
            summary.notes.append("\(path): changed on both sides; the changes were merged")
            return
        }
        let intent = try beginDownload(path, theirs)
        // The conflict is recorded before the remote's version replaces this device's: a crash
        // in between leaves a conflict version that is shared all the same. One already
        // recorded for the same version (an attempt a crash cut short) is not recorded twice.
        let recordConflict: (FileVersion?) throws -> Void = { version in
            guard let version else { return }
            try self.journal.transaction { journal in
                guard
                    !(try journal.conflicts().contains {
                        $0.path == path && $0.localVersion == version.persistentIdentifier
                    })
                else { return }
                try journal.upsertConflict(
                    SharedConflict(
                        id: self.engine.makeIdentifier(), path: path,
                        localVersion: version.persistentIdentifier,
                        isUploaded: false))
            }
        }
        let placed = try place(
            theirs.temporary, at: path, expecting: local, keeping: .conflict(base: known?.syncedHash),
            intent: intent,
            beforeReplacing: recordConflict)
        guard placed.conflict != nil else { return try journal.completeIntent(intent.id) }
        let status = localStatus(path)
        try journal.transactionTogether { journal in
            // The remote's version is now the one both sides have: the base of the next merge.
            try journal.upsert(
                JournalItem(
                    path: path, kind: .file, remoteTag: theirs.tag, remoteSize: entry.size,
                    remoteFileID: entry.fileID, syncedHash: theirs.hash,
                    local: status.map(JournalItem.LocalStatus.init), baseVersion: placed.base))
            try journal.completeIntent(intent.id)
        }
        try checkpoint(.afterJournal)
        summary.conflicts += 1
        summary.notes.append(
            "\(path): changed on both sides; the remote's version is in place and this device's is a conflict version"
        )
    }

    /// Writes a clean merge: here, then to the remote on the tag of the version merged,
    /// unless the merge is that version byte for byte (this device's change was in it
    /// already): a write of the same bytes would read as a new edit on every other device.
    private func writeMerge(
        _ merged: Data, _ path: RemotePath, over theirs: FetchedFile, entry: RemoteEntry, local: FileStatus
    ) throws {
        if ContentHash(of: merged).hex == theirs.hash {
            let intent = try beginDownload(path, theirs)
            let placed = try place(
                theirs.temporary, at: path, expecting: local, keeping: .history, intent: intent)
            return try recordDownload(
                path, hash: theirs.hash, tag: theirs.tag, entry: entry, base: placed.base, intent: intent)
        }
        let tag = theirs.tag
        let operation = "write the merge beside"
        let temporary = try makeTemporary(besides: path, kind: "merge", operation: operation)
        try removing(temporary) {
            try merged.withUnsafeBytes { try temporary.file.writeAll($0, operation: operation) }
            try temporary.file.sync(operation: "flush (fsync) the merge")
            try writeMerge(merged, path, over: tag, local: local, from: temporary)
        }
    }

    private func writeMerge(
        _ merged: Data, _ path: RemotePath, over tag: RemoteTag, local: FileStatus,
        from temporary: LocalTemporary
    ) throws {
        // Here first: a crash between the two writes must leave the merge where the next pass
        // finds it. Placed here and not on the remote, it is this device's change, merged
        // again with the remote's (which it contains); on the remote and not here, the journal
        // would take it as synced and this device's unmerged side as a newer edit, and upload
        // that over it.
        let placed = try place(temporary, at: path, expecting: local, keeping: .history)
        let status = localStatus(path)
        let hash = ContentHash(of: merged).hex
        let intent = try journal.beginIntent(
            SyncIntent(
                operation: .upload, path: path, hash: hash, condition: .matches(tag), created: clock.now))
        try checkpoint(.beforeRemoteWrite)
        let written = try write(path, from: UploadSource(merged), hash: { hash }, condition: .matches(tag))
        try checkpoint(.afterRemoteWrite)
        try journal.transactionTogether { journal in
            try journal.upsert(
                JournalItem(
                    path: path, kind: .file, remoteTag: written.tag, remoteSize: Int64(merged.count),
                    remoteFileID: written.fileID, syncedHash: hash,
                    local: status.map(JournalItem.LocalStatus.init), baseVersion: placed.base))
            try journal.completeIntent(intent.id)
        }
        try checkpoint(.afterJournal)
    }

    // MARK: - Deleting and moving

    /// Deletes the remote file on the tag last seen, and forgets it.
    ///
    /// - Parameter confirming: The listing had it no more: only a delete that finds it is
    ///   counted (a stale listing left it out).
    func deleteRemote(_ path: RemotePath, tag: RemoteTag?, confirming: Bool = false) throws {
        let condition = tag.map(WriteCondition.matches) ?? .absent
        let intent = try journal.beginIntent(
            SyncIntent(operation: .delete, path: path, condition: condition, created: clock.now))
        try checkpoint(.beforeRemoteWrite)
        var deleted = true
        do {
            try remote.delete(path, condition: condition)
        } catch let error as RemoteError where error.kind == .notFound {
            // Already gone: what the delete was for.
            deleted = false
        } catch {
            // Never recorded as done: the next pass sees the item again.
            try journal.completeIntent(intent.id)
            throw error
        }
        try checkpoint(.afterRemoteWrite)
        try journal.transactionTogether { journal in
            try journal.remove(path)
            try journal.completeIntent(intent.id)
        }
        if deleted || !confirming { summary.deletedRemotely += 1 }
    }

    /// Deletes the local file the remote deleted, as a coordinated deletion (an open document
    /// closes or keeps its unsaved text), after keeping it in the version store.
    ///
    /// The remote is asked once more first: a listing that was behind (a stale one) must not
    /// delete a document that is still there. And the journal forgets how the file looked
    /// before it goes: a crash between the two then reads the missing file as "never here",
    /// not as a deletion made here to be propagated.
    func deleteLocal(_ path: RemotePath, status: FileStatus) throws {
        let operation = "delete as on the remote"
        let (folder, name) = try containerFolder().parent(of: path.components, operation: operation)
        let url = folder.url(of: name)
        if try remote.entry(at: path) != nil {
            throw SkippedItem(
                reason:
                    "missing from the remote's listing, yet there when asked for alone: its listings may leave items out"
            )
        }
        if var item = try journal.item(at: path) {
            item.local = nil
            try journal.upsert(item)
        }
        try checkpoint(.beforeLocalWrite)
        try FileCoordinator().coordinate(writingItemAt: url, options: .forDeleting) { accessed in
            try Self.requireSame(accessed, url)
            guard
                try folder.status(of: name, operation: operation).map(JournalItem.LocalStatus.init)
                    == JournalItem.LocalStatus(status)
            else {
                throw SkippedItem(reason: "changed here while its deletion on the remote was applied")
            }
            let held = try holdReplaced(name, in: folder, at: url, status: status)
            do {
                if let deleted = configuration.deletedItemsFolder {
                    try setAside(name, in: folder, into: deleted)
                } else {
                    try folder.removeItem(name, operation: "delete")
                }
            } catch {
                if let held { store.release(held) }
                throw error
            }
        }
        try checkpoint(.afterLocalWrite)
        try journal.remove(path)
        summary.deletedLocally += 1
    }

    /// Moves the deleted document `name` (in `source`, a folder of the container) into
    /// `folder` under a free name (`NAME 2.txt` after `NAME.txt`), never over another.
    ///
    /// What is set aside stays private whatever it was: the folder is made 0700
    /// (``PrivateFolder``) and the document 0600.
    private func setAside(_ name: String, in source: ContainedFolder.Directory, into folder: URL) throws {
        let operation = "set aside the deleted document"
        try PrivateFolder.open(at: folder, operation: operation)
        let url = source.url(of: name)
        let stem = url.deletingPathExtension().lastPathComponent
        let suffix = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        for attempt in 1...1000 {
            let free = attempt == 1 ? name : "\(stem) \(attempt)\(suffix)"
            do {
                try SafeSave.moveItem(
                    named: name, in: source.descriptor, source: url, to: folder.appendingPathComponent(free),
                    permissions: 0o600, operation: operation)
                return
            } catch let error as DocumentKitError where error.code == .fileExists {
                continue
            }
        }
        throw SkippedItem(reason: "no free name for it in \(folder.path)")
    }

    func moveRemote(_ source: RemotePath, to destination: RemotePath, tag: RemoteTag?, known: JournalItem?)
        throws
    {
        try makeRemoteParents(of: destination)
        let intent = try journal.beginIntent(
            SyncIntent(
                operation: .move, path: source, destination: destination, hash: known?.syncedHash,
                condition: tag.map(WriteCondition.matches), created: clock.now))
        try checkpoint(.beforeRemoteWrite)
        let newTag: RemoteTag?
        do {
            newTag = try remote.move(source, to: destination, condition: tag.map(WriteCondition.matches))
        } catch let error as RemoteError where error.leavesOutcomeUnknown {
            // Perhaps done: the intent stays, and the next pass looks (as after a crash), so
            // that a move that went through is known before anything else is done to its file.
            throw error
        } catch {
            try journal.completeIntent(intent.id)
            throw error
        }
        try checkpoint(.afterRemoteWrite)
        let entry = try remote.entry(at: destination)
        let status = FileStatus(path: localURL(destination).path)
        try journal.transactionTogether { journal in
            try journal.renameItem(from: source, to: destination)
            if var item = try journal.item(at: destination) {
                item.remoteTag = newTag ?? entry?.tag
                item.remoteFileID = entry?.fileID ?? item.remoteFileID
                // A document kept on the server only stays so: its placeholder moved.
                if let status {
                    item.local = JournalItem.LocalStatus(status)
                } else if item.local != .evicted {
                    item.local = nil
                }
                try journal.upsert(item)
            }
            try journal.completeIntent(intent.id)
        }
        // Moved here without coordination (a user's `mv`): the version store learns it now,
        // so that a file that comes to the old path later is not taken for this one.
        store.itemDidMove(from: localURL(source), to: localURL(destination))
        summary.moved += 1
    }

    /// Moves the local file as the remote's was moved: a coordinated move, never over a file,
    /// so that it keeps its inode and its history (the version store follows it), and open
    /// documents follow it (`presentedItemDidMove(to:)`).
    ///
    /// - Parameter status: The file as the scan saw it: one whose bytes changed since is left
    ///   for the next pass, which uploads the change (the journal would otherwise take the
    ///   changed file as the synced one).
    func moveLocal(_ source: RemotePath, to destination: RemotePath, _ entry: RemoteEntry, status: FileStatus)
        throws
    {
        let operation = "move as on the remote"
        let container = try containerFolder()
        let (fromFolder, fromName) = try container.parent(of: source.components, operation: operation)
        let (toFolder, toName) = try container.parent(
            of: destination.components, creating: true, operation: operation)
        let (from, to) = (fromFolder.url(of: fromName), toFolder.url(of: toName))
        try checkpoint(.beforeLocalWrite)
        let coordinator = FileCoordinator()
        try coordinator.coordinate(
            writingItemAt: from, options: .forMoving, writingItemAt: to, options: .forReplacing
        ) { movingFrom, movingTo in
            try Self.requireSame(movingFrom, from)
            try Self.requireSame(movingTo, to)
            guard let now = try fromFolder.status(of: fromName, operation: operation),
                now.isSameFileAndContents(as: status)
            else {
                throw SkippedItem(reason: "changed here while its move on the remote was applied")
            }
            try fromFolder.moveItem(
                fromName, to: toFolder, as: toName, replacing: false, operation: operation)
            try toFolder.sync(operation: operation)
            if source.parent != destination.parent { try fromFolder.sync(operation: operation) }
            coordinator.item(at: from, didMoveTo: to)
        }
        try checkpoint(.afterLocalWrite)
        let status = localStatus(destination)
        try journal.transactionTogether { journal in
            try journal.renameItem(from: source, to: destination)
            if var item = try journal.item(at: destination) {
                // Found by its file identity, the remote file may also have been edited since
                // (a new tag): the journal keeps the tag it knew, so that the next pass sees
                // the edit and fetches it instead of taking the bytes here as the remote's.
                if entry.tag == item.remoteTag { item.remoteSize = entry.size }
                item.remoteFileID = entry.fileID
                item.local = status.map(JournalItem.LocalStatus.init)
                try journal.upsert(item)
            }
        }
        summary.moved += 1
        arrived.insert(destination)
    }

    // MARK: - Folders

    func makeRemoteFolder(_ path: RemotePath) throws {
        // A folder made here inside one the remote deleted meanwhile brings its parent back.
        if !path.parent.isRoot, !remoteFolders.contains(path.parent) { try makeRemoteParents(of: path) }
        do {
            try remote.makeFolder(path)
            if !path.isMetadata { summary.foldersMade += 1 }
        } catch let error as RemoteError where error.kind == .exists {}
        remoteFolders.insert(path)
        try journal.upsert(JournalItem(path: path, kind: .folder))
    }

    /// Makes the remote folders above `path` that the pass has not seen there.
    func makeRemoteParents(of path: RemotePath) throws {
        var missing: [RemotePath] = []
        var folder = path.parent
        while !remoteFolders.contains(folder) {
            missing.append(folder)
            folder = folder.parent
        }
        for folder in missing.reversed() { try makeRemoteFolder(folder) }
    }

    // MARK: - Hashes and bases

    /// The SHA-256 (hex) of an open file, read from its start; `size`, what the file held
    /// when last looked at, only sizes the buffer.
    static func hash(_ file: FileDescriptor, url: URL, size: Int64) throws -> String {
        var hasher = ContentHash.Hasher()
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: RemoteChunk.bufferSize(forFileOf: size), alignment: 64)
        defer { buffer.deallocate() }
        var offset: off_t = 0
        while true {
            let count = try Syscall.pread(file.rawValue, buffer, offset).get("read to hash", url)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += off_t(count)
        }
        return hasher.finalize().hex
    }

    /// The hash of the remote file's bytes and the tag they were read at.
    func remoteHash(_ path: RemotePath) throws -> (String, RemoteTag) {
        var hasher = ContentHash.Hasher()
        let tag = try remote.read(path) { data in data.withUnsafeBytes { hasher.update($0) } }
        return (hasher.finalize().hex, tag)
    }

    /// Keeps bytes that came from the remote as the merge base of the next three-way merge,
    /// for a document small enough to merge; returns the version holding them.
    ///
    /// Only for downloads and merges: bytes this device uploaded are its own, and the save
    /// that next changes them keeps them as a history version, where ``baseBytes(of:at:)``
    /// finds them by their hash. (Adding a version costs the store a rewrite of its index, so
    /// one per upload would make a first sync of many documents quadratic.)
    func keepBase(of url: URL, size: Int64) throws -> String? {
        guard size <= Int64(TextMerge.mostBytes) else { return nil }
        return try? store.addOfItem(at: url, withContentsOf: url).persistentIdentifier
    }

    /// Keeps the bytes of the files this pass uploaded as their merge bases, in one batch
    /// of the version store (one pack for all their records and small contents), and
    /// records them in one transaction. The store keeps a base only where the file still
    /// holds the uploaded bytes (their hash) in the same file (inode, size, modification
    /// time); elsewhere it keeps none, and a later merge finds its base among the item's
    /// versions or makes a conflict. A crash before this costs the bases, never bytes.
    ///
    /// Called at the end of the pass, and by the upload that makes
    /// ``basesKeptTogether`` wait.
    func keepPendingBases() throws {
        // Taken and emptied in one access: uploads running beside this go on adding.
        var pending: [(path: RemotePath, hash: String, status: FileStatus)] = []
        swap(&pending, &pendingBases)
        // The uploads whose bases these are, recorded first (each was handed in before its base).
        recordUploadsWaiting()
        guard !pending.isEmpty else { return }
        let kept = store.keepBases(
            pending.map { BaseToKeep(url: localURL($0.path), hash: $0.hash, status: $0.status) })
        try journal.transaction { journal in
            for (base, kept) in zip(pending, kept) {
                guard let kept, var item = try journal.item(at: base.path), item.syncedHash == base.hash
                else { continue }
                item.baseVersion = kept.versionID
                // The store stamped the file's identity, which changes its status-change time
                // only: the bytes are the ones uploaded.
                item.local = JournalItem.LocalStatus(kept.status)
                try journal.upsert(item)
            }
        }
    }

    /// The bytes last synced: the version the journal names, or else the newest version of
    /// the item that holds bytes with the synced hash; nil when the store has neither.
    func baseBytes(of known: JournalItem?, at url: URL) -> Data? {
        guard let known, let hash = known.syncedHash else { return nil }
        func holdingBase(_ version: FileVersion) -> Data? {
            guard let bytes = try? Data(contentsOf: version.url), ContentHash(of: bytes).hex == hash else {
                return nil
            }
            return bytes
        }
        if let id = known.baseVersion, let version = store.version(itemAt: url, forPersistentIdentifier: id),
            let bytes = holdingBase(version)
        {
            return bytes
        }
        for version in store.otherVersionsOfItem(at: url).reversed() where !version.isConflict {
            if let bytes = holdingBase(version) { return bytes }
        }
        return nil
    }
}
