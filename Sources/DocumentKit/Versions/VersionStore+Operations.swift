import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The previous contents of an item, linked into the store just before a save replaced it.
struct CapturedItem: Sendable {
    var staged: URL
    var identity: ItemIdentity
    var name: String
    var modified: Date
    /// When the save replaced it: the version's age for thinning counts from here.
    var captured: Date
    /// Replaced on purpose (a restore), not by an autosave: see ``VersionRecord/isOnPurpose``.
    var isOnPurpose = false
}

extension VersionStore {
    // MARK: - History from saves

    /// Links the item at `url` into the store before a safe save replaces it. Call
    /// ``commit(_:savedAt:)`` once the save succeeded, or ``discard(_:)``.
    ///
    /// Cheap: a hard link per file (and the identity attribute stamped on the original so the
    /// save carries it over). Never throws: a failure is reported and the save goes on
    /// without a version.
    func capture(itemAt url: URL) -> CapturedItem? {
        // Not on the store's queue: a save must not wait for the versions of earlier saves.
        do {
            guard let identity = try identity(ofItemAt: url, creating: true) else { return nil }
            // A document that is a link keeps the history of what it points to, which is what
            // a safe save replaces.
            let item = url.resolvingSymlinksInPath()
            guard case .success(let info) = Syscall.fstatat(AT_FDCWD, item.path, followLinks: false) else {
                return nil
            }
            let staged = try stagingURL()
            try linkOrCopy(item, to: staged)
            return CapturedItem(
                staged: staged, identity: identity, name: url.lastPathComponent,
                modified: info.modificationDate,
                captured: now())
        } catch {
            report(error, operation: "keep the previous version of a document")
            return nil
        }
    }

    /// Turns a captured item into a history version, off the caller's thread, once the save
    /// that replaced it has succeeded, and notes where the item is now.
    ///
    /// Versions committed while the store's queue is busy are stored together, sharing their
    /// flushes (see `storePendingCommits()`).
    func commit(_ captured: CapturedItem?, savedAt url: URL) {
        guard let captured else { return }
        // The package writer exchanges folders, which carries no attributes: stamp it now.
        let location = stampIdentity(captured.identity.id, onItemAt: url)
        pendingCommits.withLock { $0.append(PendingCommit(captured: captured, url: url, location: location)) }
        queue.async { [self] in storePendingCommits() }
    }

    /// Throws a captured item away: the save failed, so it is still the current contents.
    func discard(_ captured: CapturedItem?) {
        guard let captured else { return }
        removeStaged(captured.staged)
    }

    // MARK: - Adding versions

    /// Adds a version of the item at `itemURL` holding the contents at `contentsURL`.
    ///
    /// - Parameters:
    ///   - isConflict: Whether it is a conflict version (another writer's unmerged contents).
    ///   - origin: The device that made the contents; nil for this one (``device``).
    ///   - savingProgram: The program that made the contents, for a conflict version.
    ///   - modificationDate: When the contents were made; by default now.
    ///   - byMoving: Whether to remove `contentsURL` once stored.
    /// - Throws: ``DocumentKitError`` if the item or the contents cannot be read or the store
    ///   cannot be written.
    /// - Returns: The new version; for a conflict version with the same contents as one of the
    ///   item's unresolved conflict versions, that version, so the same text is never offered
    ///   twice.
    func addVersion(
        ofItemAt itemURL: URL, contentsOf contentsURL: URL, isConflict: Bool, origin: VersionOrigin?,
        savingProgram: String? = nil, modificationDate: Date?, byMoving: Bool
    ) throws -> FileVersion {
        try storeVersion(
            ofItemAt: itemURL, contentsOf: contentsURL, isConflict: isConflict, origin: origin,
            savingProgram: savingProgram, modificationDate: modificationDate, byMoving: byMoving
        ).version
    }

