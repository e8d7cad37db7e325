import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One version in a pack: which pack, and which of its records.
struct PackedVersion: Sendable, Hashable {
    var pack: String
    var index: Int
}

/// The store's packs (``VersionPack``) as this store object last listed them.
///
/// Packs are never rewritten under their names, so a table read once serves until the pack
/// is gone; the listing is taken again only when `packs/` changed (its status).
struct PackCatalog: Sendable {
    /// The status of `packs/` when it was listed; nil when there is no such folder.
    var stamp: FileStatus?
    /// Every pack listed, by file name, with its table.
    var listed: [String: VersionPack] = [:]
    /// The packs whose versions count: those no other listed pack replaces.
    var live: Set<String> = []
    /// Each item's versions in live packs.
    var byItem: [UUID: [PackedVersion]] = [:]
    /// A live pack holding each chunk kept inline somewhere: a version's chunks may be in the
    /// pack of an earlier version (a save stores only its new chunks, in its own pack).
    var chunkHomes: [String: String] = [:]

    /// The record of `version` in its pack's table.
    func entry(_ version: PackedVersion) -> VersionPack.Record? {
        guard let pack = listed[version.pack], pack.records.indices.contains(version.index) else {
            return nil
        }
        return pack.records[version.index]
    }

    /// Makes the live packs those of `listed` that no other one replaces, and indexes their
    /// versions by item; only the packs that changed are looked at.
    mutating func settle(previous: [String: VersionPack]) {
        let replaced = Set(listed.values.flatMap(\.replaces))
        let nowLive = Set(listed.keys).subtracting(replaced)
        var homeless: Set<String> = []
        for name in live.subtracting(nowLive) {
            guard let pack = previous[name] ?? listed[name] else { continue }
            for record in pack.records {
                byItem[record.itemID]?.removeAll { $0.pack == name }
                if byItem[record.itemID]?.isEmpty == true { byItem[record.itemID] = nil }
            }
            for chunk in pack.chunks.keys where chunkHomes[chunk] == name {
                chunkHomes[chunk] = nil
                homeless.insert(chunk)
            }
        }
        for name in nowLive.subtracting(live) {
            guard let pack = listed[name] else { continue }
            for (index, record) in pack.records.enumerated() {
                byItem[record.itemID, default: []].append(PackedVersion(pack: name, index: index))
            }
            for chunk in pack.chunks.keys where chunkHomes[chunk] == nil { chunkHomes[chunk] = name }
        }
        live = nowLive
        // A chunk whose pack went may be inline in another live one too.
        homeless = homeless.filter { chunkHomes[$0] == nil }
        for name in live where !homeless.isEmpty {
            for chunk in listed[name]?.chunks.keys.filter(homeless.contains) ?? [] {
                chunkHomes[chunk] = name
                homeless.remove(chunk)
            }
        }
    }
}

extension VersionStore {
    // MARK: - The catalog of packs

    /// The packs as they are now: the cached catalog while `packs/` is unchanged, else the
    /// catalog brought up to date (new packs' tables read, gone ones dropped).
    ///
    /// Without the store lock, a writer may replace a pack while the folder is read: the
    /// listing is then taken until two in a row agree, which a replacement cannot fake (the
    /// new pack is in place before the old one goes, so a listing that missed both is
    /// followed by one that sees the new one). A damaged pack is set aside and reported.
    func packCatalog() -> PackCatalog {
        let stamp = FileStatus(path: packsURL.path)
        var catalog = packs.withLock { $0 }
        if let stamp, stamp == catalog.stamp, !stamp.isRecent { return catalog }
        if stamp == nil, catalog.stamp == nil, catalog.listed.isEmpty { return catalog }
        let previous = catalog.listed
        catalog.stamp = stamp
        let names = stamp == nil ? [] : listPacks(consistently: !holdsStoreLock)
        for name in previous.keys where !names.contains(name) { catalog.listed[name] = nil }
        for name in names where catalog.listed[name] == nil {
            if let pack = readPack(name) { catalog.listed[name] = pack }
        }
        catalog.settle(previous: previous)
        packs.withLock { $0 = catalog }
        return catalog
    }

