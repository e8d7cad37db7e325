// Porting corpus. Source: github.com/kingdomseed/icloud_storage_plus, commit f8c58dc2,
// ios/icloud_storage_plus/Sources/icloud_storage_plus_foundation/ConflictResolver.swift
// (MIT, © 2021 Dean Yuan; the file by Jason Holt). Written anew with its calls: the unresolved
// conflicts of an item, the newest by modification date replacing it, each marked resolved, the
// other versions removed, inside a coordinated write. Ported with its import only.
import DocumentKit
import Foundation

public enum CorpusConflictResolver {
    /// Keeps the newest of an item's unresolved conflict versions, as the plugin does.
    public static func resolveKeepingNewest(at url: URL) throws {
        guard let conflicts = NSFileVersion.unresolvedConflictVersionsOfItem(at: url), !conflicts.isEmpty
        else { return }
        let newestFirst = conflicts.sorted {
            ($0.modificationDate ?? .distantPast) > ($1.modificationDate ?? .distantPast)
        }
        if let newest = newestFirst.first {
            try newest.replaceItem(at: url, options: [])
        }
        for version in conflicts {
            version.isResolved = true
        }
        try NSFileVersion.removeOtherVersionsOfItem(at: url)
    }

    /// The same inside a coordinated write, from a background queue, as Apple asks for
    /// `removeOtherVersionsOfItem(at:)`; the async form the plugin's observers call.
    public static func resolveCoordinated(at url: URL) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            DispatchQueue.global(qos: .userInitiated).async {
                var coordinationError: NSError?
                var resolveError: Error?
                NSFileCoordinator(filePresenter: nil).coordinate(
                    writingItemAt: url, options: .forReplacing, error: &coordinationError
                ) { coordinatedURL in
                    do {
                        try resolveKeepingNewest(at: coordinatedURL)
                    } catch {
                        resolveError = error
                    }
                }
                if let error = coordinationError ?? resolveError {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume()
                }
            }
        }
    }
}
