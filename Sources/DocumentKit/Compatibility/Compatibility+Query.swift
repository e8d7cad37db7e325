// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Apple's global names (NSMetadataQuery…, NSUbiquity…, NSUndoManager…) are the porting contract.

import Foundation

#if !canImport(Darwin)
    /// Foundation's name for ``DocumentQuery``, so that code written for Apple platforms ports
    /// unchanged.
    ///
    /// The Apple names DocumentKit provides for metadata queries, with Apple's values:
    ///
    /// - Types: `NSMetadataQuery` (``DocumentQuery``), `NSMetadataItem` (``DocumentQuery/Item``).
    /// - `NSMetadataQuery`: `init()`, `start()`, `stop()`, `isStarted`, `isGathering`,
    ///   `isStopped`, `searchScopes` (`[Any]`), `predicate` (`NSPredicate?`),
    ///   `sortDescriptors` (`[NSSortDescriptor]`), `notificationBatchingInterval`,
    ///   `operationQueue`, `results`, `resultCount`, `result(at:)`, `index(ofResult:)`,
    ///   `value(ofAttribute:forResultAt:)`, `enumerateResults(_:)`,
    ///   `enumerateResults(options:using:)`, `disableUpdates()`, `enableUpdates()`.
    /// - `NSMetadataItem`: `init?(url:)`, `attributes`, `value(forAttribute:)`,
    ///   `values(forAttributes:)`, `isEqual(_:)`, `hash`.
    /// - Notifications: `NSMetadataQueryDidStartGathering`, `NSMetadataQueryGatheringProgress`
    ///   (never posted: gathering is one pass), `NSMetadataQueryDidFinishGathering`,
    ///   `NSMetadataQueryDidUpdate`; their `userInfo` keys `NSMetadataQueryUpdateAddedItemsKey`,
    ///   `NSMetadataQueryUpdateChangedItemsKey`, `NSMetadataQueryUpdateRemovedItemsKey`.
    /// - Search scopes: `NSMetadataQueryUserHomeScope`, `NSMetadataQueryLocalComputerScope`,
    ///   `NSMetadataQueryNetworkScope`, `NSMetadataQueryIndexedLocalComputerScope`,
    ///   `NSMetadataQueryIndexedNetworkScope`, `NSMetadataQueryUbiquitousDocumentsScope`,
    ///   `NSMetadataQueryUbiquitousDataScope`,
    ///   `NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope`.
    /// - Attributes: `NSMetadataItemFSNameKey`, `NSMetadataItemDisplayNameKey`,
    ///   `NSMetadataItemURLKey`, `NSMetadataItemPathKey`, `NSMetadataItemFSSizeKey`,
    ///   `NSMetadataItemFSCreationDateKey`, `NSMetadataItemFSContentChangeDateKey`,
    ///   `NSMetadataItemContentTypeKey`, `NSMetadataItemContentTypeTreeKey`,
    ///   `NSMetadataUbiquitousItemHasUnresolvedConflictsKey`, `NSMetadataItemIsUbiquitousKey`
    ///   (false: no item is ubiquitous until sync), and the ubiquitous item attributes, which
    ///   items have no value for until sync: `NSMetadataUbiquitousItemDownloadingStatusKey`
    ///   (with `NSMetadataUbiquitousItemDownloadingStatusCurrent`, `...Downloaded`,
    ///   `...NotDownloaded`), `NSMetadataUbiquitousItemIsDownloadingKey`,
    ///   `NSMetadataUbiquitousItemIsUploadedKey`, `NSMetadataUbiquitousItemIsUploadingKey`,
    ///   `NSMetadataUbiquitousItemPercentDownloadedKey`,
    ///   `NSMetadataUbiquitousItemPercentUploadedKey`, `NSMetadataUbiquitousItemDownloadingErrorKey`,
    ///   `NSMetadataUbiquitousItemUploadingErrorKey`, `NSMetadataUbiquitousItemDownloadRequestedKey`,
    ///   `NSMetadataUbiquitousItemIsExternalDocumentKey`,
    ///   `NSMetadataUbiquitousItemContainerDisplayNameKey`.
    ///
    /// Where Linux's Foundation forbids Apple's form, one word changes:
    /// `NSPredicate(format:)` becomes `NSPredicate(metadataFormat:)` (the same grammar over
    /// item attributes), and `NSSortDescriptor(key:ascending:)` becomes
    /// `NSSortDescriptor(metadataKey:ascending:)`. `NSPredicate(block:)` predicates and
    /// `NSSortDescriptor(keyPath:ascending:)` descriptors over `NSMetadataItem` work as they are.
    ///
    /// Not provided: the query's `delegate`, value lists and grouping (`valueListAttributes`,
    /// `groupingAttributes`, `groupedResults`), `searchItems`, and
    /// `NSPredicate(fromMetadataQueryString:)`.
    public typealias NSMetadataQuery = DocumentQuery

    /// Foundation's name for a query result, so that code written for Apple platforms ports
    /// unchanged.
    public typealias NSMetadataItem = DocumentQuery.Item

    extension Notification.Name {
        /// Posted when a ``DocumentQuery`` begins gathering; the object is the query.
        public static let NSMetadataQueryDidStartGathering = DocumentQuery.didStartGatheringNotification
        /// Apple's notification of progress during the initial gathering. A ``DocumentQuery``
        /// gathers in one pass and never posts it: did-finish-gathering follows.
        public static let NSMetadataQueryGatheringProgress = Notification.Name(
            "NSMetadataQueryGatheringProgressNotification")
        /// Posted when a ``DocumentQuery`` finished its initial gathering; the object is the query.
        public static let NSMetadataQueryDidFinishGathering = DocumentQuery.didFinishGatheringNotification
        /// Posted when a ``DocumentQuery``'s results changed; the object is the query.
        public static let NSMetadataQueryDidUpdate = DocumentQuery.didUpdateNotification
    }

    /// The `userInfo` key of a did-update notification's added items.
    public let NSMetadataQueryUpdateAddedItemsKey = DocumentQuery.updateAddedItemsKey
    /// The `userInfo` key of a did-update notification's changed items.
    public let NSMetadataQueryUpdateChangedItemsKey = DocumentQuery.updateChangedItemsKey
    /// The `userInfo` key of a did-update notification's removed items.
    public let NSMetadataQueryUpdateRemovedItemsKey = DocumentQuery.updateRemovedItemsKey

    // Search scopes, for `searchScopes` beside folder URLs and paths.

    /// The user's home folder (`$HOME`), searched like any folder.
    public let NSMetadataQueryUserHomeScope = "kMDQueryScopeHome"
    /// Every local volume: not supported on Linux, where no index of the whole computer
    /// exists; ``DocumentQuery/start()`` returns false and says so in `lastError`.
    public let NSMetadataQueryLocalComputerScope = "kMDQueryScopeComputer"
    /// Every mounted network volume: not supported, as `NSMetadataQueryLocalComputerScope`.
    public let NSMetadataQueryNetworkScope = "kMDQueryScopeNetwork"
    /// The indexed local volumes: not supported, as `NSMetadataQueryLocalComputerScope`.
    public let NSMetadataQueryIndexedLocalComputerScope = "kMDQueryScopeComputerIndexed"
    /// The indexed network volumes: not supported, as `NSMetadataQueryLocalComputerScope`.
    public let NSMetadataQueryIndexedNetworkScope = "kMDQueryScopeNetworkIndexed"
    /// The `Documents` folders of the app's ubiquity containers. No folder yet: until sync
    /// provides ubiquity containers, a query of it finds nothing, as when signed out of iCloud.
    public let NSMetadataQueryUbiquitousDocumentsScope = "NSMetadataQueryUbiquitousDocumentsScope"
    /// The app's ubiquity containers outside their `Documents` folders. No folder yet, as
    /// `NSMetadataQueryUbiquitousDocumentsScope`.
    public let NSMetadataQueryUbiquitousDataScope = "NSMetadataQueryUbiquitousDataScope"
    /// Documents outside the app's container that the user gave it access to. No folder yet,
    /// as `NSMetadataQueryUbiquitousDocumentsScope`.
    public let NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope =
        "NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope"

    // Attribute names, for `value(forAttribute:)`, predicates and sort descriptors.

    /// The item's name on disk, a `String`.
    public let NSMetadataItemFSNameKey = "kMDItemFSName"
    /// The item's name without its extension, a `String`.
    public let NSMetadataItemDisplayNameKey = "kMDItemDisplayName"
    /// The item's location, a `URL`.
    public let NSMetadataItemURLKey = "kMDItemURL"
    /// The item's path, a `String`.
    public let NSMetadataItemPathKey = "kMDItemPath"
    /// The item's size in bytes, an `NSNumber`.
    public let NSMetadataItemFSSizeKey = "kMDItemFSSize"
    /// When the item was created, a `Date`, where the file system records it.
    public let NSMetadataItemFSCreationDateKey = "kMDItemFSCreationDate"
    /// When the item's contents last changed, a `Date`.
    public let NSMetadataItemFSContentChangeDateKey = "kMDItemFSContentChangeDate"
    /// The item's uniform type identifier, a `String`.
    public let NSMetadataItemContentTypeKey = "kMDItemContentType"
    /// The item's type and those it conforms to, a `[String]`.
    public let NSMetadataItemContentTypeTreeKey = "kMDItemContentTypeTree"
    /// Whether unresolved conflict versions of the item exist, an `NSNumber` holding a `Bool`.
    public let NSMetadataUbiquitousItemHasUnresolvedConflictsKey =
        "NSMetadataUbiquitousItemHasUnresolvedConflictsKey"
    /// Whether the item is in a ubiquity container, an `NSNumber` holding a `Bool`: false for
    /// every item until sync provides ubiquity containers.
    public let NSMetadataItemIsUbiquitousKey = "NSMetadataItemIsUbiquitousKey"

    // The ubiquitous item attributes: items have no value for them until sync provides
    // ubiquity containers, as Apple's items outside iCloud have none.

    /// Whether the item's contents are downloaded, a `String`: one of the three values below.
    public let NSMetadataUbiquitousItemDownloadingStatusKey = "NSMetadataUbiquitousItemDownloadingStatusKey"
    /// The downloading status of an item whose local copy is the latest.
    public let NSMetadataUbiquitousItemDownloadingStatusCurrent = UbiquityStatus.ItemState.DownloadingStatus
        .current
        .metadataValue
    /// The downloading status of an item with a local copy that may not be the latest.
    public let NSMetadataUbiquitousItemDownloadingStatusDownloaded = UbiquityStatus.ItemState
        .DownloadingStatus.downloaded
        .metadataValue
    /// The downloading status of an item with no local copy.
    public let NSMetadataUbiquitousItemDownloadingStatusNotDownloaded = UbiquityStatus.ItemState
        .DownloadingStatus.notDownloaded
        .metadataValue
    /// Whether the item is being downloaded, an `NSNumber` holding a `Bool`.
    public let NSMetadataUbiquitousItemIsDownloadingKey = "NSMetadataUbiquitousItemIsDownloadingKey"
    /// Whether the item's contents are uploaded, an `NSNumber` holding a `Bool`.
    public let NSMetadataUbiquitousItemIsUploadedKey = "NSMetadataUbiquitousItemIsUploadedKey"
    /// Whether the item is being uploaded, an `NSNumber` holding a `Bool`.
    public let NSMetadataUbiquitousItemIsUploadingKey = "NSMetadataUbiquitousItemIsUploadingKey"
    /// How much of the item is downloaded, an `NSNumber` from 0 to 100.
    public let NSMetadataUbiquitousItemPercentDownloadedKey = "NSMetadataUbiquitousItemPercentDownloadedKey"
    /// How much of the item is uploaded, an `NSNumber` from 0 to 100.
    public let NSMetadataUbiquitousItemPercentUploadedKey = "NSMetadataUbiquitousItemPercentUploadedKey"
    /// Why the last download failed, an `NSError`.
    public let NSMetadataUbiquitousItemDownloadingErrorKey = "NSMetadataUbiquitousItemDownloadingErrorKey"
    /// Why the last upload failed, an `NSError`.
    public let NSMetadataUbiquitousItemUploadingErrorKey = "NSMetadataUbiquitousItemUploadingErrorKey"
    /// Whether a download of the item was asked for, an `NSNumber` holding a `Bool`.
    public let NSMetadataUbiquitousItemDownloadRequestedKey = "NSMetadataUbiquitousItemDownloadRequestedKey"
    /// Whether the item is outside the app's container, an `NSNumber` holding a `Bool`.
    public let NSMetadataUbiquitousItemIsExternalDocumentKey = "NSMetadataUbiquitousItemIsExternalDocumentKey"
    /// The name of the container the item is in, a `String`.
    public let NSMetadataUbiquitousItemContainerDisplayNameKey =
        "NSMetadataUbiquitousItemContainerDisplayNameKey"
#endif
