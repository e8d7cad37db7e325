/// The batches of a plan: its actions grouped so that the actions of one batch may run in any
/// order and all at once, and a batch runs only once the batch before it is done.
///
/// The rules each batch keeps:
///
/// - No two of its actions touch one path, or a path and a path inside it (a move touches
///   both its ends): what one does cannot change what another finds.
/// - A folder is made in a batch before any batch that puts something inside it.
/// - A folder is deleted in a batch after every batch that takes something out of it.
/// - Two actions that touch one path (or a path and one inside it) run in the order of their
///   ``SyncAction/phase``, as a pass made one at a time runs them: batching never reorders
///   actions that can see each other, so it changes nothing a sequential pass would do.
///
/// Each action goes in the first batch after every earlier action (in phase order) that it
/// overlaps, which a walk up each path finds: the work is the actions times the depth of
/// their paths, never the actions squared.
///
/// For example:
///
/// ```swift
/// // makeRemoteFolder(A); upload(A/x), upload(A/y), upload(z); deleteRemoteFolder(B) after
/// // deleteRemote(B/old):
/// plan.batches  // [[makeRemoteFolder(A), upload(z), deleteRemote(B/old)],
///               //  [upload(A/x), upload(A/y), deleteRemoteFolder(B)]]
/// ```
extension SyncPlan {
    /// The actions in batches safe to run in any order and at once, each batch in phase order.
    var batches: [[SyncAction]] { Self.batches(of: actions) }

    /// `actions` (in phase order) in batches, as ``batches`` describes.
    static func batches(of actions: [SyncAction]) -> [[SyncAction]] {
        // The last batch an action on exactly this path is in, and the last batch an action
        // on this path or anything inside it is in.
        var onPath: [RemotePath: Int] = [:]
        var inside: [RemotePath: Int] = [:]
        var batches: [[SyncAction]] = []
        for action in actions {
            var batch = 0
            for path in action.touchedPaths {
                if let last = inside[path] { batch = max(batch, last + 1) }
                var above = path
                while !above.isRoot {
                    if let last = onPath[above] { batch = max(batch, last + 1) }
                    above = above.parent
                }
            }
            for path in action.touchedPaths {
                onPath[path] = max(onPath[path] ?? 0, batch)
                var above = path
                while !above.isRoot {
                    inside[above] = max(inside[above] ?? 0, batch)
                    above = above.parent
                }
            }
            if batch == batches.count { batches.append([]) }
            batches[batch].append(action)
        }
        return batches
    }
}

extension SyncAction {
    /// The paths the action reads or changes, on either side, in the container or the journal:
    /// its path, and a move's destination too.
    var touchedPaths: [RemotePath] {
        switch self {
        case .moveRemote(let from, let to, _), .moveLocal(let from, let to, _): return [from, to]
        default: return [path]
        }
    }
}