    /// ``addVersion(ofItemAt:contentsOf:isConflict:origin:savingProgram:modificationDate:byMoving:)``,
    /// also saying whether the version is new or one already there with the same contents.
    ///
    /// - Parameter formerInode: For an item just deleted, the device and inode it had: how the
    ///   store finds it when it was last seen under another path.
    ///   `creatingMissingItem` gives an item deleted under a path the store never knew an
    ///   identity of its own, so that its last text is kept all the same.
    func storeVersion(
        ofItemAt itemURL: URL, contentsOf contentsURL: URL, isConflict: Bool, origin: VersionOrigin?,
        savingProgram: String?, modificationDate: Date?, mergeBase: String? = nil, byMoving: Bool,
        formerInode: (device: UInt64, inode: UInt64)? = nil, creatingMissingItem: Bool = false
    ) throws -> (version: FileVersion, isNew: Bool) {
        let (version, isNew): (FileVersion, Bool) = try queue.sync {
            // An item just deleted is still known by its last path: its last text can be kept,
            // and a file that appears there again finds it.
            let known: ItemIdentity?
            if FileManager.default.fileExists(atPath: itemURL.path) {
                known = try identity(ofItemAt: itemURL, creating: true)
            } else {
                let path = itemURL.standardizedFileURL.path
                let id =
                    withIndex({ try $0.itemID(path: path) }) ?? identitiesGiven.withLock { $0[path] }
                    ?? formerInode.flatMap { former in
                        withIndex { try $0.itemID(device: former.device, inode: former.inode) }
                    }
                    ?? (creatingMissingItem ? UUID().uuidString : nil)
                if let id { identitiesGiven.withLock { $0[path] = id } }
                known = id.map { id in
                    let entry = withIndex { try $0.entry(of: id) }
                    return ItemIdentity(
                        id: id, path: path, device: entry?.device ?? 0, inode: entry?.inode ?? 0)
                }
            }
            guard let identity = known else {
                throw DocumentKitError(.fileNotFound, operation: "add a version of", url: itemURL)
            }
            return try withStoreLock {
                let writes = StoreWriteBatch(store: self)
                let manifest = try ingest(contentsURL, into: writes).manifest
                // The same contents twice is one version: an unresolved conflict version, or
                // any history version. Its chunks are flushed all the same: one found damaged
                // was stored again, and the version that holds it is whole again only then.
                if let same = records(ofItem: identity.id).first(where: {
                    $0.manifest == manifest && $0.isConflict == isConflict && !(isConflict && $0.isResolved)
                }) {
                    try writes.flush()
                    // The item is where it is now all the same (it may have moved unseen);
                    // no record holds that, so the index is flushed if it changed.
                    try noteLocation(
                        of: identity.id, path: identity.path, device: identity.device, inode: identity.inode)
                    return (FileVersion(record: same, store: self), false)
                }
                let date = now()
                let origin = origin ?? VersionOrigin(device)
                var record = VersionRecord(
                    id: UUID().uuidString, itemID: identity.id, name: itemURL.lastPathComponent,
                    itemPath: identity.path, device: identity.device, inode: identity.inode,
                    savingComputer: origin.computer ?? "", savingDevice: origin.device,
                    modified: modificationDate ?? date, captured: date, isConflict: isConflict,
                    isResolved: !isConflict, isDiscardable: !isConflict, manifest: manifest)
                record.savingProgram = savingProgram
                record.isOnPurpose = true
                record.mergeBase = mergeBase.flatMap { ContentHash.isValid($0) ? $0 : nil }
                try stageRecord(record, in: writes)
                try writes.flush()
                noteRecordStored(record)
                // The record just flushed holds the location: see `IdentityIndex.note(_:durably:)`.
                try noteLocation(
                    of: identity.id, path: identity.path, device: identity.device, inode: identity.inode,
                    durably: false)
                return (FileVersion(record: record, store: self), true)
            }
        }
        if byMoving { try? FileManager.default.removeItem(at: contentsURL) }
        if isNew { notify(.gained, version, itemURL: itemURL) }
        return (version, isNew)
    }

    // MARK: - Listing

    /// Every stored version of the item at `url`, oldest first; empty if it has none or is
    /// unknown. Versions held (a file sync replaced, not stored yet) are stored first.
    public func otherVersionsOfItem(at url: URL) -> [FileVersion] {
        versions(ofItemAt: url, storingHeld: true)
    }

    /// The conflict versions of the item at `url` not yet resolved. Held versions are history,
    /// never conflicts: they are left for the next full listing.
    public func unresolvedConflictVersionsOfItem(at url: URL) -> [FileVersion] {
        versions(ofItemAt: url, storingHeld: false).filter { $0.isConflict && !$0.isResolved }
    }

    private func versions(ofItemAt url: URL, storingHeld: Bool) -> [FileVersion] {
        let (versions, stored) = queue.sync { () -> ([FileVersion], [(FileVersion, URL)]) in
            // Before the identity: a held item's only record of where it is may be its hold.
            let stored: [(FileVersion, URL)] = storingHeld ? storeHeldReporting { _ in true } : []
            guard let identity = try? identity(ofItemAt: url, creating: false) else { return ([], stored) }
            return (records(ofItem: identity.id).map { FileVersion(record: $0, store: self) }, stored)
        }
        notifyStored(stored)
        return versions
    }

