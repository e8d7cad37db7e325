import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One document of a ``TextContainer`` as a directory listing sees it.
public struct TextContainerEntry: Sendable, Hashable {
    /// The document's file.
    public var url: URL
    /// The name to show: the file name without `.txt`.
    public var name: String
    /// The size of the file in bytes.
    public var size: Int64
    /// When the file was last modified.
    public var modificationDate: Date
}

extension TextContainer {
    /// The container's documents, newest first: every regular `.txt` file that is not hidden.
    ///
    /// The same scan as ``documents()``; a live `DocumentQuery` is meant to take its place.
    ///
    /// - Throws: ``DocumentKitError`` naming the container when it cannot be listed.
    public func entries() throws -> [TextContainerEntry] {
        // One listing serves both apps: ``documents()``, ordered here newest first.
        try documents().map { entry in
            TextContainerEntry(
                url: url.appendingPathComponent(entry.fileName, isDirectory: false), name: entry.name,
                size: entry.size,
                modificationDate: Date(
                    timeIntervalSince1970: Double(entry.modificationSeconds)
                        + Double(entry.modificationNanoseconds) / 1e9))
        }
        .sorted {
            $0.modificationDate != $1.modificationDate
                ? $0.modificationDate > $1.modificationDate : $0.name < $1.name
        }
    }

    /// Moves the document at `documentURL` into ``deletedDocumentsFolder`` (see
    /// ``deleteDocument(named:)``): the editor holds a URL rather than a name.
    ///
    /// - Returns: Where the document is now.
    /// - Throws: ``DocumentKitError`` naming the file.
    @discardableResult
    public static func moveToDeleted(_ documentURL: URL) throws -> URL {
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
        return try renameDocument(named: Self.documentName(forFileName: documentURL.lastPathComponent), to: newName)
    }
}
