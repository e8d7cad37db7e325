import Foundation

extension DocumentQuery {
    /// The query's results at one moment and what changed since the previous snapshot, for
    /// ``DocumentQuery/snapshots()``.
    public struct Snapshot: Sendable {
        /// Every result, sorted by the query's sort descriptors.
        public var results: [Item]
        /// Items that joined the results. The first snapshot lists every result here.
        public var added: [Item]
        /// Items whose attributes, contents or location changed; a renamed item is here with
        /// its new URL and its old ``Item/id``.
        public var changed: [Item]
        /// Items that left the results, as they were last reported.
        public var removed: [Item]
    }

    /// The `userInfo` key of a did-update notification's added items, an `[Item]`.
    public static let updateAddedItemsKey = "kMDQueryUpdateAddedItems"
    /// The `userInfo` key of a did-update notification's changed items, an `[Item]`.
    public static let updateChangedItemsKey = "kMDQueryUpdateChangedItems"
    /// The `userInfo` key of a did-update notification's removed items, an `[Item]`.
    public static let updateRemovedItemsKey = "kMDQueryUpdateRemovedItems"

    /// Posted when ``start()`` begins gathering.
    public static let didStartGatheringNotification = Notification.Name(
        "NSMetadataQueryDidStartGatheringNotification")
    /// Posted when the initial gathering is done and ``results`` hold what it found.
    public static let didFinishGatheringNotification = Notification.Name(
        "NSMetadataQueryDidFinishGatheringNotification")
    /// Posted when results changed after gathering, with the added, changed and removed
    /// items in `userInfo`.
    public static let didUpdateNotification = Notification.Name("NSMetadataQueryDidUpdateNotification")
}

/// The Swift-native name for ``DocumentQuery``.
public typealias MetadataQuery = DocumentQuery
