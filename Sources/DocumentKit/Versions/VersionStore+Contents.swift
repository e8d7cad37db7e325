import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension VersionStore {
    // MARK: - Storing contents

    /// Cuts the file or package at `url` into chunks, writes the new ones into `batch` and
    /// returns the manifest. Runs under the store lock; the chunks are in the store once the
    /// batch is flushed.
    func ingest(_ url: URL, into batch: StoreWriteBatch) throws -> Ingested {
        var contents: ChunkedContents?
        return try ingest(url, into: batch, previous: &contents)
    }

    /// What storing some contents gave: their manifest, and the chunks to keep inline with
    /// their record in the batch's pack (none unless the batch packs).
    struct Ingested {
        var manifest: Manifest
        var inline: [(name: String, bytes: Data)] = []
    }

    /// ``ingest(_:into:)``, cutting and hashing only what changed since `previous`: the
    /// item's contents as last stored, replaced by these if they are a file small enough
    /// to keep (``ChunkedContents/mostBytes``), or by nil.
    func ingest(_ url: URL, into batch: StoreWriteBatch, previous: inout ChunkedContents?) throws -> Ingested
    {
        let info = try Syscall.fstatat(AT_FDCWD, url.path, followLinks: false).get("keep a version of", url)
        var ingested = Ingested(manifest: Manifest(isPackage: info.isDirectory, entries: []))
        if info.isDirectory {
            previous = nil
            try ingestFolder(url, relative: "", info: info, into: &ingested, batch: batch)
            return ingested
        }
        guard info.isRegularFile else {
            throw DocumentKitError(
                .unsupportedFileType, operation: "keep a version of", url: url,
                detail: "not a file or a folder")
        }
        ingested.manifest.entries.append(
            try ingestFile(url, relative: "", info: info, into: &ingested, batch: batch, previous: &previous))
        return ingested
    }

    private func ingestFolder(
        _ url: URL, relative: String, info: stat, into ingested: inout Ingested, batch: StoreWriteBatch
    ) throws {
        ingested.manifest.entries.append(
            Manifest.Entry(path: relative, kind: .folder, mode: UInt32(info.permissions), size: 0, chunks: [])
        )
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
        for name in names {
            let child = url.appendingPathComponent(name)
            let childRelative = relative.isEmpty ? name : "\(relative)/\(name)"
            let childInfo = try Syscall.fstatat(AT_FDCWD, child.path, followLinks: false).get(
                "keep a version of", child)
            if childInfo.isDirectory {
                try ingestFolder(
                    child, relative: childRelative, info: childInfo, into: &ingested, batch: batch)
            } else if childInfo.isSymbolicLink {
                let target = try Syscall.readlinkat(AT_FDCWD, child.path).get("read the link", child)
                ingested.manifest.entries.append(
                    Manifest.Entry(
                        path: childRelative, kind: .link, mode: 0o777, size: 0, chunks: [], target: target))
            } else if childInfo.isRegularFile {
                var unknown: ChunkedContents?
                ingested.manifest.entries.append(
                    try ingestFile(
                        child, relative: childRelative, info: childInfo, into: &ingested, batch: batch,
                        previous: &unknown))
            }
        }
    }

    private func ingestFile(
        _ url: URL, relative: String, info: stat, into ingested: inout Ingested, batch: StoreWriteBatch,
        previous: inout ChunkedContents?
    ) throws -> Manifest.Entry {
        let kept = info.st_size <= ChunkedContents.mostBytes
        let data: Data
        do {
            // Kept contents are read, not mapped: a mapping would hold the blocks of the
            // staged file, removed once stored.
            data = try Data(contentsOf: url, options: kept ? [] : .alwaysMapped)
        } catch {
            throw DocumentKitError(
                .ioFailure, operation: "read a version of", url: url, detail: "\(error)", underlying: error)
        }
        return try ingestBytes(
            data, relative: relative, mode: UInt32(info.permissions), into: &ingested, batch: batch,
            previous: &previous, mapped: !kept)
    }

    /// Stores the bytes of one file of a version. When the batch packs: inline with its
    /// record when they are few (``VersionPack/mostInlineBytes``), else their chunks not
    /// stored yet inline up to ``VersionPack/mostInlineNewBytes`` and loose past that.
    /// Otherwise as loose chunks.
    ///
    /// `mapped` bytes (a file's mapping) are cut, hashed and stored a chunk at a time, and
    /// the pages behind are given back as it goes: what a large file costs in memory is a
    /// chunk, not the file.
    func ingestBytes(
        _ data: Data, relative: String, mode: UInt32, into ingested: inout Ingested, batch: StoreWriteBatch,
        previous: inout ChunkedContents?, mapped: Bool = false
    ) throws -> Manifest.Entry {
        let small = batch.keepsContentsInline && data.count <= VersionPack.mostInlineBytes
        var inlineBudget = batch.keepsContentsInline ? VersionPack.mostInlineNewBytes : 0
        let homes = batch.keepsContentsInline && !small ? packCatalog().chunkHomes : [:]
        var chunks: [Chunk] = []
        // Room for the longest chunk, read back from the store to be compared.
        let stored = UnsafeMutableRawBufferPointer.allocate(
            byteCount: small ? 0 : Chunker.maximumSize, alignment: 64)
        defer { stored.deallocate() }
        try data.withUnsafeBytes { bytes in
            func store(_ index: Int) throws {
                let range = chunks[index].offset..<chunks[index].offset + chunks[index].length
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[range])
                if chunks[index].name.isEmpty { chunks[index].name = ContentHash(of: chunk).hex }
                let name = chunks[index].name
                if small {
                    ingested.inline.append((name, data.subdata(in: range)))
                    return
                }
                // Checked against the store even when reused: it may have been removed or damaged since.
                if storesChunk(name, chunk, comparingThrough: stored, batch: batch, homes: homes) { return }
                if batch.holdsInlineChunk(name) || ingested.inline.contains(where: { $0.name == name }) {
                    return
                }
                if chunk.count <= inlineBudget {
                    inlineBudget -= chunk.count
                    ingested.inline.append((name, data.subdata(in: range)))
                } else {
                    try batch.addChunk(name, chunk)
                }
            }
            if let previous {
                chunks = previous.bytes.withUnsafeBytes {
                    Chunker.cut(bytes, like: $0, chunks: previous.chunks)
                }
                for index in chunks.indices { try store(index) }
            } else {
                // Cut as chunkLengths(of:) cuts, one chunk at a time.
                var offset = 0
                var released = 0
                while offset < bytes.count {
                    let length = Chunker.chunkLength(of: bytes, from: offset)
                    chunks.append(Chunk(offset: offset, length: length, name: ""))
                    try store(chunks.count - 1)
                    offset += length
                    if mapped, offset - released >= 1 << 20 {
                        Syscall.releaseMappedPages(UnsafeRawBufferPointer(rebasing: bytes[released..<offset]))
                        // Where the next release starts: the page (of the page-aligned
                        // mapping) the last one could not take whole.
                        released = offset - offset % Syscall.pageSize
                    }
                }
            }
        }
        previous =
            data.count <= ChunkedContents.mostBytes ? ChunkedContents(bytes: data, chunks: chunks) : nil
        return Manifest.Entry(
            path: relative, kind: .file, mode: mode, size: Int64(data.count), chunks: chunks.map(\.name))
    }

    /// Whether the very same bytes are already stored under the chunk's name (loose, or inline
    /// in the live pack `homes` names) or on their way there in `batch`; when not, the caller
    /// writes them.
    ///
    /// A stored chunk of the right size is compared with the bytes, not trusted: one that was
    /// damaged (a flipped bit) would otherwise make every later version holding these bytes
    /// unrestorable. A damaged one is reported and set aside, and the caller writes the good
    /// bytes. Compared once by this store object: while the chunk's file (or its pack) keeps
    /// the status it had then (inode, size, times), later versions holding it cost one
    /// `fstatat`, not a read.
    ///
    /// - Parameter buffer: Where the stored chunk is read to be compared, at least as long as
    ///   `bytes`.
    private func storesChunk(
        _ name: String, _ bytes: UnsafeRawBufferPointer,
        comparingThrough buffer: UnsafeMutableRawBufferPointer,
        batch: StoreWriteBatch, homes: [String: String]
    ) -> Bool {
        if batch.holdsChunk(name) { return true }
        let path = chunkPath(name)
        if let verified = verifiedChunks.withLock({ $0[name] }),
            case .success(let info) = Syscall.fstatat(AT_FDCWD, path, followLinks: false),
            FileStatus(info) == verified
        {
            return true
        }
        if let home = homes[name], packHoldsChunk(name, in: home) { return true }
        switch storedChunk(atPath: path, holds: bytes, buffer: buffer) {
        case .same(let status):
            verifiedChunks.withLock { verified in
                // Bounded: forgetting costs one more read of a chunk, nothing else.
                if verified.count >= Self.mostVerifiedChunks { verified.removeAll(keepingCapacity: true) }
                verified[name] = status
            }
            return true
        case .missing: return false
        case .different:
            verifiedChunks.withLock { _ = $0.removeValue(forKey: name) }
            quarantine(
                chunkURL(name),
                reason:
                    "a stored chunk does not hold the bytes its name says; the good bytes were stored again",
                operation: "check a stored chunk")
            return false
        }
    }

    /// How many chunks' statuses ``verifiedChunks`` holds at most: 64 MiB of average chunks.
    static let mostVerifiedChunks = 2048

    private enum StoredChunk {
        /// The file holds the bytes; its status as it was compared.
        case same(FileStatus)
        case missing
        case different
    }

    /// Whether the regular file at `url` holds exactly `bytes`: one read into `buffer` and a
    /// `memcmp`. Anything that is not a readable regular file counts as missing, so that the
    /// write after it replaces it or says why it cannot.
    private func storedChunk(
        atPath path: String, holds bytes: UnsafeRawBufferPointer, buffer: UnsafeMutableRawBufferPointer
    ) -> StoredChunk {
        let fd: CInt
        switch Syscall.openat(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0) {
        case .success(let opened): fd = opened
        // Nothing there, or a link (never followed in the store): the write replaces it.
        case .failure(.noSuchFileOrDirectory), .failure(.tooManySymbolicLinkLevels): return .missing
        // There but unreadable: as good as damaged.
        case .failure: return .different
        }
        // Not a FileDescriptor: its URL, unused here, would cost more than the read.
        defer { Syscall.close(fd) }
        guard case .success(let info) = Syscall.fstat(fd), info.isRegularFile else {
            return .missing
        }
        guard Int(info.st_size) == bytes.count, bytes.count <= buffer.count else { return .different }
        var length = 0
        while length < bytes.count {
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[length..<bytes.count])
            guard case .success(let count) = Syscall.pread(fd, slice, off_t(length)), count > 0
            else {
                return .different
            }
            length += count
        }
        let status = FileStatus(info)
        guard let stored = buffer.baseAddress, let expected = bytes.baseAddress else { return .same(status) }
        return memcmp(stored, expected, bytes.count) == 0 ? .same(status) : .different
    }

    // MARK: - Rebuilding contents

    /// Writes the contents a manifest describes at `destination`, where nothing exists yet.
    /// Every chunk is checked against its name; a damaged one is reported once and set aside,
    /// so that the next save of the same bytes stores them again.
    ///
    /// - Parameter privately: Whether every file and folder is the user's alone (the store's
    ///   own copies), rather than given the version's modes (a restore).
    /// - Parameter pack: The pack that holds the version's record, where its inline chunks
    ///   are; other chunks may be inline in other packs, or loose.
    func materialize(_ manifest: Manifest, at destination: URL, privately: Bool = false, pack: String? = nil)
        throws
    {
        let modeMask: mode_t = privately ? 0o700 : 0o7777
        let catalog = packCatalog()
        for entry in manifest.entries {
            let url = entry.path.isEmpty ? destination : destination.appendingPathComponent(entry.path)
            switch entry.kind {
            case .folder:
                _ = try Syscall.mkdirat(AT_FDCWD, url.path, mode_t(entry.mode) & modeMask | 0o700).get(
                    "rebuild a version folder", url)
            case .link:
                _ = try Syscall.symlinkat(entry.target ?? "", AT_FDCWD, url.path).get("rebuild a link", url)
            case .file:
                let file = try FileDescriptor.open(
                    url, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600, operation: "rebuild a version")
                for name in entry.chunks {
                    if let chunk = try packedChunk(name, preferring: pack, in: catalog) {
                        try chunk.withUnsafeBytes { try file.writeAll($0, operation: "rebuild a version") }
                        continue
                    }
                    let chunk: Data
                    do {
                        chunk = try Data(contentsOf: chunkURL(name))
                    } catch {
                        throw DocumentKitError(
                            .fileNotFound, operation: "rebuild a version", url: chunkURL(name),
                            detail: "a chunk of the version is missing")
                    }
                    guard ContentHash(of: chunk).hex == name else {
                        quarantine(
                            chunkURL(name), reason: "a chunk of a version is damaged",
                            operation: "rebuild a version")
                        throw DocumentKitError(
                            .corruptFile, operation: "rebuild a version", url: chunkURL(name),
                            detail:
                                "a chunk of the version is damaged; it is set aside, and the next save of the same bytes stores them again"
                        )
                    }
                    try chunk.withUnsafeBytes { try file.writeAll($0, operation: "rebuild a version") }
                }
                // The bytes are right and the file stays private (0600) if its mode cannot be
                // set (a volume without modes): reported, not worth failing the rebuild for.
                if case .failure(let error) = Syscall.fchmod(file.rawValue, mode_t(entry.mode) & modeMask) {
                    report(
                        DocumentKitError(error, operation: "give a rebuilt version its mode", url: url),
                        operation: "give a rebuilt version its mode")
                }
            }
        }
    }

    // MARK: - Staging

    /// A fresh name in `incoming/` for an item on its way into the store: `PID-UUID`, so that
    /// what a killed process left there can be swept (see `sweepOnce()`).
    func stagingURL() throws -> URL {
        try makeFolder(incomingURL)
        return incomingURL.appendingPathComponent("\(getpid())-\(UUID().uuidString)")
    }

    // MARK: - Sweeping

    /// Once per store object, at its first write: removes what killed processes left in
    /// `incoming/` (only entries whose process is gone) and packs another one replaces (a
    /// crash between placing a pack and removing the one it replaced), makes a store folder
    /// that an older DocumentKit left readable to others private, and trims the cache of
    /// rebuilt versions.
    func sweepOnce() {
        guard
            swept.withLock({ state in
                defer { state = true }
                return !state
            })
        else { return }
        if case .success(let info) = Syscall.fstatat(AT_FDCWD, root.path, followLinks: false),
            info.permissions & 0o077 != 0, info.st_uid == geteuid(),
            case .failure(let error) = Syscall.chmod(root.path, 0o700)
        {
            report(
                DocumentKitError(error, operation: "make the version store private", url: root),
                operation: "make the version store private")
        }
        if let incoming = try? FileDescriptor.openDirectory(incomingURL, operation: "sweep"),
            case .success(let names) = Syscall.directoryNames(in: incoming.rawValue)
        {
            var alive: [pid_t: Bool] = [getpid(): true]
            for name in names {
                // "PID-UUID"; a bare UUID is from a DocumentKit that did not name its process.
                guard let owner = name.split(separator: "-", maxSplits: 1).first.flatMap({ pid_t($0) }) else {
                    continue
                }
                if alive[owner] == nil { alive[owner] = ProcessIdentity.isAlive(owner) }
                guard alive[owner] == false else { continue }
                if case .failure = Syscall.unlinkat(incoming.rawValue, name) {
                    try? FileManager.default.removeItem(at: incomingURL.appendingPathComponent(name))
                }
            }
        }
        sweepReplacedPacks()
        trimRebuiltVersions(keeping: nil)
    }

    /// Removes the least recently used rebuilt versions until `contents/` is under its limit
    /// (``RebuiltVersionsCache``), never `keeping` nor one used within the grace period.
    func trimRebuiltVersions(keeping kept: URL?) {
        struct Rebuilt {
            var folder: URL
            var bytes: Int64
            var used: Date
        }
        let fileManager = FileManager.default
        var rebuilt: [Rebuilt] = []
        for item in (try? fileManager.contentsOfDirectory(atPath: contentsURL.path)) ?? [] {
            let itemFolder = contentsURL.appendingPathComponent(item, isDirectory: true)
            for version in (try? fileManager.contentsOfDirectory(atPath: itemFolder.path)) ?? [] {
                let folder = itemFolder.appendingPathComponent(version, isDirectory: true)
                guard case .success(let info) = Syscall.fstatat(AT_FDCWD, folder.path, followLinks: false)
                else { continue }
                rebuilt.append(
                    Rebuilt(folder: folder, bytes: Self.bytes(under: folder), used: info.modificationDate))
            }
        }
        var total = rebuilt.reduce(0) { $0 + $1.bytes }
        let limits = rebuiltVersionsCache.withLock { $0 }
        let recent = Date().addingTimeInterval(-limits.grace)
        for entry in rebuilt.sorted(by: { $0.used < $1.used }) where total > limits.bytes {
            guard entry.used < recent, entry.folder.path != kept?.path else { continue }
            try? fileManager.removeItem(at: entry.folder)
            total -= entry.bytes
        }
    }

    static func bytes(under url: URL) -> Int64 {
        var total: Int64 = 0
        guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return 0 }
        while let relative = enumerator.nextObject() as? String {
            if case .success(let info) = Syscall.fstatat(
                AT_FDCWD, url.appendingPathComponent(relative).path, followLinks: false),
                info.isRegularFile
            {
                total += Int64(info.st_size)
            }
        }
        return total
    }

    /// Puts a cheap copy of the item at `source` at `destination`: hard links of its files
    /// (a safe save never writes into the old inode, so the link keeps the old bytes), or a
    /// copy across volumes.
    func linkOrCopy(_ source: URL, to destination: URL) throws {
        let info = try Syscall.fstatat(AT_FDCWD, source.path, followLinks: false).get(
            "keep the previous version of", source)
        if info.isDirectory {
            _ = try Syscall.mkdirat(AT_FDCWD, destination.path, 0o700).get(
                "keep the previous version of", destination)
            for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
                try linkOrCopy(
                    source.appendingPathComponent(name), to: destination.appendingPathComponent(name))
            }
            // The version records the folder's mode from this copy: one it cannot be given is
            // not the version.
            _ = try Syscall.chmod(destination.path, info.permissions).get(
                "keep the previous version of", destination)
        } else if info.isRegularFile {
            if case .failure = Syscall.linkat(AT_FDCWD, source.path, AT_FDCWD, destination.path) {
                try FileManager.default.copyItem(at: source, to: destination)
            }
        } else if info.isSymbolicLink {
            let target = try Syscall.readlinkat(AT_FDCWD, source.path).get("read the link", source)
            _ = try Syscall.symlinkat(target, AT_FDCWD, destination.path).get("keep a link of", destination)
        }
    }

    func removeStaged(_ url: URL) {
        // A file (the common case) costs one unlink; a package folder needs the walk.
        if case .failure = Syscall.unlinkat(AT_FDCWD, url.path) {
            try? FileManager.default.removeItem(at: url)
        }
    }
}
