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
            entry.session.finish(AccessOutcome(movedTo: nil, itemExists: FileStatus(path: path) != nil))
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
