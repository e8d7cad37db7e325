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
    /// This is a plain directory scan; a live `DocumentQuery` takes its place once it exists.
    ///
    /// - Throws: ``DocumentKitError`` naming the container when it cannot be listed.
    public func entries() throws -> [TextContainerEntry] {
        guard let directory = opendir(url.path) else {
            throw DocumentKitError(Errno(rawValue: errno), operation: "list the container", url: url)
        }
        defer { closedir(directory) }
        let suffix = "." + Self.fileExtension
        var found: [TextContainerEntry] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard !name.hasPrefix("."), name.hasSuffix(suffix) else { continue }
            var info = stat()
            guard fstatat(dirfd(directory), name, &info, 0) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let seconds = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
            found.append(
                TextContainerEntry(
                    url: url.appendingPathComponent(name, isDirectory: false),
                    name: String(name.dropLast(suffix.count)), size: Int64(info.st_size),
                    modificationDate: Date(timeIntervalSince1970: seconds)))
        }
        return found.sorted {
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
