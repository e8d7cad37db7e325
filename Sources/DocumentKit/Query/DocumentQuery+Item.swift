import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DocumentQuery {
    /// One result of a query: a file, package or symbolic link with its attributes, as
    /// `NSMetadataItem` gives them.
    ///
    /// An item is an immutable snapshot of the file's attributes. Equality is identity, as
    /// for `NSMetadataItem`: two items are equal (`==`, `isEqual(_:)`, the same `hash` and
    /// ``id``) when they are the same item. That holds across the file's changes and saves
    /// (a safe save replaces the file; it stays the same item), across a rename that a
    /// running query sees, and across gatherings: a query started again, another query of
    /// the same folder, and ``init(url:)`` all give an item equal to the one found before.
    /// A file deleted and created again while a query watches is a new item. To learn
    /// whether an item changed, compare its attributes.
    ///
    /// For example:
    ///
    /// ```swift
    /// for item in query.items {
    ///     print(item.fileName, item.fileSize, item.value(forAttribute: NSMetadataItemFSContentChangeDateKey) ?? "")
    /// }
    /// let changed = note.userInfo?[NSMetadataQueryUpdateChangedItemsKey] as? [NSMetadataItem] ?? []
    /// for item in changed { rows[rows.firstIndex(of: item)!] = item }
    /// ```
    public final class Item: NSObject, Identifiable, @unchecked Sendable {
        // Unchecked: every stored property is immutable or behind a Mutex; NSObject, which
        // Foundation does not mark Sendable, adds no state.

        /// The item's identity, which ``==`` compares: the same for the same item in every
        /// query of the process, across its changes, saves and renames.
        public let id: UInt64
        /// Whether the item is a package folder (its type is registered with `isPackage`):
        /// one item, never searched inside.
        public let isPackage: Bool
        /// Whether unresolved conflict versions of the item exist
        /// (`NSMetadataUbiquitousItemHasUnresolvedConflictsKey`).
        public let hasUnresolvedConflicts: Bool
        /// Where the item stands with its ubiquity container's remote; nil when it is in none.
        public let ubiquity: Ubiquity?
        /// The exact bytes of the item's path; `url` cannot name a file whose name is not UTF-8.
        let fileSystemPath: [UInt8]
        let nameStart: Int
        let status: FileStatus
        // URLs cost microseconds each to make: made when first asked for, not for every
        // item of a 10,000-item gathering.
        private let cache = Mutex<(url: URL?, name: String?)>((nil, nil))

        init(
            id: UInt64, fileSystemPath: [UInt8], status: FileStatus, isPackage: Bool,
            hasUnresolvedConflicts: Bool, ubiquity: Ubiquity? = nil
        ) {
            self.ubiquity = ubiquity
            self.id = id
            self.fileSystemPath = fileSystemPath
            self.nameStart = (fileSystemPath.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
            self.status = status
            self.isPackage = isPackage
            self.hasUnresolvedConflicts = hasUnresolvedConflicts
            super.init()
        }

        /// The item at `url`, with the attributes a query would report for it; nil when
        /// nothing is there or `url` is not a file URL.
        ///
        /// The item equals the one a query finds at the same place. A symbolic link is
        /// the link itself, never what it points to.
        public convenience init?(url: URL) {
            guard url.isFileURL, let path = Self.canonicalPath(of: url),
                case .success(let status) = Syscall.withCString(
                    path, { Syscall.fileStatus(AT_FDCWD, $0, followingLinks: false) })
            else { return nil }
            let name = path[((path.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1)...]
            var isPackage = false
            if status.isDirectory, let dot = name.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex {
                let types = FileTypes.shared
                let identifier = types.typeIdentifier(
                    forFilenameExtension: String(decoding: name[(dot + 1)...], as: UTF8.self))
                isPackage = types.type(withIdentifier: identifier)?.isPackage ?? false
            }
            let hasConflicts =
                VersionStore.shared.conflictLookup()?.contains(path: path, inode: status.inode) ?? false
            let id = Identities.shared.withLock { $0.identity(forPath: path) }
            self.init(
                id: id, fileSystemPath: path, status: status, isPackage: isPackage,
                hasUnresolvedConflicts: hasConflicts,
                ubiquity: UbiquityLookup.load().attributes(of: path, status: status))
        }

        /// The path a query reports for `url`: its folder with symbolic links resolved, as
        /// a query resolves its scopes, and its own name as it is.
        static func canonicalPath(of url: URL) -> [UInt8]? {
            let path = DirectoryWatcher.fileSystemPath(of: url)
            guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return nil }
            let name = Array(path[(slash + 1)...])
            if name.isEmpty || name == [0x2E] || name == [0x2E, 0x2E] { return realPath(path) }
            guard let folder = realPath(slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash])) else {
                return nil
            }
            return DirectoryWatcher.State.join(folder, name)
        }

        private static func realPath(_ path: [UInt8]) -> [UInt8]? {
            try? Syscall.realPath(path).get()
        }

        /// Whether `other` holds the same attributes: what tells a changed item from an
        /// unchanged one, since ``==`` compares identity only.
        func hasSameAttributes(as other: Item) -> Bool {
            id == other.id && fileSystemPath == other.fileSystemPath && status == other.status
                && isPackage == other.isPackage && hasUnresolvedConflicts == other.hasUnresolvedConflicts
                && ubiquity == other.ubiquity
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

        /// The item's type and every type it conforms to (`NSMetadataItemContentTypeTreeKey`),
        /// the item's own first.
        public var contentTypeTree: [String] { Self.typeTree(of: contentType) }

        /// `identifier` and every type it conforms to, through ``FileTypes/shared``.
        static func typeTree(of identifier: String) -> [String] {
            var tree = [identifier]
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

        /// The names of the attributes the item has a value for, the keys
        /// ``value(forAttribute:)`` answers.
        public var attributes: [String] {
            var names = [
                NSMetadataItemFSNameKey, NSMetadataItemDisplayNameKey, NSMetadataItemURLKey,
                NSMetadataItemPathKey, NSMetadataItemFSSizeKey,
            ]
            if status.birth != nil { names.append(NSMetadataItemFSCreationDateKey) }
            names += [
                NSMetadataItemFSContentChangeDateKey, NSMetadataItemContentTypeKey,
                NSMetadataItemContentTypeTreeKey, NSMetadataUbiquitousItemHasUnresolvedConflictsKey,
                NSMetadataItemIsUbiquitousKey,
            ]
            return names + ubiquitousAttributes
        }

        /// The value of one of Apple's metadata attributes, such as ``NSMetadataItemFSNameKey``,
        /// or nil for an attribute the item does not have.
        ///
        /// Values have Apple's types: `String` for names, paths and types, `URL`, `NSNumber`
        /// for the size and for flags, `Date`, and `[String]` for the content type tree.
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
            default: return ubiquitousValue(forAttribute: key)
            }
        }

        /// The values of several attributes by name, leaving out those the item has no
        /// value for. Never nil; optional as Apple's is.
        public func values(forAttributes keys: [String]) -> [String: Any]? {
            var values: [String: Any] = [:]
            for key in keys { values[key] = value(forAttribute: key) }
            return values
        }

        /// Whether `object` is the same item; see ``Item`` for what that means.
        public override func isEqual(_ object: Any?) -> Bool {
            guard let other = object as? Item else { return false }
            return other.id == id
        }

        /// The hash of the item's identity: equal items have equal hashes.
        public override var hash: Int { Int(truncatingIfNeeded: id) }

        public override var description: String {
            "DocumentQuery.Item(\(id), \(path), \(fileSize) bytes\(isPackage ? ", package" : ""))"
        }
    }
}

/// The Swift-native name for a query result.
public typealias MetadataItem = DocumentQuery.Item
