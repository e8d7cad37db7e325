import DocumentKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A folder as a remote: another disk, a mounted share. The embedded default, with no server.
///
/// Documents are plain files at their relative paths, so people and other tools see ordinary
/// files. Every change is made under the folder's lock, so that two engines writing the same
/// folder, in one process or several, exclude each other between checking a write's
/// condition and applying it; a write streams into a temporary file in the item's folder
/// first (outside the lock), is flushed, and under the lock is checked, renamed into place
/// (`renameat2(RENAME_NOREPLACE)` for ``WriteCondition/absent``) and its folder flushed.
///
/// The lock is a rule of its own, since other users may read the folder:
///
/// - Only a user who can write the folder can take or hold it: it is an `fcntl` write lock
///   on `.documentsync/write.lock`, which needs the file open for writing, and the file is
///   made mode 0600, with read and write for the group or others only where the folder
///   gives them write (a user who can read the folder, not write it, cannot open it at all,
///   so cannot hold even a read lock against it).
/// - Waiting for it is bounded (``lockTimeout``): past the deadline the change fails, nothing
///   done, with an error naming the lock file and its holder (process and user, as far as the
///   system tells), and the next pass tries again. Until the lock is taken again, later
///   changes try once and fail at once, so that a pass does not wait the whole time once
///   for each change.
/// - The `.documentsync/lock` of older versions (an `flock` on a file anyone could open) is
///   neither used nor waited for.
///
/// A tag is the item's inode, size, modification and status-change times (to the nanosecond),
/// from the one `statx` a listing makes per entry anyway: any program that changes a file, in
/// place or by a rename, changes its tag, without anything being read. Writes through this
/// remote also give the new file a modification time later than any this remote gave before
/// (kept as the lock file's own modification time), so two writes never share a tag, even
/// within one clock tick and at equal size. Moving an item changes its status-change time and
/// so its tag; its ``RemoteEntry/fileID`` (device and inode) stays.
///
/// What the folder holds that is not a regular file or a folder (links, sockets), names that
/// are not UTF-8 or not in NFC, and the temporary files of writes in progress are left out of
/// listings. Symbolic links inside the folder are not followed by listings.
///
/// For example:
///
/// ```swift
/// let remote = LocalFolderRemote(root: URL(fileURLWithPath: "/mnt/backup/Notes"))
/// let tag = try remote.write(RemotePath("plan.txt"), from: UploadSource(bytes), condition: .absent)
/// ```
public final class LocalFolderRemote: Remote {
    /// The folder.
    public let root: URL
    public let displayName: String

    /// Six: every write takes the remote's one lock in turn (``withExclusiveLock``), but only
    /// to check its condition and rename; its data and its folder are flushed outside the
    /// lock, and those flushes overlap. Measured (10,000 x 4 KiB first sync, 2 cores): 5.6-6.3 s
    /// two at once, 4.6-4.8 s six at once, with the same CPU. (With the folder flushed under
    /// the lock, four or eight at once were no faster than two and took twice the CPU.)
    public var mostRequestsAtOnce: Int { 6 }
    private let rootPath: String

    /// The prefix of the temporary files writes stream into, beside their targets.
    static let temporaryPrefix = RemotePath.writeInProgressPrefix
    public let address: RemoteAddress?
    /// How long a change waits for the folder's lock before it fails.
    public let lockTimeout: Duration
    /// Set when a wait for the lock ran out, cleared when the lock is next taken: until then
    /// a change tries once and fails at once, rather than every change of a pass waiting in
    /// turn for a holder that does not let go.
    let lockIsStuck = Mutex(false)
    /// Set by ``deferDurability()``: new files are flushed by ``makeWritesDurable()``, not
    /// each as it is written.
    let durabilityIsDeferred = Atomic(false)
    /// New files written since ``makeWritesDurable()`` last flushed.
    let writesAwaitingFlush = Atomic(0)
    /// The lock file, once a change opened it.
    let openLock = OpenLockFile()

