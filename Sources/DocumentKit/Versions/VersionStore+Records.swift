import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension VersionStore {
    // MARK: - The identity index

    /// The index as this store object last read or wrote it: trusted by its file's status
    /// when that status is old enough to be unique, and otherwise by its bytes' hash (the bytes
    /// themselves are as large as the index: 13 MB at 100,000 items).
    struct IndexCache: Sendable {
        var stamp: FileStatus
        var digest: ContentHash
        var index: IdentityIndex

        init(stamp: FileStatus, data: Data, index: IdentityIndex) {
            self.init(stamp: stamp, digest: ContentHash(of: data), index: index)
        }

        init(stamp: FileStatus, digest: ContentHash, index: IdentityIndex) {
            self.stamp = stamp
            self.digest = digest
            self.index = index
        }
    }

    /// Reads `index.json`; a missing one is rebuilt and written back, a damaged one is
    /// reported and rebuilt from the records.
    ///
    /// The decoded index is kept while the file is unchanged (same inode, size and times), so
    /// identifying items and listing conflicts cost a `stat`, not a read, per call.
    func loadIndex() -> IdentityIndex {
        let stamp = FileStatus(path: indexURL.path)
        let cached = indexCache.withLock { $0 }
        if let stamp, let cached, cached.stamp == stamp, !stamp.isRecent {
            return cached.index
        }
        let data: Data
        do {
            data = try Data(contentsOf: indexURL)
        } catch {
            // Missing (a new store, or a crash before the first write): rebuild it once and
            // keep it, rather than reading every record on every lookup. Without replacing:
            // this runs outside the store's lock, and an index another process wrote
            // meanwhile, under the lock, knows more.
            let rebuilt = rebuildIndex()
            if !rebuilt.items.isEmpty { try? saveIndex(rebuilt, options: .withoutOverwriting) }
            return rebuilt
        }
        // The bytes this object last read or wrote: the same index, without decoding it again
        // (a file just written can share its status with the next one, its bytes cannot).
        if let cached, cached.digest == ContentHash(of: data) {
            if let stamp {
                indexCache.withLock {
                    $0 = IndexCache(stamp: stamp, digest: cached.digest, index: cached.index)
                }
            }
            return cached.index
        }
        let decoder = JSONDecoder()
        if let index = try? decoder.decode(IdentityIndex.self, from: data), index.format == 1,
            index.items.keys.allSatisfy({ UUID(uuidString: $0) != nil })
        {
            if let stamp { indexCache.withLock { $0 = IndexCache(stamp: stamp, data: data, index: index) } }
            return index
        }
        reportRecovery(
            DocumentKitError(
                .corruptFile, operation: "read the version store index", url: indexURL,
                detail: "the index is damaged (\(data.count) bytes); it was rebuilt from the version records")
        )
        let rebuilt = rebuildIndex()
        // Keep the damaged file for a post-mortem, then put the rebuilt one in its place.
        try? makeFolder(damagedURL)
        try? SafeSave.write(
            data, to: damagedURL.appendingPathComponent("index-\(UUID().uuidString).json"), permissions: 0o600
        )
        try? saveIndex(rebuilt)
        return rebuilt
    }

    /// The index as the records say: each item where its newest version saw it.
    func rebuildIndex() -> IdentityIndex {
        withTransientCatalog { rebuildIndexFromRecords() }
    }

    private func rebuildIndexFromRecords() -> IdentityIndex {
        var index = IdentityIndex()
        for itemID in itemIDs() {
            guard let newest = records(ofItem: itemID).max(by: { $0.captured < $1.captured }) else {
                continue
            }
            index.items[itemID] = IdentityIndex.Entry(
                path: newest.itemPath, device: newest.device, inode: newest.inode)
        }
        return index
    }

    /// Writes `index.json`.
    ///
    /// - Parameter durably: Whether to flush it (a safe save). Without, it is written to a
    ///   temporary file and renamed into place: a crash can then leave the previous index,
    ///   or on some file systems an empty one, which is rebuilt from the records. Only for
    ///   changes a flushed record also holds.
    func saveIndex(_ index: IdentityIndex, options: SafeSave.Options = [], durably: Bool = true) throws {
        // Encoded into the file a piece at a time, and hashed as it goes for the cache.
        var hasher = ContentHash.Hasher()
        if durably || !options.isEmpty {
            try SafeSave.write(to: indexURL, options: options, permissions: 0o600) { file in
                try index.encode { piece in
                    hasher.update(piece)
                    try file.write(piece)
                }
            }
        } else {
            try replaceWithoutFlushing(indexURL) { write in
                try index.encode { piece in
                    hasher.update(piece)
                    try write(piece)
                }
            }
        }
        let digest = hasher.finalize()
        if let stamp = FileStatus(path: indexURL.path) {
            indexCache.withLock { $0 = IndexCache(stamp: stamp, digest: digest, index: index) }
        }
    }

    /// Records where an item is now, if that changed.
    ///
    /// - Parameter durably: Whether the index is flushed; see `saveIndex(_:options:durably:)`.
    func noteLocation(
        of itemID: String, path: String, device: UInt64, inode: UInt64, durably: Bool = true
    ) throws {
        try noteLocations(
            [(itemID, IdentityIndex.Entry(path: path, device: device, inode: inode))], durably: durably)
    }

    /// Records where items are now, in order, with one write of the index if any changed.
    func noteLocations(_ locations: [(itemID: String, entry: IdentityIndex.Entry)], durably: Bool) throws {
        var index = loadIndex()
        if locations.contains(where: { index.items[$0.itemID] != $0.entry }) {
            // Changed in place, not copied: the cache lets go of the index it shares storage
            // with (a copy of every item, for each batch noted), and is set again when the
            // index is saved.
            indexCache.withLock { $0 = nil }
        }
        var changed = false
        // Who was last seen at the paths and inodes the batch names, found in one look at the
        // index: a batch of locations costs one pass over it, not one per location.
        struct Place: Hashable {
            var device: UInt64
            var inode: UInt64
        }
        let paths = Set(locations.map(\.entry.path))
        let places = Set(locations.map { Place(device: $0.entry.device, inode: $0.entry.inode) })
        var byPath: [String: Set<String>] = [:]
        var byInode: [Place: Set<String>] = [:]
        for (itemID, known) in index.items {
            let place = Place(device: known.device, inode: known.inode)
            if paths.contains(known.path) { byPath[known.path, default: []].insert(itemID) }
            if places.contains(place) { byInode[place, default: []].insert(itemID) }
        }
        for (itemID, entry) in locations where index.items[itemID] != entry {
            // Another item last seen at this path or inode is somewhere else now.
            let place = Place(device: entry.device, inode: entry.inode)
            for other in byPath[entry.path, default: []].union(byInode[place, default: []])
            where other != itemID {
                guard let known = index.items[other] else { continue }
                byPath[known.path]?.remove(other)
                byInode[Place(device: known.device, inode: known.inode)]?.remove(other)
                index.items[other]?.path = ""
                index.items[other]?.inode = 0
                byPath["", default: []].insert(other)
                byInode[Place(device: known.device, inode: 0), default: []].insert(other)
            }
            if let old = index.items[itemID] {
                byPath[old.path]?.remove(itemID)
                byInode[Place(device: old.device, inode: old.inode)]?.remove(itemID)
            }
            index.items[itemID] = entry
            byPath[entry.path, default: []].insert(itemID)
            byInode[place, default: []].insert(itemID)
            changed = true
        }
        if changed { try saveIndex(index, durably: durably) }
        // The index holds these now: a path this process stood in for them stands for
        // nothing more, and a new file there later is a new item.
        let noted = Set(locations.map(\.itemID))
        identitiesGiven.withLock { given in given = given.filter { !noted.contains($0.value) } }
    }

    /// Puts at `url` the bytes `body` writes (handing each piece to the function it is given),
    /// by writing a temporary file beside it and renaming it over,
    /// without `fsync`: readers see the old file or the new one, a crash may leave either or
    /// (on file systems that do not order the rename after the data) a short one.
    private func replaceWithoutFlushing(_ url: URL, writing body: ((Data) throws -> Void) throws -> Void)
        throws
    {
        let folder = try FileDescriptor.openDirectory(
            url.deletingLastPathComponent(), operation: "open the folder of")
        let temporaryName = SafeSave.temporaryName(for: url.lastPathComponent, kind: "tmp")
        let fd = try Syscall.openat(
            folder.rawValue, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600
        ).get("create a temporary file for", url)
        let temporary = FileDescriptor(rawValue: fd, url: url)
        do {
            try body { data in try data.withUnsafeBytes { try temporary.writeAll($0) } }
            _ = try Syscall.renameat(folder.rawValue, temporaryName, folder.rawValue, url.lastPathComponent)
                .get("rename into place", url)
        } catch {
            _ = Syscall.unlinkat(folder.rawValue, temporaryName)
            throw error
        }
    }

    // MARK: - Records

    /// Every item with versions: those with a folder of records, and those in packs.
    func itemIDs() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: itemsURL.path)) ?? []
        var items = Set(names.compactMap { UUID(uuidString: $0)?.uuidString })
        items.formUnion(packCatalog().byItem.keys.map(\.uuidString))
        return items.sorted()
    }

    /// The item's version records, oldest first, whether in files of their own or in packs;
    /// damaged ones are moved aside and reported. A version in both (a packed record
    /// rewritten, whose pack was not rewritten yet) is its own file's.
    func records(ofItem itemID: String) -> [VersionRecord] {
        storedRecords(ofItem: itemID).map(\.record)
    }

    /// ``records(ofItem:)``, each with the pack that holds it, nil for a file of its own.
    func storedRecords(ofItem itemID: String) -> [(record: VersionRecord, pack: String?)] {
        var result: [(record: VersionRecord, pack: String?)] = looseRecords(ofItem: itemID).map { ($0, nil) }
        let loose = Set(result.map(\.record.id))
        for (record, pack) in packedRecords(ofItem: itemID) where !loose.contains(record.id) {
            result.append((record, pack))
        }
        return result.sorted { $0.record.captured < $1.record.captured }
    }

    /// The item's records in files of their own, `items/ITEM/VERSION.json`.
    func looseRecords(ofItem itemID: String) -> [VersionRecord] {
        let folder = itemFolder(itemID)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var result: [VersionRecord] = []
        for name in names where name.hasSuffix(".json") {
            let url = folder.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url) else { continue }
            if let record = try? VersionRecord.decoded(from: data), record.itemID == itemID,
                name == "\(record.id).json"
            {
                result.append(record)
            } else {
                quarantine(url, reason: "a version record is damaged")
            }
        }
        return result
    }

    /// What a save's commit needs of the item's records (which version is the newest
    /// history, when each entered the store), oldest first, reading only records this store
    /// object has not read before: a save's cost must not grow with the history it keeps.
    ///
    /// Sound because these fields never change once a record is written (only resolution and
    /// discardability are rewritten) and a record's name is its version's UUID, never reused:
    /// listing the item's folder is enough to know what was added or removed since.
    func recordSummaries(ofItem itemID: String) -> [RecordSummary] {
        let folder = itemFolder(itemID)
        let names =
            (try? DirectoryEntry.entries(ofFolderAt: folder, operation: "list the versions of an item"))?
            .map(\.name) ?? []
        var known = recordSummaryCache.withLock { $0[itemID] } ?? [:]
        var current: [String: RecordSummary] = [:]
        // Packed versions are known by their pack and identifier, which never change either.
        let catalog = packCatalog()
        var unread: [PackedVersion] = []
        for packed in UUID(uuidString: itemID).flatMap({ catalog.byItem[$0] }) ?? [] {
            guard let entry = catalog.entry(packed) else { continue }
            let key = "\(packed.pack)/\(entry.versionID.uuidString)"
            if let summary = known.removeValue(forKey: key) {
                current[key] = summary
            } else {
                unread.append(packed)
            }
        }
        if !unread.isEmpty {
            for (record, pack) in packedRecords(ofItem: itemID)
            where unread.contains(where: { $0.pack == pack }) {
                current["\(pack)/\(record.id)"] = RecordSummary(record, pack: pack)
            }
        }
        for name in names where name.hasSuffix(".json") {
            if let summary = known.removeValue(forKey: name) {
                current[name] = summary
                continue
            }
            let url = folder.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url) else { continue }
            if let record = try? VersionRecord.decoded(from: data), record.itemID == itemID,
                name == "\(record.id).json"
            {
                current[name] = RecordSummary(record)
            } else {
                quarantine(url, reason: "a version record is damaged")
            }
        }
        recordSummaryCache.withLock { $0[itemID] = current.isEmpty ? nil : current }
        // A version both in a file of its own and in a pack is one version.
        var seen: Set<String> = []
        return current.values.sorted { $0.captured < $1.captured }.filter { seen.insert($0.id).inserted }
    }

    func record(ofItem itemID: String, id versionID: String) -> VersionRecord? {
        storedRecord(ofItem: itemID, id: versionID)?.record
    }

    /// The version's record and, when a pack holds it, that pack (where its inline contents are).
    func storedRecord(ofItem itemID: String, id versionID: String) -> (record: VersionRecord, pack: String?)?
    {
        guard UUID(uuidString: versionID) != nil, UUID(uuidString: itemID) != nil else { return nil }
        let url = recordURL(itemID, versionID)
        if let data = try? Data(contentsOf: url) {
            guard let record = try? VersionRecord.decoded(from: data) else {
                quarantine(url, reason: "a version record is damaged")
                return nil
            }
            return (record, nil)
        }
        return packedRecord(ofItem: itemID, id: versionID).map { ($0.record, $0.pack) }
    }

    /// Rewrites a record (its resolution or discardability changed) with a safe save.
    ///
    /// A packed record becomes a file of its own: its inline chunks are stored as loose ones
    /// first, then the record is written, then it is removed from its pack (see
    /// `removePackedVersions(_:)`). Until then the version is in both, and its own file is the
    /// one read.
    func writeRecord(_ record: VersionRecord) throws {
        let packed = packedRecord(ofItem: record.itemID, id: record.id)
        if let packed {
            // A record file of its own names loose chunks only: packs' rewrites keep the
            // inline chunks that other packs name, not those that record files name.
            let writes = StoreWriteBatch(store: self)
            let catalog = packCatalog()
            for name in Set(record.manifest.chunkNames) {
                guard !writes.holdsChunk(name),
                    case .failure = Syscall.fstatat(AT_FDCWD, chunkPath(name), followLinks: false),
                    let bytes = try packedChunk(name, preferring: packed.pack, in: catalog)
                else { continue }
                try bytes.withUnsafeBytes { try writes.addChunk(name, $0) }
            }
            try writes.flush()
        }
        try makeFolder(itemFolder(record.itemID))
        try SafeSave.write(
            try VersionRecord.encoder.encode(record), to: recordURL(record.itemID, record.id),
            permissions: 0o600)
        noteRecordStored(record)
        if let packed, let id = UUID(uuidString: record.id) { try removePackedVersions([packed.pack: [id]]) }
    }

    /// Writes a new record into `batch`: in the store once the batch is flushed.
    func stageRecord(_ record: VersionRecord, in batch: StoreWriteBatch) throws {
        try batch.addRecord(try VersionRecord.encoder.encode(record), at: recordURL(record.itemID, record.id))
    }

    /// Tells the record summaries of a record this store object wrote, in a file of its own
    /// or in `pack`, so it is not read back.
    func noteRecordStored(_ record: VersionRecord, pack: String? = nil) {
        let key = pack.map { "\($0)/\(record.id)" } ?? "\(record.id).json"
        // An item not summarized yet is listed in full at its first summary.
        recordSummaryCache.withLock { $0[record.itemID]?[key] = RecordSummary(record, pack: pack) }
    }

    /// Moves a damaged file into `damaged/` so it is reported once, not at every listing.
    func quarantine(_ url: URL, reason: String, operation: String = "read a version record") {
        try? makeFolder(damagedURL)
        let aside = damagedURL.appendingPathComponent("\(UUID().uuidString)-\(url.lastPathComponent)")
        let outcome: String
        switch Syscall.renameat(AT_FDCWD, url.path, AT_FDCWD, aside.path) {
        case .success:
            outcome = "it was set aside in \(aside.path)"
        case .failure(let renameError):
            // Not set aside, it would be reported again at every listing: removed instead.
            switch Syscall.unlinkat(AT_FDCWD, url.path) {
            case .success, .failure(.noSuchFileOrDirectory):
                outcome = "it could not be set aside (\(renameError)) and was removed"
            case .failure(let error):
                outcome = "it could be neither set aside (\(renameError)) nor removed (\(error))"
            }
        }
        reportRecovery(
            DocumentKitError(.corruptFile, operation: operation, url: url, detail: "\(reason); \(outcome)"))
    }

    /// Whether a version record was found damaged and set aside: the chunks it named are
    /// unknown, so none may be collected as unused.
    var hasDamagedRecords: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: damagedURL.path)) ?? []).contains {
            ($0.hasSuffix(".json") && !$0.hasPrefix("index-")) || $0.hasSuffix(".pack")
        }
    }

    // MARK: - Collecting unused chunks

    /// Removes chunks no record refers to. Runs under the store lock, after versions are removed.
    func collectUnusedChunks() {
        if hasDamagedRecords {
            // A damaged record's version is not lost while its chunks are kept: they stay, to
            // be found again, until the damaged records are dealt with.
            report(
                DocumentKitError(
                    .corruptFile, operation: "collect unused version chunks", url: damagedURL,
                    detail: "damaged version records were set aside there; their chunks are kept"),
                operation: "collect unused version chunks")
            return
        }
        var used: Set<String> = []
        let looseItems = (try? FileManager.default.contentsOfDirectory(atPath: itemsURL.path)) ?? []
        for itemID in looseItems where UUID(uuidString: itemID) != nil {
            for record in looseRecords(ofItem: itemID) { used.formUnion(record.manifest.chunkNames) }
        }
        // A pack's table lists the loose chunks its records name: no record is read. Every
        // pack listed counts, replaced ones too, until they are removed.
        for pack in packCatalog().listed.values { used.formUnion(pack.looseChunks) }
        let fileManager = FileManager.default
        // A chunk that cannot be removed only costs space until the next collection: the
        // first such failure is reported, not one line a chunk.
        var failure: DocumentKitError?
        for prefix in (try? fileManager.contentsOfDirectory(atPath: chunksURL.path)) ?? [] {
            let folder = chunksURL.appendingPathComponent(prefix, isDirectory: true)
            for name in (try? fileManager.contentsOfDirectory(atPath: folder.path)) ?? []
            where ContentHash.isValid(name) && !used.contains(name) {
                let chunk = folder.appendingPathComponent(name)
                if case .failure(let error) = Syscall.unlinkat(AT_FDCWD, chunk.path),
                    error != .noSuchFileOrDirectory, failure == nil
                {
                    failure = DocumentKitError(error, operation: "collect unused version chunks", url: chunk)
                }
            }
        }
        if let failure { report(failure, operation: "collect unused version chunks") }
        removeIdlePacks()
    }

    /// Removes the packs left holding no version, only chunks that other packs' records
    /// named, once no live pack names any of them. Runs under the store lock.
    private func removeIdlePacks() {
        let catalog = packCatalog()
        let named = Set(catalog.live.flatMap { catalog.listed[$0]?.looseChunks ?? [] })
        let idle = catalog.live.filter { name in
            guard let pack = catalog.listed[name] else { return false }
            return pack.records.isEmpty && !pack.chunks.keys.contains(where: named.contains)
        }
        removePacks(idle)
    }
}

/// The fields of a version record that never change once it is written.
struct RecordSummary: Sendable {
    var id: String
    var itemID: String
    var captured: Date
    var isConflict: Bool
    var manifest: Manifest
    /// The pack that holds the record; nil for a file of its own.
    var pack: String?

    init(_ record: VersionRecord, pack: String? = nil) {
        id = record.id
        itemID = record.itemID
        captured = record.captured
        isConflict = record.isConflict
        manifest = record.manifest
        self.pack = pack
    }
}

extension FileStatus {
    /// Whether a change made now could leave the same times (file systems stamp times from a
    /// coarse clock): a cache keyed on a stamp this fresh must also expire by age.
    var isRecent: Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let seconds =
            Double(Int64(now.tv_sec) - statusChange.seconds) + Double(
                now.tv_nsec - Int(statusChange.nanoseconds)) / 1e9
        return seconds < 0.1
    }
}
