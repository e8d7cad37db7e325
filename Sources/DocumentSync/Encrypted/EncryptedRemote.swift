import Foundation
import Synchronization

/// A remote that keeps its documents in a Cryptomator vault (format 8) at the root of another
/// remote, and shows them as plain paths and bytes.
///
/// The inner remote holds `vault.cryptomator`, `masterkey.cryptomator` and the `d/` tree of
/// encrypted directories; this one lists, reads and writes through it: names are decrypted in
/// listings and encrypted in paths, contents stream through AES-GCM chunk by chunk (a 1 MiB
/// chunk in memory at most, never the whole file), and every write keeps the inner remote's
/// condition, since the tag of a plain file is the tag of its encrypted contents. The sync
/// engine's own folder (``RemotePath/metadataFolder``) is a folder of the vault like any other:
/// its names and bytes (which name documents) are encrypted too.
///
/// Each folder's directory ID (in its `dir.c9r`) is read once and kept by plain path; a move or
/// a delete made through this remote forgets what it changed, and a directory ID found at two
/// paths at once is refused at both (a `dir.c9r` copied or made to point at another folder:
/// which of the two is the real one cannot be told), after checking that the other path is not
/// merely out of date. Such a folder, or one whose `dir.c9r` is not a directory ID, is still
/// listed in its parent; listing it, or anything inside it, fails naming it.
///
/// Every failure is a ``RemoteError`` naming this remote, the operation and the plain path; a
/// vault file that does not authenticate (a chunk, a name, a directory ID) is `.badAnswer` with
/// the vault's own error as its detail. Errors of an ``UploadSource`` or a read's sink pass
/// through as they are.
///
/// For example:
///
/// ```swift
/// let folder = LocalFolderRemote(root: URL(fileURLWithPath: "/mnt/usb/Notes"))
/// let remote = try EncryptedRemote.create(over: folder, passphrase: VaultPassphrase(text))
/// try remote.write(RemotePath("plan.txt"), from: UploadSource(bytes), condition: .absent)
/// ```
public final class EncryptedRemote: Remote {
    /// The remote holding the vault's files.
    public let inner: any Remote
    /// The vault's keys and ciphers.
    public let vault: UnlockedVault
    public let displayName: String
    /// The inner remote's address, marked encrypted, with the passphrase file it was opened with.
    public let address: RemoteAddress?

    /// Directory IDs by plain folder path (the root's is not kept: it is always "").
    private let directoryIDs = Mutex<[RemotePath: String]>([:])
    /// The directory IDs found reached from more than one folder, with those folders: none of
    /// them is used (which one is the real one cannot be told) until the others no longer
    /// reach it.
    private let disputedIDs = Mutex<[String: Set<RemotePath>]>([:])
    /// The entries of names another program stored in another normalisation than NFC, as
    /// listings found them, by directory ID and NFC name: pycryptomator encrypts a name as it
    /// is given (NFD from a Mac), and the encryption of the NFC name, which paths here hold,
    /// is not there. Requests name the entry the vault holds.
    private let spellings = Mutex<[String: VaultEntryName]>([:])
    /// The directory IDs whose spellings are known: listed here.
    private let spelledDirectories = Mutex<Set<String>>([])
    /// Held while a folder is listed to find how a name is spelled, so that a lookup in it on
    /// another thread waits for that listing; recursive, as that listing may list the folders
    /// above it.
    private let spellingLookup = NSRecursiveLock()

    /// The largest `dir.c9r`, `name.c9s`, `vault.cryptomator` or `masterkey.cryptomator` read:
    /// anything larger is not one.
    static let smallFileLimit = VaultNameCipher.smallFileLimit

    /// The remote over `inner`, whose vault `vault` is unlocked; `passphraseFile`, the file its
    /// passphrase was read from, is remembered in its ``address``.
    public init(over inner: any Remote, vault: UnlockedVault, passphraseFile: String? = nil) {
        self.inner = inner
        self.vault = vault
        displayName = inner.displayName + " (encrypted)"
        address = inner.address.map { plain in
            var address = plain
            address.encrypted = true
            address.passphraseFile = passphraseFile
            return address
        }
    }

    /// Opens the vault at the root of `inner` with `passphrase`.
    ///
    /// - Throws: ``VaultError`` naming the remote (`.wrongPassphrase`, a configuration that does
    ///   not verify); ``RemoteError`` when a vault file cannot be read. Nothing is written.
    public static func open(_ inner: any Remote, passphrase: VaultPassphrase) throws -> EncryptedRemote {
        let configuration = try readSmall(
            inner, RemotePath(VaultConfiguration.fileName), limit: smallFileLimit)
        let masterkey = try readSmall(inner, RemotePath(VaultMasterkeyFile.fileName), limit: smallFileLimit)
        let vault = try UnlockedVault(
            configuration: configuration, masterkeyFile: masterkey, passphrase: passphrase,
            vault: inner.displayName)
        return EncryptedRemote(over: inner, vault: vault)
    }

