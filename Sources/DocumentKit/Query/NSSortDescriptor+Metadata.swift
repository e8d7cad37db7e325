import Foundation

extension DocumentQuery {
    /// A Swift description of how to order results: by one attribute, ascending or
    /// descending. ``DocumentQuery/sortDescriptors`` holds `NSSortDescriptor`s made from it.
    ///
    /// For example:
    ///
    /// ```swift
    /// query.sortDescriptors = [.init(.modificationDate, ascending: false), .init(.fileName)]
    /// let descriptors: [DocumentQuery.SortDescriptor] = [.init(.fileSize)]
    /// query.sortDescriptors = descriptors.map(NSSortDescriptor.init)
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

    /// One sort descriptor as the engine applies it: an attribute it compares itself, or any
    /// other descriptor, asked through `compare(_:to:)` on the query's private queue.
    enum Ordering: Sendable {
        case attribute(SortDescriptor.Key, ascending: Bool)
        case descriptor(Unchecked<NSSortDescriptor>)

        init(_ descriptor: NSSortDescriptor) {
            if let key = Item.sortKey(of: descriptor.keyPath) {
                self = .attribute(key, ascending: descriptor.ascending)
            } else {
                self = .descriptor(Unchecked(value: descriptor))
            }
        }
    }
}

extension DocumentQuery.Item {
    // Key paths that only DocumentKit can form: a descriptor with one of them was made by
    // `NSSortDescriptor(metadataKey:ascending:)` with its own comparator, so the engine may
    // compare the attribute itself, without boxing.
    var orderedByFileName: DocumentQuery.Item { self }
    var orderedByModificationDate: DocumentQuery.Item { self }
    var orderedByCreationDate: DocumentQuery.Item { self }
    var orderedByFileSize: DocumentQuery.Item { self }
    var orderedByPath: DocumentQuery.Item { self }

    static func keyPath(orderingBy key: DocumentQuery.SortDescriptor.Key) -> KeyPath<
        DocumentQuery.Item, DocumentQuery.Item
    > {
        switch key {
        case .fileName: return \.orderedByFileName
        case .modificationDate: return \.orderedByModificationDate
        case .creationDate: return \.orderedByCreationDate
        case .fileSize: return \.orderedByFileSize
        case .path: return \.orderedByPath
        }
    }

    static func sortKey(of keyPath: AnyKeyPath) -> DocumentQuery.SortDescriptor.Key? {
        for key in [
            DocumentQuery.SortDescriptor.Key.fileName, .modificationDate, .creationDate, .fileSize, .path,
        ]
        where keyPath == self.keyPath(orderingBy: key) {
            return key
        }
        return nil
    }

    /// Any attribute's value, for a sort descriptor's key path.
    subscript(metadataAttribute key: String) -> AttributeValue {
        AttributeValue(value: value(forAttribute: key))
    }

    /// An attribute value as a sort descriptor's key path gives it to the comparator.
    struct AttributeValue {
        var value: Any?
    }
}

extension NSSortDescriptor {
    /// Creates a descriptor that orders query results by one of Apple's metadata attributes:
    /// the port of `NSSortDescriptor(key:ascending:)`, which Foundation on Linux does not have.
    ///
    /// For example:
    ///
    /// ```swift
    /// query.sortDescriptors = [
    ///     NSSortDescriptor(metadataKey: NSMetadataItemFSContentChangeDateKey, ascending: false),
    ///     NSSortDescriptor(metadataKey: NSMetadataItemFSNameKey, ascending: true),
    /// ]
    /// ```
    ///
    /// Names (`NSMetadataItemFSNameKey`) compare ASCII letters without regard to case, then
    /// byte by byte; sizes and dates as numbers and dates; paths and URLs byte by byte; an
    /// item without the attribute (no creation date) comes first in ascending order. Other
    /// attributes compare by value: strings as Swift orders them, numbers, dates. The query
    /// compares names, dates, sizes and paths itself, without boxing their values.
    ///
    /// `NSSortDescriptor(keyPath:ascending:)` over ``DocumentQuery/Item`` properties works
    /// too (`\NSMetadataItem.displayName`), through `compare(_:to:)`.
    public convenience init(metadataKey key: String, ascending: Bool) {
        let fast: DocumentQuery.SortDescriptor.Key?
        switch key {
        case NSMetadataItemFSNameKey: fast = .fileName
        case NSMetadataItemFSContentChangeDateKey: fast = .modificationDate
        case NSMetadataItemFSCreationDateKey: fast = .creationDate
        case NSMetadataItemFSSizeKey: fast = .fileSize
        case NSMetadataItemPathKey, NSMetadataItemURLKey: fast = .path
        default: fast = nil
        }
        if let fast {
            self.init(fast, ascending: ascending)
        } else {
            self.init(metadataKey: key, ascending: ascending) { a, b in
                let x = MetadataValue(MetadataValue.unwrapped(a)) ?? .null
                let y = MetadataValue(MetadataValue.unwrapped(b)) ?? .null
                return x.sortOrder(y)
            }
        }
    }

    /// Creates a descriptor that orders query results by one of Apple's metadata attributes
    /// with a comparator of its values: the port of `NSSortDescriptor(key:ascending:comparator:)`.
    ///
    /// The comparator gets the attribute's values as ``DocumentQuery/Item/value(forAttribute:)``
    /// gives them, and `NSNull` for an item without the attribute. It runs on the query's
    /// private queue. For example, the port of a descriptor with the selector
    /// `localizedStandardCompare(_:)`:
    ///
    /// ```swift
    /// NSSortDescriptor(metadataKey: NSMetadataItemDisplayNameKey, ascending: true) {
    ///     ($0 as! String).localizedStandardCompare($1 as! String)
    /// }
    /// ```
    public convenience init(
        metadataKey key: String, ascending: Bool, comparator: @escaping (Any, Any) -> ComparisonResult
    ) {
        self.init(keyPath: \DocumentQuery.Item.[metadataAttribute: key], ascending: ascending) { a, b in
            comparator(
                (a as? DocumentQuery.Item.AttributeValue)?.value ?? NSNull(),
                (b as? DocumentQuery.Item.AttributeValue)?.value ?? NSNull())
        }
    }

    /// Creates a descriptor from a Swift one: `query.sortDescriptors = [.init(.fileName)]`.
    public convenience init(_ key: DocumentQuery.SortDescriptor.Key, ascending: Bool = true) {
        self.init(keyPath: DocumentQuery.Item.keyPath(orderingBy: key), ascending: ascending) { a, b in
            guard let a = a as? DocumentQuery.Item, let b = b as? DocumentQuery.Item else {
                return .orderedSame
            }
            let order = DocumentQuery.Model.compare(a, b, by: key)
            return order < 0 ? .orderedAscending : (order == 0 ? .orderedSame : .orderedDescending)
        }
    }

    /// Creates a descriptor from a Swift one.
    public convenience init(_ descriptor: DocumentQuery.SortDescriptor) {
        self.init(descriptor.key, ascending: descriptor.ascending)
    }
}