    /// How many packs' tables this store object holds in memory (its catalog's): none until
    /// something reads versions from packs.
    package var catalogedPacks: Int { packs.withLock { $0.listed.count } }

    /// Adds packs this store object just put in place, without listing the folder again.
    ///
    /// A catalog never listed is left so: the next look lists the folder, these packs with
    /// the rest, and a store that only adds versions (a first sync's merge bases) never holds
    /// every pack's table.
    func notePlacedPacks(_ placed: [(name: String, pack: VersionPack)]) {
        guard !placed.isEmpty else { return }
        packs.withLock { catalog in
            guard catalog.stamp != nil || !catalog.listed.isEmpty else { return }
            let previous = catalog.listed
            for (name, pack) in placed { catalog.listed[name] = pack }
            catalog.settle(previous: previous)
        }
    }

    /// The names in `packs/`; `consistently`, listed until two listings in a row agree.
    private func listPacks(consistently: Bool) -> Set<String> {
        var last: Set<String>?
        for _ in 0..<16 {
            guard
                let entries = try? DirectoryEntry.entries(
                    ofFolderAt: packsURL, operation: "list the version packs")
            else { return [] }
            let names = Set(entries.compactMap(\.validName).filter(VersionPack.isPackName))
            if !consistently || names == last { return names }
            last = names
        }
        return last ?? []
    }

    /// The table of the pack `name`; nil when it is gone, or damaged (then set aside and
    /// reported).
    private func readPack(_ name: String) -> VersionPack? {
        let url = packURL(name)
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        else { return nil }
        defer { Syscall.close(fd) }
        do {
            let info = try Syscall.fstat(fd).get("read a version pack", url)
            return try VersionPack.read(fd, size: Int(info.st_size), url: url)
        } catch let damage as VersionPack.Damage {
            quarantine(url, reason: "a version pack is damaged: \(damage)", operation: "read a version pack")
        } catch {
            report(error, operation: "read a version pack")
        }
        return nil
    }

    // MARK: - Packed records

    /// The item's versions in packs, each with the pack that holds it; a record found
    /// damaged is reported and left out.
    func packedRecords(ofItem itemID: String) -> [(record: VersionRecord, pack: String)] {
        guard let id = UUID(uuidString: itemID) else { return [] }
        let catalog = packCatalog()
        guard let versions = catalog.byItem[id], !versions.isEmpty else { return [] }
        var result: [(VersionRecord, String)] = []
        withOpenPacks { descriptor in
            for version in versions {
                guard let entry = catalog.entry(version), let fd = descriptor(version.pack) else { continue }
                do {
                    result.append(
                        (try VersionPack.record(entry, in: fd, url: packURL(version.pack)), version.pack))
                } catch {
                    reportDamagedPack(version.pack, error)
                }
            }
        }
        return result
    }

