import Foundation
import Synchronization

/// Makes this process's presenters reachable: lists their paths for other processes,
/// answers those processes' coordinators, and watches the presented items with inotify so
/// that writes by programs that do not coordinate reach the presenters too. Folders of
/// ``VersionNewsListeners`` are listed too, apart, and not watched.
///
/// Started by the first ``FileCoordinator/addFilePresenter(_:)`` or listener; idle (no
/// socket, no watch) while the process presents and listens to nothing.
final class PresenterPublisher: Sendable {
    static let shared = PresenterPublisher()

    private struct State {
        var server: MessageChannelServer?
        var watcher: DirectoryWatcher?
        var published: Set<String> = []
        var publishedListeners: Set<String> = []
        /// Watched folders, and whether with everything inside them.
        var watched: [String: Bool] = [:]
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "DocumentKit.PresenterPublisher")

    /// Brings the index, the server and the watches in line with the registered presenters.
    func refresh() {
        queue.sync { refreshNow() }
    }

    /// Brings them in line `delay` from now, on the publisher's queue: for changes nobody
    /// waits for. Whatever is registered then is what counts.
    func refresh(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in refreshNow() }
    }

    private func refreshNow() {
        let paths = PresenterRegistry.shared.presentedPaths
        let listened = VersionNewsListeners.shared.folders
        let folders = Self.foldersToWatch(for: paths)
        let (toPublish, toUnpublish, toWatch, toUnwatch, needsServer, watcher) = state.withLock {
            state -> (Set<String>, Set<String>, [String: Bool], [String], Bool, DirectoryWatcher?) in
            let result = (
                paths.subtracting(state.published), state.published.subtracting(paths),
                folders.filter { state.watched[$0.key] != $0.value },
                state.watched.filter { folders[$0.key] != $0.value }.map(\.key),
                state.server == nil && !(paths.isEmpty && listened.isEmpty), state.watcher
            )
            state.published = paths
            state.watched = folders
            return result
        }
        let (toListen, toStopListening) = state.withLock { state -> (Set<String>, Set<String>) in
            defer { state.publishedListeners = listened }
            return (
                listened.subtracting(state.publishedListeners), state.publishedListeners.subtracting(listened)
            )
        }
        if needsServer { startServer() }
        for path in toPublish { PresenterIndex.publish(path) }
        for path in toUnpublish { PresenterIndex.unpublish(path) }
        for folder in toListen { PresenterIndex.publish(folder, asListener: true) }
        for folder in toStopListening { PresenterIndex.unpublish(folder, asListener: true) }
        let activeWatcher = watcher ?? (toWatch.isEmpty ? nil : makeWatcher())
        for folder in toUnwatch { activeWatcher?.unwatch(URL(fileURLWithPath: folder, isDirectory: true)) }
        for (folder, recursive) in toWatch.sorted(by: { $0.key < $1.key }) {
            let url = URL(fileURLWithPath: folder, isDirectory: true)
            do {
                try activeWatcher?.watch(url, recursive: recursive)
            } catch {
                // A folder too big for the watch limit still shows what happens at its top.
                if recursive, (try? activeWatcher?.watch(url, recursive: false)) != nil {
                    CoordinationLog.warning(
                        "changes by other programs deeper inside \(folder) will not be seen: \(error)")
                    state.withLock { $0.watched[folder] = false }
                } else {
                    CoordinationLog.warning("cannot watch \(folder) for changes by other programs: \(error)")
                }
            }
        }
    }

    /// The folders to watch for `paths`: each presented folder with everything inside it
    /// (Apple's subitem calls are for items at any depth), and the folder of every presented
    /// item (to see the item itself replaced, moved or deleted). A folder inside one watched
    /// with everything inside it needs no watch of its own.
    static func foldersToWatch(for paths: Set<String>) -> [String: Bool] {
        var whole = Set<String>()
        var parents = Set<String>()
        for path in paths {
            let parent = (path as NSString).deletingLastPathComponent
            parents.insert(parent.isEmpty ? "/" : parent)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                whole.insert(path)
            }
        }
        let covered = { (folder: String) in whole.contains { CanonicalPath.isAncestor($0, of: folder) } }
        var folders: [String: Bool] = [:]
        for folder in whole where !covered(folder) { folders[folder] = true }
        for folder in parents where !whole.contains(folder) && !covered(folder) { folders[folder] = false }
        return folders
    }

    /// Runs `body` (the end of a coordinated write of `path`) once inotify's reports of
    /// the write are delivered, and in step with their delivery; then tells folder
    /// presenters of the items held back beside `path` that are still there. See
    /// ``PendingWrites/end(_:)``.
    func afterQueuedChanges(affecting path: String, _ body: @Sendable () -> Void) {
        let watcher = state.withLock { state -> DirectoryWatcher? in
            guard let watcher = state.watcher else { return nil }
            let seen = state.watched.keys.contains { folder in
                folder == path || CanonicalPath.isAncestor(folder, of: path)
                    || CanonicalPath.isAncestor(path, of: folder)
            }
            return seen ? watcher : nil
        }
        guard let watcher else {
            body()
            Self.releaseHeldBack(beside: path)
            return
        }
        watcher.deliverQueuedEvents {
            body()
            Self.releaseHeldBack(beside: path)
        }
    }

    /// A watched folder was deleted or replaced: inotify watches the old folder, not the
    /// name, so a folder back under its name (a package saved by swapping) is watched again.
    private func watchAgain(_ path: String) {
        let wasWatched = state.withLock { $0.watched.removeValue(forKey: path) != nil }
        if wasWatched { refresh() }
    }

    private func startServer() {
        guard PresenterIndex.root != nil else { return }
        // A process that exits normally takes its listings with it; one that is killed
        // leaves them for the next scan to find dead and remove.
        atexit { PresenterIndex.unpublishAll() }
        do {
            let server = try MessageChannelServer(socketPath: PresenterIndex.socketPath(of: getpid())) {
                message in
                RemotePresenters.shared.handle(message)
            }
            state.withLock { $0.server = server }
        } catch {
            CoordinationLog.warning(
                "presenters of this process cannot be reached by other processes: \(error)")
        }
    }

    private func makeWatcher() -> DirectoryWatcher? {
        do {
            let watcher = try DirectoryWatcher { events in
                PresenterPublisher.deliver(events)
            }
            state.withLock { $0.watcher = watcher }
            return watcher
        } catch {
            CoordinationLog.warning("changes by programs that do not coordinate will not be seen: \(error)")
            return nil
        }
    }

    // MARK: - Changes seen by inotify

    /// Items that appeared or changed beside an item under a coordinated write, by path,
    /// and whether one appeared: `true` for a new item.
    ///
    /// Such an item is most often the writer's own temporary file (Foundation's atomic
    /// writes make `.dat.nosync…` files beside the file they replace), gone again when the
    /// write ends; Apple's presenters hear only of the coordinated item. So the subitem
    /// calls for it wait for the end of the write, and are made only if it is still there.
    private static let heldBack = Mutex<[String: Bool]>([:])

    private static func parent(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "/" : parent
    }

    /// Holds back what folder presenters would hear of `path` now, if a coordinated write
    /// is under way beside it; true if it did.
    private static func holdBack(_ path: String, appeared: Bool) -> Bool {
        guard PendingWrites.shared.hasWrite(beside: path) else { return false }
        heldBack.withLock { held in held[path] = (held[path] ?? false) || appeared }
        return true
    }

    /// Forgets what was held back of `path`; true if something was.
    private static func dropHeldBack(_ path: String) -> Bool {
        heldBack.withLock { $0.removeValue(forKey: path) != nil }
    }

    /// Tells folder presenters of the items held back beside `path` that are still there,
    /// once no coordinated write is under way beside them.
    private static func releaseHeldBack(beside path: String) {
        let folder = parent(of: path)
        let released = heldBack.withLock { held -> [(String, Bool)] in
            guard !held.isEmpty, !PendingWrites.shared.hasWrite(inFolder: folder) else { return [] }
            let here = held.filter { parent(of: $0.key) == folder }
            for item in here.keys { held.removeValue(forKey: item) }
            return here.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        for (item, appeared) in released where FileStatus(path: item) != nil {
            tellFolders(above: item, appeared: appeared)
        }
    }

    /// Tells the presenters of the folders above `path` that it appeared or changed.
    private static func tellFolders(above path: String, appeared: Bool) {
        let url = URL(fileURLWithPath: path)
        for presenter in folderPresenters(above: path) {
            presenter.enqueue { presenter in
                if appeared {
                    presenter.presentedSubitemDidAppear(at: url)
                } else {
                    presenter.presentedSubitemDidChange(at: url)
                }
            }
        }
    }

    /// Turns what inotify saw into presenter calls, skipping what a coordinated write in
    /// progress will report itself and what the presenters already know.
    ///
    /// Presenters of the folders above an item get the subitem calls: one
    /// `presentedSubitemDidAppear(at:)` for a new item, even when the kernel reports its
    /// creation and its first write apart, and one `presentedSubitemDidChange(at:)` for a
    /// write, at any depth.
    static func deliver(_ events: [DirectoryWatcher.Event]) {
        let registry = PresenterRegistry.shared
        var appeared = Set<String>()
        for event in events {
            let path = CanonicalPath.of(event.url)
            let url = URL(fileURLWithPath: path)
            switch event.kind {
            case .created, .modified, .replaced, .attributesChanged:
                if event.isDirectory && event.kind == .replaced { shared.watchAgain(path) }
                if PendingWrites.shared.contains(path) { continue }
                let state = FileStatus(path: path)
                // A write in place is always news: DocumentKit never writes in place, and two
                // quick writes of one size within a clock tick leave the same state behind.
                let changed =
                    event.kind == .modified
                    ? registry.presentersNoting(path: path, state: state)
                    : registry.presentersSeeingChange(atPath: path, state: state)
                for presenter in changed {
                    presenter.enqueue { presenter in presenter.presentedItemDidChange() }
                }
                if PendingWrites.shared.covers(path) { continue }
                if event.kind == .created {
                    guard appeared.insert(path).inserted else { continue }
                } else if appeared.contains(path) {
                    continue
                }
                if holdBack(path, appeared: event.kind == .created) { continue }
                tellFolders(above: path, appeared: event.kind == .created)
            case .deleted:
                if event.isDirectory { shared.watchAgain(path) }
                if PendingWrites.shared.contains(path) { continue }
                guard FileStatus(path: path) == nil else { continue }  // already back: a replace
                for presenter in registry.presenters(of: path) {
                    registry.noteKnownState(of: presenter, nil)
                    presenter.enqueue { presenter in
                        if let observer = presenter as? any UncoordinatedDeletionPresenter {
                            observer.presentedItemWasDeletedWithoutCoordination()
                        } else {
                            presenter.accommodatePresentedItemDeletion { _ in }
                        }
                    }
                }
                // An item that came and went within a write beside it was never told of.
                if dropHeldBack(path) || PendingWrites.shared.covers(path) { continue }
                tellFolders(above: path, appeared: false)
            case .moved(let from, _):
                let oldPath = CanonicalPath.of(from)
                if PendingWrites.shared.contains(oldPath) || PendingWrites.shared.contains(path) { continue }
                for (presenter, destination) in registry.movePaths(from: oldPath, to: path) {
                    let newURL = URL(fileURLWithPath: destination)
                    presenter.enqueue { presenter in
                        presenter.presentedItemDidMove(to: newURL)
                    }
                }
                // Another file renamed onto a presented name (how many editors save) is a change.
                let state = FileStatus(path: path)
                for presenter in registry.presentersSeeingChange(atPath: path, state: state) {
                    presenter.enqueue { presenter in presenter.presentedItemDidChange() }
                }
                if PendingWrites.shared.covers(oldPath) || PendingWrites.shared.covers(path) { continue }
                // Folder presenters never told of the item hear of it where it is now.
                if dropHeldBack(oldPath) {
                    if !holdBack(path, appeared: true) { tellFolders(above: path, appeared: true) }
                    continue
                }
                // Presenters of folders it left hear of the move; those of folders it only
                // entered hear of an item that appeared.
                let left = folderPresenters(above: oldPath)
                let leftIDs = Set(left.map(ObjectIdentifier.init))
                let oldURL = URL(fileURLWithPath: oldPath)
                for presenter in left {
                    presenter.enqueue { presenter in
                        presenter.presentedSubitem(at: oldURL, didMoveTo: url)
                    }
                }
                for presenter in folderPresenters(above: path)
                where !leftIDs.contains(ObjectIdentifier(presenter)) {
                    presenter.enqueue { presenter in
                        presenter.presentedSubitemDidAppear(at: url)
                    }
                }
            case .overflow:
                for presented in registry.presentedPaths {
                    let state = FileStatus(path: presented)
                    for presenter in registry.presentersSeeingChange(atPath: presented, state: state) {
                        presenter.enqueue { presenter in
                            presenter.presentedItemDidChange()
                        }
                    }
                }
            }
        }
    }

    /// The presenters of folders that contain `path`, at any depth.
    private static func folderPresenters(above path: String) -> [any FilePresenter] {
        PresenterRegistry.shared.presenters(relatedTo: path, includingDescendants: false, excluding: nil)
            .compactMap { $0.1 == .ancestor ? $0.0 : nil }
    }
}

