// An iCloud document helper as Swift 5 libraries write it: whether a document is downloaded,
// uploaded or in conflict, read from the URL's ubiquitous resource values, and a promised
// item's size read with NSURL's getter, which works before the item is downloaded, and a link
// to email. Only the imports differ from the Apple code (`import UIKit` there).
import DocumentKit
import Foundation

public final class ICloudItemStatus {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    /// True when the item's latest version is on this device.
    public var isDownloaded: Bool {
        guard let values = try? url.resourceValues(forKeys: [.ubiquitousItemDownloadingStatusKey]) else {
            return false
        }
        return values.ubiquitousItemDownloadingStatus == URLUbiquitousItemDownloadingStatus.current
    }

    public var isUploaded: Bool {
        let values = try? url.resourceValues(forKeys: [.isUbiquitousItemKey, .ubiquitousItemIsUploadedKey])
        return values?.isUbiquitousItem == true && values?.ubiquitousItemIsUploaded == true
    }

    public var hasConflicts: Bool {
        let values = try? url.resourceValues(forKeys: [.ubiquitousItemHasUnresolvedConflictsKey])
        return values?.ubiquitousItemHasUnresolvedConflicts ?? false
    }

    /// The upload's error, if the last one failed.
    public var uploadError: NSError? {
        let values = try? url.resourceValues(forKeys: [.ubiquitousItemUploadingErrorKey])
        return values?.ubiquitousItemUploadingError
    }

    /// The item's size, downloaded or not.
    public func promisedFileSize() throws -> Int? {
        var value: AnyObject?
        try (url as NSURL).getPromisedItemResourceValue(&value, forKey: URLResourceKey.fileSizeKey)
        return (value as? NSNumber)?.intValue
    }

    /// The item's downloading status, downloaded or not.
    public func promisedDownloadingStatus() throws -> String? {
        var value: AnyObject?
        try (url as NSURL).getPromisedItemResourceValue(&value, forKey: .ubiquitousItemDownloadingStatusKey)
        return value as? String
    }

    /// The item's size without downloading it: its promised values, inside a coordinated read
    /// that asks for metadata only.
    public func sizeWithoutDownloading() -> Int? {
        var size: Int?
        var error: NSError?
        NSFileCoordinator(filePresenter: nil).coordinate(
            readingItemAt: url, options: .immediatelyAvailableMetadataOnly, error: &error
        ) { url in
            let keys: Set<URLResourceKey> = [.fileSizeKey]
            size = (try? url.promisedItemResourceValues(forKeys: keys))?.fileSize
        }
        return error == nil ? size : nil
    }

    /// A link to email, when iCloud can make one; nil otherwise.
    public func publicLink() -> URL? {
        return try? FileManager.default.url(forPublishingUbiquitousItemAt: url, expiration: nil)
    }
}
