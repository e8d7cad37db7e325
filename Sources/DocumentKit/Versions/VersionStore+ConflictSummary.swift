import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension VersionStore {
    /// Items that have unresolved conflict versions, by identity and by the path each was last
    /// saved at, with what the summary was read from.
    struct ConflictSummary: Sendable {
        var ids: Set<String> = []
        var paths: Set<String> = []
        /// The inode numbers the conflicted items were last seen with, for a lookup that
        /// needs no system call for the many items that match none.
        var inodes: Set<UInt64> = []
        /// The marker folder and the identity index as they were when the summary was read:
        /// while both are unchanged, so is the summary.
        var markers: FileStatus?
        var index: IdentityIndex.Stamp?
        /// When the summary was last read or confirmed.
        var checked = ContinuousClock.now

        func isCurrent(markers: FileStatus?, index: IdentityIndex.Stamp?) -> Bool {
            markers == self.markers && index == self.index && !(markers?.isRecent ?? false)
        }
    }

    /// How long a summary serves without a look at the store. Changes made in this process
    /// clear it at once, and so does news of another process's change that reaches this one
    /// (see ``VersionNewsCourier``); this bounds how late a change shows that no news brought.
    static let conflictSummaryLifetime: Duration = .seconds(1)

    /// Whether the item at `url` has unresolved conflict versions, cheaply enough to ask for
    /// every item of a folder: the store is read once per ``conflictSummaryLifetime``, and an
    /// item is then matched by path or by its identity attribute.
    public func hasUnresolvedConflicts(itemAt url: URL) -> Bool {
        let summary = conflictSummary()
        if summary.ids.isEmpty { return false }
        let path = url.standardizedFileURL.path
        if summary.paths.contains(path) { return true }
        return Self.storedIdentity(atPath: Array(path.utf8)).map(summary.ids.contains) ?? false
    }

    /// The identity attribute of the item at `path` (not following a final link), or nil.
    static func storedIdentity(atPath path: [UInt8]) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = Syscall.withCString(path) { cds_lgetxattr($0, identityAttribute, &buffer, buffer.count) }
        return length > 0 ? String(decoding: buffer[0..<length], as: UTF8.self) : nil
    }

    /// A snapshot of which items have unresolved conflict versions, for asking about every
    /// item of a folder: an item matches by its exact path, or by its inode number confirmed
    /// by its identity attribute (an item renamed since its last save). Only that rare
    /// confirmation costs a system call.
    package struct ConflictLookup: Sendable {
        let ids: Set<String>
        /// The paths by their length: nearly every item is told apart by one integer lookup,
        /// without hashing its path.
        let pathsByLength: [Int: [[UInt8]]]
        let inodes: Set<UInt64>

        init(ids: Set<String>, paths: Set<String>, inodes: Set<UInt64>) {
            self.ids = ids
            self.pathsByLength = Dictionary(grouping: paths.map { Array($0.utf8) }, by: \.count)
            self.inodes = inodes
        }

        /// Whether the item at the exact path `path`, with inode number `inode`, has
        /// unresolved conflict versions.
        package func contains(path: [UInt8], inode: UInt64) -> Bool {
            if let candidates = pathsByLength[path.count], candidates.contains(path) { return true }
            guard inodes.contains(inode) else { return false }
            return VersionStore.storedIdentity(atPath: path).map(ids.contains) ?? false
        }
    }

    /// The current summary as a lookup, or nil when no item has unresolved conflicts, so
    /// that a caller can skip asking.
    package func conflictLookup() -> ConflictLookup? {
        let summary = conflictSummary()
        guard !summary.ids.isEmpty else { return nil }
        return ConflictLookup(ids: summary.ids, paths: summary.paths, inodes: summary.inodes)
    }

    /// One empty file per item with unresolved conflicts, so that asking costs one folder
    /// listing, nearly always empty, rather than a read of every version record.
    var conflictMarkersURL: URL { root.appendingPathComponent("conflicts", isDirectory: true) }

    /// The summary: the cached one within its lifetime; after that, the cached one again if
    /// two `stat` calls show the store unchanged; else read afresh (one listing of the marker
    /// folder, the records of each marked item and the identity index).
    func conflictSummary() -> ConflictSummary {
        let cached = conflictCache.withLock { $0 }
        if let cached, cached.checked.duration(to: .now) < Self.conflictSummaryLifetime { return cached }
        let markers = FileStatus(path: conflictMarkersURL.path)
        // The index this object has open, if any (opening one is the queue's work): its
        // count of commits, its own and other processes'.
        let indexStamp = openedIndex.withLock { $0 }.flatMap { try? $0.stamp() }
        if var confirmed = cached, confirmed.isCurrent(markers: markers, index: indexStamp) {
            confirmed.checked = .now
            conflictCache.withLock { $0 = confirmed }
            return confirmed
        }
        var summary = ConflictSummary(markers: markers, index: indexStamp)
        let marked = ((try? FileManager.default.contentsOfDirectory(atPath: conflictMarkersURL.path)) ?? [])
            .filter { UUID(uuidString: $0) != nil }
        if !marked.isEmpty {
            for itemID in marked {
                let unresolved = queue.sync { records(ofItem: itemID) }.filter {
                    $0.isConflict && !$0.isResolved
                }
                guard !unresolved.isEmpty else { continue }
                summary.ids.insert(itemID)
                for record in unresolved {
                    summary.paths.insert(record.itemPath)
                    summary.inodes.insert(record.inode)
                }
                if let current = queue.sync(execute: { withIndex { try $0.entry(of: itemID) } }),
                    !current.path.isEmpty
                {
                    summary.paths.insert(URL(fileURLWithPath: current.path).standardizedFileURL.path)
                    summary.inodes.insert(current.inode)
                }
            }
        }
        summary.checked = .now
        conflictCache.withLock { $0 = summary }
        return summary
    }

    /// Brings an item's conflict marker in line with its versions.
    func updateConflictMarker(ofItem itemID: String) {
        let unresolved = queue.sync { records(ofItem: itemID) }.contains { $0.isConflict && !$0.isResolved }
        let marker = conflictMarkersURL.appendingPathComponent(itemID)
        if unresolved {
            try? makeFolder(conflictMarkersURL)
            if !FileManager.default.fileExists(atPath: marker.path) {
                _ = FileManager.default.createFile(
                    atPath: marker.path, contents: nil, attributes: [.posixPermissions: 0o600])
            }
        } else {
            try? FileManager.default.removeItem(at: marker)
        }
    }

    /// Forgets the summary after a change in this process.
    func invalidateConflictSummary() {
        conflictCache.withLock { $0 = nil }
    }
}
