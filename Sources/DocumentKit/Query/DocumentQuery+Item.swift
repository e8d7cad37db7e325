import Foundation
import Synchronization

extension DocumentQuery {
    /// One result of a query: a file, package or symbolic link with its attributes, as
    /// `NSMetadataItem` gives them.
    ///
    /// An item is an immutable snapshot. When the file changes, the query's results hold a
    /// new item with the same ``id``; a renamed file keeps its ``id`` and gets a new ``url``.
    ///
    /// For example:
    ///
    /// ```swift
    /// for item in query.results {
    ///     print(item.fileName, item.fileSize, item.value(forAttribute: NSMetadataItemFSContentChangeDateKey) ?? "")
    /// }
    /// ```
    public final class Item: Sendable, Identifiable, Hashable, CustomStringConvertible {
        /// Identifies the item across its changes and renames for as long as the query runs.
        public let id: UInt64
        /// Whether the item is a package folder (its type is registered with `isPackage`):
        /// one item, never searched inside.
        public let isPackage: Bool
        /// Whether unresolved conflict versions of the item exist
        /// (`NSMetadataUbiquitousItemHasUnresolvedConflictsKey`).
        public let hasUnresolvedConflicts: Bool
        /// The exact bytes of the item's path; `url` cannot name a file whose name is not UTF-8.
        let fileSystemPath: [UInt8]
        let nameStart: Int
        let status: FileStatus
        // URLs cost microseconds each to make: made when first asked for, not for every
        // item of a 10,000-item gathering.
        private let cache = Mutex<(url: URL?, name: String?)>((nil, nil))

