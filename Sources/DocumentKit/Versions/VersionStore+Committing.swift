import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A captured item whose save succeeded, waiting to become a history version.
struct PendingCommit: Sendable {
    var captured: CapturedItem
    /// Where the save put the item.
    var url: URL
    /// The saved item's device and inode, when they could be read.
    var location: (device: UInt64, inode: UInt64)?
}

/// One version to store in a batch: whose it is, where its bytes are, and when it was made.
struct VersionSource {
    /// Where the version's bytes are.
    enum Contents {
        /// A file or package linked into `incoming/` (a capture), cut with the item's
        /// remembered contents.
        case staged(URL)
        /// A file's bytes, already read, and its mode.
        case bytes(Data, mode: UInt32)
    }

    var itemID: String
    /// Where the item is now: the version's record keeps it, for the identity index.
    var location: IdentityIndex.Entry
    var name: String
    var modified: Date
    var captured: Date
    var contents: Contents
    /// Whether the item's identity was just made, so that it has no versions yet: its history
    /// is not looked up, which spares a first sync of many documents the catalog of every
    /// pack (``PackCatalog``), tens of megabytes at 100,000 documents.
    var isNewItem = false
    /// The persistent identifier the version gets: one a hold named beforehand, or nil for a
    /// new one.
    var versionID: String?
    /// Made on purpose (a merge base), not by an autosave: see ``VersionRecord/isOnPurpose``.
    var isOnPurpose = false
}

extension VersionStore {
    /// At most this many versions are stored together, so that one flush never waits on an
    /// unbounded amount of writing.
    static let mostCommitsTogether = 64

    /// Stores the versions committed so far, on the store's queue: each is cut into chunks
    /// and hashed once, from the hard link its capture made (the page cache still holds the
    /// bytes the save before wrote), and they share one ``StoreWriteBatch``, so that saves
    /// quicker than the store cost a few flushes per batch, not several per save.
    ///
    /// One version's failure (an unreadable file) is reported and the others are kept; a
    /// failed flush is reported and keeps none of the batch.
    func storePendingCommits() {
        let batch = pendingCommits.withLock { pending in
            let taken = Array(pending.prefix(Self.mostCommitsTogether))
            pending.removeFirst(taken.count)
            return taken
        }
        guard !batch.isEmpty else { return }
        defer { for commit in batch { removeStaged(commit.captured.staged) } }
        do {
            try withStoreLock { _ = try store(batch.map(VersionSource.init)) }
        } catch {
            report(error, operation: "keep the previous version of a document")
        }
    }

