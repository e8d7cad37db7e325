// Porting corpus. Source: github.com/kingdomseed/icloud_storage_plus, commit f8c58dc2,
// ios/icloud_storage_plus/Sources/icloud_storage_plus_foundation/CoordinatedReplaceWriter.swift
// (MIT, © 2021 Dean Yuan; the file by Jason Holt). Written anew with its calls: an existing
// iCloud item is checked (conflicts, is it ubiquitous, downloaded, downloading, a download
// error), downloaded first if it is not, and replaced through a coordinated `.forReplacing`
// write from a file prepared in an item-replacement folder. Ported with its import only; the
// downloading status waits for item 5.
import DocumentKit
import Foundation

public enum CorpusReplaceWriter {
    public static let errorDomain = "CorpusReplaceWriter"

    /// Why an existing item cannot be replaced yet, or nil when it can.
    public static func replaceStateError(at destination: URL) throws -> NSError? {
        if let conflicts = NSFileVersion.unresolvedConflictVersionsOfItem(at: destination), !conflicts.isEmpty
        {
            return NSError(domain: errorDomain, code: 1, userInfo: nil)
        }
        let values = try destination.resourceValues(forKeys: [
            .isUbiquitousItemKey,
            .ubiquitousItemDownloadingStatusKey,
            .ubiquitousItemIsDownloadingKey,
            .ubiquitousItemDownloadingErrorKey,
        ])
        if let downloadError = values.ubiquitousItemDownloadingError {
            throw downloadError
        }
        guard values.isUbiquitousItem == true else { return nil }
        #if DOCUMENTKIT_GAP_5  // GAP 5: URLUbiquitousItemDownloadingStatus and URLResourceValues.ubiquitousItemDownloadingStatus are missing
            if values.ubiquitousItemDownloadingStatus == .current { return nil }
        #endif
        let code = values.ubiquitousItemIsDownloading == true ? 3 : 2
        return NSError(domain: errorDomain, code: code, userInfo: nil)
    }

    #if DOCUMENTKIT_GAP_5  // GAP 5: as above
        static func statusIsCurrent(_ status: URLUbiquitousItemDownloadingStatus?) -> Bool {
            status == .current
        }
    #endif

    /// Starts the download of an item that is not local yet.
    public static func ensureDownloaded(_ url: URL) throws {
        let values = try url.resourceValues(forKeys: [
            .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey,
        ])
        guard values.isUbiquitousItem == true else { return }
        #if DOCUMENTKIT_GAP_5  // GAP 5: as above
            guard values.ubiquitousItemDownloadingStatus != .current else { return }
        #endif
        try FileManager.default.startDownloadingUbiquitousItem(at: url)
    }

    /// Replaces the existing file at `destination` with what `prepare` writes, coordinated.
    public static func overwriteExistingItem(at destination: URL, prepare: (URL) throws -> Void) throws
        -> Bool
    {
        guard FileManager.default.fileExists(atPath: destination.path) else { return false }
        let isDirectory = try destination.resourceValues(forKeys: [.isDirectoryKey]).isDirectory == true
        guard !isDirectory else { throw NSError(domain: errorDomain, code: 4, userInfo: nil) }
        let replacementFolder = try FileManager.default.url(
            for: .itemReplacementDirectory, in: .userDomainMask, appropriateFor: destination, create: true)
        defer { try? FileManager.default.removeItem(at: replacementFolder) }
        let replacement = replacementFolder.appendingPathComponent(destination.lastPathComponent)
        try prepare(replacement)

        var coordinationError: NSError?
        var accessError: Error?
        NSFileCoordinator(filePresenter: nil).coordinate(
            writingItemAt: destination, options: .forReplacing, error: &coordinationError
        ) { coordinatedURL in
            do {
                try CorpusConflictResolver.resolveKeepingNewest(at: coordinatedURL)
                _ = try FileManager.default.replaceItemAt(coordinatedURL, withItemAt: replacement)
            } catch {
                accessError = error
            }
        }
        if let error = coordinationError ?? accessError { throw error }
        return true
    }
}