        init(
            id: UInt64, fileSystemPath: [UInt8], status: FileStatus, isPackage: Bool,
            hasUnresolvedConflicts: Bool
        ) {
            self.id = id
            self.fileSystemPath = fileSystemPath
            self.nameStart = (fileSystemPath.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
            self.status = status
            self.isPackage = isPackage
            self.hasUnresolvedConflicts = hasUnresolvedConflicts
        }

        /// The item with a new identity and everything else the same.
        func with(id: UInt64) -> Item {
            Item(
                id: id, fileSystemPath: fileSystemPath, status: status, isPackage: isPackage,
                hasUnresolvedConflicts: hasUnresolvedConflicts)
        }

        var nameBytes: ArraySlice<UInt8> { fileSystemPath[nameStart...] }

        /// The item's location (`NSMetadataItemURLKey`).
        public var url: URL {
            if let url = cache.withLock({ $0.url }) { return url }
            let url = DirectoryWatcher.url(for: fileSystemPath, isDirectory: status.isDirectory)
            cache.withLock { $0.url = url }
            return url
        }

        /// The item's path (`NSMetadataItemPathKey`).
        public var path: String { String(decoding: fileSystemPath, as: UTF8.self) }

        /// The item's name on disk, with its extension (`NSMetadataItemFSNameKey`). Bytes
        /// that are not UTF-8 read as U+FFFD.
        public var fileName: String {
            if let name = cache.withLock({ $0.name }) { return name }
            let name = String(decoding: nameBytes, as: UTF8.self)
            cache.withLock { $0.name = name }
            return name
        }

        /// The name shown to people: the file name without its extension
        /// (`NSMetadataItemDisplayNameKey`).
        public var displayName: String {
            let name = fileName
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
            return String(name[..<dot])
        }

        /// The file name extension, without the dot; empty when there is none.
        var filenameExtension: String {
            let name = fileName
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
            return String(name[name.index(after: dot)...])
        }

        /// The size in bytes: of the file, of the link itself, or of the folder entry for a
        /// package (`NSMetadataItemFSSizeKey`).
        public var fileSize: Int { Int(status.size) }

        /// When the item was created (`NSMetadataItemFSCreationDateKey`), where the file
        /// system records it (`statx` birth time); nil elsewhere.
        public var creationDate: Date? { status.birth?.date }

        /// When the item's contents last changed (`NSMetadataItemFSContentChangeDateKey`).
        public var modificationDate: Date { status.modification.date }

        /// Whether the item is a folder; true for a package.
        public var isDirectory: Bool { status.isDirectory }

        /// Whether the item is a symbolic link. A query reports a link as an item and never
        /// follows it.
        public var isSymbolicLink: Bool { status.isSymbolicLink }

        /// The uniform type identifier (`NSMetadataItemContentTypeKey`): from the extension
        /// through ``FileTypes/shared`` for files and packages, `public.folder` for folders,
        /// `public.symlink` for links.
        public var contentType: String {
            if status.isSymbolicLink { return "public.symlink" }
            if status.isDirectory && !isPackage { return "public.folder" }
            return FileTypes.shared.typeIdentifier(forFilenameExtension: filenameExtension)
        }

        /// The attribute names ``value(forAttribute:)`` answers.
        public var attributes: [String] {
            [
                NSMetadataItemFSNameKey, NSMetadataItemDisplayNameKey, NSMetadataItemURLKey,
                NSMetadataItemPathKey,
                NSMetadataItemFSSizeKey, NSMetadataItemFSCreationDateKey,
                NSMetadataItemFSContentChangeDateKey,
                NSMetadataItemContentTypeKey, NSMetadataItemContentTypeTreeKey,
                NSMetadataUbiquitousItemHasUnresolvedConflictsKey,
            ]
        }

        /// The value of one of Apple's metadata attributes, such as ``NSMetadataItemFSNameKey``,
        /// or nil for an attribute the item does not have.
        public func value(forAttribute key: String) -> Any? {
            switch key {
            case NSMetadataItemFSNameKey: return fileName
            case NSMetadataItemDisplayNameKey: return displayName
            case NSMetadataItemURLKey: return url
            case NSMetadataItemPathKey: return path
            case NSMetadataItemFSSizeKey: return NSNumber(value: fileSize)
            case NSMetadataItemFSCreationDateKey: return creationDate
            case NSMetadataItemFSContentChangeDateKey: return modificationDate
            case NSMetadataItemContentTypeKey: return contentType
            case NSMetadataItemContentTypeTreeKey: return contentTypeTree
            case NSMetadataUbiquitousItemHasUnresolvedConflictsKey:
                return NSNumber(value: hasUnresolvedConflicts)
            default: return nil
            }
        }

        /// The values of several attributes, leaving out those the item does not have.
        public func values(forAttributes keys: [String]) -> [String: Any] {
            var values: [String: Any] = [:]
            for key in keys { values[key] = value(forAttribute: key) }
            return values
        }

        private var contentTypeTree: [String] {
            var tree = [contentType]
            var index = 0
            while index < tree.count {
                for parent in FileTypes.shared.type(withIdentifier: tree[index])?.conformsTo ?? []
                where !tree.contains(parent) {
                    tree.append(parent)
                }
                index += 1
            }
            return tree
        }

        public static func == (a: Item, b: Item) -> Bool {
            a.id == b.id && a.fileSystemPath == b.fileSystemPath && a.status == b.status
                && a.isPackage == b.isPackage && a.hasUnresolvedConflicts == b.hasUnresolvedConflicts
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(fileSystemPath)
            hasher.combine(status)
        }

        public var description: String {
            "DocumentQuery.Item(\(id), \(path), \(fileSize) bytes\(isPackage ? ", package" : ""))"
        }
    }
}

#if !canImport(Darwin)
    /// Foundation's name for a query result, so that code written for Apple platforms ports unchanged.
    public typealias NSMetadataItem = DocumentQuery.Item
#endif
/// The Swift-native name for a query result.
public typealias MetadataItem = DocumentQuery.Item

#if !canImport(Darwin)
    // Apple's attribute names, with Apple's values, for `value(forAttribute:)`.

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
#endif
