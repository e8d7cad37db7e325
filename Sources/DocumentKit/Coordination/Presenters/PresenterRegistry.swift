import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a presenter relates to an item a coordinator is about to access.
enum PresenterRelation: Equatable {
    /// The presenter presents the item itself.
    case item
    /// The presenter presents a folder that contains the item.
    case ancestor
    /// The presenter presents something inside the item, a folder being moved or deleted.
    case descendant
}

/// What one presenter shows and what it has seen of it: the registry's record of the
/// presenter, and the one place either fact is kept.
///
/// The registry creates one for each presenter it is given, or takes the one a
/// ``PresentedItemOwner`` (a ``Document``) holds from before it presents anything: a document
/// reads its file before it is registered, and its pre-save check needs what it read.
/// Coordination moves the record's path as the item moves; the owner reads the record, and
/// changes only the URL it names the item by and what it last read or wrote.
final class PresentedItem: Sendable {
    struct State: Sendable {
        /// The item as the presenter names it (standardized, links not resolved).
        var url: URL?
        /// The item's canonical path while the presenter is registered: set when it is added,
        /// and moved with the item by coordination.
        var path: String?
        /// The item's status after the last change the presenter was told of (or when it was
        /// registered): the same status seen again through inotify is not reported twice.
        var reportedState: FileStatus?
        /// The item as the presenter last read or wrote it, nil before it has: another item
        /// there now means another writer changed it.
        var seenState: FileStatus?
    }

    let state: Mutex<State>

    init(url: URL?) {
        state = Mutex(State(url: url?.standardizedFileURL))
    }

    var url: URL? { state.withLock(\.url) }
    var path: String? { state.withLock(\.path) }
    var seenState: FileStatus? { state.withLock(\.seenState) }
}

/// A presenter that keeps its ``PresentedItem`` from before it is registered.
protocol PresentedItemOwner: AnyObject {
    var presentedItem: PresentedItem { get }
}

/// The presenters registered in this process, found by the path they present.
final class PresenterRegistry: Sendable {
    static let shared = PresenterRegistry()

    /// Unchecked for the presenter, which need not be Sendable: see ``PresenterReference``.
    struct Entry: @unchecked Sendable {
        weak var presenter: (any FilePresenter)?
        let item: PresentedItem
        /// The canonical path the presenter presents.
        var path: String? { item.path }
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    /// Presenters whose own coordinator is inside an access now (asking, waiting for locks,
    /// or holding them), with how many such accesses each has.
    private let accessing = Mutex<[ObjectIdentifier: Int]>([:])

    func add(_ presenter: any FilePresenter) {
        let url = presenter.presentedItemURL
        let path = url.map(CanonicalPath.of)
        let state = path.flatMap { FileStatus(path: $0) }
        let item = (presenter as? any PresentedItemOwner)?.presentedItem ?? PresentedItem(url: url)
        item.state.withLock { item in
            item.path = path
            item.reportedState = state
        }
        entries.withLock { $0[ObjectIdentifier(presenter)] = Entry(presenter: presenter, item: item) }
        PresenterPublisher.shared.refresh()
        // The watch is armed now. A change another program made between the owner's read and
        // this moment raised no event it could see: the presenter hears of it here (one told of
        // a change that is not one finds its item as it read it, and does nothing).
        if let path, let seen = item.seenState, FileStatus(path: path) != seen {
            presenter.enqueue { $0.presentedItemDidChange() }
        }
    }

