import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The on-disk index of presented paths, shared by every process of the user.
///
/// Every change to the index appends one byte to `presented/.generation`, so a process can
/// tell with one `stat` whether the index changed since it last read it; lookups are served
/// from memory in between. The size only grows, so it never repeats, as a timestamp could
/// within one clock tick.
enum PresenterIndex {
    private struct Snapshot {
        var root: URL
        var generation: Generation
        /// Presented paths by process, for every process listed except this one.
        var others: Listings
    }

    /// What `.generation` looked like: a new file or a longer one means a changed index.
    ///
    /// The status-change time is part of it too: a `.generation` deleted and made again can
    /// get the freed inode number back, and the same size, and a cached listing from before
    /// would then pass for the new one (a presenter another process registered since would
    /// not be asked). It only ever makes a look at the disk more likely, never less.
    private struct Generation: Equatable {
        var inode: UInt64
        var size: Int64
        var statusChange: FileStatus.Timestamp?

        init(inode: UInt64, size: Int64, statusChange: FileStatus.Timestamp? = nil) {
            (self.inode, self.size, self.statusChange) = (inode, size, statusChange)
        }

        init(_ status: FileStatus) {
            self.init(inode: status.inode, size: status.size, statusChange: status.statusChange)
        }

        static let missing = Generation(inode: 0, size: 0)
    }

    /// Where the index is, with `.generation` held open: ``entries()`` checks it on every
    /// coordinated access, and `fstat` on a descriptor skips the walk down its path.
    private struct Location {
        var runtime: URL
        var root: URL
        var generationPath: String
        /// Open on `.generation`, or -1 until it could be opened.
        var generationDescriptor: CInt = -1
    }

    private static let cache = Mutex<Snapshot?>(nil)
    private static let location = Mutex<Location?>(nil)

    static var root: URL? {
        let runtime = StandardDirectories.current.runtime
        if let cached = location.withLock({ $0 }), cached.runtime == runtime { return cached.root }
        guard let checked = try? StandardDirectories.current.makeRuntimeDirectory() else { return nil }
        let root = checked.appendingPathComponent("documentkit", isDirectory: true)
        makeFolder(root.path)
        makeFolder(root.appendingPathComponent("presented").path)
        let generationPath = root.appendingPathComponent("presented/.generation").path
        // Made now if no process has listed anything yet, so that it can be held open from
        // the start; an empty file is as good as a missing one for telling changes apart.
        // One that cannot be opened is opened again at the next look (see `generation(in:)`).
        let descriptor =
            (try? Syscall.openat(AT_FDCWD, generationPath, O_RDONLY | O_CREAT | O_NOFOLLOW, 0o600).get())
            ?? -1
        location.withLock { location in
            if let old = location?.generationDescriptor, old >= 0 { Syscall.close(old) }
            location = Location(
                runtime: runtime, root: root, generationPath: generationPath,
                generationDescriptor: descriptor)
        }
        return root
    }

    static func socketPath(of pid: pid_t) -> String {
        (root ?? URL(fileURLWithPath: "/nonexistent")).appendingPathComponent("presenters/\(pid).sock").path
    }

    private static func entryFolder(for path: String, in root: URL) -> String {
        root.appendingPathComponent("presented/\(LockKey(path: path))", isDirectory: true).path
    }

    private static func bumpGeneration(in root: URL) {
        let path = root.appendingPathComponent("presented/.generation").path
        let appended = Syscall.openat(AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT, 0o600).flatMap { fd in
            defer { Syscall.close(fd) }
            return withUnsafeBytes(of: UInt8(ascii: "+")) { Syscall.writeAll(fd, $0) }
        }
        // Other processes see the change at the next bump, or when their cache is dropped.
        if case .failure(let error) = appended {
            DocumentLog.write("presenter index: cannot mark a change in \(path): \(error)")
        }
    }

    /// Makes a folder of the index; one that exists already is what was wanted.
    private static func makeFolder(_ path: String) {
        if case .failure(let error) = Syscall.mkdirat(AT_FDCWD, path, 0o700), error != .fileExists {
            DocumentLog.write("presenter index: cannot create \(path): \(error)")
        }
    }

    /// Removes a listing or a socket; one already gone (another process swept it) is what was
    /// wanted.
    private static func removeFile(_ path: String) {
        if case .failure(let error) = Syscall.unlinkat(AT_FDCWD, path), error != .noSuchFileOrDirectory {
            DocumentLog.write("presenter index: cannot remove \(path): \(error)")
        }
    }

