import Foundation
import Synchronization

/// Where one item of a ubiquity container stands, in the terms of Apple's ubiquitous URL
/// resource keys (`URLResourceKey.ubiquitousItem…`): what `url.resourceValues(forKeys:)` and
/// `url.promisedItemResourceValues(forKeys:)` answer for them.
///
/// Read from the one place sync publishes it, the status the container's agent writes
/// (``UbiquityStatus``, as the query's ubiquitous attributes and `docs status` read it), with
/// the conflicts from the version store and the downloads asked of the agent. An item whose
/// file changed since its last sync reads as not uploaded at once, before the agent's next
/// pass.
package struct UbiquitousItemValues: Sendable {
    /// The container holding the item.
    package var container: UbiquityContainer
    /// The item's state in the status its agent published.
    package var state: UbiquityStatus.ItemState
    /// Whether unresolved conflict versions of the item exist.
    package var hasUnresolvedConflicts: Bool

    /// The keys this answers for, besides `isUbiquitousItemKey`.
    package static let keys: Set<URLResourceKey> = [
        .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsDownloadingKey,
        .ubiquitousItemIsUploadedKey, .ubiquitousItemIsUploadingKey, .ubiquitousItemHasUnresolvedConflictsKey,
        .ubiquitousItemDownloadingErrorKey, .ubiquitousItemUploadingErrorKey,
        .ubiquitousItemDownloadRequestedKey,
        .ubiquitousItemContainerDisplayNameKey,
    ]

    /// The values of the item at `url`, whose file here is `status` (nil for a document kept
    /// on the server only); nil when `url` is in no ubiquity container.
    package init?(of url: URL, status: FileStatus?) {
        guard url.isFileURL else { return nil }
        let path = CanonicalPath.of(url)
        guard
            let (container, root) = Self.containers().first(where: {
                CanonicalPath.isAncestor($0.root, of: path)
            })
        else { return nil }
        let relative = String(path.dropFirst(root.count == 1 ? 1 : root.count + 1))
        let published = UbiquityStatus.cachedRead(forContainer: container.url)
        self.container = container
        state = UbiquityStatus.itemState(
            relative, published: published, status: status,
            requested: status == nil ? UbiquityDownloadRequests(forContainer: container.url).load() : [])
        // The placeholder of a document on the server only carries no identity of its own:
        // its conflicts are the ones recorded at its path.
        hasUnresolvedConflicts = VersionStore.shared.hasUnresolvedConflicts(itemAt: url)
    }

    /// The configured containers with their roots as ``CanonicalPath`` spells them, read again
    /// only when the settings file changed: an app asks for one row's values after another.
    private static func containers() -> [(container: UbiquityContainer, root: String)] {
        let file = UbiquityConfiguration.fileURL.path
        let stamp = FileStatus(path: file)
        if let known = known.withLock({ $0 }), known.file == file, known.stamp == stamp { return known.list }
        let list = ((try? UbiquityConfiguration.load())?.containers ?? []).map {
            ($0, CanonicalPath.of($0.url))
        }
        known.withLock { $0 = (file, stamp, list) }
        return list
    }

    private static let known = Mutex<
        (file: String, stamp: FileStatus?, list: [(container: UbiquityContainer, root: String)])?
    >(nil)

    /// The value for `key`, as Apple's resource values hold it (Booleans as `NSNumber`, the
    /// downloading status as its raw string, errors as `NSError`); nil for a key this does not
    /// answer, or an error that is not there.
    package func value(forKey key: URLResourceKey) -> Any? {
        switch key {
        case .isUbiquitousItemKey: return NSNumber(value: true)
        case .ubiquitousItemDownloadingStatusKey: return state.downloadingStatus.urlResourceValue
        case .ubiquitousItemIsDownloadingKey: return NSNumber(value: state.isDownloading)
        case .ubiquitousItemIsUploadedKey: return NSNumber(value: state.isUploaded)
        case .ubiquitousItemIsUploadingKey: return NSNumber(value: state.isUploading)
        case .ubiquitousItemHasUnresolvedConflictsKey: return NSNumber(value: hasUnresolvedConflicts)
        case .ubiquitousItemDownloadingErrorKey: return state.downloadingError
        case .ubiquitousItemUploadingErrorKey: return state.uploadingError
        case .ubiquitousItemDownloadRequestedKey: return NSNumber(value: state.isDownloadRequested)
        case .ubiquitousItemContainerDisplayNameKey: return container.name
        default: return nil
        }
    }
}