    /// The lock file, inside the metadata folder.
    static let lockPath = RemotePath.metadataFolder.appending("write.lock")
    /// The lock file of older versions, which anyone who could read the folder could lock.
    static let legacyLockPath = RemotePath.metadataFolder.appending("lock")

    /// The remote of the folder at `root`; nothing is checked or made until it is used.
    ///
    /// - Parameters:
    ///   - root: The folder (made by the caller).
    ///   - displayName: The name in messages; by default the folder's path.
    ///   - address: How the folder was given, to be reached again; by default its `file://`
    ///     URL.
    ///   - lockTimeout: How long a change waits for the folder's lock (held by another process
    ///     writing it) before it fails; 30 seconds by default.
    public init(
        root: URL, displayName: String? = nil, address: RemoteAddress? = nil,
        lockTimeout: Duration = .seconds(30)
    ) {
        self.root = root.standardizedFileURL
        rootPath = self.root.path == "/" ? "" : self.root.path
        self.displayName = displayName ?? self.root.path
        self.address =
            address
            ?? RemoteAddress(url: URL(fileURLWithPath: self.root.path, isDirectory: true).absoluteString)
        self.lockTimeout = lockTimeout
    }

    deinit {
        openLock.close(waitingAtMost: lockTimeout, turn: Self.lockTurn)
    }

    /// The absolute path of `path` in the folder.
    func absolutePath(_ path: RemotePath) -> String {
        path.isRoot ? (rootPath.isEmpty ? "/" : rootPath) : rootPath + "/" + path.string
    }

    // MARK: Reading

    public func list(_ folder: RemotePath) throws -> RemoteListing {
        try validate(folder, .list, allowingRoot: true)
        let directory: FileDescriptor
        do {
            directory = try openFolder(folder)
        } catch {
            let errno = error
            if errno == .notDirectory || errno == .tooManySymbolicLinkLevels,
                case .success(let status) = Syscall.fileStatus(
                    atPath: absolutePath(folder), followingLinks: false),
                status.isRegularFile
            {
                throw failure(.notAFolder, .list, folder)
            }
            throw failure(errno, .list, folder, missing: .notFound)
        }
        let folderStatus = try status(of: directory, .list, folder)
        let names: [DirectoryEntry]
        switch Syscall.directoryEntries(in: directory.rawValue) {
        case .success(let entries): names = entries
        case .failure(let errno): throw failure(errno, .list, folder, missing: .notFound)
        }
        var entries: [RemoteEntry] = []
        for item in names {
            guard let name = item.validName, !name.utf8.starts(with: Self.temporaryPrefix.utf8),
                Self.isNFC(name)
            else {
                continue
            }
            switch Syscall.fileStatus(directory.rawValue, name, followingLinks: false) {
            case .success(let status):
                if let entry = Self.entry(named: name, status) { entries.append(entry) }
            case .failure(.noSuchFileOrDirectory): continue  // removed since the folder was read
            case .failure(let errno): throw failure(errno, .list, folder.appending(name), missing: .notFound)
            }
        }
        return try checkedListing(folder, entries, folderTag: Self.tag(folderStatus))
    }

    public func entry(at path: RemotePath) throws -> RemoteEntry? {
        try validate(path, .entry, allowingRoot: true)
        switch Syscall.fileStatus(atPath: absolutePath(path), followingLinks: path.isRoot) {
        case .success(let status): return Self.entry(named: path.name, status)
        case .failure(.noSuchFileOrDirectory), .failure(.notDirectory):
            guard rootIsThere else { throw failure(.unavailable, .entry, path) }
            return nil
        case .failure(let errno): throw failure(errno, .entry, path, missing: .notFound)
        }
    }