    /// Removes an entry folder that no process lists any more. It stays while other processes
    /// still list the path (not empty), and one already gone was removed by another process.
    private static func removeFolderIfEmpty(_ path: String) {
        switch Syscall.unlinkat(AT_FDCWD, path, removeDirectory: true) {
        case .success, .failure(.directoryNotEmpty), .failure(.fileExists), .failure(.noSuchFileOrDirectory):
            break
        case .failure(let error):
            DocumentLog.write("presenter index: cannot remove \(path): \(error)")
        }
    }

    /// The names in a folder of the index; none when it is gone (no process lists anything
    /// there any more).
    private static func names(in folder: String) -> [String] {
        let url = URL(fileURLWithPath: folder, isDirectory: true)
        return ((try? DirectoryEntry.entries(ofFolderAt: url)) ?? []).map(\.name)
    }

    /// The index's generation now.
    ///
    /// Read with `fstat` on the descriptor kept open. That sees every append, since appends
    /// go to the same file; a `.generation` deleted since it was opened has no links left,
    /// and is opened again by name (a new file is a new inode, so a new generation).
    private static func generation(in root: URL) -> Generation {
        location.withLock { location -> Generation in
            guard var current = location, current.root == root else {
                return generation(of: root.appendingPathComponent("presented/.generation").path)
            }
            if current.generationDescriptor >= 0 {
                if case .success(let status) = Syscall.fileStatus(of: current.generationDescriptor),
                    status.linkCount > 0
                {
                    return Generation(status)
                }
                Syscall.close(current.generationDescriptor)
                current.generationDescriptor = -1
            }
            // Missing until a process lists something: then a new generation is seen.
            current.generationDescriptor =
                (try? Syscall.openat(AT_FDCWD, current.generationPath, O_RDONLY).get()) ?? -1
            location = current
            guard current.generationDescriptor >= 0,
                case .success(let status) = Syscall.fileStatus(of: current.generationDescriptor)
            else {
                return .missing
            }
            return Generation(status)
        }
    }

    private static func generation(of path: String) -> Generation {
        guard let status = FileStatus(path: path) else { return .missing }
        return Generation(status)
    }

    /// The name of this process's listing in an entry folder.
    private static func entryName(of pid: pid_t, asListener: Bool) -> String {
        asListener ? "\(pid)\(listenerSuffix)" : "\(pid)"
    }

    private static let listenerSuffix = ".news"

    /// Lists `path` as presented by this process or, `asListener`, as a folder it hears
    /// version news of.
    static func publish(_ path: String, asListener: Bool = false) {
        guard let root else { return }
        let folder = entryFolder(for: path, in: root)
        makeFolder(folder)
        writeListing(path, to: folder + "/" + entryName(of: getpid(), asListener: asListener))
        bumpGeneration(in: root)
    }

    /// Writes a listing whole, by a rename: a reader sees no listing or all of it, never an
    /// empty file (whose empty path would relate this process to every item). Not flushed:
    /// the index describes running processes only, in the runtime folder, and has nothing to
    /// keep across a crash of the machine; a safe save's two `fsync`s cost every document
    /// open and every query start several milliseconds on a disk.
    private static func writeListing(_ path: String, to destination: String) {
        // "<pid>.tmp" or "<pid>.news.tmp": this process's own, never read as a listing.
        let temporary = destination + temporarySuffix
        let written = Syscall.openat(AT_FDCWD, temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600).flatMap { fd in
            defer { Syscall.close(fd) }
            return Array(path.utf8).withUnsafeBytes { Syscall.writeAll(fd, $0) }
        }.flatMap { _ in Syscall.renameat(AT_FDCWD, temporary, AT_FDCWD, destination) }
        if case .failure(let error) = written {
            removeFile(temporary)
            DocumentLog.write("presenter index: cannot list \(path) in \(destination): \(error)")
        }
    }

    private static let temporarySuffix = ".tmp"

    /// The status of this process's listing of `path`, or nil when it has none.
    static func ownListing(of path: String, asListener: Bool = false) -> FileStatus? {
        guard let root else { return nil }
        return FileStatus(
            path: entryFolder(for: path, in: root) + "/" + entryName(of: getpid(), asListener: asListener))
    }

    /// Removes every listing of this process and its socket, at exit.
    static func unpublishAll() {
        removeEntries(of: getpid())
    }

    /// Removes this process's listing of `path`.
    static func unpublish(_ path: String, asListener: Bool = false) {
        guard let root else { return }
        let folder = entryFolder(for: path, in: root)
        removeFile(folder + "/" + entryName(of: getpid(), asListener: asListener))
        removeFolderIfEmpty(folder)
        bumpGeneration(in: root)
    }

