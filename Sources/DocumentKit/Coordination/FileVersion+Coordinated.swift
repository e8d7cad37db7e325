import Foundation

/// Resolving and restoring as the apps do it: under a coordinated write, so that a document
/// showing the item saves first and reloads after. Here rather than beside ``FileVersion``,
/// because coordination is the layer above the version store.
extension FileVersion {
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
