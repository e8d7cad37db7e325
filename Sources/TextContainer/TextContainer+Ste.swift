import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One document of a ``TextContainer`` as `ste`'s list shows it.
public struct TextContainerEntry: Sendable, Hashable {
    /// The document's file.
    public var url: URL
    /// The name to show: the file name without `.txt`.
    public var name: String
    /// The size of the file in bytes.
    public var size: Int64
    /// When the file was last modified.
    public var modificationDate: Date
    /// Whether unresolved conflict versions of the document exist, as the query last saw.
    public var hasUnresolvedConflicts: Bool
    /// The query's identity of the document, which a rename keeps; nil when the entry did not
    /// come from a query.
    public var itemID: UInt64?
    /// Where the document stands with the container's remote; nil when the container is not
    /// a ubiquity container (or the entry did not come from a query).
    public var sync: SyncMark?

    /// A document's sync state, as the list shows it in one cell.
    public enum SyncMark: Sendable, Hashable {
        /// On the remote as it is here.
        case synced
        /// Changed here, waiting for or in its upload, with the percent of one under way.
        case uploading(percent: Double?)
        /// A newer version is on the remote, waiting for or in its download.
        case downloading(percent: Double?)
        /// Kept on the server only, with a placeholder here.
        case onServerOnly
        /// The last upload or download failed; the agent tries again.
        case error(String)

        /// The one-cell mark: blank when synced.
        public var symbol: String {
            switch self {
            case .synced: return " "
            case .uploading: return "↑"
            case .downloading: return "↓"
            case .onServerOnly: return "☁"
            case .error: return "×"
            }
        }

        /// The mark of a query item, from its ubiquitous attributes.
        public init?(_ ubiquity: DocumentQuery.Item.Ubiquity?) {
            guard let state = ubiquity?.state else { return nil }
            if let error = state.uploadError ?? state.downloadError {
                self = .error(error)
            } else if state.isOnServerOnly {
                self = .onServerOnly
            } else if state.isDownloading {
                self = .downloading(percent: state.percent)
            } else if !state.isUploaded {
                self = .uploading(percent: state.isUploading ? state.percent : nil)
            } else {
                self = .synced
            }
        }
    }

    /// Creates an entry.
    public init(
        url: URL, name: String, size: Int64, modificationDate: Date, hasUnresolvedConflicts: Bool = false,
        itemID: UInt64? = nil, sync: SyncMark? = nil
    ) {
        self.sync = sync
        self.url = url
        self.name = name
        self.size = size
        self.modificationDate = modificationDate
        self.hasUnresolvedConflicts = hasUnresolvedConflicts
        self.itemID = itemID
    }
}

extension TextContainer {
    /// A live query of the container's documents, newest first: the documents that
    /// ``documents()`` lists, kept current through inotify.
    ///
    /// For example:
    ///
    /// ```swift
    /// let query = container.documentQuery()
    /// let snapshots = query.snapshots()
    /// guard query.start() else { throw query.lastError! }
    /// for await snapshot in snapshots { show(container.entries(for: snapshot.results)) }
    /// ```
    public func documentQuery() -> DocumentQuery {
        let query = DocumentQuery()
        query.searchScopes = [url]
        query.fileNamePattern = "*." + Self.fileExtension
        // The query searches subfolders and reports links as themselves; the container's
        // documents are the regular files directly in it. The query's items are under the
        // folder's real path.
        let folder = url.resolvingSymlinksInPath().path
        query.predicate = NSPredicate { item in
            let name = item.fileName
            // A name that is not UTF-8 reads with U+FFFD and cannot be typed back: skipped,
            // as ``documents()`` skips it.
            guard Self.isDocumentFileName(name), !name.contains("\u{FFFD}"), !item.isDirectory,
                item.path == folder + "/" + name
            else { return false }
            return !item.isSymbolicLink || Self.isRegularFile(atPath: item.path)
        }
        query.sortDescriptors = [.init(.modificationDate, ascending: false), .init(.fileName)]
        return query
    }

