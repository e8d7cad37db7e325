import DocumentKit
import Foundation
import TextContainer

/// A version of a document as `docs` shows and uses it.
struct VersionSummary: Sendable, Equatable {
    /// The version's persistent identifier: what `docs restore NAME VERSION` takes.
    var id: String
    var modificationDate: Date?
    var computer: String?
    /// The identifier of the device that saved it, when the store knows it.
    var device: String?
    /// Whether this device saved it: for a conflict version, whether it holds "mine".
    var isFromThisDevice: Bool
    var program: String?
    var isConflict: Bool
    var isResolved: Bool
}

/// Everything `docs` needs from version history, in one place, so that the commands do not
/// depend on how `FileVersion` is finished.
///
enum VersionsAdapter {

    static func versions(of url: URL) throws -> [VersionSummary] {
        (FileVersion.otherVersionsOfItem(at: url) ?? []).map(summary)
    }

    static func unresolvedConflicts(of url: URL) throws -> [VersionSummary] {
        (FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? []).map(summary)
    }

    /// How many unresolved conflict versions each document has; 0 when that cannot be known.
    ///
    /// The store's summary is read once for the whole listing and matched without a system
    /// call per document; only documents that have conflicts pay for counting them.
    static func unresolvedConflictCounts(of entries: [TextContainer.Entry], in container: TextContainer)
        -> [Int]
    {
        guard let lookup = VersionStore.shared.conflictLookup() else {
            return Array(repeating: 0, count: entries.count)
        }
        let folder = container.url.standardizedFileURL.path
        let prefix = Array((folder.hasSuffix("/") ? folder : folder + "/").utf8)
        return entries.map { entry in
            guard lookup.contains(path: prefix + Array(entry.fileName.utf8), inode: entry.inode) else {
                return 0
            }
            let url = container.url.appendingPathComponent(entry.fileName)
            return FileVersion.unresolvedConflictVersionsOfItem(at: url)?.count ?? 0
        }
    }

    /// What pruning a file's versions did.
    struct Pruned {
        var removed = 0
        /// The versions that stay: the unresolved conflicts, and the merge bases they and sync need.
        var kept = 0
        var conflicts = 0
        var bases = 0
        /// How much smaller the version store is.
        var freed: Int64 = 0
        /// The version store's size after.
        var storeBytes: Int64 = 0
    }

    /// Removes the versions of the file at `url` but its unresolved conflicts, the base
    /// sync's next merge starts from (`keeping`, from its journal), and the bases the
    /// conflicts merge from (those whose bytes have the hash a conflict names).
    static func prune(_ url: URL, keeping syncBases: Set<String>) throws -> Pruned {
        let store = VersionStore.shared
        let conflicts = FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? []
        let wanted = Set(conflicts.compactMap(\.mergeBase))
        var bases = syncBases
        if !wanted.isEmpty {
            for version in FileVersion.otherVersionsOfItem(at: url) ?? [] where !version.isConflict {
                if let hash = try? ContentHash(contentsOf: version.url), wanted.contains(hash.hex) {
                    bases.insert(version.persistentIdentifier)
                }
            }
        }
        let present = Set((FileVersion.otherVersionsOfItem(at: url) ?? []).map(\.persistentIdentifier))
        bases.formIntersection(present)
        let before = store.diskUsage()
        let removed = try store.pruneVersionsOfItem(at: url, keeping: bases)
        let after = store.diskUsage()
        return Pruned(
            removed: removed.count, kept: present.count - removed.count, conflicts: conflicts.count,
            bases: bases.count, freed: max(before - after, 0), storeBytes: after)
    }

    /// The path of the file at `url` in the container, as sync's journal names it.
    static func path(of url: URL, in container: TextContainer) -> String {
        let folder = container.url.standardizedFileURL.path
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        let path = url.standardizedFileURL.path
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : url.lastPathComponent
    }

    /// Replaces the document's contents with the version's: the one restore path, which
    /// coordinates (an editor showing the document reloads it) and keeps what it replaces.
    static func restore(_ id: String, of url: URL) throws {
        guard let version = FileVersion.version(itemAt: url, forPersistentIdentifier: id) else {
            throw DocsFailure.failure("no version “\(id)”; `docs versions` lists them")
        }
        try version.restoreItem(at: url)
    }

    private static func summary(_ version: FileVersion) -> VersionSummary {
        VersionSummary(
            id: version.persistentIdentifier, modificationDate: version.modificationDate,
            computer: version.localizedNameOfSavingComputer, device: version.savingDeviceIdentifier,
            isFromThisDevice: version.isFromThisComputer, program: version.savingProgram,
            isConflict: version.isConflict,
            isResolved: version.isResolved)
    }
}