    /// Removes every listing of a process that is gone.
    static func removeEntries(of pid: pid_t) {
        guard let root else { return }
        let presented = root.appendingPathComponent("presented").path
        for folder in names(in: presented) where folder != ".generation" {
            for name in [entryName(of: pid, asListener: false), entryName(of: pid, asListener: true)] {
                removeFile("\(presented)/\(folder)/\(name)")
                removeFile("\(presented)/\(folder)/\(name)\(temporarySuffix)")
            }
            removeFolderIfEmpty("\(presented)/\(folder)")
        }
        removeFile(socketPath(of: pid))
        bumpGeneration(in: root)
    }

    /// What other processes present, read from disk only when the index changed since the
    /// last read: one `fstat` otherwise.
    static func otherProcesses() -> Listings {
        guard let root else { return Listings(byProcess: [:], listenersByProcess: [:]) }
        let current = generation(in: root)
        if let snapshot = cache.withLock({ $0 }), snapshot.root == root, snapshot.generation == current {
            return snapshot.others
        }
        let me = ForkGeneration.processID
        var entries: [pid_t: [String]] = [:]
        var listeners: [pid_t: [String]] = [:]
        var removedDead = false
        let presented = root.appendingPathComponent("presented").path
        for folder in names(in: presented) where folder != ".generation" {
            for name in names(in: "\(presented)/\(folder)") {
                if name.hasSuffix(temporarySuffix) {
                    // A listing being written, or left by a process killed while writing it.
                    let owner = name.split(separator: ".").first.flatMap { pid_t($0) }
                    if let owner, owner != me, !ProcessIdentity.isAlive(owner) {
                        removeFile("\(presented)/\(folder)/\(name)")
                    }
                    continue
                }
                let isListener = name.hasSuffix(listenerSuffix)
                guard let pid = pid_t(isListener ? String(name.dropLast(listenerSuffix.count)) : name),
                    pid != me
                else { continue }
                // A process killed before it could clean up leaves its listings behind.
                if !ProcessIdentity.isAlive(pid) {
                    removeFile("\(presented)/\(folder)/\(name)")
                    removeFolderIfEmpty("\(presented)/\(folder)")
                    removeFile(socketPath(of: pid))
                    removedDead = true
                    continue
                }
                guard let data = FileManager.default.contents(atPath: "\(presented)/\(folder)/\(name)") else {
                    continue
                }
                if isListener {
                    listeners[pid, default: []].append(String(decoding: data, as: UTF8.self))
                } else {
                    entries[pid, default: []].append(String(decoding: data, as: UTF8.self))
                }
            }
        }
        if removedDead { bumpGeneration(in: root) }
        // Recorded with the generation read before the scan: a change during it shows next time.
        let recorded = removedDead ? generation(in: root) : current
        let others = Listings(byProcess: entries, listenersByProcess: listeners)
        cache.withLock { $0 = Snapshot(root: root, generation: recorded, others: others) }
        return others
    }

    /// The paths other processes present, as one coordinated access read them.
    struct Listings: Sendable {
        /// Presented paths by process.
        let byProcess: [pid_t: [String]]
        /// Folders listened to for version news, by process: not presented, so never asked
        /// to save or relinquish.
        let listenersByProcess: [pid_t: [String]]

        /// Whether no other process presents anything (it may still listen).
        var isEmpty: Bool { byProcess.isEmpty }

        /// Other live processes listening to a folder that holds `path`, or to `path` itself.
        func processes(listeningFor path: String) -> [pid_t] {
            var found: [pid_t] = []
            for (pid, folders) in listenersByProcess
            where folders.contains(where: { $0 == path || CanonicalPath.isAncestor($0, of: path) }) {
                if !ProcessIdentity.isAlive(pid) {
                    PresenterIndex.removeEntries(of: pid)
                    continue
                }
                found.append(pid)
            }
            return found.sorted()
        }

        /// Other live processes presenting `path`, a folder above it, or (optionally)
        /// something inside it.
        func processes(relatedTo path: String, includingDescendants: Bool) -> [pid_t] {
            var found: [pid_t] = []
            for (pid, paths) in byProcess {
                let related = paths.contains { presented in
                    presented == path || CanonicalPath.isAncestor(presented, of: path)
                        || (includingDescendants && CanonicalPath.isAncestor(path, of: presented))
                }
                guard related else { continue }
                if !ProcessIdentity.isAlive(pid) {
                    PresenterIndex.removeEntries(of: pid)
                    continue
                }
                found.append(pid)
            }
            return found.sorted()
        }
    }
}
