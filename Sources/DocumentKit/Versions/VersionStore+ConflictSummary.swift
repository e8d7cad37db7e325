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
        /// The marker folder and the identity index as they were when the summary was read:
        /// while both are unchanged, so is the summary.
        var markers: FileStamp?
        var index: FileStamp?
        /// When the summary was last read or confirmed.
        var checked = ContinuousClock.now

        func isCurrent(markers: FileStamp?, index: FileStamp?) -> Bool {
            markers == self.markers && index == self.index && !(markers?.isRecent ?? false)
                && !(index?.isRecent ?? false)
        }
    }

    /// How long a summary serves without a look at the store: changes made in this process
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

    /// The summary: the cached one within its lifetime; after that, the cached one again if
    /// two `stat` calls show the store unchanged; else read afresh (one listing of the marker
    /// folder, the records of each marked item and the identity index).
    func conflictSummary() -> ConflictSummary {
        let cached = conflictCache.withLock { $0 }
        if let cached, cached.checked.duration(to: .now) < Self.conflictSummaryLifetime { return cached }
        let markers = FileStamp(of: conflictMarkersURL)
        let indexStamp = FileStamp(of: indexURL)
        if var confirmed = cached, confirmed.isCurrent(markers: markers, index: indexStamp) {
            confirmed.checked = .now
            conflictCache.withLock { $0 = confirmed }
            return confirmed
        }
        var summary = ConflictSummary(markers: markers, index: indexStamp)
        let marked = ((try? FileManager.default.contentsOfDirectory(atPath: conflictMarkersURL.path)) ?? [])
            .filter { UUID(uuidString: $0) != nil }
        if !marked.isEmpty {
            let index = queue.sync { loadIndex() }
            for itemID in marked {
                let unresolved = queue.sync { records(ofItem: itemID) }.filter { $0.isConflict && !$0.isResolved }
                guard !unresolved.isEmpty else { continue }
                summary.ids.insert(itemID)
                for record in unresolved { summary.paths.insert(record.itemPath) }
                if let current = index.items[itemID]?.path, !current.isEmpty {
                    summary.paths.insert(URL(fileURLWithPath: current).standardizedFileURL.path)
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
