import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file whose bytes a sync engine wants kept as the base of a later merge.
package struct BaseToKeep: Sendable {
    /// The file.
    package var url: URL
    /// The SHA-256 (hex) of the bytes the caller synced: the base is kept only if the file
    /// still holds them. Nil keeps whatever it holds.
    package var hash: String?
    /// The file's status when the caller synced it: the base is kept only if it is still the
    /// same file (device, inode) with the same size and modification time. Nil checks nothing.
    package var status: FileStatus?

    /// A file to keep the bytes of, on the conditions given.
    package init(url: URL, hash: String? = nil, status: FileStatus? = nil) {
        self.url = url
        self.hash = hash
        self.status = status
    }
}

/// A merge base the store kept.
package struct KeptBase: Sendable, Equatable {
    /// The persistent identifier of the version holding the bytes.
    package var versionID: String
    /// The file's status once the store gave it its identity: only its status-change time
    /// can differ from the one it was read with.
    package var status: FileStatus
}

/// A caller's bases waiting for the store's queue, and what became of them.
final class BaseRequest: Sendable {
    let items: [BaseToKeep]
    let kept: Mutex<[KeptBase?]?> = Mutex(nil)

    init(_ items: [BaseToKeep]) { self.items = items }
}

extension VersionStore {
    /// Keeps the bytes each file of `items` holds as a history version of it: what a sync
    /// engine does once a batch of documents is synced, to have the base of a later merge.
    ///
    /// Cost: per file, an `open`, two `fstat`s, a read and a hash, and an extended attribute
    /// written the first time the file is seen; per group of at most 1,024 bases or 4 MiB
    /// read (``mostBasesTogether``, ``mostBaseBytesTogether``: what is held in memory at
    /// once), one pack file (``VersionPack``) holding every record and every content of at
    /// most 32 KiB, flushed with its folder
    /// (two `fsync`s), the identity index rewritten without a flush, and nothing else
    /// created: no folder, no file per document. Larger contents are cut into chunks, as
    /// saves store them: those not stored yet inline up to 256 KiB a file
    /// (``VersionPack/mostInlineNewBytes``), the rest loose. Calls made while another is
    /// being stored (the completions of a concurrent executor) wait and are stored together,
    /// in the next pack.
    ///
    /// Thread-safe: any thread may call it at any time; calls are stored in turn on the
    /// store's queue, under its lock (other processes' writes wait).
    ///
    /// Crash order: nothing is reported kept before it is durable. The pack is written in
    /// `incoming/`, flushed, renamed into `packs/` and the folder flushed (new loose chunks
    /// before it, in the same way) before this returns; a crash before that leaves only
    /// what `incoming/` holds, swept by the next use of the store, and the versions of the
    /// call are not there. A crash after leaves every version this returned readable.
    ///
    /// - Returns: For each item, in order, the version that holds its bytes (new, or the
    ///   item's newest history version when that holds the same bytes) and the file's status;
    ///   nil where the file is gone, is not a regular file, no longer matches the hash or
    ///   status given, was written while it was read, or could not be stored (reported as
    ///   ``lastError``).
    package func keepBases(_ items: [BaseToKeep]) -> [KeptBase?] {
        guard !items.isEmpty else { return [] }
        let request = BaseRequest(items)
        pendingBaseRequests.withLock { $0.append(request) }
        queue.sync { storePendingBases() }
        return request.kept.withLock { $0 } ?? Array(repeating: nil, count: items.count)
    }