    public func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try validate(path, .read, allowingRoot: true)
        let file: FileDescriptor
        switch Syscall.openat(AT_FDCWD, absolutePath(path), O_RDONLY | O_NOFOLLOW | O_NONBLOCK) {
        case .success(let fd):
            file = FileDescriptor(
                rawValue: fd, url: URL(fileURLWithPath: absolutePath(path), isDirectory: false))
        case .failure(.tooManySymbolicLinkLevels), .failure(.notDirectory):
            throw failure(.notFound, .read, path)
        case .failure(let errno): throw failure(errno, .read, path, missing: .notFound)
        }
        let before = try status(of: file, .read, path)
        guard !before.isDirectory else { throw failure(.notAFile, .read, path) }
        guard before.isRegularFile else { throw failure(.notFound, .read, path) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: RemoteChunk.bufferSize(forFileOf: before.size), alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let count: Int
            switch Syscall.read(file.rawValue, buffer) {
            case .success(let value): count = value
            case .failure(let errno): throw failure(errno, .read, path, missing: .notFound)
            }
            if count == 0 { break }
            total += Int64(count)
            try sink(Data(UnsafeRawBufferPointer(rebasing: buffer[..<count])))
        }
        // Written in place while it was read: the bytes given may mix two versions. (Replaced by
        // a rename is fine: the open file kept the old bytes whole; its status-change time moves
        // as it loses its name, so that time is not compared.)
        guard try status(of: file, .read, path).isSameFileAndContents(as: before), total == before.size else {
            throw failure(.changedDuringRead, .read, path)
        }
        return Self.tag(before)
    }

    // MARK: Helpers

    /// The tag of an item's status: inode, size, modification and status-change times.
    ///
    /// Spelled `INODE-SIZE-MTIME-CTIME` (inode in hexadecimal, times as seconds.nanoseconds),
    /// built without `String(format:)`: a listing makes one per entry.
    static func tag(_ status: FileStatus) -> RemoteTag {
        // Written digit by digit into the string's own storage: a listing makes one per item,
        // and String(_:radix:) with concatenation cost more than the stat that found the item.
        func append(_ time: FileStatus.Timestamp, to text: inout ASCIIWriter) {
            text.append("-")
            text.appendDigits(of: time.seconds)
            text.append(".")
            text.appendDigits(of: time.nanoseconds, minimumCount: 9)
        }
        return RemoteTag(
            ASCIIWriter.string(capacity: 112) { text in
                text.appendDigits(of: status.inode, radix: 16)
                text.append("-")
                text.appendDigits(of: status.size)
                append(status.modification, to: &text)
                append(status.statusChange, to: &text)
            })
    }

    static func entry(named name: String, _ status: FileStatus) -> RemoteEntry? {
        let kind: RemoteEntry.Kind
        if status.isRegularFile {
            kind = .file
        } else if status.isDirectory {
            kind = .folder
        } else {
            return nil
        }
        return RemoteEntry(
            name: name, kind: kind, size: kind == .file ? status.size : 0, tag: tag(status),
            fileID: fileID(status))
    }

    /// "DEVICE:INODE" in hex: the stored file, which a move keeps.
    private static func fileID(_ status: FileStatus) -> String {
        ASCIIWriter.string(capacity: 40) { text in
            text.appendDigits(of: status.device, radix: 16)
            text.append(":")
            text.appendDigits(of: status.inode, radix: 16)
        }
    }

    private static func isNFC(_ name: String) -> Bool {
        name.utf8.allSatisfy { $0 < 0x80 }
            || name.utf8.elementsEqual(name.precomposedStringWithCanonicalMapping.utf8)
    }

    var rootIsThere: Bool {
        FileStatus(path: absolutePath(.root))?.isDirectory == true
    }

    /// Opens a folder of the tree, where every write is made: the root may be a symbolic
    /// link; below it, nothing is followed and nothing resolves outside it (see
    /// ``ContainedFolder``), so a link another user of a shared folder put in the tree cannot
    /// lead a write outside it.
    func openFolder(_ folder: RemotePath) throws(Errno) -> FileDescriptor {
        do {
            let tree = try ContainedFolder(
                at: URL(fileURLWithPath: absolutePath(.root), isDirectory: true), operation: "open")
            return try tree.folder(folder.components, operation: "open").descriptor
        } catch let error as DocumentKitError {
            throw error.errno ?? .invalidArgument
        } catch {
            throw .invalidArgument
        }
    }

    func status(of file: FileDescriptor, _ operation: RemoteError.Operation, _ path: RemotePath) throws
        -> FileStatus
    {
        switch Syscall.fileStatus(of: file.rawValue) {
        case .success(let status): return status
        case .failure(let errno): throw failure(errno, operation, path, missing: .notFound)
        }
    }

    /// Refuses names the folder cannot hold, and the remote's own files.
    func validate(
        _ path: RemotePath, _ operation: RemoteError.Operation, allowingRoot: Bool = false,
        destination: RemotePath? = nil
    ) throws {
        let valid =
            path.holdsStorableNames(allowingRoot: allowingRoot) && path != Self.lockPath
            && path != Self.legacyLockPath
        guard valid else { throw failure(.invalidName, operation, path, destination: destination) }
    }

    /// The remote's form of a system error; `missing` is what "no such file" means here.
    func failure(
        _ errno: Errno, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil,
        missing: RemoteError.Kind
    ) -> RemoteError {
        let kind: RemoteError.Kind
        switch errno {
        // A symbolic link below the root is not an item: as good as nothing there.
        case .noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinkLevels:
            kind = rootIsThere ? missing : .unavailable
        case .permissionDenied, .notPermitted, .readOnlyFileSystem: kind = .permissionDenied
        case .noSpace, .diskQuotaExceeded: kind = .outOfSpace
        case .fileNameTooLong: kind = .invalidName
        case .fileExists: kind = .exists
        case .directoryNotEmpty: kind = .notEmpty
        case .isDirectory: kind = .notAFile
        default: kind = .other
        }
        return failure(kind, operation, path, destination: destination, detail: errno.description)
    }

    /// The remote's form of an error thrown by DocumentKit's System layer.
    func failure(
        _ error: any Error, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil,
        missing: RemoteError.Kind
    ) -> any Error {
        if let error = error as? RemoteError { return error }
        if let error = error as? DocumentKitError, let errno = error.errno {
            return failure(errno, operation, path, destination: destination, missing: missing)
        }
        if let errno = error as? Errno {
            return failure(errno, operation, path, destination: destination, missing: missing)
        }
        return error
    }
}

