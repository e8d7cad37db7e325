import Foundation
import Synchronization

/// Makes this process's presenters reachable: lists their paths for other processes,
/// answers those processes' coordinators, and watches the presented items with inotify so
/// that writes by programs that do not coordinate reach the presenters too.
///
/// Started by the first ``FileCoordinator/addFilePresenter(_:)``; idle (no socket, no watch)
/// while the process presents nothing.
final class PresenterPublisher: Sendable {
    static let shared = PresenterPublisher()

    private struct State {
        var server: MessageChannelServer?
        var watcher: DirectoryWatcher?
        var published: Set<String> = []
        var watched: Set<String> = []
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "DocumentKit.PresenterPublisher")

    /// Brings the index, the server and the watches in line with the registered presenters.
    func refresh() {
        queue.sync { refreshNow() }
    }

    private func refreshNow() {
        let paths = PresenterRegistry.shared.presentedPaths
        var folders = Set<String>()
        for path in paths {
            folders.insert(
                (path as NSString).deletingLastPathComponent.isEmpty
                    ? "/" : (path as NSString).deletingLastPathComponent)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                folders.insert(path)
            }
        }
        let (toPublish, toUnpublish, toWatch, toUnwatch, needsServer, watcher) = state.withLock {
            state -> (Set<String>, Set<String>, Set<String>, Set<String>, Bool, DirectoryWatcher?) in
            let result = (
                paths.subtracting(state.published), state.published.subtracting(paths),
                folders.subtracting(state.watched), state.watched.subtracting(folders),
                state.server == nil && !paths.isEmpty, state.watcher
            )
            state.published = paths
            state.watched = folders
            return result
        }
        if needsServer { startServer() }
        for path in toPublish { PresenterIndex.publish(path) }
        for path in toUnpublish { PresenterIndex.unpublish(path) }
        let activeWatcher = watcher ?? (toWatch.isEmpty ? nil : makeWatcher())
        for folder in toUnwatch { activeWatcher?.unwatch(URL(fileURLWithPath: folder, isDirectory: true)) }
        for folder in toWatch {
            do {
                try activeWatcher?.watch(URL(fileURLWithPath: folder, isDirectory: true), recursive: false)
            } catch {
                CoordinationLog.warning("cannot watch \(folder) for changes by other programs: \(error)")
            }
        }
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

    /// Turns what inotify saw into presenter calls, skipping what a coordinated write in
    /// progress will report itself and what the presenters already know.
    static func deliver(_ events: [DirectoryWatcher.Event]) {
        let registry = PresenterRegistry.shared
        for event in events {
            let path = CanonicalPath.of(event.url)
            let parent = (path as NSString).deletingLastPathComponent
            let url = URL(fileURLWithPath: path)
            switch event.kind {
            case .created, .modified, .replaced, .attributesChanged:
                if PendingWrites.shared.contains(path) { continue }
                let state = ItemState(path: path)
                // A write in place is always news: DocumentKit never writes in place, and two
                // quick writes of one size within a clock tick leave the same state behind.
                let changed =
                    event.kind == .modified
                    ? registry.presentersNoting(path: path, state: state)
                    : registry.presentersSeeingChange(atPath: path, state: state)
                for presenter in changed {
                    presenter.presentedItemOperationQueue.addOperation { presenter.presentedItemDidChange() }
                }
                for presenter in registry.presenters(of: parent) {
                    if event.kind == .created {
                        presenter.presentedItemOperationQueue.addOperation {
                            presenter.presentedSubitemDidAppear(at: url)
                        }
                    } else {
                        presenter.presentedItemOperationQueue.addOperation {
                            presenter.presentedSubitemDidChange(at: url)
                        }
                    }
                }
            case .deleted:
                if PendingWrites.shared.contains(path) { continue }
                guard ItemState(path: path) == nil else { continue }  // already back: a replace
                for presenter in registry.presenters(of: path) {
                    registry.noteKnownState(of: presenter, nil)
                    presenter.presentedItemOperationQueue.addOperation {
                        if let observer = presenter as? any UncoordinatedDeletionPresenter {
                            observer.presentedItemWasDeletedWithoutCoordination()
                        } else {
                            presenter.accommodatePresentedItemDeletion { _ in }
                        }
                    }
                }
                for presenter in registry.presenters(of: parent) {
                    presenter.presentedItemOperationQueue.addOperation {
                        presenter.presentedSubitemDidChange(at: url)
                    }
                }
            case .moved(let from, _):
                let oldPath = CanonicalPath.of(from)
                if PendingWrites.shared.contains(oldPath) || PendingWrites.shared.contains(path) { continue }
                for (presenter, destination) in registry.movePaths(from: oldPath, to: path) {
                    let newURL = URL(fileURLWithPath: destination)
                    presenter.presentedItemOperationQueue.addOperation {
                        presenter.presentedItemDidMove(to: newURL)
                    }
                }
                // Another file renamed onto a presented name (how many editors save) is a change.
                let state = ItemState(path: path)
                for presenter in registry.presentersSeeingChange(atPath: path, state: state) {
                    presenter.presentedItemOperationQueue.addOperation { presenter.presentedItemDidChange() }
                }
                let oldParent = (oldPath as NSString).deletingLastPathComponent
                for presenter in registry.presenters(of: oldParent) {
                    presenter.presentedItemOperationQueue.addOperation {
                        presenter.presentedSubitem(at: from, didMoveTo: url)
                    }
                }
            case .overflow:
                for presented in registry.presentedPaths {
                    let state = ItemState(path: presented)
                    for presenter in registry.presentersSeeingChange(atPath: presented, state: state) {
                        presenter.presentedItemOperationQueue.addOperation {
                            presenter.presentedItemDidChange()
                        }
                    }
                }
            }
        }
    }
}

/// A presenter that tells a deletion it hears of afterwards, from inotify, from one that a
/// coordinated writer announces before it happens (`accommodatePresentedItemDeletion`): a
/// document saves into a file about to be deleted, but saves again one already gone.
protocol UncoordinatedDeletionPresenter: FilePresenter {
    /// The item was deleted by a program that does not coordinate; it may be back by now.
    func presentedItemWasDeletedWithoutCoordination()
}
