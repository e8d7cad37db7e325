import Foundation

/// Which contents stay at an item's path when one of its conflicts is resolved.
public enum ConflictSide: Sendable, Equatable {
    /// The item as it is now.
    case currentItem
    /// The conflict version's contents, put in the item's place.
    case conflictVersion
}

/// The rules every conflict follows, whoever made it (another program on this computer, or
/// sync from another device):
///
/// - "Mine" is what the user of this device typed and had not saved when another writer
///   changed the file. A document never overwrites the other writer's file: the file keeps
///   their contents, and the unsaved text becomes a conflict version saved by this device
///   (``FileVersion/isFromThisComputer``). So for a conflict version from this device,
///   "mine" is the version and "theirs" is the file; for one from another device, "theirs"
///   is the version and "mine" is the file.
/// - A device is its ``DeviceIdentity``, never its name: two devices that share a host name
///   (cloned virtual machines, Raspberry Pis, "localhost") each see their own text as "mine".
///   A version whose device is not known is "theirs" unless it is proven this device's.
/// - Resolving acts on the one version the user chose, never on the others, and deletes
///   nothing: the side not kept stays in the version store (the file's contents as a history
///   version, the conflict version marked resolved), restorable until the user removes
///   versions.
extension FileVersion {
    /// Whether this version holds contents made on this device: for a conflict version, the
    /// unsaved text a document here kept when another writer changed its file, or this
    /// device's side of a sync conflict ("mine").
    ///
    /// Decided by the device's identifier (``savingDeviceIdentifier`` against the store's
    /// ``VersionStore/device``), never by the computer's name, which another device may share.
    /// A version stored before identifiers were kept is this device's only when a program here
    /// kept it (it names its ``savingProgram``; sync never records one for another device's
    /// text); any other is another device's. The current version is the item here: this
    /// device's.
    public var isFromThisComputer: Bool {
        if currentURL != nil { return true }
        guard let savingDeviceIdentifier else { return savingProgram != nil }
        return savingDeviceIdentifier == (store ?? VersionStore.shared).device.identifier
    }

    /// The side of a conflict with this version that is the user's own: the version when it
    /// was made on this device, else the item.
    public var mineSide: ConflictSide { isFromThisComputer ? .conflictVersion : .currentItem }

    /// The other side: what another program or device wrote.
    public var theirsSide: ConflictSide { isFromThisComputer ? .currentItem : .conflictVersion }
}
