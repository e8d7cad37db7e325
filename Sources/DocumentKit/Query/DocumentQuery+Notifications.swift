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

    /// How to order results: by one attribute, ascending or descending.
    ///
    /// For example:
    ///
    /// ```swift
    /// query.sortDescriptors = [.init(.modificationDate, ascending: false), .init(.fileName)]
    /// ```
    public struct SortDescriptor: Sendable, Hashable {
        /// The attribute to order by.
        public enum Key: Sendable, Hashable {
            /// The file name, comparing ASCII letters without regard to case, then bytes.
            case fileName
            case modificationDate
            /// The creation date; items without one come first in ascending order.
            case creationDate
            case fileSize
            /// The full path, byte by byte.
            case path
        }

        public var key: Key
        public var ascending: Bool

        public init(_ key: Key, ascending: Bool = true) {
            self.key = key
            self.ascending = ascending
        }

        /// A descriptor for one of Apple's attribute names (`NSMetadataItemFSNameKey`,
        /// `NSMetadataItemFSContentChangeDateKey`, `NSMetadataItemFSCreationDateKey`,
        /// `NSMetadataItemFSSizeKey`, `NSMetadataItemPathKey`), as `NSSortDescriptor(key:ascending:)`
        /// names it; nil for an attribute the query cannot sort by.
        public init?(key: String, ascending: Bool = true) {
            switch key {
            case NSMetadataItemFSNameKey, NSMetadataItemDisplayNameKey:
                self.init(.fileName, ascending: ascending)
            case NSMetadataItemFSContentChangeDateKey: self.init(.modificationDate, ascending: ascending)
            case NSMetadataItemFSCreationDateKey: self.init(.creationDate, ascending: ascending)
            case NSMetadataItemFSSizeKey: self.init(.fileSize, ascending: ascending)
            case NSMetadataItemPathKey, NSMetadataItemURLKey: self.init(.path, ascending: ascending)
            default: return nil
            }
        }
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

#if !canImport(Darwin)
    extension Notification.Name {
        /// Posted when a ``DocumentQuery`` begins gathering; the object is the query.
        public static let NSMetadataQueryDidStartGathering = DocumentQuery.didStartGatheringNotification
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

    /// Foundation's name for ``DocumentQuery``, so that code written for Apple platforms ports unchanged.
    public typealias NSMetadataQuery = DocumentQuery
#endif
/// The Swift-native name for ``DocumentQuery``.
public typealias MetadataQuery = DocumentQuery
