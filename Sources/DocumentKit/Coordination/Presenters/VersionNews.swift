import Foundation
import Synchronization

/// How news of versions reaches everyone who presents or watches an item: the one way a
/// version store tells the world, in this process and in every other.
///
/// The store's news reaches ``announce(_:itemPath:store:)`` once the change is on disk,
/// through the ``VersionNewsCourier`` this file gives it (the store names nothing of
/// coordination). Presenters of
/// the item in this process hear `presentedItemDidGain(_:)`, `presentedItemDidLose(_:)` or
/// `presentedItemDidResolveConflict(_:)` on their queues; listeners whose folders hold the
/// item (a ``DocumentQuery``) hear of it; ``VersionStore/versionsDidChangeNotification`` is
/// posted. Then every other process presenting the item or a folder above it, or listening
/// to such a folder, is sent a `versionsDidChange` message and does the same.
enum VersionNews {
    /// How long a process that does not take the news is waited for. Answering costs the
    /// receiver no more than handing the news to queues.
    static let sendTimeout: Duration = .seconds(2)

    /// Tells this process and every other one concerned of a change.
    ///
    /// - Parameters:
    ///   - itemPath: The item's canonical path as the store last knew it, if it knows one.
    ///   - store: The store object that made the change, the object of the notification here.
    static func announce(_ change: VersionChange, itemPath: String?, store: VersionStore) {
        deliverHere(change, itemPath: itemPath, store: store)
        for pid in processes(concernedWith: change, itemPath: itemPath) {
            var message = Message(kind: .versionsDidChange, path: itemPath.map { Array($0.utf8) } ?? [])
            message.versionChange = change
            do {
                _ = try MessageChannelClient.send(
                    message, to: PresenterIndex.socketPath(of: pid), timeout: sendTimeout)
            } catch let error as DocumentKitError where error.code == .presenterGone {
                PresenterIndex.removeEntries(of: pid)
            } catch {
                CoordinationLog.warning(
                    "process \(pid) did not take the news of a version of \(itemPath ?? change.itemID): \(error)"
                )
            }
        }
    }

    /// Other processes to tell: those presenting the item or a folder above it, those
    /// listening to such a folder, and those presenting a file that has the item's identity
    /// (the item renamed since the store last saw it).
    static func processes(concernedWith change: VersionChange, itemPath: String?) -> [pid_t] {
        let others = PresenterIndex.otherProcesses()
        guard !others.isEmpty || !others.listenersByProcess.isEmpty else { return [] }
        var found = Set<pid_t>()
        if let itemPath {
            found.formUnion(others.processes(relatedTo: itemPath, includingDescendants: false))
            found.formUnion(others.processes(listeningFor: itemPath))
        }
        for (pid, paths) in others.byProcess where !found.contains(pid) {
            let presentsIt = paths.contains { path in
                path != itemPath && VersionStore.storedIdentity(atPath: Array(path.utf8)) == change.itemID
            }
            if presentsIt && ProcessIdentity.isAlive(pid) { found.insert(pid) }
        }
        return found.sorted()
    }

    /// Takes news another process sent: see ``RemotePresenters/handle(_:)``.
    static func receive(_ message: Message) -> Message {
        guard let change = message.versionChange else {
            return message.reply(.rejected, error: "versionsDidChange without a version change")
        }
        let path = message.path.isEmpty ? nil : String(decoding: message.path, as: UTF8.self)
        deliverHere(change, itemPath: path, store: VersionStore.store(forNewsAt: change.storeRootURL))
        return message.reply()
    }

    /// Tells this process's presenters of the item and listeners of folders above it, and
    /// posts ``VersionStore/versionsDidChangeNotification``.
    ///
    /// Presenters are found by the item's path and by identity, so a presenter of an item
    /// renamed since its last save still hears.
    static func deliverHere(_ change: VersionChange, itemPath: String?, store: VersionStore) {
        VersionStore.storeChanged(at: change.storeRootURL)
        let version = FileVersion(change, store: store)
        for (presenter, path) in PresenterRegistry.shared.presentersWithPaths {
            let matches =
                path == itemPath || store.itemID(ofItemAt: URL(fileURLWithPath: path)) == change.itemID
            guard matches else { continue }
            presenter.enqueue { presenter in
                switch change.kind {
                case .gained: presenter.presentedItemDidGain(version)
                case .lost: presenter.presentedItemDidLose(version)
                case .resolved: presenter.presentedItemDidResolveConflict(version)
                }
            }
        }
        for listener in VersionNewsListeners.shared.listeners(for: itemPath) {
            listener(change, itemPath)
        }
        MainQueueNotice.post(
            VersionStore.versionsDidChangeNotification, object: store,
            userInfo: itemPath.map { ["url": URL(fileURLWithPath: $0)] } ?? [:])
    }
}

extension VersionNewsRoute: VersionNewsCourier {
    static func carry(_ change: VersionChange, itemPath: String?, from store: VersionStore) {
        VersionNews.announce(change, itemPath: itemPath, store: store)
    }
}

/// Who in this process hears of versions of items inside folders without presenting them:
/// a ``DocumentQuery`` updating its items' conflict flags.
///
/// A listener's folders are listed in the presenter index apart from presented paths, so
/// other processes send it version news but never ask it to save or relinquish for their
/// reads and writes, and its folders are not watched for it (the query watches them itself).
final class VersionNewsListeners: Sendable {
    static let shared = VersionNewsListeners()

    /// A registered listener; pass it to ``remove(_:)``.
    struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry: Sendable {
        var folders: [String]
        var handler: @Sendable (VersionChange, String?) -> Void
    }

    private let entries = Mutex<[UInt64: Entry]>([:])
    private let counter = Atomic<UInt64>(0)

    /// Starts telling `handler` of changes to versions of items in `folders` (at any depth),
    /// from this process and others. The handler runs on whichever thread brings the news,
    /// and must not block.
    ///
    /// - Parameter folders: Canonical paths.
    func add(
        folders: [String], handler: @escaping @Sendable (_ change: VersionChange, _ itemPath: String?) -> Void
    ) -> Token {
        let id = counter.add(1, ordering: .relaxed).newValue
        entries.withLock { $0[id] = Entry(folders: folders, handler: handler) }
        PresenterPublisher.shared.refresh()
        return Token(id: id)
    }

    /// Stops telling the listener. Its folders stay listed in the index a moment longer,
    /// off the caller's path: a query stopped and started again over the same folders (a
    /// browser refreshing) then costs no index writes, and news sent meanwhile reaches no
    /// handler here, which is all a stopped listener should get.
    func remove(_ token: Token) {
        let removed = entries.withLock { $0.removeValue(forKey: token.id) != nil }
        if removed { PresenterPublisher.shared.refresh(after: Self.unlistingDelay) }
    }

    /// How long a stopped listener's folders stay listed.
    static let unlistingDelay: Duration = .milliseconds(500)

    /// The folders listened to now.
    var folders: Set<String> {
        entries.withLock { Set($0.values.flatMap(\.folders)) }
    }

    /// The handlers of listeners with a folder holding `itemPath`; every handler when the
    /// path is unknown, since the item may be anywhere.
    fileprivate func listeners(for itemPath: String?) -> [@Sendable (VersionChange, String?) -> Void] {
        entries.withLock { entries in
            entries.values.filter { entry in
                guard let itemPath else { return true }
                return entry.folders.contains { $0 == itemPath || CanonicalPath.isAncestor($0, of: itemPath) }
            }.map(\.handler)
        }
    }
}
