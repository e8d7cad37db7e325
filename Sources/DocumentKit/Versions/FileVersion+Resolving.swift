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
///   changed the file. A ``Document`` never overwrites the other writer's file: the file keeps
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

    /// Resolves the conflict between the item at `url` and this conflict version.
    ///
    /// With ``ConflictSide/conflictVersion`` the version's contents replace the item as
    /// ``restoreItem(at:)`` does: coordinated, and what the item held kept as a history
    /// version first. With ``ConflictSide/currentItem`` the item is left as it is. Either way
    /// this version is then marked resolved and stays in the store; the item's other conflict
    /// versions are untouched.
    ///
    /// For example:
    ///
    /// ```swift
    /// for version in FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
    ///     try version.resolveConflict(ofItemAt: url, keeping: version.mineSide)
    /// }
    /// ```
    ///
    /// - Throws: ``DocumentKitError`` if the version is gone or the item cannot be written;
    ///   the version then stays unresolved and the item as it was.
    public func resolveConflict(ofItemAt url: URL, keeping side: ConflictSide) throws {
        if side == .conflictVersion {
            try restoreItem(at: url)
        }
        if isConflict { isResolved = true }
    }

    /// Puts this version's contents at `url` under a coordinated write, so that a document
    /// showing the item saves first and reloads after; what the item held is kept as a
    /// history version, in the store before this returns.
    ///
    /// This is ``replaceItem(at:options:)`` with the coordination Apple leaves to the caller:
    /// the one restore path of `ste` and `docs`.
    ///
    /// - Throws: ``DocumentKitError`` if the version is gone or `url` cannot be written; the
    ///   item at `url` is then untouched.
    @discardableResult
    public func restoreItem(at url: URL) throws -> URL {
        try FileCoordinator(filePresenter: nil).coordinate(writingItemAt: url, options: .forReplacing) {
            url in
            try replaceItem(at: url, options: [])
        }
    }

    /// ``resolveConflict(ofItemAt:keeping:)`` off the caller's executor: call this from the
    /// main actor, where a document presenting the item must answer the coordinated write.
    public func resolveConflict(ofItemAt url: URL, keeping side: ConflictSide) async throws {
        try await offTheCallersExecutor { try self.resolveConflict(ofItemAt: url, keeping: side) }
    }

    /// ``restoreItem(at:)`` off the caller's executor: call this from the main actor, where
    /// a document presenting the item must answer the coordinated write.
    @discardableResult
    public func restoreItem(at url: URL) async throws -> URL {
        try await offTheCallersExecutor { try self.restoreItem(at: url) }
    }
}

/// Runs blocking file work on a global queue, so that a coordinated access started from the
/// main actor never waits for a presenter that needs the main actor to answer.
func offTheCallersExecutor<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
