// The iCloud notes app's per-note status, as iPhone apps write it in Swift 6: "is it downloaded
// yet?" from the URL's ubiquitous resource values, the size of a note kept in iCloud only read
// from its promised item inside a metadata-only coordinated read (which does not download it),
// and a link to send someone a copy. Only the imports differ from the Apple code (`import UIKit`
// there).
import DocumentKit
import Foundation

extension CloudNotes {
    /// What the app's note row shows of one note's file.
    public struct FileStatus: Equatable, Sendable {
        public var isUbiquitous: Bool
        public var downloadingStatus: String?
        public var isDownloaded: Bool
        public var isDownloading: Bool
        public var downloadRequested: Bool
        public var isUploaded: Bool
        public var isUploading: Bool
        public var hasConflicts: Bool
        public var uploadError: String?
        public var downloadError: String?
        public var containerName: String?
    }

    /// The note's iCloud status, read as the row is drawn.
    public nonisolated static func fileStatus(of url: URL) throws -> FileStatus {
        let values = try url.resourceValues(forKeys: [
            .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsDownloadingKey,
            .ubiquitousItemDownloadRequestedKey, .ubiquitousItemIsUploadedKey, .ubiquitousItemIsUploadingKey,
            .ubiquitousItemHasUnresolvedConflictsKey, .ubiquitousItemUploadingErrorKey,
            .ubiquitousItemDownloadingErrorKey, .ubiquitousItemContainerDisplayNameKey,
        ])
        let status = values.ubiquitousItemDownloadingStatus
        return FileStatus(
            isUbiquitous: values.isUbiquitousItem ?? false,
            downloadingStatus: status?.rawValue,
            isDownloaded: status == .current || status == .downloaded,
            isDownloading: values.ubiquitousItemIsDownloading ?? false,
            downloadRequested: values.ubiquitousItemDownloadRequested ?? false,
            isUploaded: values.ubiquitousItemIsUploaded ?? false,
            isUploading: values.ubiquitousItemIsUploading ?? false,
            hasConflicts: values.ubiquitousItemHasUnresolvedConflicts ?? false,
            uploadError: values.ubiquitousItemUploadingError?.localizedDescription,
            downloadError: values.ubiquitousItemDownloadingError?.localizedDescription,
            containerName: values.ubiquitousItemContainerDisplayName)
    }

    /// The size of a note, downloaded or not, without downloading it: its promised item's
    /// values, read inside a coordinated read that asks for metadata only.
    public nonisolated static func promisedSize(of url: URL) -> (size: Int?, isDownloaded: Bool?) {
        var size: Int?
        var isDownloaded: Bool?
        var error: NSError?
        NSFileCoordinator(filePresenter: nil).coordinate(
            readingItemAt: url, options: .immediatelyAvailableMetadataOnly, error: &error
        ) { url in
            guard
                let values = try? url.promisedItemResourceValues(forKeys: [
                    .fileSizeKey, .ubiquitousItemDownloadingStatusKey,
                ])
            else { return }
            size = values.fileSize
            isDownloaded = values.ubiquitousItemDownloadingStatus.map { $0 != .notDownloaded }
        }
        return (size, isDownloaded)
    }

    /// The note's name as iCloud knows it, downloaded or not.
    public nonisolated static func promisedName(of url: URL) throws -> String? {
        var value: AnyObject?
        try (url as NSURL).getPromisedItemResourceValue(&value, forKey: .nameKey)
        return value as? String
    }

    /// A link that lets someone download a copy of the note, and until when it works.
    public nonisolated static func shareLink(for url: URL) throws -> (link: URL, expires: Date?) {
        var expiration: NSDate?
        let link = try FileManager.default.url(forPublishingUbiquitousItemAt: url, expiration: &expiration)
        return (link, expiration as Date?)
    }
}