    /// Makes a new vault at the root of `inner`, which must hold nothing (hidden names aside).
    ///
    /// - Throws: ``RemoteError`` `.exists` naming the root when `inner` holds anything;
    ///   ``RemoteError`` of a write.
    public static func create(
        over inner: any Remote, passphrase: VaultPassphrase, cost: VaultScryptCost = .standard
    ) throws -> EncryptedRemote {
        // The inner remote's own files (a folder remote's lock, in its metadata folder) aside.
        let listing = try inner.list(.root)
        if let first = listing.entries.first(where: { !RemotePath($0.name).isMetadata }) {
            throw RemoteError(
                .exists, operation: .makeFolder, path: .root, remote: inner.displayName,
                detail: "a new vault needs an empty remote; it holds \"\(first.name)\"")
        }
        let made = try UnlockedVault.create(passphrase: passphrase, vault: inner.displayName, cost: cost)
        // The directories and the keys first, the configuration last: a remote with a
        // `vault.cryptomator` is a whole vault.
        let configuration = made.files.filter { $0.path == VaultConfiguration.fileName }
        for file in made.files.filter({ $0.path != VaultConfiguration.fileName }) + configuration {
            let path = RemotePath(file.path)
            try makeFolders(inner, path.parent)
            try inner.write(path, from: UploadSource(file.contents), condition: .absent)
        }
        return EncryptedRemote(over: inner, vault: made.vault)
    }

    public var hasFileIDs: Bool { inner.hasFileIDs }

    public var mostRequestsAtOnce: Int { inner.mostRequestsAtOnce }

    public var movesAreAtomic: Bool { inner.movesAreAtomic }

    public func deferDurability() -> Bool { inner.deferDurability() }

    public func makeWritesDurable() throws { try inner.makeWritesDurable() }

    public func watchChanges(_ changed: @escaping @Sendable () -> Void) throws -> RemoteWatch? {
        try inner.watchChanges(changed)
    }

    // MARK: Listing

    public func list(_ folder: RemotePath) throws -> RemoteListing {
        try mapping(.list, folder) {
            let id = try directoryID(of: folder, .list, folder, missing: .notFound)
            let directory = try vault.names.directoryPath(of: id)
            let listing = try inner.list(RemotePath(directory))
            var entries: [RemoteEntry] = []
            for stored in listing.entries {
                if let entry = try plainEntry(stored, in: directory, parentID: id, folder: folder) {
                    entries.append(entry)
                }
            }
            spelledDirectories.withLock { _ = $0.insert(id) }
            var folderTag = listing.folderTag
            if !folder.isRoot { folderTag = try container(of: folder, .list)?.tag }
            return try checkedListing(folder, entries, folderTag: folderTag)
        }
    }

    public func entry(at path: RemotePath) throws -> RemoteEntry? {
        if path.isRoot { return RemoteEntry(name: "", kind: .folder, size: 0, tag: nil) }
        return try mapping(.entry, path) {
            let parentID: String
            do {
                parentID = try directoryID(of: path.parent, .entry, path, missing: .notFound)
            } catch let error as RemoteError where error.kind == .notFound || error.kind == .notAFolder {
                return nil
            }
            let directory = try vault.names.directoryPath(of: parentID)
            let stored = try entryName(for: path.name, in: path.parent, parentDirectoryID: parentID)
                .storedName
            guard let found = try inner.entry(at: RemotePath(directory).appending(stored)) else { return nil }
            return try plainEntry(found, in: directory, parentID: parentID, folder: path.parent)
        }
    }