extension DirectoryWatcher {
    /// Reads what the kernel has queued for this watcher and runs the handler on it, and on
    /// every batch read before, before returning; a batch held for the other half of a
    /// change is delivered now.
    ///
    /// The kernel queues an inotify event inside the system call that causes it, so once a
    /// writer's calls have returned its events are all here to be read, both halves of a
    /// rename included; a half still missing then is not coming. Must not be called on the
    /// watcher's own queues.
    ///
    /// - Parameter body: Runs on the delivery queue after the handler.
    func deliverQueuedEvents(then body: @Sendable () -> Void) {
        let core = self.core
        core.readQueue.sync {
            let events = core.state.withLock { state -> [Event] in
                var events: [Event] = []
                if case .deliver(let batch) = state.readAndTranslate(now: .now()) { events += batch }
                if case .deliver(let batch) = state.endHold(generation: state.holdGeneration) {
                    events += batch
                }
                return events
            }
            // Handed on from the read queue, as the watcher's reader does, so that batches
            // reach the delivery queue in the order they were read, whoever read them.
            guard !events.isEmpty else { return }
            core.deliveryQueue.async {
                guard !core.state.withLock({ $0.isCancelled }) else { return }
                core.handler(events)
            }
        }
        // After every batch read so far, before any read later.
        core.deliveryQueue.sync { body() }
    }
}

/// A presenter that tells a deletion it hears of afterwards, from inotify, from one that a
/// coordinated writer announces before it happens (`accommodatePresentedItemDeletion`): a
/// document saves into a file about to be deleted, but saves again one already gone.
protocol UncoordinatedDeletionPresenter: FilePresenter {
    /// The item was deleted by a program that does not coordinate; it may be back by now.
    func presentedItemWasDeletedWithoutCoordination()
}