/// Writes ASCII into a new string's own storage, for the tags and identities a listing
/// makes per item: one allocation each.
private struct ASCIIWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var count = 0

    /// A string of at most `capacity` bytes, written by `write`.
    static func string(capacity: Int, _ write: (inout ASCIIWriter) -> Void) -> String {
        String(unsafeUninitializedCapacity: capacity) { buffer in
            var writer = ASCIIWriter(buffer: buffer)
            write(&writer)
            return writer.count
        }
    }

    private init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func append(_ character: Unicode.Scalar) {
        buffer[count] = UInt8(ascii: character)
        count += 1
    }

    /// Appends `value` in `radix` (16 or 10; lower-case letters), "-" first when negative,
    /// padded with zeros to `minimumCount` digits.
    mutating func appendDigits(of value: some BinaryInteger, radix: Int = 10, minimumCount: Int = 1) {
        if value < 0 { append("-") }
        var magnitude = UInt64(value.magnitude)
        let start = count
        repeat {
            // Divisions by constants, which the compiler turns into multiplications.
            let digit: UInt64
            if radix == 16 {
                (digit, magnitude) = (magnitude & 0xF, magnitude >> 4)
            } else {
                (digit, magnitude) = (magnitude % 10, magnitude / 10)
            }
            buffer[count] =
                digit < 10 ? UInt8(ascii: "0") + UInt8(digit) : UInt8(ascii: "a") + UInt8(digit) - 10
            count += 1
        } while magnitude > 0 || count - start < minimumCount
        var digits = UnsafeMutableBufferPointer(rebasing: buffer[start..<count])
        digits.reverse()
    }
}

extension LocalFolderRemote {
    /// A folder remote has no address anyone else could download from: no share links.
    public func publishedLink(of path: RemotePath, lifetime: Duration) throws -> PublishedLink {
        throw failure(
            .unsupported, .publish, path,
            detail:
                "a folder remote (file://) has no address others can download from; share links need an S3 remote, or a Nextcloud or ownCloud server"
        )
    }
}
