import Foundation

extension VersionStore {
    /// Removes the item's history versions but those `keeping` names, to free space: what
    /// ``removeOtherVersionsOfItem(at:)`` does (`NSFileVersion.removeOtherVersionsOfItem(at:)`
    /// removes every version but the current one), less what must stay. Unresolved conflict
    /// versions stay (resolving them is the user's call), and so do the versions in `keeping`
    /// (a sync's merge bases: without them its next merge would be a conflict). Resolved
    /// conflict versions go with the history.
    ///
    /// The versions held for a sync are stored first, and pruned with the others.
    ///
    /// - Returns: The versions removed.
    /// - Throws: ``DocumentKitError`` if the store cannot be changed.
    public func pruneVersionsOfItem(at url: URL, keeping: Set<String>) throws -> [FileVersion] {
        var stored: [(FileVersion, URL)] = []
        let removed: [FileVersion] = try queue.sync {
            stored = try storeHeld { _ in true }
            guard let identity = try identity(ofItemAt: url, creating: false) else { return [] }
            return try withStoreLock {
                let records = storedRecords(ofItem: identity.id).filter { stored in
                    !(stored.record.isConflict && !stored.record.isResolved)
                        && !keeping.contains(stored.record.id)
                }
                guard !records.isEmpty else { return [] }
                try removeVersions(records.map { ($0.record.itemID, $0.record.id, $0.pack) })
                collectUnusedChunks()
                return records.map { FileVersion(record: $0.record, store: self) }
            }
        }
        notifyStored(stored)
        for version in removed { notify(.lost, version, itemURL: url) }
        return removed
    }
}