    /// The version `versionID` of the item, if a pack holds it, with that pack.
    func packedRecord(ofItem itemID: String, id versionID: String) -> (record: VersionRecord, pack: String)? {
        guard let item = UUID(uuidString: itemID), let version = UUID(uuidString: versionID) else {
            return nil
        }
        let catalog = packCatalog()
        for packed in catalog.byItem[item] ?? [] where catalog.entry(packed)?.versionID == version {
            guard let entry = catalog.entry(packed) else { continue }
            let url = packURL(packed.pack)
            guard
                case .success(let fd) = Syscall.openat(AT_FDCWD, url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            else { continue }
            defer { Syscall.close(fd) }
            do {
                return (try VersionPack.record(entry, in: fd, url: url), packed.pack)
            } catch {
                reportDamagedPack(packed.pack, error)
            }
        }
        return nil
    }

    /// The bytes of the chunk `name` kept inline in the pack `pack`, checked against the name;
    /// nil when the pack does not hold it.
    ///
    /// - Throws: ``DocumentKitError`` when the pack holds it damaged or cannot be read.
    func inlineChunk(_ name: String, inPack pack: String) throws -> Data? {
        guard let table = packCatalog().listed[pack], table.chunks[name] != nil else { return nil }
        let url = packURL(pack)
        let file = try FileDescriptor.open(
            url, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, operation: "rebuild a version")
        do {
            return try table.chunk(name, in: file.rawValue, url: url)
        } catch let damage as VersionPack.Damage {
            throw DocumentKitError(
                .corruptFile, operation: "rebuild a version", url: url,
                detail: "\(damage); the version cannot be rebuilt")
        }
    }

    /// The bytes of the chunk `name` kept inline in a pack: in `pack` (the version's own)
    /// when it holds it, else in the live pack `catalog` says holds it; nil when no pack does
    /// (a loose chunk, in `chunks/`).
    ///
    /// - Throws: ``DocumentKitError`` when the pack holds it damaged or cannot be read.
    func packedChunk(_ name: String, preferring pack: String?, in catalog: PackCatalog) throws -> Data? {
        if let pack, catalog.listed[pack]?.chunks[name] != nil { return try inlineChunk(name, inPack: pack) }
        guard let home = catalog.chunkHomes[name] else { return nil }
        return try inlineChunk(name, inPack: home)
    }

    /// Whether the live pack `pack` holds the chunk `name` with the bytes its name says:
    /// read and hashed once, then trusted while the pack's file keeps its status (a pack is
    /// never rewritten under its name).
    func packHoldsChunk(_ name: String, in pack: String) -> Bool {
        let key = "\(pack)/\(name)"
        guard let status = FileStatus(path: packURL(pack).path) else { return false }
        if verifiedChunks.withLock({ $0[key] }) == status { return true }
        guard (try? inlineChunk(name, inPack: pack)) != nil else { return false }
        verifiedChunks.withLock { verified in
            if verified.count >= Self.mostVerifiedChunks { verified.removeAll(keepingCapacity: true) }
            verified[key] = status
        }
        return true
    }

    /// Runs `body` with a way to open packs by name, each opened once and closed after.
    private func withOpenPacks(_ body: (_ descriptor: (String) -> CInt?) -> Void) {
        var opened: [String: CInt] = [:]
        defer { for fd in opened.values { Syscall.close(fd) } }
        body { name in
            if let fd = opened[name] { return fd }
            guard
                case .success(let fd) = Syscall.openat(
                    AT_FDCWD, packURL(name).path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            else { return nil }
            opened[name] = fd
            return fd
        }
    }

    /// A record or chunk of a pack whose table is whole did not read back as written: the
    /// rest of the pack is still good, so it stays; the damage is reported once.
    private func reportDamagedPack(_ name: String, _ error: any Error) {
        let key = "damaged pack \(name): \(error)"
        guard packDamageReported.withLock({ $0.insert(key).inserted }) else { return }
        reportRecovery(
            DocumentKitError(
                .corruptFile, operation: "read a version pack", url: packURL(name),
                detail: "\(error); the versions it holds whole are still read"))
    }

    // MARK: - Removing packed versions

    /// Removes versions from their packs: each pack that holds some is written again without
    /// them, as a new pack that replaces it, and then removed; a pack left with none is
    /// removed. Runs under the store lock.
    ///
    /// Crash order: the new pack is in place (flushed, with its folder) before the old one is
    /// removed, so a crash between the two leaves both, and the new one's ``VersionPack/replaces``
    /// says the old one no longer counts (the next use of the store removes it). The packs an
    /// old one replaced go before it, so a replaced pack never counts again.
    ///
    /// - Parameter versions: The versions to remove, by the pack that holds them.
    func removePackedVersions(_ versions: [String: Set<UUID>]) throws {
        guard !versions.isEmpty else { return }
        let catalog = packCatalog()
        let writes = StoreWriteBatch(store: self)
        var removed: [String] = []
        // Chunks that records of live packs name without holding them: some may be inline in
        // a pack rewritten here, which must keep them. A pack's old list still counts while
        // it is rewritten: a few chunks kept longer than needed, never one too few.
        let namedElsewhere = Set(catalog.live.flatMap { catalog.listed[$0]?.looseChunks ?? [] })
        for (name, versionIDs) in versions.sorted(by: { $0.key < $1.key }) {
            guard catalog.live.contains(name), let table = catalog.listed[name],
                table.records.contains(where: { versionIDs.contains($0.versionID) })
            else { continue }
            let replaced = table.replaces.filter { catalog.listed[$0] != nil }
            let kept = table.records.filter { !versionIDs.contains($0.versionID) }
            let lent = table.chunks.keys.filter(namedElsewhere.contains)
            if !kept.isEmpty || !lent.isEmpty {
                var builder = VersionPack.Builder(replacing: [name] + replaced)
                try copy(kept, lending: lent, of: table, named: name, into: &builder)
                try writes.addPack(builder)
            }
            removed.append(contentsOf: replaced + [name])
        }
        try writes.flush()
        let placed = writes.placedPacks
        if !placed.isEmpty { reachedStep(.packReplaced) }
        for name in removed {
            switch Syscall.unlinkat(AT_FDCWD, packURL(name).path) {
            case .success, .failure(.noSuchFileOrDirectory): break
            case .failure(let error):
                throw DocumentKitError(error, operation: "remove a version pack", url: packURL(name))
            }
        }
        if !removed.isEmpty {
            try FileDescriptor.openDirectory(packsURL, operation: "remove a version pack").sync(
                operation: "flush (fsync) the folder of")
        }
        packs.withLock { current in
            let previous = current.listed
            for name in removed { current.listed[name] = nil }
            for (name, pack) in placed { current.listed[name] = pack }
            current.settle(previous: previous)
        }
    }

    /// Copies the records `kept` of the pack `name` into `builder`, with the inline chunks
    /// they name, and the inline chunks `lent` that other packs' records name. A record or
    /// chunk that does not read back whole is not copied, and reported.
    private func copy(
        _ kept: [VersionPack.Record], lending lent: [String], of table: VersionPack, named name: String,
        into builder: inout VersionPack.Builder
    ) throws {
        let url = packURL(name)
        let file = try FileDescriptor.open(
            url, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, operation: "rewrite a version pack")
        for entry in kept {
            do {
                let record = try VersionPack.record(entry, in: file.rawValue, url: url)
                var inline: [(name: String, bytes: Data)] = []
                for chunk in Set(record.manifest.chunkNames) where table.chunks[chunk] != nil {
                    if let bytes = try table.chunk(chunk, in: file.rawValue, url: url) {
                        inline.append((chunk, bytes))
                    }
                }
                builder.add(record, encoded: try VersionRecord.encoder.encode(record), inline: inline)
            } catch let damage as VersionPack.Damage {
                reportDamagedPack(name, damage)
            }
        }
        for chunk in lent where !builder.holdsChunk(chunk) {
            do {
                if let bytes = try table.chunk(chunk, in: file.rawValue, url: url) {
                    builder.add(chunk, bytes)
                }
            } catch let damage as VersionPack.Damage {
                reportDamagedPack(name, damage)
            }
        }
    }

    /// Removes packs that a pack in place replaces: what a crash between placing a pack and
    /// removing the one it replaced left. Runs under the store lock.
    func sweepReplacedPacks() {
        withTransientCatalog {
            let catalog = packCatalog()
            let obsolete = Set(catalog.listed.keys).subtracting(catalog.live)
            removePacks(obsolete)
        }
    }

    /// Runs `body`, which looks at every pack once (a sweep, an index rebuilt from the
    /// records); a catalog this store object had not listed before is let go of after, so that
    /// a store that then only adds versions (a first sync's merge bases) never holds every
    /// pack's table. The catalog is a cache: the next look lists the folder again.
    func withTransientCatalog<T>(_ body: () throws -> T) rethrows -> T {
        let wasListed = packs.withLock { $0.stamp != nil || !$0.listed.isEmpty }
        defer { if !wasListed { packs.withLock { $0 = PackCatalog() } } }
        return try body()
    }

    /// Removes the pack files `names` and drops them from the catalog. Runs under the store lock.
    func removePacks(_ names: some Collection<String>) {
        guard !names.isEmpty else { return }
        for name in names { _ = Syscall.unlinkat(AT_FDCWD, packURL(name).path) }
        packs.withLock { current in
            let previous = current.listed
            for name in names { current.listed[name] = nil }
            current.settle(previous: previous)
        }
    }
}