extension UbiquityStatus.ItemState {
    /// Apple's three downloading states, which the query's
    /// `NSMetadataUbiquitousItemDownloadingStatusKey` and the URL resource key
    /// `ubiquitousItemDownloadingStatusKey` both give.
    package enum DownloadingStatus: Sendable {
        /// A local copy exists and is the most up-to-date version known to the device.
        case current
        /// A local copy exists, but a newer version is on its way (Apple: "it is stale; the
        /// most recent version will be downloaded as soon as possible").
        case downloaded
        /// Only a placeholder is here.
        case notDownloaded

        /// The value of `NSMetadataUbiquitousItemDownloadingStatusKey`.
        package var metadataValue: String {
            switch self {
            case .current: "NSMetadataUbiquitousItemDownloadingStatusCurrent"
            case .downloaded: "NSMetadataUbiquitousItemDownloadingStatusDownloaded"
            case .notDownloaded: "NSMetadataUbiquitousItemDownloadingStatusNotDownloaded"
            }
        }

        /// The value of the URL resource key `ubiquitousItemDownloadingStatusKey`: the raw value
        /// of Apple's `URLUbiquitousItemDownloadingStatus`.
        package var urlResourceValue: String {
            switch self {
            case .current: "NSURLUbiquitousItemDownloadingStatusCurrent"
            case .downloaded: "NSURLUbiquitousItemDownloadingStatusDownloaded"
            case .notDownloaded: "NSURLUbiquitousItemDownloadingStatusNotDownloaded"
            }
        }
    }

    /// Where the item's local copy stands.
    package var downloadingStatus: DownloadingStatus {
        isOnServerOnly ? .notDownloaded : isDownloading ? .downloaded : .current
    }

    /// Why the download failed, as Apple's resource values and attributes give it: Cocoa's
    /// domain, `ubiquitousFileUnavailable` (4353), the reason in words.
    package var downloadingError: NSError? {
        downloadError.map { Self.syncError(CocoaError.ubiquitousFileUnavailable.rawValue, $0) }
    }

    /// Why the upload failed: Cocoa's domain, `ubiquitousFileUbiquityServerNotAvailable`
    /// (4355), the reason in words.
    package var uploadingError: NSError? {
        uploadError.map { Self.syncError(CocoaError.ubiquitousFileUbiquityServerNotAvailable.rawValue, $0) }
    }

    private static func syncError(_ code: Int, _ reason: String) -> NSError {
        NSError(domain: NSCocoaErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: reason])
    }
}

extension UbiquityStatus {
    /// Where the item at `path` (relative to its container), whose file here is `status`,
    /// stands in `published`; with no status published yet (no agent has run), an item that is
    /// neither uploaded nor moving. `requested` holds the downloads apps asked of the agent
    /// (``UbiquityDownloadRequests``), which a document kept on the server only may be in
    /// before the agent takes it.
    package static func itemState(
        _ path: String, published: UbiquityStatus?, status: FileStatus?, pending: Pending? = nil,
        requested: Set<String> = []
    ) -> ItemState {
        var state =
            published?.item(path, status: status, pending: pending)
            ?? ItemState(
                isUploaded: false, isUploading: false, isDownloading: false, isOnServerOnly: status == nil)
        if status == nil, requested.contains(path) { state.isDownloadRequested = true }
        return state
    }

    /// The status last published for the container at `container`, read again only when its
    /// files changed: an app that asks for one item's resource values after another does not
    /// parse the list of every synced file each time.
    package static func cachedRead(forContainer container: URL) -> UbiquityStatus? {
        let file = SyncStateFiles.status(forContainer: container)
        let stamp = [file, syncedURL(of: file)].map { FileStatus(path: $0.path) }
        if let cached = readCache.withLock({ $0[file.path] }), cached.stamp == stamp { return cached.status }
        let status = read(file)
        readCache.withLock { $0[file.path] = (stamp, status) }
        return status
    }

    private static let readCache = Mutex<[String: (stamp: [FileStatus?], status: UbiquityStatus?)]>([:])
}
