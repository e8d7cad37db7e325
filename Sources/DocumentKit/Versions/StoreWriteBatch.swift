import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The new chunks, packs and records of the versions stored together, made durable together.
///
/// The store's rules are those of a safe save, for every file: nothing appears under its
/// name before its bytes are on disk, no record appears before the chunks it names, and a
/// version counts as kept only once its record's name is on disk. Written one file at a time
/// that is an `fsync` of the file and one of its folder per file, each a journal commit.
/// Here every file is first written under a fresh name in `incoming/` (where a killed
/// process's leftovers are swept) with its writeback started, so that when ``flush()`` waits,
/// the first `fsync` commits them all and the others find their bytes already there; then
/// the chunks are renamed into place and their folders flushed, then the packs and the
/// records, then their folders. A batch of versions costs three commits, not two per file.
///
/// A batch that packs (``VersionPack``) puts its records in one pack file, with the bytes of
/// contents small enough to be inline: a batch of small documents costs one new file and no
/// folder, however many documents it holds. Records rewritten later, and conflict versions,
/// are files of their own.
///
/// Used on the store's queue under its lock; nothing reaches its final name before
/// ``flush()``, and what is not flushed is removed when the batch goes away.
final class StoreWriteBatch {
    private struct Staged {
        var file: FileDescriptor
        var name: String
        var destination: URL
    }

    private let store: VersionStore
    private var incoming: FileDescriptor?
    private var chunks: [Staged] = []
    private var records: [Staged] = []
    /// Packs written to `incoming/`, full or closed by ``flush()``.
    private var stagedPacks: [Staged] = []
    /// The pack being filled, when the batch packs.
    private var pack: VersionPack.Builder?
    /// The chunks waiting here: a later version of the batch with the same bytes names them
    /// without writing them again.
    private var chunkNames: Set<String> = []
    /// The packs this batch put in place, with their tables, once flushed.
    private(set) var placedPacks: [(name: String, pack: VersionPack)] = []
    private var sealedPacks: [(name: String, pack: VersionPack)] = []

    /// Chunks flushed early past this many, so that a large first version (thousands of
    /// chunks) never holds more descriptors than the process may open.
    private static let mostOpenChunks = 256

    /// A batch of the store's; `packing`, its new records go in packs with their small
    /// contents (``addPackedRecord(_:inline:)``).
    init(store: VersionStore, packing: Bool = false) {
        self.store = store
        if packing { pack = VersionPack.Builder() }
    }

    deinit { abandon() }

    /// Whether contents may be kept inline, in the batch's pack.
    var keepsContentsInline: Bool { pack != nil }

    /// Whether a chunk of this name is already on its way into the store, loose.
    func holdsChunk(_ name: String) -> Bool { chunkNames.contains(name) }

    /// Whether a chunk of this name is already on its way into the store, inline in a pack.
    func holdsInlineChunk(_ name: String) -> Bool {
        pack?.holdsChunk(name) == true || sealedPacks.contains { $0.pack.chunks[name] != nil }
    }

    /// Writes a chunk, to be put in place at ``flush()``.
    func addChunk(_ name: String, _ bytes: UnsafeRawBufferPointer) throws {
        if chunks.count >= Self.mostOpenChunks { try flushChunks() }
        chunks.append(try stage(bytes, for: store.chunkURL(name)))
        chunkNames.insert(name)
    }

    /// Writes a version record, to be put in place at ``flush()`` after every chunk.
    func addRecord(_ data: Data, at destination: URL) throws {
        records.append(try data.withUnsafeBytes { try stage($0, for: destination) })
    }

    /// Adds a record to the batch's pack, with the bytes of the chunks it keeps inline; its
    /// other chunks must be loose ones, in the store or added here. A full pack is written
    /// to `incoming/` and another begun.
    func addPackedRecord(_ record: VersionRecord, inline: [(name: String, bytes: Data)]) throws {
        guard pack != nil else {
            preconditionFailure("a packed record in a batch that does not pack")
        }
        pack?.add(record, encoded: try VersionRecord.encoder.encode(record), inline: inline)
        if let full = pack, full.bytes.count >= VersionPack.mostBytes { try sealPack() }
    }

    /// Writes a whole pack (one rewritten without some versions) to `incoming/`, to be put
    /// in place at ``flush()`` under a new name.
    func addPack(_ builder: VersionPack.Builder) throws {
        let name = VersionPack.newName()
        stagedPacks.append(try builder.sealed().withUnsafeBytes { try stage($0, for: store.packURL(name)) })
        sealedPacks.append((name, builder.pack))
    }

