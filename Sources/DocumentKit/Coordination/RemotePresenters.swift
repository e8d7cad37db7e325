import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Presenters in other processes: where to find them, and how to ask and tell them.
///
/// Each process with presenters listens on `<runtime>/documentkit/presenters/<pid>.sock`
/// and lists every path it presents in `<runtime>/documentkit/presented/<key>/<pid>`, where
/// `<key>` is the path's lock key; a folder it only listens to for version news (see
/// ``VersionNewsListeners``) is listed as `<pid>.news` there. A coordinator looks up the item and its folders by key
/// (a few `opendir` calls that mostly fail at once), and only a folder move or deletion
/// scans the whole index for presenters inside the folder.
final class RemotePresenters: Sendable {
    static let shared = RemotePresenters()

    private struct Pending {
        var session: LocalPresenterSession
        var started: ContinuousClock.Instant
    }

    /// Sessions opened for other processes' accesses, waiting for their "did" message.
    private let pending = Mutex<[String: Pending]>([:])
    private let requestCounter = Atomic<UInt64>(0)

    // MARK: - The asking side

    /// Asks every other process presenting the item (or a folder of it, or, for a folder move
    /// or deletion, something inside it) to get out of the way; returns the session to finish.
    ///
    /// - Parameter processes: The processes to ask: from
    ///   ``PresenterIndex/Listings/processes(relatedTo:includingDescendants:)``.
    func prepare(_ event: AccessEvent, processes: [pid_t], timeout: Duration) -> RemoteSession {
        guard !processes.isEmpty else { return RemoteSession(event: event, processes: [], requestID: 0) }
        let requestID = requestCounter.add(1, ordering: .relaxed).newValue
        var message = Message(
            kind: event.kind == .read ? .willRead : (event.isDeletion ? .willDelete : .willWrite),
            path: Array(event.path.utf8), options: event.options)
        message.requestID = requestID
        message.itemExisted = event.itemExisted
        var answered: [pid_t] = []
        for pid in processes {
            do {
                _ = try MessageChannelClient.send(
                    message, to: PresenterIndex.socketPath(of: pid), timeout: timeout + .seconds(1))
                answered.append(pid)
            } catch let error as DocumentKitError where error.code == .presenterGone {
                PresenterIndex.removeEntries(of: pid)
            } catch {
                CoordinationLog.warning(
                    "process \(pid), which presents \(event.path), did not answer in time; going on without it"
                )
                answered.append(pid)  // it may still be working; tell it how the access ended
            }
        }
        return RemoteSession(event: event, processes: answered, requestID: requestID)
    }

    struct RemoteSession: Sendable {
        let event: AccessEvent
        let processes: [pid_t]
        let requestID: UInt64

        /// Tells the processes asked how the access ended.
        func finish(_ outcome: AccessOutcome) {
            guard !processes.isEmpty else { return }
            var message = Message(
                kind: outcome.movedTo == nil ? .didWrite : .didMove, path: Array(event.path.utf8))
            message.destinationPath = outcome.movedTo.map { Array($0.utf8) }
            message.requestID = requestID
            message.itemExists = outcome.itemExists
            for pid in processes {
                _ = try? MessageChannelClient.send(
                    message, to: PresenterIndex.socketPath(of: pid), timeout: .seconds(2))
            }
        }
    }

    // MARK: - The answering side

    /// Answers another process's coordinator: runs this process's presenters through the
    /// access it announces, the same way an access in this process would.
    func handle(_ message: Message) -> Message {
        let key = "\(message.senderPID)/\(message.requestID)"
        let path = String(decoding: message.path, as: UTF8.self)
        switch message.kind {
        case .willRead, .willWrite, .willDelete:
            expireAbandonedSessions()
            let event = AccessEvent(
                kind: message.kind == .willRead ? .read : .write, path: path, options: message.options,
                itemExisted: message.itemExisted ?? true)
            let session = LocalPresenterSession(
                event: event, excluding: nil, timeout: FileCoordinator.presenterTimeout)
            if event.kind == .write { PendingWrites.shared.begin(path) }
            pending.withLock { $0[key] = Pending(session: session, started: .now) }
            session.prepare()
            return message.reply()
        case .didWrite, .didMove:
            guard let entry = pending.withLock({ $0.removeValue(forKey: key) }) else {
                return message.reply()
            }
            let outcome = AccessOutcome(
                movedTo: message.destinationPath.map { String(decoding: $0, as: UTF8.self) },
                itemExists: message.itemExists ?? true)
            entry.session.finish(outcome)
            if entry.session.event.kind == .write { PendingWrites.shared.end(entry.session.event.path) }
            return message.reply()
        case .versionsDidChange:
            return VersionNews.receive(message)
        default:
            return message.reply(.rejected, error: "unknown request \(message.kind)")
        }
    }

    /// A coordinator that died between asking and telling would leave presenters waiting and
    /// inotify muted for its item; after a minute the access is taken as finished.
    private func expireAbandonedSessions() {
        let expired = pending.withLock { pending -> [Pending] in
            let stale = pending.filter { $0.value.started.duration(to: .now) > .seconds(60) }
            for key in stale.keys { pending.removeValue(forKey: key) }
            return Array(stale.values)
        }
        for entry in expired {
            let path = entry.session.event.path
            entry.session.finish(AccessOutcome(movedTo: nil, itemExists: ItemState(path: path) != nil))
            if entry.session.event.kind == .write { PendingWrites.shared.end(path) }
        }
    }
}