    /// The version of the item at `url` with `persistentIdentifier`, or nil; a held version
    /// with that identifier is stored first.
    public func version(itemAt url: URL, forPersistentIdentifier persistentIdentifier: String) -> FileVersion?
    {
        let (version, stored) = queue.sync { () -> (FileVersion?, [(FileVersion, URL)]) in
            let stored = storeHeldReporting { $0.hasSuffix(".\(persistentIdentifier)") }
            guard let identity = try? identity(ofItemAt: url, creating: false),
                let record = record(ofItem: identity.id, id: persistentIdentifier)
            else { return (nil, stored) }
            return (FileVersion(record: record, store: self), stored)
        }
        notifyStored(stored)
        return version
    }

    /// ``storeHeld(_:)``, on the store's queue, reporting a failure (the holds stay for the
    /// next try) rather than failing a listing.
    private func storeHeldReporting(_ wanted: (String) -> Bool) -> [(FileVersion, URL)] {
        do {
            return try storeHeld(wanted)
        } catch {
            report(error, operation: "store a held version")
            return []
        }
    }

    /// The version with `persistentIdentifier`, of whichever item holds it: one deleted, or
    /// moved where no path finds it. Searches every item, so it is for the rare case.
    package func version(forPersistentIdentifier persistentIdentifier: String) -> FileVersion? {
        let (version, stored) = queue.sync { () -> (FileVersion?, [(FileVersion, URL)]) in
            let stored = storeHeldReporting { $0.hasSuffix(".\(persistentIdentifier)") }
            return (versionInAnyItem(persistentIdentifier), stored)
        }
        notifyStored(stored)
        return version
    }

    private func versionInAnyItem(_ persistentIdentifier: String) -> FileVersion? {
        // The packs' tables are in memory: the item of a packed version is found without a read.
        let catalog = packCatalog()
        let packedItem = UUID(uuidString: persistentIdentifier).flatMap { id in
            catalog.live.lazy.compactMap { catalog.listed[$0]?.records.first { $0.versionID == id } }
                .first
        }
        let items = packedItem.map { [$0.itemID.uuidString] } ?? itemIDs()
        for item in items {
            if let record = record(ofItem: item, id: persistentIdentifier) {
                return FileVersion(record: record, store: self)
            }
        }
        return nil
    }

    /// Removes every stored version of the item at `url`, conflicts included.
    ///
    /// - Throws: ``DocumentKitError`` if the store cannot be changed.
    public func removeOtherVersionsOfItem(at url: URL) throws {
        var stored: [(FileVersion, URL)] = []
        let removed: [FileVersion] = try queue.sync {
            // Held ones too: stored after this, they would come back.
            stored = try storeHeld { _ in true }
            guard let identity = try identity(ofItemAt: url, creating: false) else { return [] }
            return try withStoreLock {
                let records = storedRecords(ofItem: identity.id)
                try removeVersions(records.map { ($0.record.itemID, $0.record.id, $0.pack) })
                collectUnusedChunks()
                return records.map { FileVersion(record: $0.record, store: self) }
            }
        }
        notifyStored(stored)
        for version in removed { notify(.lost, version, itemURL: url) }
    }

    /// Removes versions, each from its own file or from the pack that holds it (all of one
    /// pack's with one rewrite of it), and their rebuilt copies. Runs under the store lock.
    func removeVersions(_ versions: [(itemID: String, versionID: String, pack: String?)]) throws {
        var packed: [String: Set<UUID>] = [:]
        for (itemID, versionID, pack) in versions {
            if let pack, let id = UUID(uuidString: versionID) {
                packed[pack, default: []].insert(id)
            } else {
                let url = recordURL(itemID, versionID)
                switch Syscall.unlinkat(AT_FDCWD, url.path) {
                case .success, .failure(.noSuchFileOrDirectory): break
                case .failure(let error):
                    throw DocumentKitError(error, operation: "remove a version", url: url)
                }
            }
            try? FileManager.default.removeItem(
                at: contentsURL.appendingPathComponent(itemID).appendingPathComponent(versionID))
        }
        try removePackedVersions(packed)
        reachedStep(.versionsRemoved)
    }

    // MARK: - One version

    func remove(_ version: FileVersion) throws {
        guard let itemID = version.itemID else {
            throw DocumentKitError(
                .invalidArgument, operation: "remove a version", url: version.url,
                detail: "it is the current version")
        }
        try queue.sync {
            try withStoreLock {
                guard let stored = storedRecord(ofItem: itemID, id: version.persistentIdentifier) else {
                    return
                }
                try removeVersions([(itemID, stored.record.id, stored.pack)])
                collectUnusedChunks()
            }
        }
        notify(.lost, version, itemURL: currentURL(ofItem: itemID))
    }

    func setResolved(_ version: FileVersion, _ resolved: Bool) {
        guard let itemID = version.itemID else { return }
        let changed: Bool = queue.sync {
            do {
                return try withStoreLock {
                    guard var record = record(ofItem: itemID, id: version.persistentIdentifier),
                        record.isResolved != resolved
                    else { return false }
                    record.isResolved = resolved
                    try writeRecord(record)
                    return true
                }
            } catch {
                report(error, operation: "mark a version resolved")
                return false
            }
        }
        if changed { notify(resolved ? .resolved : .gained, version, itemURL: currentURL(ofItem: itemID)) }
    }

