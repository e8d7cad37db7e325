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

/// The presenters registered in this process, found by the path they present.
final class PresenterRegistry: Sendable {
    static let shared = PresenterRegistry()

    /// Unchecked for the presenter, which need not be Sendable: see ``PresenterReference``.
    struct Entry: @unchecked Sendable {
        weak var presenter: (any FilePresenter)?
        /// The canonical path the presenter presented when last looked at.
        var path: String?
        /// The item's state after the last change the presenter was told of (or registered at).
        var knownState: FileStatus?
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    /// Presenters whose own coordinator is inside an access now (asking, waiting for locks,
    /// or holding them), with how many such accesses each has.
    private let accessing = Mutex<[ObjectIdentifier: Int]>([:])

    func add(_ presenter: any FilePresenter) {
        let path = presenter.presentedItemURL.map(CanonicalPath.of)
        let state = path.flatMap { FileStatus(path: $0) }
        entries.withLock {
            $0[ObjectIdentifier(presenter)] = Entry(presenter: presenter, path: path, knownState: state)
        }
        PresenterPublisher.shared.refresh()
    }

    func remove(_ presenter: any FilePresenter) {
        entries.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(presenter)) }
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
        entries.withLock { $0[ObjectIdentifier(presenter)]?.knownState = state }
    }

    /// Records a new known state for every presenter of `path`.
    func noteKnownState(ofPath path: String, _ state: FileStatus?) {
        entries.withLock { entries in
            for (key, entry) in entries where entry.path == path {
                entries[key]?.knownState = state
            }
        }
    }

    /// Every presenter of `path`, recording `state` as what each now knows.
    func presentersNoting(path: String, state: FileStatus?) -> [any FilePresenter] {
        entries.withLock { entries in
            var found: [any FilePresenter] = []
            for (key, entry) in entries where entry.path == path {
                guard let presenter = entry.presenter else { continue }
                entries[key]?.knownState = state
                found.append(presenter)
            }
            return found
        }
    }

    /// Presenters of `path` whose known state differs from `state`; records `state` for them.
    func presentersSeeingChange(atPath path: String, state: FileStatus?) -> [any FilePresenter] {
        entries.withLock { entries in
            var changed: [any FilePresenter] = []
            for (key, entry) in entries where entry.path == path {
                guard let presenter = entry.presenter, entry.knownState != state else { continue }
                entries[key]?.knownState = state
                changed.append(presenter)
            }
            return changed
        }
    }

    func updatePath(of presenter: any FilePresenter, to path: String) {
        let changed = entries.withLock { entries -> Bool in
            let key = ObjectIdentifier(presenter)
            guard entries[key] != nil, entries[key]?.path != path else { return false }
            entries[key]?.path = path
            entries[key]?.knownState = FileStatus(path: path)
            return true
        }
        if changed { PresenterPublisher.shared.refresh() }
    }

    /// Moves every presenter of `oldPath`, or of something inside it, to the new place.
    func movePaths(from oldPath: String, to newPath: String) -> [(any FilePresenter, String)] {
        let moved = entries.withLock { entries -> [(any FilePresenter, String)] in
            var moved: [(any FilePresenter, String)] = []
            for (key, entry) in entries {
                guard let presenter = entry.presenter, let path = entry.path else { continue }
                let destination: String
                if path == oldPath {
                    destination = newPath
                } else if CanonicalPath.isAncestor(oldPath, of: path) {
                    destination = newPath + path.dropFirst(oldPath.count)
                } else {
                    continue
                }
                entries[key]?.path = destination
                entries[key]?.knownState = FileStatus(path: destination)
                moved.append((presenter, destination))
            }
            return moved
        }
        if !moved.isEmpty { PresenterPublisher.shared.refresh() }
        return moved
    }
}
