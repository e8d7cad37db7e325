import CSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension VersionStore {
    // MARK: - The identity index

    /// Runs `body` on the identity index (see ``IdentityIndex``); nil when the store has no
    /// index and no versions to make one from, or when the index cannot be read or made
    /// (reported). On the store's queue.
    func withIndex<T>(_ body: (IdentityIndex) throws -> T?) -> T? {
        do {
            return try usingIndex(creating: false, body) ?? nil
        } catch {
            report(error, operation: "read the version store index")
            return nil
        }
    }

    /// Runs `body` on the identity index, opened once and kept while its file is in place, or
    /// made from an old store's `index.json` or from the records when there is none; nil
    /// when there is none and nothing to make one from, unless `creating`. A damaged index is
    /// reported, rebuilt from the records (see ``rebuildIndex(damaged:)``), and `body` run
    /// again. On the store's queue.
    ///
    /// - Throws: What `body` throws, or what keeps the index from being opened or made.
    func usingIndex<T>(creating: Bool, _ body: (IdentityIndex) throws -> T) throws -> T? {
        guard let index = try openIndex(creating: creating) else { return nil }
        do {
            return try body(index)
        } catch let error as SQLiteError where Self.isDamage(error) {
            return try body(try rebuildIndex(replacing: (index.url, error)))
        }
    }

    /// Whether an error of the index's database says the file is damaged or not an index:
    /// the index is rebuilt. Every other error (busy, out of space) is only reported.
    static func isDamage(_ error: SQLiteError) -> Bool {
        error.isCorrupt
            || [SQLITE_ERROR, SQLITE_MISMATCH, SQLITE_FORMAT, SQLITE_SCHEMA].contains(error.primaryCode)
    }

    /// The index this store object has open, if its file is still in place; else the newest
    /// generation on disk, opened; else one made (see ``rebuildIndex(damaged:)``) when there
    /// is anything to make it from or `creating`.
    private func openIndex(creating: Bool) throws -> IdentityIndex? {
        if let open = openedIndex.withLock({ $0 }), let status = FileStatus(path: open.url.path),
            status.device == open.file.device, status.inode == open.file.inode
        {
            return open
        }
        // Not opened yet, or another process put a rebuilt generation in its place.
        let locked = holdsStoreLock
        if !(locked && indexSeenMissing.withLock({ $0 })), let newest = indexGenerations().max(),
            FileStatus(path: indexURL(generation: newest).path) != nil
        {
            let url = indexURL(generation: newest)
            let index: IdentityIndex
            do {
                index = try IdentityIndex(opening: url)
            } catch let error as SQLiteError where Self.isDamage(error) {
                return try rebuildIndex(replacing: (url, error))
            }
            keepOpen(index)
            // An index.json left by a crash before it was removed: the rows hold all it held.
            if FileStatus(path: legacyIndexURL.path) != nil {
                _ = Syscall.unlinkat(AT_FDCWD, legacyIndexURL.path)
            }
            return index
        }
        let hasVersions = [itemsURL, packsURL, legacyIndexURL].contains { FileStatus(path: $0.path) != nil }
        guard creating || hasVersions else {
            if locked { indexSeenMissing.withLock { $0 = true } }
            return nil
        }
        return try rebuildIndex(replacing: nil)
    }

    /// Keeps `index` open for this store object's next uses. The one it replaces is closed
    /// when no thread uses it any more (a save's lookup may, off the queue).
    private func keepOpen(_ index: IdentityIndex) {
        openedIndex.withLock { $0 = index }
        indexSeenMissing.withLock { $0 = false }
    }

    /// Makes the index anew, under the store's lock, in the generation after the newest on
    /// disk: from `index.json` where an old store has one (removed once the rows are
    /// flushed), else from the records, each item where its newest version saw it. Older
    /// generations are removed, a damaged one set aside in `damaged/` and reported.
    ///
    /// Another process may have rebuilt it meanwhile: a newer generation than the damaged
    /// one (or any, for a missing index) is used as it is.
    ///
    /// - Parameter damaged: The damaged index's file and what SQLite said of it; nil for
    ///   a missing index.
    func rebuildIndex(replacing damaged: (url: URL, error: SQLiteError)?) throws -> IdentityIndex {
        try withStoreLockIfNeeded {
            let newest = indexGenerations().max() ?? 0
            let current = indexURL(generation: newest)
            if newest > 0, current.path != damaged?.url.path, FileStatus(path: current.path) != nil,
                let index = try? IdentityIndex(opening: current)
            {
                keepOpen(index)
                return index
            }
            // An old store's index.json is what a store that never had rows knows; beside
            // rows, it is one a crash left before removing it, older than they are.
            let legacy = newest == 0 ? legacyIndex() : nil
            let index = try withTransientCatalog {
                try IdentityIndex.build(at: indexURL(generation: newest + 1)) { insert in
                    if let legacy {
                        for (itemID, entry) in legacy.items.sorted(by: { $0.key < $1.key }) {
                            try insert(itemID, entry)
                        }
                        return
                    }
                    for itemID in itemIDs() {
                        guard let newest = records(ofItem: itemID).max(by: { $0.captured < $1.captured })
                        else {
                            continue
                        }
                        try insert(
                            itemID,
                            IdentityIndex.Entry(
                                path: newest.itemPath, device: newest.device, inode: newest.inode))
                    }
                }
            }
            keepOpen(index)
            _ = Syscall.unlinkat(AT_FDCWD, legacyIndexURL.path)
            removeOldIndexFiles(before: newest + 1, damaged: damaged?.url)
            if let damaged {
                reportRecovery(
                    DocumentKitError(
                        .corruptFile, operation: "read the version store index", url: damaged.url,
                        detail:
                            "the index is damaged (\(damaged.error.message)); it was rebuilt from the version records"
                    ))
            }
            return index
        }
    }

    /// `index.json`, an old store's index, to import; nil when there is none, or when it is
    /// damaged (then reported and set aside: the records rebuild it).
    private func legacyIndex() -> LegacyIndex? {
        guard let data = try? Data(contentsOf: legacyIndexURL) else { return nil }
        if let index = try? JSONDecoder().decode(LegacyIndex.self, from: data), index.format == 1,
            index.items.keys.allSatisfy(IdentityIndex.isItemID)
        {
            return index
        }
        reportRecovery(
            DocumentKitError(
                .corruptFile, operation: "read the version store index", url: legacyIndexURL,
                detail: "the index is damaged (\(data.count) bytes); it was rebuilt from the version records")
        )
        try? makeFolder(damagedURL)
        _ = Syscall.renameat(
            AT_FDCWD, legacyIndexURL.path, AT_FDCWD,
            damagedURL.appendingPathComponent("index-\(UUID().uuidString).json").path)
        return nil
    }

    /// An old store's `index.json`, as it was written.
    private struct LegacyIndex: Decodable {
        var format: Int
        var items: [String: IdentityIndex.Entry]
    }

    /// The generations of index files in the store's folder (`index.N.sqlite` and its
    /// `-wal`, `-shm` and `-journal`), whether or not the database itself is there.
    func indexGenerations() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.compactMap(Self.indexGeneration(ofFileNamed:))
    }

    /// The generation `N` of a file named `index.N.sqlite` or `index.N.sqlite-SUFFIX`.
    static func indexGeneration(ofFileNamed name: String) -> Int? {
        guard name.hasPrefix("index."), let end = name.range(of: ".sqlite")?.lowerBound,
            let generation = Int(name[name.index(name.startIndex, offsetBy: 6)..<end]), generation > 0
        else { return nil }
        return generation
    }

    /// Removes the index files of generations before `generation`, and files left by builds
    /// that died; the database `damaged` is set aside in `damaged/` for a post-mortem. Under
    /// the store's lock. A process that still has an old file open reads on from it until its
    /// next lookup finds the file gone; as it closes it, SQLite removes only that
    /// generation's files.
    private func removeOldIndexFiles(before generation: Int, damaged: URL?) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for name in names {
            let old =
                name.hasPrefix(IdentityIndex.buildingPrefix)
                || Self.indexGeneration(ofFileNamed: name).map { $0 < generation } ?? false
            guard old else { continue }
            let path = root.appendingPathComponent(name).path
            if let damaged, path == damaged.path {
                try? makeFolder(damagedURL)
                let aside = damagedURL.appendingPathComponent("index-\(UUID().uuidString).sqlite")
                if case .success = Syscall.renameat(AT_FDCWD, path, AT_FDCWD, aside.path) { continue }
            }
            _ = Syscall.unlinkat(AT_FDCWD, path)
        }
    }

    /// Runs `body` under the store's lock, taking it unless this store object holds it.
    func withStoreLockIfNeeded<T>(_ body: () throws -> T) throws -> T {
        holdsStoreLock ? try body() : try withStoreLock(body)
    }

    /// Records where an item is now, if that changed.
    ///
    /// - Parameter durably: Whether the index's commit is flushed; see ``IdentityIndex/note(_:durably:)``.
    func noteLocation(
        of itemID: String, path: String, device: UInt64, inode: UInt64, durably: Bool = true
    ) throws {
        try noteLocations(
            [(itemID, IdentityIndex.Entry(path: path, device: device, inode: inode))], durably: durably)
    }

    /// Whether the store has no index and nothing to make one from: no records, packs or old
    /// `index.json`. Asked under the store's lock, its answer holds until the lock is let go.
    func hasNeitherIndexNorVersions() -> Bool {
        openedIndex.withLock({ $0 }) == nil && indexGenerations().isEmpty
            && ![itemsURL, packsURL, legacyIndexURL].contains { FileStatus(path: $0.path) != nil }
    }

    /// Makes the first index of a store that had neither an index nor versions before the
    /// batch whose `locations` these are: what a rebuild from the records would make, put in
    /// place whole (``IdentityIndex/build(at:rows:)``). Runs under the store's lock.
    func startIndex(holding locations: [(itemID: String, entry: IdentityIndex.Entry)]) throws {
        let generation = (indexGenerations().max() ?? 0) + 1
        // In order: an item's last location is the one its newest record holds.
        keepOpen(
            try IdentityIndex.build(at: indexURL(generation: generation)) { insert in
                for (itemID, entry) in locations { try insert(itemID, entry) }
            })
        forgetStandIns(for: locations.map(\.itemID))
    }

    /// Records where items are now, in order, in one transaction of the index.
    func noteLocations(_ locations: [(itemID: String, entry: IdentityIndex.Entry)], durably: Bool) throws {
        guard !locations.isEmpty else { return }
        _ = try usingIndex(creating: true) { try $0.note(locations, durably: durably) }
        forgetStandIns(for: locations.map(\.itemID))
    }

    /// The index holds these items now: a path this process stood in for them stands for
    /// nothing more, and a new file there later is a new item.
    private func forgetStandIns(for itemIDs: [String]) {
        let noted = Set(itemIDs)
        identitiesGiven.withLock { given in given = given.filter { !noted.contains($0.value) } }
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
    /// See ``VersionRecord/isOnPurpose``.
    var isOnPurpose: Bool
    var manifest: Manifest
    /// The pack that holds the record; nil for a file of its own.
    var pack: String?

    init(_ record: VersionRecord, pack: String? = nil) {
        id = record.id
        itemID = record.itemID
        captured = record.captured
        isConflict = record.isConflict
        isOnPurpose = record.isOnPurpose == true
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