    func setDiscardable(_ version: FileVersion, _ discardable: Bool) {
        guard let itemID = version.itemID else { return }
        queue.sync {
            do {
                try withStoreLock {
                    guard var record = record(ofItem: itemID, id: version.persistentIdentifier),
                        record.isDiscardable != discardable
                    else { return }
                    record.isDiscardable = discardable
                    try writeRecord(record)
                }
            } catch {
                report(error, operation: "mark a version discardable")
            }
        }
    }

    /// The version's contents as a file or package in `contents/`, rebuilt when first read:
    /// a cache bounded by ``RebuiltVersionsCache`` (the least recently used go), never
    /// written by listing versions.
    func materializedURL(of version: FileVersion) throws -> URL {
        guard let itemID = version.itemID else { return version.currentURL ?? root }
        let folder = contentsURL.appendingPathComponent(itemID, isDirectory: true)
            .appendingPathComponent(version.persistentIdentifier, isDirectory: true)
        let url = folder.appendingPathComponent(version.storedName)
        if FileManager.default.fileExists(atPath: url.path) {
            // Used now: the trim takes the least recently used first.
            _ = utimes(folder.path, nil)
            return url
        }
        return try queue.sync {
            if FileManager.default.fileExists(atPath: url.path) { return url }
            guard let stored = storedRecord(ofItem: itemID, id: version.persistentIdentifier) else {
                throw DocumentKitError(
                    .fileNotFound, operation: "open a version", url: url, detail: "it was removed")
            }
            try makeFolder(folder)
            let temporary = folder.appendingPathComponent(".\(UUID().uuidString)")
            do {
                try materialize(stored.record.manifest, at: temporary, privately: true, pack: stored.pack)
                _ = try Syscall.renameat(AT_FDCWD, temporary.path, AT_FDCWD, url.path).get(
                    "store a version", url)
            } catch {
                try? FileManager.default.removeItem(at: temporary)
                throw error
            }
            trimRebuiltVersions(keeping: folder)
            return url
        }
    }

    /// Whether every chunk of the version is in the store, without rebuilding it.
    func hasChunks(of version: FileVersion) -> Bool {
        guard let itemID = version.itemID else { return false }
        return queue.sync {
            guard let stored = storedRecord(ofItem: itemID, id: version.persistentIdentifier) else {
                return false
            }
            let catalog = packCatalog()
            let inline = stored.pack.flatMap { catalog.listed[$0]?.chunks } ?? [:]
            return stored.record.manifest.chunkNames.allSatisfy {
                if inline[$0] != nil || catalog.chunkHomes[$0] != nil { return true }
                if case .success = Syscall.fstatat(AT_FDCWD, chunkPath($0), followLinks: true) { return true }
                return false
            }
        }
    }

    /// Replaces the item at `url` with the version's contents by a safe save, keeping what it
    /// replaces as a history version.
    func replaceItem(at url: URL, with version: FileVersion, byMoving: Bool) throws -> URL {
        let target = url.standardizedFileURL
        if let itemID = version.itemID {
            guard
                let stored = queue.sync(execute: {
                    storedRecord(ofItem: itemID, id: version.persistentIdentifier)
                })
            else {
                throw DocumentKitError(
                    .fileNotFound, operation: "restore a version", url: url, detail: "it was removed")
            }
            let exists = FileManager.default.fileExists(atPath: target.path)
            var captured = exists ? capture(itemAt: target) : nil
            captured?.isOnPurpose = true
            do {
                try SafeSave.writeItem(at: target) { staging in
                    try materialize(stored.record.manifest, at: staging, pack: stored.pack)
                }
            } catch {
                discard(captured)
                throw error
            }
            commit(captured, savedAt: target)
            if captured == nil {
                _ = stampIdentity(itemID, onItemAt: target)
            }
            // The replaced contents are in the store before this returns: a tool that exits
            // right after a restore must not lose them.
            waitUntilIdle()
            if byMoving { try remove(version) }
        } else if let current = version.currentURL, current.standardizedFileURL != target {
            let temporary = try stagingURL()
            defer { removeStaged(temporary) }
            try linkOrCopy(current, to: temporary)
            try SafeSave.writeItem(at: target) { staging in try linkOrCopy(temporary, to: staging) }
        }
        return target
    }

    func currentURL(ofItem itemID: String) -> URL? {
        let path = queue.sync { withIndex { try $0.entry(of: itemID)?.path } }
        return path.flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
    }
}