    /// Stores `sources` as history versions, together: one pack holds their records and
    /// their small contents (``VersionPack``), larger contents go to loose chunks, and one
    /// flush makes them all durable. Runs under the store lock.
    ///
    /// Crash order: loose chunks, then the pack, each flushed with its folder before the next
    /// is placed (see ``StoreWriteBatch``); the identity index after, without a flush (the
    /// records hold the locations it is rebuilt from), or made whole and put in place for a
    /// store that had none (a crash before leaves no index, which is rebuilt from the
    /// records); thinning last.
    ///
    /// - Returns: For each source, the persistent identifier of the version that holds its
    ///   bytes (new, or the newest already there with the same bytes); nil where it failed.
    func store(_ sources: [VersionSource]) throws -> [String?] {
        // A store with neither an index nor versions (a first sync's first group of merge
        // bases): the index rebuilt after this batch would hold exactly its locations, so it
        // is made from them once the pack is placed, not by reading back every record.
        let startsTheIndex = hasNeitherIndexNorVersions()
        var kept: [String?] = []
        let writes = StoreWriteBatch(store: self, packing: true)
        // Each item's records as they will be once the batch is flushed, oldest first.
        var histories: [String: [RecordSummary]] = [:]
        var added: [VersionRecord] = []
        var locations: [(itemID: String, entry: IdentityIndex.Entry)] = []
        // Items whose last location in the batch no record holds: the index must be flushed.
        var notedOnly: Set<String> = []
        let device = self.device
        for source in sources {
            kept.append(nil)
            let itemID = source.itemID
            do {
                let ingested: Ingested
                switch source.contents {
                case .staged(let url):
                    var contents = rememberedContents.withLock { $0.items[itemID] }
                    ingested = try ingest(url, into: writes, previous: &contents)
                    remember(contents, ofItem: itemID)
                case .bytes(let data, let mode):
                    var bytes = Ingested(manifest: Manifest(isPackage: false, entries: []))
                    var unknown: ChunkedContents?
                    let entry = try ingestBytes(
                        data, relative: "", mode: mode, into: &bytes, batch: writes, previous: &unknown)
                    bytes.manifest.entries = [entry]
                    ingested = bytes
                }
                var history = histories[itemID] ?? (source.isNewItem ? [] : recordSummaries(ofItem: itemID))
                defer { histories[itemID] = history }
                // Saving unchanged bytes again adds nothing, but the save made a new file:
                // where the item is now must still be noted, or a store that finds items by
                // inode and path loses the item at its next rename.
                // A version made on purpose is one only if the newest is too: an autosave's
                // would be thinned within the minute (the chunks are shared all the same).
                if let newest = history.last(where: { !$0.isConflict }), newest.manifest == ingested.manifest,
                    newest.isOnPurpose || !source.isOnPurpose
                {
                    locations.append((itemID, source.location))
                    notedOnly.insert(itemID)
                    kept[kept.count - 1] = newest.id
                    continue
                }
                let record = VersionRecord(
                    id: source.versionID ?? UUID().uuidString, itemID: itemID, name: source.name,
                    itemPath: source.location.path, device: source.location.device,
                    inode: source.location.inode, savingComputer: device.name,
                    savingDevice: device.identifier, modified: source.modified, captured: source.captured,
                    isConflict: false, isResolved: true, isDiscardable: true, manifest: ingested.manifest,
                    isOnPurpose: source.isOnPurpose ? true : nil)
                try writes.addPackedRecord(record, inline: ingested.inline)
                history.append(RecordSummary(record))
                added.append(record)
                kept[kept.count - 1] = record.id
                locations.append((itemID, source.location))
                notedOnly.remove(itemID)
            } catch {
                report(error, operation: "keep the previous version of a document")
            }
        }
        try writes.flush()
        notePlacedPacks(writes.placedPacks)
        var packOf: [String: String] = [:]
        for (name, pack) in writes.placedPacks {
            for record in pack.records { packOf[record.versionID.uuidString] = name }
        }
        for record in added { noteRecordStored(record, pack: packOf[record.id]) }
        reachedStep(.versionsPlaced)
        // The records just flushed hold their items' locations: the index's commit need not be
        // flushed for them (see `IdentityIndex.note(_:durably:)`), unless some item's last
        // location is in no record. One transaction for the batch.
        if startsTheIndex {
            try startIndex(holding: locations)
        } else {
            try noteLocations(locations, durably: !notedOnly.isEmpty)
        }
        reachedStep(.indexWritten)
        for itemID in Set(added.map(\.itemID)) {
            thin(
                histories[itemID]?.map { summary in
                    var summary = summary
                    summary.pack = summary.pack ?? packOf[summary.id]
                    return summary
                } ?? [])
        }
        return kept
    }

    /// Keeps an item's contents for cutting its next version, or forgets them.
    private func remember(_ contents: ChunkedContents?, ofItem itemID: String) {
        rememberedContents.withLock { remembered in
            remembered.items[itemID] = contents
            remembered.order.removeAll { $0 == itemID }
            guard contents != nil else { return }
            remembered.order.append(itemID)
            while remembered.order.count > ChunkedContents.mostItems {
                remembered.items[remembered.order.removeFirst()] = nil
            }
        }
    }

    /// Drops history versions the thinning policy no longer keeps, and their unused chunks.
    private func thin(_ records: [RecordSummary]) {
        let history = records.filter { !$0.isConflict }
        let drop = thinningPolicy.versionsToDrop(
            history.map { (id: $0.id, date: $0.captured) }, now: now(),
            keeping: Set(history.filter(\.isOnPurpose).map(\.id)))
        guard !drop.isEmpty else { return }
        do {
            try removeVersions(records.filter { drop.contains($0.id) }.map { ($0.itemID, $0.id, $0.pack) })
        } catch {
            report(error, operation: "thin the history of a document")
        }
        collectUnusedChunks()
    }
}

extension VersionSource {
    /// The version a save's capture holds.
    init(_ commit: PendingCommit) {
        let captured = commit.captured
        self.init(
            itemID: captured.identity.id,
            location: IdentityIndex.Entry(
                path: commit.url.path, device: commit.location?.device ?? captured.identity.device,
                inode: commit.location?.inode ?? captured.identity.inode),
            name: captured.name, modified: captured.modified, captured: captured.captured,
            contents: .staged(captured.staged), isOnPurpose: captured.isOnPurpose)
    }
}