    func remove(_ presenter: any FilePresenter) {
        let removed = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(presenter)) }
        removed?.item.state.withLock { $0.path = nil }
        PresenterPublisher.shared.refresh()
    }

    var presenters: [any FilePresenter] {
        entries.withLock { entries in
            entries = entries.filter { $0.value.presenter != nil }
            return entries.values.compactMap(\.presenter)
        }
    }

    /// The presenters with the canonical path each presents.
    var presentersWithPaths: [(any FilePresenter, String)] {
        entries.withLock { entries in
            entries.values.compactMap { entry in
                guard let presenter = entry.presenter, let path = entry.path else { return nil }
                return (presenter, path)
            }
        }
    }

    /// The canonical paths presented now.
    ///
    /// A presenter's path is read from ``FilePresenter/presentedItemURL`` when it is added and
    /// follows the moves coordination reports; a presenter whose URL changes otherwise is
    /// removed and added again (``Document`` does this itself).
    var presentedPaths: Set<String> {
        entries.withLock { entries in
            entries = entries.filter { $0.value.presenter != nil }
            return Set(entries.values.compactMap(\.path))
        }
    }

    /// The presenters of `path` exactly.
    func presenters(of path: String) -> [any FilePresenter] {
        entries.withLock { entries in entries.values.filter { $0.path == path }.compactMap(\.presenter) }
    }

    /// Whether any presenter presents `path`, a folder above it, or (optionally) something
    /// inside it.
    func hasPresenters(relatedTo path: String, includingDescendants: Bool) -> Bool {
        entries.withLock { entries in
            entries.values.contains { entry in
                guard entry.presenter != nil, let presented = entry.path else { return false }
                return presented == path || CanonicalPath.isAncestor(presented, of: path)
                    || (includingDescendants && CanonicalPath.isAncestor(path, of: presented))
            }
        }
    }

    /// The presenters related to `path`, except `excluded` (a coordinator's own presenter).
    func presenters(
        relatedTo path: String, includingDescendants: Bool, excluding excluded: (any FilePresenter)?
    ) -> [(any FilePresenter, PresenterRelation)] {
        let excludedID = excluded.map(ObjectIdentifier.init)
        let snapshot = entries.withLock { Array($0.values) }
        var result: [(any FilePresenter, PresenterRelation)] = []
        for entry in snapshot {
            guard let presenter = entry.presenter, let presented = entry.path,
                ObjectIdentifier(presenter) != excludedID
            else { continue }
            if presented == path {
                result.append((presenter, .item))
            } else if CanonicalPath.isAncestor(presented, of: path) {
                result.append((presenter, .ancestor))
            } else if includingDescendants && CanonicalPath.isAncestor(path, of: presented) {
                result.append((presenter, .descendant))
            }
        }
        return result
    }

    /// Notes that a coordinator acting for `presenter` began an access.
    func beginOwnAccess(of presenter: any FilePresenter) {
        accessing.withLock { $0[ObjectIdentifier(presenter), default: 0] += 1 }
    }

    /// Notes that such an access ended.
    func endOwnAccess(of presenter: any FilePresenter) {
        accessing.withLock { accessing in
            let key = ObjectIdentifier(presenter)
            let count = (accessing[key] ?? 1) - 1
            accessing[key] = count > 0 ? count : nil
        }
    }

    /// Whether a coordinator acting for `presenter` is inside an access now.
    ///
    /// Such a presenter is writing (or reading) its item itself: asking it to save for another
    /// writer would wait for that access, which may be waiting for the other writer, so it is
    /// not asked. Its own access comes before or after the other, and a ``Document`` checks
    /// the file before it writes, so the other writer's change is never overwritten.
    func isInOwnAccess(_ presenter: any FilePresenter) -> Bool {
        accessing.withLock { $0[ObjectIdentifier(presenter)] != nil }
    }

    /// Records the state a presenter now knows its item in, so the same state seen again
    /// through inotify is not reported twice.
    func noteKnownState(of presenter: any FilePresenter, _ state: FileStatus?) {
        let entry = entries.withLock { $0[ObjectIdentifier(presenter)] }
        entry?.item.state.withLock { $0.reportedState = state }
    }

    /// Records a new known state for every presenter of `path`.
    func noteKnownState(ofPath path: String, _ state: FileStatus?) {
        _ = presentersNoting(path: path, state: state)
    }

    /// Every presenter of `path`, recording `state` as what each now knows.
    func presentersNoting(path: String, state: FileStatus?) -> [any FilePresenter] {
        entries.withLock { entries in
            entries.values.compactMap { entry in
                guard let presenter = entry.presenter else { return nil }
                let matches = entry.item.state.withLock { item in
                    guard item.path == path else { return false }
                    item.reportedState = state
                    return true
                }
                return matches ? presenter : nil
            }
        }
    }

    /// Presenters of `path` whose known state differs from `state`; records `state` for them.
    func presentersSeeingChange(atPath path: String, state: FileStatus?) -> [any FilePresenter] {
        entries.withLock { entries in
            entries.values.compactMap { entry in
                guard let presenter = entry.presenter else { return nil }
                let changed = entry.item.state.withLock { item in
                    guard item.path == path, item.reportedState != state else { return false }
                    item.reportedState = state
                    return true
                }
                return changed ? presenter : nil
            }
        }
    }

    func updatePath(of presenter: any FilePresenter, to path: String) {
        let entry = entries.withLock { $0[ObjectIdentifier(presenter)] }
        let changed =
            entry?.item.state.withLock { item -> Bool in
                guard item.path != path else { return false }
                item.path = path
                item.reportedState = FileStatus(path: path)
                return true
            } ?? false
        if changed { PresenterPublisher.shared.refresh() }
    }

    /// Moves every presenter of `oldPath`, or of something inside it, to the new place.
    func movePaths(from oldPath: String, to newPath: String) -> [(any FilePresenter, String)] {
        let moved = entries.withLock { entries -> [(any FilePresenter, String)] in
            entries.values.compactMap { entry in
                guard let presenter = entry.presenter else { return nil }
                let destination = entry.item.state.withLock { item -> String? in
                    guard let path = item.path else { return nil }
                    let destination: String
                    if path == oldPath {
                        destination = newPath
                    } else if CanonicalPath.isAncestor(oldPath, of: path) {
                        destination = newPath + path.dropFirst(oldPath.count)
                    } else {
                        return nil
                    }
                    item.path = destination
                    item.reportedState = FileStatus(path: destination)
                    return destination
                }
                return destination.map { (presenter, $0) }
            }
        }
        if !moved.isEmpty { PresenterPublisher.shared.refresh() }
        return moved
    }
}
