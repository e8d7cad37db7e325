import Foundation
import Synchronization

extension VersionStore {
    // MARK: - Telling the world

    /// Tells presenters and listeners of the item, in this process and every other one
    /// concerned, through coordination (``VersionNews``); each process that hears posts
    /// ``versionsDidChangeNotification``.
    ///
    /// - Parameter itemURL: Where the item was last seen, if the store knows.
    func notify(_ kind: VersionChange.Kind, _ version: FileVersion, itemURL: URL?) {
        guard let itemID = version.itemID else { return }
        if version.isConflict { updateConflictMarker(ofItem: itemID) }
        invalidateConflictSummary()
        let change = VersionChange(
            kind: kind, storeRoot: Message.fileSystemRepresentation(of: root), itemID: itemID,
            versionID: version.persistentIdentifier, name: version.localizedName ?? "",
            savingComputer: version.localizedNameOfSavingComputer,
            savingDevice: version.savingDeviceIdentifier,
            savingProgram: version.savingProgram,
            modified: version.modificationDate, isConflict: version.isConflict,
            isResolved: version.isResolved,
            isDiscardable: version.isDiscardable)
        VersionNews.announce(change, itemPath: itemURL.map(CanonicalPath.of), store: self)
    }

    /// The identity of the item at `url` in this store, or nil if it has none: its
    /// attribute when it has one, which costs no wait for the store's queue.
    func itemID(ofItemAt url: URL) -> String? {
        if let stored = Self.storedIdentity(atPath: Message.fileSystemRepresentation(of: url)) {
            return stored
        }
        return queue.sync { try? identity(ofItemAt: url, creating: false) }?.id
    }

    // MARK: - Stores of this process

    /// The store object news about the store at `root` is told through: the shared store or
    /// another this process uses if one has that root, else a new one.
    static func store(forNewsAt root: URL) -> VersionStore {
        let path = root.standardizedFileURL.path
        let shared = VersionStore.shared
        if shared.root.path == path { return shared }
        return liveStores.first { $0.root.path == path } ?? VersionStore(root: root)
    }

    /// The store at `root` changed: this process's objects of it read their conflict
    /// summaries afresh.
    static func storeChanged(at root: URL) {
        let path = root.standardizedFileURL.path
        for store in liveStores where store.root.path == path { store.invalidateConflictSummary() }
    }
}

extension FileVersion {
    /// The version a piece of news is about, without a read of the store: a lost version's
    /// record is gone, and the news carries what a presenter needs.
    convenience init(_ change: VersionChange, store: VersionStore) {
        let modified = change.modified
        self.init(
            record: VersionRecord(
                id: change.versionID, itemID: change.itemID, name: change.name, itemPath: "", device: 0,
                inode: 0, savingComputer: change.savingComputer ?? "",
                savingDevice: DeviceIdentity.validIdentifier(change.savingDevice),
                savingProgram: change.savingProgram,
                modified: modified ?? Date(timeIntervalSince1970: 0),
                captured: modified ?? Date(timeIntervalSince1970: 0),
                isConflict: change.isConflict, isResolved: change.isResolved,
                isDiscardable: change.isDiscardable,
                manifest: Manifest(isPackage: false, entries: [])),
            store: store)
    }
}
