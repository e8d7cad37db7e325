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

    /// Where deleted documents go so that a deletion can be undone by hand:
    /// `Deleted` in the Simple Text Editor's application data folder.
    public static func deletedDocumentsFolder(directories: StandardDirectories = .current) -> URL {
        directories.applicationSupport(for: "Simple Text Editor").appendingPathComponent("Deleted", isDirectory: true)
    }

    /// Moves the document at `documentURL` into ``deletedDocumentsFolder(directories:)``
    /// under a coordinated write, rather than unlinking it; a name already taken there gets
    /// the date and time added.
    ///
    /// - Returns: Where the document is now.
    /// - Throws: ``DocumentKitError`` naming the file.
    @discardableResult
    public static func moveToDeleted(
        _ documentURL: URL, directories: StandardDirectories = .current, now: Date = Date()
    ) throws -> URL {
        let folder = deletedDocumentsFolder(directories: directories)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw DocumentKitError(
                .ioFailure, operation: "make the folder of deleted documents", url: folder,
                detail: "\(error.localizedDescription)")
        }
        var target = folder.appendingPathComponent(documentURL.lastPathComponent)
        if FileManager.default.fileExists(atPath: target.path) {
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
            let base = documentURL.deletingPathExtension().lastPathComponent
            target = folder.appendingPathComponent("\(base) (deleted \(formatter.string(from: now))).\(documentURL.pathExtension)")
        }
        let destination = target
        try FileCoordinator().coordinate(
            writingItemAt: documentURL, options: .forMoving, writingItemAt: destination, options: .forReplacing
        ) { from, to in
            if rename(from.path, to.path) != 0 {
                let code = errno
                // Another file system: copy, then remove the original.
                guard code == EXDEV else {
                    throw DocumentKitError(Errno(rawValue: code), operation: "delete the document", url: from)
                }
                do {
                    try FileManager.default.copyItem(at: from, to: to)
                    try FileManager.default.removeItem(at: from)
                } catch {
                    throw DocumentKitError(
                        .ioFailure, operation: "delete the document", url: from, detail: "\(error.localizedDescription)")
                }
            }
        }
        return destination
    }

    /// Renames the document at `documentURL` to `newName` (validated as
    /// ``validatedName(_:)`` does) under a coordinated move, so that a document presenting
    /// the file follows it.
    ///
    /// - Returns: The new URL.
    /// - Throws: ``DocumentKitError``: an invalid name, a name already taken, or the rename's errno.
    @discardableResult
    public func renameDocument(at documentURL: URL, to newName: String) throws -> URL {
        let target = try url(forDocumentNamed: newName)
        if target.standardizedFileURL == documentURL.standardizedFileURL { return target }
        if FileManager.default.fileExists(atPath: target.path) {
            throw DocumentKitError(.fileExists, operation: "rename the document", url: target, errno: .fileExists)
        }
        let coordinator = FileCoordinator()
        try coordinator.coordinate(
            writingItemAt: documentURL, options: .forMoving, writingItemAt: target, options: .forReplacing
        ) { from, to in
            coordinator.item(at: from, willMoveTo: to)
            guard rename(from.path, to.path) == 0 else {
                throw DocumentKitError(Errno(rawValue: errno), operation: "rename the document", url: from)
            }
            coordinator.item(at: from, didMoveTo: to)
        }
        return target
    }
}