    /// Writes the pack being filled to `incoming/`, to be put in place at ``flush()``.
    private func sealPack() throws {
        guard let full = pack, !full.isEmpty else { return }
        try addPack(full)
        pack = VersionPack.Builder()
    }

    /// Makes everything added durable under its name: chunks first, then records.
    ///
    /// - Throws: ``DocumentKitError`` naming the file or folder that could not be flushed or
    ///   placed; what was not placed is removed.
    func flush() throws {
        do {
            try sealPack()
            // One pass of fsyncs over chunks, packs and records alike: one commit for all.
            for staged in stagedPacks { try staged.file.sync(operation: "flush (fsync) a version pack") }
            for staged in records { try staged.file.sync(operation: "flush (fsync) a version record") }
            try flushChunks()
            store.reachedStep(.chunksPlaced)
            try place(&stagedPacks, operation: "store a version pack", removesPlacedOnFailure: false)
            placedPacks += sealedPacks
            sealedPacks = []
            try place(&records, operation: "store a version record", removesPlacedOnFailure: false)
        } catch {
            abandon()
            throw error
        }
    }

    private func flushChunks() throws {
        for staged in chunks { try staged.file.sync(operation: "flush (fsync) a version chunk") }
        try place(&chunks, operation: "store a version chunk", removesPlacedOnFailure: true)
        chunkNames = []
    }

    /// Renames each staged file to its destination, then flushes the folders they went to.
    ///
    /// - Parameter removesPlacedOnFailure: Whether files placed by a call that fails are
    ///   removed again: chunks, whose names may not be on disk, and which a later version
    ///   finding them would trust without flushing their folders.
    private func place(_ files: inout [Staged], operation: String, removesPlacedOnFailure: Bool) throws {
        guard !files.isEmpty, let incoming else { return }
        var folders: [String: URL] = [:]
        var placed: [URL] = []
        do {
            while let staged = files.first {
                let folder = staged.destination.deletingLastPathComponent()
                if folders[folder.path] == nil {
                    if case .failure = Syscall.fstatat(AT_FDCWD, folder.path, followLinks: false) {
                        try store.makeFolder(folder)
                    }
                    folders[folder.path] = folder
                }
                _ = try Syscall.renameat(incoming.rawValue, staged.name, AT_FDCWD, staged.destination.path)
                    .get(operation, staged.destination)
                placed.append(staged.destination)
                files.removeFirst()
            }
            for folder in folders.values {
                try FileDescriptor.openDirectory(folder, operation: operation).sync(
                    operation: "flush (fsync) the folder of")
            }
        } catch {
            if removesPlacedOnFailure {
                for url in placed { _ = Syscall.unlinkat(AT_FDCWD, url.path) }
            }
            throw error
        }
    }

    /// Writes `bytes` to a new file in `incoming/` and starts its writeback.
    private func stage(_ bytes: UnsafeRawBufferPointer, for destination: URL) throws -> Staged {
        let folder = try incomingFolder()
        // "PID-UUID", the shape `sweepOnce()` removes once the process is gone.
        let name = "\(getpid())-\(UUID().uuidString)"
        let fd = try Syscall.openat(folder.rawValue, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            .get("create a file in the version store for", destination)
        let staged = Staged(
            file: FileDescriptor(rawValue: fd, url: destination), name: name, destination: destination)
        do {
            try staged.file.writeAll(bytes, operation: "write to the version store")
        } catch {
            _ = Syscall.unlinkat(folder.rawValue, name)
            throw error
        }
        // A hint only: where it is unsupported the fsync does all the work.
        _ = Syscall.startWriteback(fd)
        return staged
    }

    private func incomingFolder() throws -> FileDescriptor {
        if let incoming { return incoming }
        try store.makeFolder(store.incomingURL)
        let folder = try FileDescriptor.openDirectory(store.incomingURL, operation: "open the version store")
        incoming = folder
        return folder
    }

    /// Removes whatever was staged and not placed.
    private func abandon() {
        guard let incoming else { return }
        for staged in chunks + stagedPacks + records { _ = Syscall.unlinkat(incoming.rawValue, staged.name) }
        chunks = []
        stagedPacks = []
        records = []
        chunkNames = []
        sealedPacks = []
    }
}