    /// The list entries for ``documentQuery()``'s results, in the query's order, newest
    /// first.
    public func entries(for results: [DocumentQuery.Item]) -> [TextContainerEntry] {
        let entries = results.map(entry(for:))
        // The query orders a link by its own date; the list shows its target's.
        guard results.contains(where: \.isSymbolicLink) else { return entries }
        return entries.sorted(by: Self.isNewer)
    }

    /// Whether `a` comes before `b` in the list: newer first, then by name.
    public static func isNewer(_ a: TextContainerEntry, _ b: TextContainerEntry) -> Bool {
        a.modificationDate != b.modificationDate ? a.modificationDate > b.modificationDate : a.name < b.name
    }

    /// The list entry for one of ``documentQuery()``'s results.
    public func entry(for item: DocumentQuery.Item) -> TextContainerEntry {
        var size = Int64(item.fileSize)
        var modified = item.modificationDate
        if item.isSymbolicLink, let target = try? Self.status(atPath: item.path).get() {
            // A link counts as what it points to, as in ``documents()``.
            size = target.size
            modified = target.modification.date
        }
        return TextContainerEntry(
            url: url.appendingPathComponent(item.fileName, isDirectory: false),
            name: Self.documentName(forFileName: item.fileName), size: size, modificationDate: modified,
            hasUnresolvedConflicts: item.hasUnresolvedConflicts, itemID: item.id,
            sync: TextContainerEntry.SyncMark(item.ubiquity))
    }

    /// The entry for the document at `documentURL`, from one `stat`; nil when it is not a
    /// regular file there.
    public func entry(at documentURL: URL) -> TextContainerEntry? {
        guard let status = try? Self.status(atPath: documentURL.path).get(), status.isRegularFile
        else {
            return nil
        }
        return TextContainerEntry(
            url: documentURL, name: Self.documentName(forFileName: documentURL.lastPathComponent),
            size: status.size, modificationDate: status.modification.date)
    }

    /// The container's documents, newest first: every regular `.txt` file that is not hidden.
    ///
    /// One scan, as ``documents()`` makes; ``documentQuery()`` keeps the same list live.
    ///
    /// - Throws: ``DocumentKitError`` naming the container when it cannot be listed.
    public func entries() throws -> [TextContainerEntry] {
        // One listing serves both apps: ``documents()``, ordered here newest first.
        try documents().map { entry in
            TextContainerEntry(
                url: url.appendingPathComponent(entry.fileName, isDirectory: false), name: entry.name,
                size: entry.size, modificationDate: entry.modificationDate)
        }
        .sorted(by: Self.isNewer)
    }

    /// The status of what `path` names, following a symbolic link: the one `stat` of the
    /// container's code, for the listing, the lookup by name and the list's entries.
    static func status(atPath path: String) -> Result<FileStatus, Errno> {
        Syscall.fileStatus(atPath: path, followingLinks: true)
    }

    static func isRegularFile(atPath path: String) -> Bool {
        (try? status(atPath: path).get())?.isRegularFile ?? false
    }

    /// Moves the document at `documentURL` to the desktop's trash (see
    /// ``deleteDocument(named:)``): the editor holds a URL rather than a name.
    ///
    /// - Returns: Where the document is now, in the trash.
    /// - Throws: ``DocumentKitError`` naming the file.
    @discardableResult
    public static func moveToTrash(_ documentURL: URL) throws -> URL {
        let container = try TextContainer(path: documentURL.deletingLastPathComponent().path)
        return try container.deleteDocument(named: documentName(forFileName: documentURL.lastPathComponent))
    }

    /// Renames the document at `documentURL` to `newName` (see ``renameDocument(named:to:)``);
    /// renaming to its own name does nothing.
    ///
    /// - Returns: The new URL.
    /// - Throws: ``DocumentKitError``: an invalid name, a name already taken, or the rename's errno.
    @discardableResult
    public func renameDocument(at documentURL: URL, to newName: String) throws -> URL {
        let target = try url(forDocumentNamed: newName)
        if target.standardizedFileURL == documentURL.standardizedFileURL { return target }
        return try renameDocument(
            named: Self.documentName(forFileName: documentURL.lastPathComponent), to: newName)
    }
}