    /// Stores every base request waiting, together, on the store's queue.
    private func storePendingBases() {
        let requests = pendingBaseRequests.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !requests.isEmpty else { return }
        var results = requests.map { Array(repeating: KeptBase?.none, count: $0.items.count) }
        var staged: [URL] = []
        defer { for url in staged { removeStaged(url) } }
        do {
            try withStoreLock {
                // Read and stored a group at a time, so that the bytes held at once are one
                // group's, whatever the number of bases.
                var sources: [VersionSource] = []
                var owners: [(request: Int, item: Int, status: FileStatus)] = []
                var bytes = 0
                // Each group's rows of the identity index are written with it, in one
                // transaction: what is held at once is one group's.
                func storeGroup() throws {
                    guard !sources.isEmpty else { return }
                    for (owner, id) in zip(owners, try store(sources)) {
                        results[owner.request][owner.item] = id.map {
                            KeptBase(versionID: $0, status: owner.status)
                        }
                    }
                    (sources, owners, bytes) = ([], [], 0)
                }
                for (requestIndex, request) in requests.enumerated() {
                    for (itemIndex, item) in request.items.enumerated() {
                        guard let (source, status) = readBase(item, staging: &staged) else { continue }
                        sources.append(source)
                        owners.append((requestIndex, itemIndex, status))
                        if case .bytes(let data, _) = source.contents { bytes += data.count }
                        if sources.count == Self.mostBasesTogether || bytes >= Self.mostBaseBytesTogether {
                            try storeGroup()
                        }
                    }
                }
                try storeGroup()
            }
        } catch {
            report(error, operation: "keep the merge bases of synced documents")
        }
        for (request, kept) in zip(requests, results) { request.kept.withLock { $0 = kept } }
    }

    /// At most this many bases are stored with one flush: a pack of small documents.
    package static let mostBasesTogether = 1024
    /// And at most about this many bytes of them read whole (a base read whole is at most
    /// ``ChunkedContents/mostBytes``): what keeping bases holds in memory at once.
    package static let mostBaseBytesTogether = 4 << 20

    /// Reads the file of `item` for ``keepBases(_:)`` as one version's source, with the file's
    /// status after; nil (nothing kept) when it does not meet the item's conditions or cannot
    /// be read, reported.
    ///
    /// The file is opened once, without following a link: its identity, status and bytes are
    /// all of that one file, and its status read again after the bytes shows whether a
    /// writer changed it meanwhile. Contents too large to read whole (``ChunkedContents/mostBytes``)
    /// are linked into `incoming/` (added to `staging`) and cut from there, as a save's are.
    private func readBase(_ item: BaseToKeep, staging: inout [URL]) -> (VersionSource, FileStatus)? {
        let url = item.url.standardizedFileURL
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        else { return nil }
        defer { Syscall.close(fd) }
        do {
            let info = try Syscall.fstat(fd).get("keep the merge base of", url)
            let before = FileStatus(info)
            guard before.isRegularFile, item.status.map(before.isSameFileAndContents) ?? true else {
                return nil
            }
            guard let identity = identity(ofOpenItem: fd, path: url.path, info: info, creating: true) else {
                return nil
            }
            let contents: VersionSource.Contents
            let hash: String
            if before.size <= Int64(ChunkedContents.mostBytes) {
                let data = try Self.read(fd, size: Int(before.size), url: url)
                hash = ContentHash(of: data).hex
                contents = .bytes(data, mode: UInt32(before.permissions))
            } else {
                let link = try stagingURL()
                _ = try Syscall.linkat(AT_FDCWD, url.path, AT_FDCWD, link.path).get(
                    "keep the merge base of", url)
                staging.append(link)
                hash = item.hash == nil ? "" : try ContentHash(contentsOf: link).hex
                contents = .staged(link)
            }
            let after = try Syscall.fileStatus(of: fd).get("keep the merge base of", url)
            guard after.isSameFileAndContents(as: before), item.hash.map({ $0 == hash }) ?? true else {
                return nil
            }
            let source = VersionSource(
                itemID: identity.id,
                location: IdentityIndex.Entry(path: url.path, device: after.device, inode: after.inode),
                name: url.lastPathComponent, modified: before.modification.date, captured: now(),
                contents: contents, isNewItem: identity.isNew, isOnPurpose: true)
            return (source, after)
        } catch {
            report(error, operation: "keep the merge base of a synced document")
            return nil
        }
    }

    /// The `size` bytes of the file open as `fd`, read from its start; fewer when it
    /// shrank meanwhile (its status, compared after, then tells).
    private static func read(_ fd: CInt, size: Int, url: URL) throws -> Data {
        var data = Data(count: size)
        var done = 0
        try data.withUnsafeMutableBytes { buffer in
            while done < size {
                let count = try Syscall.pread(
                    fd, UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), off_t(done)
                ).get("keep the merge base of", url)
                if count == 0 { break }
                done += count
            }
        }
        return data.prefix(done)
    }
}
