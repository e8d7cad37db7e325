import Foundation

/// What changed about one version of an item, as the version store reports it and as
/// coordination's messages carry it to other processes.
///
/// It holds what a receiver needs to hand its presenters a ``FileVersion`` without reading
/// the store: the store's folder, the item's identity in it, and the version's own fields.
/// A lost version's record is gone from the store by the time the news arrives, so the news
/// must carry them.
package struct VersionChange: Codable, Sendable, Equatable {
    /// What happened to the version.
    package enum Kind: String, Codable, Sendable {
        /// The version was added, or a resolved conflict became unresolved again.
        case gained
        /// The version was removed from the store.
        case lost
        /// The conflict version was marked resolved.
        case resolved
    }

    package var kind: Kind
    /// The version store's folder, as file-system bytes.
    package var storeRoot: [UInt8]
    /// The item's identity in the store.
    package var itemID: String
    /// The version's persistent identifier.
    package var versionID: String
    package var name: String
    package var savingComputer: String?
    /// The identifier of the device that made the contents (``DeviceIdentity``), when known.
    package var savingDevice: String?
    package var savingProgram: String?
    package var modified: Date?
    package var isConflict: Bool
    package var isResolved: Bool
    package var isDiscardable: Bool

    package init(
        kind: Kind, storeRoot: [UInt8], itemID: String, versionID: String, name: String,
        savingComputer: String? = nil, savingDevice: String? = nil, savingProgram: String? = nil,
        modified: Date? = nil,
        isConflict: Bool, isResolved: Bool, isDiscardable: Bool
    ) {
        self.kind = kind
        self.storeRoot = storeRoot
        self.itemID = itemID
        self.versionID = versionID
        self.name = name
        self.savingComputer = savingComputer
        self.savingDevice = savingDevice
        self.savingProgram = savingProgram
        self.modified = modified
        self.isConflict = isConflict
        self.isResolved = isResolved
        self.isDiscardable = isDiscardable
    }

    /// The store's folder as a URL.
    var storeRootURL: URL { URL(fileSystemBytes: storeRoot) }
}
