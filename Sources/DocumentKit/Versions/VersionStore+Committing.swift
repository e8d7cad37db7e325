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
            try withStoreLock { _ = try store(batch) }
        } catch {
            report(error, operation: "keep the previous version of a document")
        }
    }

    /// Runs under the store lock.
    ///
    /// - Returns: For each commit, the persistent identifier of the version that holds its
    ///   bytes (new, or the newest already there with the same bytes); nil where it failed.
    private func store(_ batch: [PendingCommit]) throws -> [String?] {
        var kept: [String?] = []
        let writes = StoreWriteBatch(store: self)
        // Each item's records as they will be once the batch is flushed, oldest first.
        var histories: [String: [RecordSummary]] = [:]
        var added: [VersionRecord] = []
        var locations: [(itemID: String, entry: IdentityIndex.Entry)] = []
        // Items whose last location in the batch no record holds: the index must be flushed.
        var notedOnly: Set<String> = []
        let device = self.device
        for commit in batch {
            kept.append(nil)
            let captured = commit.captured
            let itemID = captured.identity.id
            let location = IdentityIndex.Entry(
                path: commit.url.path, device: commit.location?.device ?? captured.identity.device,
                inode: commit.location?.inode ?? captured.identity.inode)
            do {
                var contents = rememberedContents.withLock { $0.items[itemID] }
                let manifest = try ingest(captured.staged, into: writes, previous: &contents)
                remember(contents, ofItem: itemID)
                var history = histories[itemID] ?? recordSummaries(ofItem: itemID)
                defer { histories[itemID] = history }
                // Saving unchanged bytes again adds nothing, but the save made a new file:
                // where the item is now must still be noted, or a store that finds items by
                // inode and path loses the item at its next rename.
                if let newest = history.last(where: { !$0.isConflict }), newest.manifest == manifest {
                    locations.append((itemID, location))
                    notedOnly.insert(itemID)
                    kept[kept.count - 1] = newest.id
                    continue
                }
                let record = VersionRecord(
                    id: UUID().uuidString, itemID: itemID, name: captured.name,
                    itemPath: location.path, device: location.device, inode: location.inode,
                    savingComputer: device.name, savingDevice: device.identifier, modified: captured.modified,
                    captured: captured.captured, isConflict: false, isResolved: true, isDiscardable: true,
                    manifest: manifest)
                try stageRecord(record, in: writes)
                history.append(RecordSummary(record))
                added.append(record)
                kept[kept.count - 1] = record.id
                locations.append((itemID, location))
                notedOnly.remove(itemID)
            } catch {
                report(error, operation: "keep the previous version of a document")
            }
        }
        try writes.flush()
        for record in added { noteRecordStored(record) }
        // The records just flushed hold their items' locations: the index is rebuilt from
        // them if a crash leaves it torn (see `saveIndex(_:options:durably:)`).
        try noteLocations(locations, durably: !notedOnly.isEmpty)
        for itemID in Set(added.map(\.itemID)) {
            thin(histories[itemID] ?? [])
        }
        return kept
    }

    /// Keeps the bytes each file in `urls` holds now as a history version of it, many
    /// versions sharing each flush: what a sync engine does after uploading many files, to
    /// have the base of a later merge. Each file is linked into the store first, so that
    /// bytes written to it after this call began are not taken for the ones it held.
    ///
    /// - Returns: For each file, the persistent identifier of the version that holds its
    ///   bytes; nil where it could not be kept (reported, as a failed history version is).
    package func keepVersions(ofItemsAt urls: [URL]) -> [String?] {
        var kept: [String?] = []
        var start = 0
        while start < urls.count {
            let group = urls[start..<min(start + Self.mostCommitsTogether, urls.count)]
            start += group.count
            let captured = group.map { capture(itemAt: $0) }
            let commits = zip(captured, group).compactMap { captured, url in
                captured.map { PendingCommit(captured: $0, url: url, location: nil) }
            }
            var stored: [String?] = []
            queue.sync {
                defer { for commit in commits { removeStaged(commit.captured.staged) } }
                do {
                    stored = try withStoreLock { try store(commits) }
                } catch {
                    report(error, operation: "keep the previous version of a document")
                }
            }
            var next = stored.makeIterator()
            for item in captured { kept.append(item == nil ? nil : (next.next() ?? nil)) }
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
        let history = records.filter { !$0.isConflict }.map { (id: $0.id, date: $0.captured) }
        let drop = thinningPolicy.versionsToDrop(history, now: now())
        guard !drop.isEmpty else { return }
        for record in records where drop.contains(record.id) {
            _ = Syscall.unlinkat(AT_FDCWD, recordURL(record.itemID, record.id).path)
            try? FileManager.default.removeItem(
                at: contentsURL.appendingPathComponent(record.itemID).appendingPathComponent(record.id))
        }
        collectUnusedChunks()
    }
}