/// Paths with a coordinated write under way: inotify's report of the write is left to the
/// coordinator's own "did" message, so presenters hear of it once.
final class PendingWrites: Sendable {
    static let shared = PendingWrites()
    private let counts = Mutex<[String: Int]>([:])

    func begin(_ path: String) { counts.withLock { $0[path, default: 0] += 1 } }

    /// Ends one write of `path`, once inotify's report of it has been delivered (and muted).
    ///
    /// The report is not late by a fixed time: the watcher reads it when it next wakes, and
    /// holds a write whose file is still open, or half a rename, for a while. Waiting for
    /// it is exact, since the kernel queued it before the writer's system calls returned.
    func end(_ path: String) {
        PresenterPublisher.shared.afterQueuedChanges(affecting: path) {
            counts.withLock { counts in
                let remaining = (counts[path] ?? 1) - 1
                counts[path] = remaining > 0 ? remaining : nil
            }
        }
    }

    func contains(_ path: String) -> Bool { counts.withLock { $0[path] != nil } }

    /// Whether another item in the folder of `path` has a write under way.
    func hasWrite(beside path: String) -> Bool {
        counts.withLock { counts in
            guard !counts.isEmpty else { return false }
            let folder = (path as NSString).deletingLastPathComponent
            return counts.keys.contains { $0 != path && ($0 as NSString).deletingLastPathComponent == folder }
        }
    }

    /// Whether an item in `folder` has a write under way.
    func hasWrite(inFolder folder: String) -> Bool {
        counts.withLock { counts in
            counts.keys.contains { ($0 as NSString).deletingLastPathComponent == folder }
        }
    }

    /// Whether `path` or a folder above it has a write under way: what happens inside a
    /// folder that is being written is part of that write, for the folders above it.
    func covers(_ path: String) -> Bool {
        counts.withLock { counts in
            guard !counts.isEmpty else { return false }
            if counts[path] != nil { return true }
            return CanonicalPath.ancestors(of: path).contains { counts[$0] != nil }
        }
    }
}

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
    private struct Generation: Equatable {
        var inode: UInt64
        var size: Int64

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
        mkdir(root.path, 0o700)
        mkdir(root.appendingPathComponent("presented").path, 0o700)
        let generationPath = root.appendingPathComponent("presented/.generation").path
        // Made now if no process has listed anything yet, so that it can be held open from
        // the start; an empty file is as good as a missing one for telling changes apart.
        let descriptor = open(generationPath, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        location.withLock { location in
            if let old = location?.generationDescriptor, old >= 0 { close(old) }
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
        let fd = open(
            root.appendingPathComponent("presented/.generation").path,
            O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        _ = write(fd, "+", 1)
        close(fd)
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
            var info = stat()
            if current.generationDescriptor >= 0 {
                if fstat(current.generationDescriptor, &info) == 0, info.st_nlink > 0 {
                    return Generation(inode: UInt64(info.st_ino), size: Int64(info.st_size))
                }
                close(current.generationDescriptor)
                current.generationDescriptor = -1
            }
            current.generationDescriptor = open(current.generationPath, O_RDONLY | O_CLOEXEC)
            location = current
            guard current.generationDescriptor >= 0, fstat(current.generationDescriptor, &info) == 0 else {
                return .missing
            }
            return Generation(inode: UInt64(info.st_ino), size: Int64(info.st_size))
        }
    }

    private static func generation(of path: String) -> Generation {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        return Generation(inode: UInt64(info.st_ino), size: Int64(info.st_size))
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
        mkdir(folder, 0o700)
        _ = try? SafeSave.write(
            Data(path.utf8),
            to: URL(fileURLWithPath: folder + "/" + entryName(of: getpid(), asListener: asListener)),
            permissions: 0o600)
        bumpGeneration(in: root)
    }

    /// Removes every listing of this process and its socket, at exit.
    static func unpublishAll() {
        removeEntries(of: getpid())
    }

    /// Removes this process's listing of `path`.
    static func unpublish(_ path: String, asListener: Bool = false) {
        guard let root else { return }
        let folder = entryFolder(for: path, in: root)
        unlink(folder + "/" + entryName(of: getpid(), asListener: asListener))
        rmdir(folder)  // fails harmlessly while other processes still list the path
        bumpGeneration(in: root)
    }

    /// Removes every listing of a process that is gone.
    static func removeEntries(of pid: pid_t) {
        guard let root else { return }
        let presented = root.appendingPathComponent("presented").path
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: presented)) ?? []
        where folder != ".generation" {
            for name in [entryName(of: pid, asListener: false), entryName(of: pid, asListener: true)] {
                unlink("\(presented)/\(folder)/\(name)")
            }
            rmdir("\(presented)/\(folder)")
        }
        unlink(socketPath(of: pid))
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
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: presented)) ?? []
        where folder != ".generation" {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(presented)/\(folder)")) ?? []
            {
                let isListener = name.hasSuffix(listenerSuffix)
                guard let pid = pid_t(isListener ? String(name.dropLast(listenerSuffix.count)) : name),
                    pid != me
                else { continue }
                // A process killed before it could clean up leaves its listings behind.
                if !ProcessIdentity.isAlive(pid) {
                    unlink("\(presented)/\(folder)/\(name)")
                    rmdir("\(presented)/\(folder)")
                    unlink(socketPath(of: pid))
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