    /// The plain entry for the item `stored` of the encrypted directory `directory` (the folder
    /// `folder`, whose ID is `parentID`); nil for what is no item (the ID backup, a link, a
    /// folder half made).
    private func plainEntry(_ stored: RemoteEntry, in directory: String, parentID: String, folder: RemotePath)
        throws -> RemoteEntry?
    {
        if stored.name == VaultNameCipher.directoryIDBackupFileName { return nil }
        let storedPath = RemotePath(directory).appending(stored.name)
        let item = folder.appending("(\(stored.name))").string
        var longName: Data?
        /// What a `.c9s` entry holds.
        var held: [RemoteEntry] = []
        if stored.name.hasSuffix(".c9s") {
            guard stored.kind == .folder else {
                throw VaultError(.malformedName, item: item, "a long name that is not a folder")
            }
            // An entry half made or half left by a move (its `name.c9s` is written before the
            // item's one file moves in, and removed after it moved out) holds neither a
            // `dir.c9r` nor a `contents.c9r`: no item, whatever its `name.c9s` says, or lacks.
            held = try inner.list(storedPath).entries
            guard
                held.contains(where: {
                    $0.name == VaultNameCipher.directoryIDFileName
                        || $0.name == VaultNameCipher.contentsFileName
                })
            else { return nil }
            longName = try Self.readSmall(
                inner, storedPath.appending(VaultNameCipher.longNameFileName), limit: Self.smallFileLimit)
        } else if !stored.name.hasSuffix(".c9r") {
            // Not an item of the vault (another program's file beside them): not shown.
            return nil
        }
        let name = try vault.names.decryptedName(
            storedName: stored.name, longName: longName, parentDirectoryID: parentID, item: item)
        let path = folder.appending(name)
        if !path.name.utf8.elementsEqual(name.utf8) {
            let spelled: VaultEntryName =
                longName.map { .shortened(stored.name, fullName: String(decoding: $0, as: UTF8.self)) }
                ?? .regular(stored.name)
            spellings.withLock { $0[parentID + "/" + path.name] = spelled }
        }
        if stored.kind == .file {
            guard longName == nil else { return nil }
            return try fileEntry(name, stored, path)
        }
        // A `.c9r` folder is a folder or a link: its `dir.c9r` is read at once, which costs no
        // listing and sees the remote as it is. A `.c9s` folder may be a file too (listed above).
        if longName != nil, !held.contains(where: { $0.name == VaultNameCipher.directoryIDFileName }) {
            return try held.first { $0.name == VaultNameCipher.contentsFileName }.map {
                try fileEntry(name, $0, path)
            }
        }
        do {
            let contents = try Self.readSmall(
                inner, storedPath.appending(VaultNameCipher.directoryIDFileName), limit: Self.smallFileLimit)
            try remember(VaultNameCipher.directoryID(contents: contents, item: path.string), for: path)
        } catch let error as RemoteError where error.kind == .notFound {
            // A link (`symlink.c9r`), which sync does not follow, or a folder whose making stopped
            // before its `dir.c9r`: not an item.
            return nil
        } catch let error as RemoteError where error.kind == .badAnswer || error.kind == .notAFile {
            // Not a `dir.c9r` (too large, a folder): as below.
        } catch is VaultError {
            // A directory ID that is none, or reached from elsewhere too: the folder's own
            // listing fails, naming it, and its parent's lists it all the same, so that one
            // folder's `dir.c9r` does not hide its siblings.
        }
        return RemoteEntry(name: name, kind: .folder, size: 0, tag: stored.tag, fileID: stored.fileID)
    }

    private func fileEntry(_ name: String, _ stored: RemoteEntry, _ path: RemotePath) throws -> RemoteEntry {
        guard stored.kind == .file, let size = VaultContent.plaintextCount(ciphertextCount: stored.size)
        else {
            throw VaultError(
                .truncated, item: path.string, "\(stored.size) bytes, a size no encrypted file has")
        }
        return RemoteEntry(name: name, kind: .file, size: size, tag: stored.tag, fileID: stored.fileID)
    }

    // MARK: Reading and writing

