import Foundation
import Synchronization

/// Carries a version store's news past the store: to the presenters and listeners of the
/// item in this process, and to every other process presenting or listening for it.
///
/// The store sits below coordination and names nothing of it. Coordination provides the
/// courier by making ``VersionNewsRoute`` conform to this protocol, and the store finds that
/// conformance at run time: news then leaves every process that changes a store, even one
/// that never coordinated anything (a registration made when coordination is first used
/// would miss those). Without a courier (the versions layer built alone) a store still clears
/// this process's caches and posts ``VersionStore/versionsDidChangeNotification``.
protocol VersionNewsCourier {
    /// Tells everyone concerned, here and in other processes, of `change` to a version in
    /// `store`, and posts ``VersionStore/versionsDidChangeNotification`` here.
    ///
    /// - Parameter itemPath: The item's canonical path as the store last knew it, if it knows one.
    static func carry(_ change: VersionChange, itemPath: String?, from store: VersionStore)
}

/// The way a store's news leaves it; coordination makes it a ``VersionNewsCourier``.
enum VersionNewsRoute {
    /// The courier this build has: the runtime's conformance lookup, cached by the runtime
    /// after the first.
    static var courier: (any VersionNewsCourier.Type)? {
        (VersionNewsRoute.self as Any.Type) as? any VersionNewsCourier.Type
    }
}

extension VersionStore {
    // MARK: - Telling the world

    /// Tells presenters and listeners of the item, in this process and every other one
    /// concerned, through the courier coordination provides (``VersionNewsCourier``); each
    /// process that hears posts ``versionsDidChangeNotification``.
    ///
    /// - Parameter itemURL: Where the item was last seen, if the store knows.
    func notify(_ kind: VersionChange.Kind, _ version: FileVersion, itemURL: URL?) {
        guard let itemID = version.itemID else { return }
        if version.isConflict { updateConflictMarker(ofItem: itemID) }
        invalidateConflictSummary()
        let change = VersionChange(
            kind: kind, storeRoot: root.fileSystemBytes, itemID: itemID,
            versionID: version.persistentIdentifier, name: version.localizedName ?? "",
            savingComputer: version.localizedNameOfSavingComputer,
            savingDevice: version.savingDeviceIdentifier,
            savingProgram: version.savingProgram,
            modified: version.modificationDate, isConflict: version.isConflict,
            isResolved: version.isResolved,
            isDiscardable: version.isDiscardable)
        let itemPath = itemURL.map(CanonicalPath.of)
        if let courier = VersionNewsRoute.courier {
            courier.carry(change, itemPath: itemPath, from: self)
        } else {
            Self.storeChanged(at: root)
            MainQueueNotice.post(
                Self.versionsDidChangeNotification, object: self,
                userInfo: itemPath.map { ["url": URL(fileURLWithPath: $0)] } ?? [:])
        }
    }

    /// The identity of the item at `url` in this store, or nil if it has none: its
    /// attribute when it has one, which costs no wait for the store's queue.
    func itemID(ofItemAt url: URL) -> String? {
        if let stored = Self.storedIdentity(atPath: url.fileSystemBytes) {
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
