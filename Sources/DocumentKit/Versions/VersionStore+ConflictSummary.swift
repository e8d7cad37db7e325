import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension VersionStore {
    /// Items that have unresolved conflict versions, by identity and by the path each was last
    /// saved at.
    struct ConflictSummary: Sendable {
        var ids: Set<String> = []
        var paths: Set<String> = []
        var taken = ContinuousClock.now
    }

    /// How long a summary serves before the store is read again: changes made in this process
    /// clear it at once; this bounds how late another process's changes show.
    static let conflictSummaryLifetime: Duration = .seconds(1)

    /// Whether the item at `url` has unresolved conflict versions, cheaply enough to ask for
    /// every item of a folder: the store is read once per ``conflictSummaryLifetime``, and an
    /// item is then matched by path or by its identity attribute.
    public func hasUnresolvedConflicts(itemAt url: URL) -> Bool {
        let summary = conflictSummary()
        if summary.ids.isEmpty { return false }
        let path = url.standardizedFileURL.path
        if summary.paths.contains(path) { return true }
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = cds_lgetxattr(path, Self.identityAttribute, &buffer, buffer.count)
        guard length > 0 else { return false }
        return summary.ids.contains(String(decoding: buffer[0..<length], as: UTF8.self))
    }

    /// One empty file per item with unresolved conflicts, so that asking costs one folder
    /// listing, nearly always empty, rather than a read of every version record.
    var conflictMarkersURL: URL { root.appendingPathComponent("conflicts", isDirectory: true) }

    func conflictSummary() -> ConflictSummary {
        if let cached = conflictCache.withLock({ $0 }), cached.taken.duration(to: .now) < Self.conflictSummaryLifetime {
            return cached
        }
        var summary = ConflictSummary()
        let marked = (try? FileManager.default.contentsOfDirectory(atPath: conflictMarkersURL.path)) ?? []
        for itemID in marked where UUID(uuidString: itemID) != nil {
            let unresolved = queue.sync { records(ofItem: itemID) }.filter { $0.isConflict && !$0.isResolved }
            guard !unresolved.isEmpty else { continue }
            summary.ids.insert(itemID)
            for record in unresolved { summary.paths.insert(record.itemPath) }
            if let current = currentURL(ofItem: itemID) { summary.paths.insert(current.standardizedFileURL.path) }
        }
        conflictCache.withLock { $0 = summary }
        return summary
    }

    /// Brings an item's conflict marker in line with its versions.
    func updateConflictMarker(ofItem itemID: String) {
        let unresolved = queue.sync { records(ofItem: itemID) }.contains { $0.isConflict && !$0.isResolved }
        let marker = conflictMarkersURL.appendingPathComponent(itemID)
        if unresolved {
            try? FileManager.default.createDirectory(at: conflictMarkersURL, withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: marker.path) {
                _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
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