    public func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try read(path, expectedSize: nil, into: sink)
    }

    public func read(_ path: RemotePath, expectedSize: Int64?, into sink: (Data) throws -> Void) throws
        -> RemoteTag
    {
        try mapping(.read, path) {
            let place = try filePlace(path, .read)
            let decryptor = VaultContentDecryptor(keys: vault.keys, file: path.string)
            let plain = PlainPieces(forFileOf: expectedSize)
            defer { plain.release() }
            return try withoutActuallyEscaping(sink) { sink in
                // Only chunks that authenticated reach the caller's sink, gathered into pieces
                // as large as the inner remote's: a piece a chunk (32 KiB) cost the caller a
                // write and a hand-over to its hashing thread each, and a download twice the
                // plain one's time.
                let pass: (Data) throws -> Void = { piece in
                    do { try sink(piece) } catch { throw PassedThrough(error: error) }
                }
                // Then what authenticated is handed on, also when a later chunk does not: the
                // caller gets every good chunk before the error, as it did a chunk at a time.
                func decrypting(_ body: () throws -> Void) throws {
                    do {
                        try body()
                    } catch let error as VaultError {
                        try plain.flush(to: pass)
                        throw error
                    }
                    try plain.flush(to: pass)
                }
                let tag = try inner.read(
                    place.contents,
                    expectedSize: expectedSize.map { VaultContent.ciphertextCount(plaintextCount: $0) }
                ) { chunk in
                    try decrypting {
                        try chunk.withUnsafeBytes {
                            try decryptor.update($0) { try plain.add($0, passing: pass) }
                        }
                    }
                }
                try decrypting { try decryptor.finish { try plain.add($0, passing: pass) } }
                return tag
            }
        }
    }

    @discardableResult
    public func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
        -> RemoteTag?
    {
        try write(path, from: source, condition: condition, placeListed: false)
    }

    @discardableResult
    public func write(
        _ path: RemotePath, from source: UploadSource, condition: WriteCondition, placeListed: Bool
    ) throws -> RemoteTag? {
        try mapping(.write, path) {
            let place = try filePlace(path, .write)
            if let longName = place.longName, try inner.entry(at: RemotePath(longName.path)) == nil {
                try makeInnerFolder(RemotePath(longName.path).parent)
                try inner.write(
                    RemotePath(longName.path), from: UploadSource(longName.contents), condition: .absent)
            }
            return try inner.write(
                place.contents, from: encrypted(source), condition: condition, placeListed: placeListed)
        }
    }

    /// `source` encrypted as it is read: the header, then the chunks each piece of the plain
    /// bytes completes, sealed into buffers used again piece after piece (a new `Data` of a MiB
    /// a piece costs the mapping and zeroing of its pages: `ChunkBuffers` says how much).
    private func encrypted(_ source: UploadSource) throws -> UploadSource {
        let encryptor = try VaultContentEncryptor(keys: vault.keys)
        // A piece of plain bytes completes at most `chunks` chunks (what the encryptor holds
        // back is less than one), so a buffer of `chunks` sealed chunks holds what it gives;
        // a small file's buffer is one chunk, not a MiB.
        let chunks = Swift.max(
            1,
            Swift.min(
                RemoteChunk.size / VaultContent.chunkPlaintextCount,
                Int(source.size / Int64(VaultContent.chunkPlaintextCount)) + 1))
        let pieceLimit = chunks * VaultContent.chunkPlaintextCount
        let buffers = ChunkBuffers(size: chunks * VaultContent.chunkCiphertextCount)
        var header: Data? = encryptor.header
        var rest = Data()
        var done = false
        return UploadSource(size: VaultContent.ciphertextCount(plaintextCount: source.size)) {
            if let first = header {
                header = nil
                return first
            }
            while !done {
                if rest.isEmpty {
                    let plain: Data?
                    do { plain = try source.nextChunk() } catch { throw PassedThrough(error: error) }
                    guard let plain else {
                        done = true
                        return try buffers.fill { output in
                            var filled = 0
                            try encryptor.finish { Self.put($0, in: output, at: &filled) }
                            return filled
                        }
                    }
                    rest = plain
                }
                let piece = rest.prefix(pieceLimit)
                rest = piece.count == rest.count ? Data() : rest.dropFirst(piece.count)
                let sealed = try buffers.fill { output in
                    var filled = 0
                    try piece.withUnsafeBytes { plain in
                        try encryptor.update(plain) { Self.put($0, in: output, at: &filled) }
                    }
                    return filled
                }
                if let sealed { return sealed }
            }
            return nil
        }
    }

    /// Copies `bytes` into `buffer` at `offset`, and moves `offset` past them.
    private static func put(
        _ bytes: UnsafeRawBufferPointer, in buffer: UnsafeMutableRawBufferPointer, at offset: inout Int
    ) {
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + bytes.count]).copyMemory(from: bytes)
        offset += bytes.count
    }

    // MARK: Changing the tree

    public func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try mapping(.delete, path) {
            guard !path.isRoot else { throw failure(.invalidName, .delete, path, detail: "the root") }
            let parentID = try directoryID(of: path.parent, .delete, path, missing: .notFound)
            let entry = try entryName(for: path.name, in: path.parent, parentDirectoryID: parentID)
            let stored = try RemotePath(vault.names.directoryPath(of: parentID)).appending(entry.storedName)
            guard let found = try inner.entry(at: stored) else { throw failure(.notFound, .delete, path) }
            forgetSpelling(of: path.name, in: parentID)
            if found.kind == .file {
                try inner.delete(stored, condition: condition)
                return
            }
            let inside = try inner.list(stored).entries
            if inside.contains(where: { $0.name == VaultNameCipher.contentsFileName }) {
                // A file with a long name: its contents, then its name.
                try inner.delete(stored.appending(VaultNameCipher.contentsFileName), condition: condition)
                try deleteInner(stored.appending(VaultNameCipher.longNameFileName))
                try deleteInner(stored)
                return
            }
            guard inside.contains(where: { $0.name == VaultNameCipher.directoryIDFileName }) else {
                throw failure(.notFound, .delete, path)
            }
            if case .matches(let tag) = condition, found.tag != tag {
                throw failure(.preconditionFailed, .delete, path)
            } else if condition == .absent {
                throw failure(.preconditionFailed, .delete, path)
            }
            let id = try directoryID(of: path, .delete, path, missing: .notFound)
            let directory = RemotePath(try vault.names.directoryPath(of: id))
            let held = try inner.list(directory).entries.filter {
                $0.name != VaultNameCipher.directoryIDBackupFileName
            }
            guard held.isEmpty else { throw failure(.notEmpty, .delete, path) }
            // The entry first: a crash after it leaves an unreachable directory, never an entry
            // pointing at nothing.
            for name in inside.map(\.name) { try deleteInner(stored.appending(name)) }
            try deleteInner(stored)
            forget(path)
            if try inner.entry(at: directory.appending(VaultNameCipher.directoryIDBackupFileName)) != nil {
                try deleteInner(directory.appending(VaultNameCipher.directoryIDBackupFileName))
            }
            try deleteInner(directory)
        }
    }

    public func makeFolder(_ path: RemotePath) throws {
        try mapping(.makeFolder, path) {
            guard !path.isRoot else { throw failure(.exists, .makeFolder, path) }
            let parentID = try directoryID(of: path.parent, .makeFolder, path, missing: .parentMissing)
            let made = try vault.newFolder(named: path.name, parentDirectoryID: parentID)
            let stored = try RemotePath(vault.names.directoryPath(of: parentID)).appending(
                made.entry.storedName)
            if let found = try inner.entry(at: stored) {
                // A folder whose making stopped before its `dir.c9r` is made again.
                guard found.kind == .folder,
                    try inner.list(stored).entries.allSatisfy({ $0.name == VaultNameCipher.longNameFileName })
                else { throw failure(.exists, .makeFolder, path) }
            } else {
                try inner.makeFolder(stored)
            }
            // The folder's own directory and its ID backup, then its long name, then the
            // `dir.c9r` that makes it a folder: a folder is listed only once it is whole.
            let marker = stored.appending(VaultNameCipher.directoryIDFileName)
            for file in made.files where !RemotePath(file.path).isDescendant(of: stored) {
                let filePath = RemotePath(file.path)
                try Self.makeFolders(inner, filePath.parent)
                try inner.write(filePath, from: UploadSource(file.contents), condition: .absent)
            }
            try writeLongName(made.entry, in: stored)
            try inner.write(marker, from: UploadSource(Data(made.directoryID.utf8)), condition: .absent)
            try remember(made.directoryID, for: path)
        }
    }

    @discardableResult
    public func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try mapping(.move, source, destination: destination) {
            guard !source.isRoot, !destination.isRoot else { throw failure(.invalidMove, .move, source) }
            if destination.isDescendant(of: source) || destination == source {
                throw failure(.invalidMove, .move, source, destination: destination)
            }
            let sourceID = try directoryID(of: source.parent, .move, source, missing: .notFound)
            let targetID = try directoryID(of: destination.parent, .move, source, missing: .parentMissing)
            let from = try entryName(for: source.name, in: source.parent, parentDirectoryID: sourceID)
            let to = try entryName(for: destination.name, in: destination.parent, parentDirectoryID: targetID)
            let fromPath = try RemotePath(vault.names.directoryPath(of: sourceID)).appending(from.storedName)
            let toPath = try RemotePath(vault.names.directoryPath(of: targetID)).appending(to.storedName)
            guard let found = try inner.entry(at: fromPath) else { throw failure(.notFound, .move, source) }
            if let taken = try inner.entry(at: toPath) {
                // A long name's entry left by a move that stopped before its item moved in (its
                // `name.c9s` alone) is taken over; anything else is an item there.
                guard case .shortened = to, taken.kind == .folder,
                    try inner.list(toPath).entries.allSatisfy({ $0.name == VaultNameCipher.longNameFileName })
                else { throw failure(.exists, .move, source, destination: destination) }
            }
            forget(source)
            forgetSpelling(of: source.name, in: sourceID)
            if found.kind == .file {
                // A file with a short name: its encrypted name alone changes.
                if case .regular = to { return try inner.move(fromPath, to: toPath, condition: condition) }
                try makeInnerFolder(toPath)
                try writeLongName(to, in: toPath)
                return try inner.move(
                    fromPath, to: toPath.appending(VaultNameCipher.contentsFileName), condition: condition)
            }
            let inside = try inner.list(fromPath).entries
            let isFile = inside.contains { $0.name == VaultNameCipher.contentsFileName }
            if isFile, case .regular = to {
                let tag = try inner.move(
                    fromPath.appending(VaultNameCipher.contentsFileName), to: toPath, condition: condition)
                try deleteInner(fromPath.appending(VaultNameCipher.longNameFileName))
                try deleteInner(fromPath)
                return tag
            }
            if !isFile, case .regular = to {
                // A folder to a short name moves whole, `dir.c9r` and all, in one step; a long
                // name's `name.c9s` left in it after a crash is not read (a `.c9r` entry).
                let tag = try inner.move(fromPath, to: toPath, condition: condition)
                if case .shortened = from {
                    try deleteInner(toPath.appending(VaultNameCipher.longNameFileName))
                }
                return tag
            }
            // To a long name: the new entry whole with its `name.c9s` first, then the item's one
            // file (`contents.c9r`, or the folder's `dir.c9r`) moved into it, then the old entry
            // removed. A crash at any step lists as before the move (the new entry holds no item
            // yet) or after it (the old one holds none any more), never as a `name.c9s` that
            // does not match.
            let itemFile = isFile ? VaultNameCipher.contentsFileName : VaultNameCipher.directoryIDFileName
            if let condition, !isFile {
                guard case .matches(let tag) = condition, found.tag == tag else {
                    throw failure(.preconditionFailed, .move, source, destination: destination)
                }
            }
            try makeInnerFolder(toPath)
            try writeLongName(to, in: toPath)
            let tag = try inner.move(
                fromPath.appending(itemFile), to: toPath.appending(itemFile),
                condition: isFile ? condition : nil)
            for leftover in inside where leftover.name != itemFile {
                try deleteInner(fromPath.appending(leftover.name))
            }
            try deleteInner(fromPath)
            return isFile ? nil : try inner.entry(at: toPath)?.tag ?? tag
        }
    }

    // MARK: Directory IDs

    /// The directory ID of the folder `folder`, from what is kept or its `dir.c9r`.
    ///
    /// - Throws: ``RemoteError`` of `missing` naming `path` when there is no such folder,
    ///   `.notAFolder` for a file.
    private func directoryID(
        of folder: RemotePath, _ operation: RemoteError.Operation, _ path: RemotePath,
        missing: RemoteError.Kind
    ) throws -> String {
        if folder.isRoot { return VaultNameCipher.rootDirectoryID }
        if let kept = directoryIDs.withLock({ $0[folder] }) { return kept }
        let id = try storedDirectoryID(of: folder, operation, path, missing: missing)
        try remember(id, for: folder)
        return id
    }

    /// The directory ID in the `dir.c9r` of the folder `folder`, read now and not kept.
    ///
    /// - Throws: As ``directoryID(of:_:_:missing:)``.
    private func storedDirectoryID(
        of folder: RemotePath, _ operation: RemoteError.Operation, _ path: RemotePath,
        missing: RemoteError.Kind
    ) throws -> String {
        let parentID = try directoryID(of: folder.parent, operation, path, missing: missing)
        let entry = try entryName(for: folder.name, in: folder.parent, parentDirectoryID: parentID)
        let stored = try RemotePath(vault.names.directoryPath(of: parentID)).appending(entry.storedName)
        // The `dir.c9r` is read, not looked up first: a read sees the remote as it is, where an
        // entry or a listing may be behind, and a folder must not read as missing because a
        // look was stale (a read of a missing file says the file is gone).
        let contents: Data
        do {
            contents = try Self.readSmall(
                inner, stored.appending(VaultNameCipher.directoryIDFileName), limit: Self.smallFileLimit)
        } catch let error as RemoteError
            where [.notFound, .notAFolder, .notAFile, .parentMissing].contains(error.kind)
        {
            // Why there is none: nothing there, a file, or a folder whose making stopped before
            // its `dir.c9r` (not a folder yet: made again by the next makeFolder).
            let notAFolder: RemoteError.Kind = missing == .notFound ? .notAFolder : missing
            guard let found = try inner.entry(at: stored) else { throw failure(missing, operation, path) }
            guard found.kind == .folder else { throw failure(notAFolder, operation, path) }
            let isFile = try inner.entry(at: stored.appending(VaultNameCipher.contentsFileName)) != nil
            throw failure(isFile || error.kind == .notAFile ? notAFolder : missing, operation, path)
        }
        return try VaultNameCipher.directoryID(contents: contents, item: folder.string)
    }

    /// Keeps `id` as the directory ID of `folder`, unless another folder still has it: then
    /// neither is kept, and both are refused until one of them no longer has it.
    private func remember(_ id: String, for folder: RemotePath) throws {
        let others = directoryIDs.withLock { ids in
            Set(ids.filter { $0.value == id && $0.key != folder }.keys)
        }.union(disputedIDs.withLock { $0[id] ?? [] }).subtracting([folder])
        var reaching: Set<RemotePath> = []
        for other in others.sorted() {
            // The other path may be out of date (moved by another device): looked at afresh.
            forget(other)
            if (try? storedDirectoryID(of: other, .list, other, missing: .notFound)) == id {
                reaching.insert(other)
            }
        }
        guard let other = reaching.min() else {
            disputedIDs.withLock { $0[id] = nil }
            directoryIDs.withLock { $0[folder] = id }
            return
        }
        disputedIDs.withLock { $0[id] = reaching.union([folder]) }
        directoryIDs.withLock { $0[folder] = nil }
        throw VaultError(
            .malformedDirectoryID, item: folder.string,
            "the directory of \"\(other.string)\" is reached from here too")
    }

    /// Forgets the directory IDs of `path` and of every folder below it.
    private func forget(_ path: RemotePath) {
        directoryIDs.withLock { ids in
            for key in ids.keys where key == path || key.isDescendant(of: path) { ids[key] = nil }
        }
    }

    // MARK: Inner remote

    /// Where a plain file's contents are: its encrypted path, and the long name to write beside it.
    private func filePlace(_ path: RemotePath, _ operation: RemoteError.Operation) throws -> (
        contents: RemotePath, longName: UnlockedVault.File?
    ) {
        guard !path.isRoot else { throw failure(.notAFile, operation, path) }
        let parentID = try directoryID(
            of: path.parent, operation, path, missing: operation == .write ? .parentMissing : .notFound)
        if let spelled = storedSpelling(of: path.name, in: path.parent, parentDirectoryID: parentID) {
            // Stored by another program, long name and all.
            let stored = try RemotePath(vault.names.directoryPath(of: parentID)).appending(spelled.storedName)
            guard case .shortened = spelled else { return (stored, nil) }
            return (stored.appending(VaultNameCipher.contentsFileName), nil)
        }
        let place = try vault.filePaths(named: path.name, parentDirectoryID: parentID)
        return (RemotePath(place.contents), place.longName)
    }

    /// How the item `name` (in NFC) of `folder`, whose directory ID is `parentDirectoryID`, is
    /// stored: as a listing found it spelled, or as its name encrypts.
    private func entryName(for name: String, in folder: RemotePath, parentDirectoryID: String) throws
        -> VaultEntryName
    {
        try storedSpelling(of: name, in: folder, parentDirectoryID: parentDirectoryID)
            ?? vault.names.entryName(for: name, parentDirectoryID: parentDirectoryID)
    }

    /// The entry of the item `name` (in NFC) of `folder`, whose directory ID is
    /// `parentDirectoryID`, when it is stored under another spelling. Only a name that is not
    /// ASCII can be: unless `folder` was listed here, it is listed once to find out, so that a
    /// lookup before any listing (a pass's recovery, an on-demand download) finds the item
    /// another program stored in NFD. A listing that fails is tried again at the next lookup.
    private func storedSpelling(of name: String, in folder: RemotePath, parentDirectoryID: String)
        -> VaultEntryName?
    {
        let spelled = { self.spellings.withLock { $0[parentDirectoryID + "/" + name] } }
        let listed = { self.spelledDirectories.withLock { $0.contains(parentDirectoryID) } }
        if let known = spelled() { return known }
        guard !name.utf8.allSatisfy({ $0 < 0x80 }), !listed() else { return nil }
        spellingLookup.lock()
        defer { spellingLookup.unlock() }
        // Listed by another thread while this one waited.
        if listed() { return spelled() }
        // A listing notes each spelling, then the folder as listed.
        _ = try? list(folder)
        return spelled()
    }

    /// Forgets how the item `name` of the directory `parentDirectoryID` was spelled: it is gone.
    private func forgetSpelling(of name: String, in parentDirectoryID: String) {
        spellings.withLock { $0[parentDirectoryID + "/" + name] = nil }
    }

    private func writeLongName(_ entry: VaultEntryName, in folder: RemotePath) throws {
        guard case .shortened(_, let fullName) = entry else { return }
        let path = folder.appending(VaultNameCipher.longNameFileName)
        if let old = try inner.entry(at: path) {
            try inner.write(
                path, from: UploadSource(Data(fullName.utf8)),
                condition: old.tag.map { .matches($0) } ?? .absent)
        } else {
            try inner.write(path, from: UploadSource(Data(fullName.utf8)), condition: .absent)
        }
    }

    private func makeInnerFolder(_ path: RemotePath) throws {
        do { try inner.makeFolder(path) } catch let error as RemoteError where error.kind == .exists {}
    }

    /// Deletes what is at `path` in the inner remote as it is now.
    func deleteInner(_ path: RemotePath) throws {
        guard let found = try inner.entry(at: path) else { return }
        if let tag = found.tag {
            try inner.delete(path, condition: .matches(tag))
        } else {
            throw RemoteError(
                .unsupported, operation: .delete, path: path, remote: inner.displayName,
                detail: "the remote gives no tag to delete it by")
        }
    }

    /// Makes `folder` and the folders above it in `inner` where they are missing.
    static func makeFolders(_ inner: any Remote, _ folder: RemotePath) throws {
        guard !folder.isRoot, try inner.entry(at: folder) == nil else { return }
        try makeFolders(inner, folder.parent)
        do { try inner.makeFolder(folder) } catch let error as RemoteError where error.kind == .exists {}
    }

    /// The whole of a small file of `inner`.
    ///
    /// - Throws: ``RemoteError`` `.badAnswer` naming it when it holds more than `limit` bytes.
    static func readSmall(_ inner: any Remote, _ path: RemotePath, limit: Int) throws -> Data {
        var data = Data()
        _ = try inner.read(path) { chunk in
            guard data.count + chunk.count <= limit else {
                throw RemoteError(
                    .badAnswer, operation: .read, path: path, remote: inner.displayName,
                    detail: "more than \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    // MARK: Errors

    /// Runs `body`, its errors made this remote's: a ``RemoteError`` of the inner remote keeps
    /// its kind and names the plain path; a ``VaultError`` is `.badAnswer`; what a source or a
    /// sink threw passes through.
    private func mapping<T>(
        _ operation: RemoteError.Operation, _ path: RemotePath, destination: RemotePath? = nil,
        _ body: () throws -> T
    ) throws -> T {
        do {
            do {
                return try body()
            } catch let error as RemoteError where error.kind == .notFound || error.kind == .parentMissing {
                // A directory ID kept may be out of date (its folder deleted or moved by another
                // device, another folder made at its path): once more with none kept. Nothing was
                // changed by what failed so.
                guard
                    directoryIDs.withLock({ kept in
                        defer { kept = [:] }
                        return !kept.isEmpty
                    })
                else {
                    throw error
                }
                return try body()
            }
        } catch let passed as PassedThrough {
            throw passed.error
        } catch let error as RemoteError {
            // This remote's own errors name it; the inner remote's name a path of the vault.
            if error.remote == displayName { throw error }
            let inVault = "in the vault, \(error.operation.rawValue) \(error.path)"
            throw failure(
                error.kind, operation, path, destination: destination,
                detail: error.detail.map { "\(inVault): \($0)" } ?? inVault)
        } catch let error as VaultError {
            throw failure(.badAnswer, operation, path, destination: destination, detail: error.description)
        }
    }

    /// The inner remote's entry holding the folder `folder`: the `.c9r` or `.c9s` folder.
    private func container(of folder: RemotePath, _ operation: RemoteError.Operation) throws -> RemoteEntry? {
        let parentID = try directoryID(of: folder.parent, operation, folder, missing: .notFound)
        let entry = try entryName(for: folder.name, in: folder.parent, parentDirectoryID: parentID)
        return try inner.entry(
            at: RemotePath(vault.names.directoryPath(of: parentID)).appending(entry.storedName))
    }
}

/// An error of an upload source or a read's sink, carried through the inner remote unchanged.
private struct PassedThrough: Error {
    let error: any Error
}

/// A read's plain bytes, gathered from the chunks the decryptor opens into pieces of up to a
/// MiB in buffers used again piece after piece, and handed on a piece at a time.
private final class PlainPieces {
    private let buffers: ChunkBuffers
    private var buffer: UnsafeMutableRawBufferPointer?
    private var filled = 0

    /// Pieces for a file of `size` plain bytes: a small file's buffer is the file and a page,
    /// not a MiB; one of a size not known (the small files sync reads whole) four chunks.
    init(forFileOf size: Int64?) {
        buffers = ChunkBuffers(
            size: RemoteChunk.bufferSize(forFileOf: size ?? Int64(4 * VaultContent.chunkPlaintextCount)))
    }

    /// Adds `bytes`, handing the pieces they fill to `pass`.
    func add(_ bytes: UnsafeRawBufferPointer, passing pass: (Data) throws -> Void) throws {
        var offset = 0
        while offset < bytes.count {
            let target = buffer ?? buffers.lend()
            buffer = target
            let count = Swift.min(target.count - filled, bytes.count - offset)
            UnsafeMutableRawBufferPointer(rebasing: target[filled..<filled + count]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            filled += count
            offset += count
            if filled == target.count { try flush(to: pass) }
        }
    }

    /// Hands what is gathered to `pass`, if anything.
    func flush(to pass: (Data) throws -> Void) throws {
        guard let target = buffer, filled > 0 else { return }
        let piece = buffers.chunk(of: target, count: filled)
        buffer = nil
        filled = 0
        try pass(piece)
    }

    /// Gives back the buffer lent and not handed on.
    func release() {
        if let target = buffer { buffers.giveBack(target) }
        buffer = nil
        filled = 0
    }
}
