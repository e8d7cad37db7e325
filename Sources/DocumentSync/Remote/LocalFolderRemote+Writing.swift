import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension LocalFolderRemote {
    @discardableResult
    public func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
        -> RemoteTag?
    {
        try validate(path, .write)
        let folder: FileDescriptor
        do { folder = try openFolder(path.parent) } catch {
            throw failure(error, .write, path, missing: .parentMissing)
        }

        // The bytes go to a temporary file beside the target before the lock is taken, so that
        // a long upload holds up no other writer.
        let temporaryName = Self.temporaryPrefix + String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary: FileDescriptor
        switch Syscall.openat(folder.rawValue, temporaryName, O_WRONLY | O_CREAT | O_EXCL, 0o666) {
        case .success(let fd):
            temporary = FileDescriptor(
                rawValue: fd, url: folder.url.appendingPathComponent(temporaryName, isDirectory: false))
        case .failure(let errno): throw failure(errno, .write, path, missing: .parentMissing)
        }
        var placed = false
        defer {
            if !placed { _ = Syscall.unlinkat(folder.rawValue, temporaryName) }
        }
        var written: Int64 = 0
        var pacer = WritebackPacer()
        while let chunk = try source.nextChunk() {
            written += Int64(chunk.count)
            guard written <= source.size else { break }
            do {
                try chunk.withUnsafeBytes { try temporary.writeAll($0) }
            } catch {
                throw failure(error, .write, path, missing: .parentMissing)
            }
            pacer.wrote(chunk.count, to: temporary)
        }
        guard written == source.size else {
            throw failure(
                .sourceChanged, .write, path,
                detail: "the source gave \(written) bytes or more, not \(source.size)")
        }
        // A new file's bytes and name may be flushed later, with the other writes of the batch
        // (``deferDurability()``); a replacement's bytes are flushed before the rename, so that
        // after a power loss the file is the old one or the new one, never new and empty.
        let flushesLater = condition == .absent && durabilityIsDeferred.load(ordering: .relaxed)
        if !flushesLater {
            do { try temporary.sync() } catch { throw failure(error, .write, path, missing: .parentMissing) }
        }

        let tag = try withExclusiveLock(.write, path) { lock in
            let current = try itemStatus(path.name, in: folder, .write, path)
            try check(condition, current, .write, path)
            if let current, current.isRegularFile {
                // Keeps the file's permissions; a file of someone else's may refuse, harmlessly.
                _ = Syscall.fchmod(temporary.rawValue, current.permissions)
            }
            let time = nextModificationTime(lock, after: current?.modification)
            _ = Syscall.futimens(temporary.rawValue, modification: time.timespec)
            do {
                switch condition {
                case .absent:
                    try SafeSave.renameWithoutReplacing(
                        temporaryName, to: path.name, in: folder,
                        url: URL(fileURLWithPath: absolutePath(path), isDirectory: false),
                        operation: "write")
                case .matches:
                    _ = try Syscall.renameat(folder.rawValue, temporaryName, folder.rawValue, path.name).get(
                        "write", URL(fileURLWithPath: absolutePath(path), isDirectory: false))
                }
            } catch let error as DocumentKitError where error.code == .fileExists {
                throw failure(.preconditionFailed, .write, path)
            } catch {
                throw failure(error, .write, path, missing: .parentMissing)
            }
            placed = true
            return Self.tag(try status(of: temporary, .write, path))
        }
        if flushesLater {
            writesAwaitingFlush.add(1, ordering: .sequentiallyConsistent)
            return tag
        }
        // The rename is flushed after the lock is given back: the other writers of the folder
        // need not wait for this flush, and it is done before the write is reported done.
        do { try folder.sync() } catch { throw failure(error, .write, path, missing: .parentMissing) }
        return tag
    }

    public func deferDurability() -> Bool {
        durabilityIsDeferred.store(true, ordering: .relaxed)
        return true
    }

    /// Flushes the folder's whole file system (`syncfs`) once for every new file written since
    /// the last call: one flush of the disk for a batch, where each file and its folder
    /// flushed on their own cost two each.
    public func makeWritesDurable() throws {
        let waiting = writesAwaitingFlush.exchange(0, ordering: .sequentiallyConsistent)
        guard waiting > 0 else { return }
        do {
            let root = try FileDescriptor.open(
                URL(fileURLWithPath: absolutePath(.root), isDirectory: true), O_RDONLY | O_DIRECTORY,
                operation: "open")
            try root.syncFileSystem()
        } catch {
            // Not known durable: flushed again at the next call.
            writesAwaitingFlush.add(waiting, ordering: .sequentiallyConsistent)
            throw failure(error, .write, .root, missing: .unavailable)
        }
    }

    public func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try validate(path, .delete)
        let folder: FileDescriptor
        do { folder = try openFolder(path.parent) } catch {
            throw failure(error, .delete, path, missing: .notFound)
        }
        try withExclusiveLock(.delete, path) { _ in
            guard let current = try itemStatus(path.name, in: folder, .delete, path) else {
                throw failure(.notFound, .delete, path)
            }
            try check(condition, current, .delete, path)
            switch Syscall.unlinkat(folder.rawValue, path.name, removeDirectory: current.isDirectory) {
            case .success: break
            case .failure(.directoryNotEmpty), .failure(.fileExists): throw failure(.notEmpty, .delete, path)
            case .failure(let errno): throw failure(errno, .delete, path, missing: .notFound)
            }
            do { try folder.sync() } catch { throw failure(error, .delete, path, missing: .notFound) }
        }
    }

    @discardableResult
    public func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try validate(source, .move, destination: destination)
        try validate(destination, .move, destination: destination)
        let sourceFolder: FileDescriptor
        let destinationFolder: FileDescriptor
        do { sourceFolder = try openFolder(source.parent) } catch {
            throw failure(error, .move, source, destination: destination, missing: .notFound)
        }
        do { destinationFolder = try openFolder(destination.parent) } catch {
            throw failure(error, .move, source, destination: destination, missing: .parentMissing)
        }
        return try withExclusiveLock(.move, source, destination: destination) { _ in
            guard let current = try itemStatus(source.name, in: sourceFolder, .move, source) else {
                throw failure(.notFound, .move, source, destination: destination)
            }
            if let condition {
                do { try check(condition, current, .move, source) } catch {
                    throw failure(.preconditionFailed, .move, source, destination: destination)
                }
            }
            if destination == source { throw failure(.exists, .move, source, destination: destination) }
            if destination.isDescendant(of: source) {
                throw failure(.invalidMove, .move, source, destination: destination)
            }
            do {
                try SafeSave.renameWithoutReplacing(
                    source.name, from: sourceFolder, to: destination.name, in: destinationFolder,
                    url: URL(fileURLWithPath: absolutePath(destination)), operation: "move",
                    source: URL(fileURLWithPath: absolutePath(source)))
                try destinationFolder.sync()
                if source.parent != destination.parent { try sourceFolder.sync() }
            } catch let error as DocumentKitError where error.code == .fileExists {
                throw failure(.exists, .move, source, destination: destination)
            } catch {
                throw failure(error, .move, source, destination: destination, missing: .notFound)
            }
            return try itemStatus(destination.name, in: destinationFolder, .move, destination).map(Self.tag)
        }
    }

    public func makeFolder(_ path: RemotePath) throws {
        try validate(path, .makeFolder)
        let folder: FileDescriptor
        do { folder = try openFolder(path.parent) } catch {
            throw failure(error, .makeFolder, path, missing: .parentMissing)
        }
        switch Syscall.mkdirat(folder.rawValue, path.name, 0o777) {
        case .success: break
        case .failure(let errno): throw failure(errno, .makeFolder, path, missing: .parentMissing)
        }
        do { try folder.sync() } catch { throw failure(error, .makeFolder, path, missing: .parentMissing) }
    }

    // MARK: Helpers

    /// The status of `name` in `folder` without following a link; nil when there is nothing,
    /// or nothing a listing would show (a link, a socket).
    private func itemStatus(
        _ name: String, in folder: FileDescriptor, _ operation: RemoteError.Operation, _ path: RemotePath
    ) throws -> FileStatus? {
        switch Syscall.fileStatus(folder.rawValue, name, followingLinks: false) {
        case .success(let status): return status
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let errno): throw failure(errno, operation, path, missing: .notFound)
        }
    }

    /// Throws `.preconditionFailed` unless `condition` holds for the item (nil: nothing there).
    private func check(
        _ condition: WriteCondition, _ current: FileStatus?, _ operation: RemoteError.Operation,
        _ path: RemotePath
    ) throws {
        let visible = current.flatMap { Self.entry(named: path.name, $0) }
        switch condition {
        case .absent:
            guard current == nil else { throw failure(.preconditionFailed, operation, path) }
        case .matches(let tag):
            guard let visible, visible.tag == tag else { throw failure(.preconditionFailed, operation, path) }
            if operation == .write, visible.kind == .folder { throw failure(.notAFile, operation, path) }
        }
    }

    /// A modification time for a new version: now, but later than the replaced file's and than
    /// any this remote gave before (the lock file's modification time, moved forward here), so
    /// that no two versions written through the remote share a tag.
    private func nextModificationTime(_ lock: FileDescriptor, after replaced: FileStatus.Timestamp?)
        -> FileStatus.Timestamp
    {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var time = FileStatus.Timestamp(now)
        let floors = [(try? Syscall.fileStatus(of: lock.rawValue).get())?.modification, replaced]
        for case let floor? in floors where time <= floor {
            time =
                floor.nanoseconds == 999_999_999
                ? FileStatus.Timestamp(seconds: floor.seconds + 1, nanoseconds: 0)
                : FileStatus.Timestamp(seconds: floor.seconds, nanoseconds: floor.nanoseconds + 1)
        }
        // Only the owner may set a file's times; with another user's lock file the replaced
        // file's time still keeps successive versions apart.
        _ = Syscall.futimens(lock.rawValue, modification: time.timespec)
        return time
    }
}
