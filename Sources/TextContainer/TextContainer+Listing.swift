import DocumentKit
import Foundation

extension TextContainer {
    /// One document of the container as its folder lists it: nothing here opens the file.
    ///
    /// For example:
    ///
    /// ```swift
    /// for entry in try container.documents() {
    ///     print(entry.name, entry.size, entry.modificationDate)
    /// }
    /// ```
    public struct Entry: Sendable, Hashable {
        /// The file name, with its `.txt` extension; for a file in a folder of the container
        /// (``files()``), its path in the container.
        public var fileName: String
        /// The file's size in bytes.
        public var size: Int64
        /// The modification time: whole seconds since 1970.
        public var modificationSeconds: Int64
        /// The modification time: nanoseconds within the second.
        public var modificationNanoseconds: Int64
        /// The file's inode number: a safe save gives the document a new one.
        public var inode: UInt64
        /// Kept on the server only: a placeholder stands for it here, and ``size`` is the
        /// size on the server (`docs download NAME` brings it back).
        public var isOnServerOnly = false

        /// Creates an entry.
        public init(
            fileName: String, size: Int64, modificationSeconds: Int64, modificationNanoseconds: Int64,
            inode: UInt64
        ) {
            self.fileName = fileName
            self.size = size
            self.modificationSeconds = modificationSeconds
            self.modificationNanoseconds = modificationNanoseconds
            self.inode = inode
        }

        /// The name to show: a document's file name without `.txt`, any other file's path in
        /// the container, extension and all (`photo.jpg`, `Trips/map.pdf`).
        public var name: String { isDocument ? TextContainer.documentName(forFileName: fileName) : fileName }

        /// Whether it is one of the container's text documents (``documents()``), not another
        /// file that sync brought (``files()``).
        public var isDocument: Bool {
            TextContainer.isDocumentFileName(fileName) && !fileName.contains("/")
        }

        /// The modification date.
        public var modificationDate: Date {
            Date(
                timeIntervalSince1970: TimeInterval(modificationSeconds) + TimeInterval(
                    modificationNanoseconds) / 1e9)
        }
    }

    /// The name to show for a document file: its file name without the `.txt` extension.
    public static func documentName(forFileName fileName: String) -> String {
        let suffix = "." + fileExtension
        return fileName.hasSuffix(suffix) ? String(fileName.dropLast(suffix.count)) : fileName
    }

    /// Whether a file name is one of the container's documents: a `.txt` name that is not hidden.
    public static func isDocumentFileName(_ fileName: String) -> Bool {
        !fileName.hasPrefix(".") && fileName.hasSuffix("." + fileExtension)
            && fileName.count > fileExtension.count + 1
    }

    /// The documents in the container, sorted by file name: regular `.txt` files that are not
    /// hidden (a symbolic link counts as what it points to).
    ///
    /// This is one pass of `readdir` and one `statx` per entry, so that listing ten thousand
    /// documents costs about what `ls -l` does; no document is opened or coordinated.
    ///
    /// - Throws: ``DocumentKitError`` naming the container when it cannot be read.
    public func documents() throws -> [Entry] {
        try entries(inFolder: url, path: "", everyFile: false)
    }

    /// Every file of the container, sorted by path: its documents, and the files of any other
    /// kind that sync brought (a photo, a PDF), in the container and in its folders (by their
    /// path, `Trips/map.pdf`). Hidden files and folders are left out, as sync leaves them.
    ///
    /// One pass of `readdir` per folder and one `statx` per entry, as ``documents()``.
    ///
    /// - Throws: ``DocumentKitError`` naming the folder that cannot be read.
    public func files() throws -> [Entry] {
        try entries(inFolder: url, path: "", everyFile: true).sorted { $0.fileName < $1.fileName }
    }

    /// The entries of `folder` (at `path` in the container, "" for the container itself):
    /// its documents, or with `everyFile` every file not hidden, its folders' included.
    private func entries(inFolder folder: URL, path: String, everyFile: Bool) throws -> [Entry] {
        func wanted(_ name: String) -> Bool {
            everyFile ? !name.hasPrefix(".") : Self.isDocumentFileName(name)
        }
        var folders: [String] = []
        // A name that is not UTF-8 cannot be typed back as a document name: it is skipped.
        let listed = try DirectoryEntry.entries(
            ofFolderAt: folder, followingLinks: true, operation: "list the container"
        ) { entry in
            guard let name = entry.validName else { return false }
            if entry.kind == .directory {
                if everyFile && !name.hasPrefix(".") { folders.append(name) }
                return false
            }
            return wanted(name)
                || UbiquityPlaceholder.documentName(forPlaceholderName: name).map(wanted) == true
        }
        var entries: [Entry] = []
        var placeholders: [Entry] = []
        for (entry, status) in listed where status.isRegularFile {
            var found = Entry(
                fileName: path + entry.name, size: status.size,
                modificationSeconds: status.modification.seconds,
                modificationNanoseconds: Int64(status.modification.nanoseconds), inode: status.inode)
            if let document = UbiquityPlaceholder.documentName(forPlaceholderName: entry.name) {
                // A document kept on the server only: its placeholder says its size.
                guard
                    let placeholder = UbiquityPlaceholder(
                        contentsOf: folder.appendingPathComponent(entry.name))
                else { continue }
                found.fileName = path + document
                found.size = placeholder.size
                found.isOnServerOnly = true
                placeholders.append(found)
            } else {
                entries.append(found)
            }
        }
        // A placeholder beside its document (a download just arrived) stands for nothing.
        let present = Set(entries.map(\.fileName))
        entries += placeholders.filter { !present.contains($0.fileName) }
        entries.sort { $0.fileName < $1.fileName }
        for name in folders.sorted() {
            entries += try self.entries(
                inFolder: folder.appendingPathComponent(name, isDirectory: true), path: path + name + "/",
                everyFile: true)
        }
        return entries
    }

    /// The URL of the existing document called `name`.
    ///
    /// A document is found first by its exact name, whatever characters it holds (a newline,
    /// an escape, white space at either end): any file name but a hidden one is a name some
    /// program may have given a document, and it must be possible to name it back. Only then
    /// is `name` read as a name typed for a new document would be (surrounding white space
    /// dropped), so that a name no document can have is a usage error.
    ///
    /// For example:
    ///
    /// ```swift
    /// let url = try container.url(forExistingDocumentNamed: "two\nlines")   // …/two\nlines.txt
    /// ```
    ///
    /// - Throws: ``DocumentKitError`` `.invalidArgument` for a name that cannot be a document's,
    ///   `.fileNotFound` ("no such document in …") when there is none,
    ///   `.wrongFileType` when the name is a folder.
    public func url(forExistingDocumentNamed name: String) throws -> URL {
        let exact = Self.fileName(for: name)
        // A file name is any bytes but "/" and NUL, at most 255 of them.
        if Self.isDocumentFileName(exact),
            !exact.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "/") }),
            exact.utf8.count <= 255
        {
            let target = url.appendingPathComponent(exact)
            if Self.isRegularFile(atPath: target.path) { return target }
        }
        let target = try url(forDocumentNamed: name)
        let status: FileStatus
        switch Self.status(atPath: target.path) {
        case .success(let found): status = found
        case .failure(.noSuchFileOrDirectory):
            let onServer = Self.isRegularFile(atPath: UbiquityPlaceholder.placeholderURL(for: target).path)
            throw DocumentKitError(
                .fileNotFound, operation: "find the document", url: target, errno: .noSuchFileOrDirectory,
                detail: onServer
                    ? "it is kept on the server only; bring it back with docs download (or open it in ste)"
                    : "no such document in \(url.path)")
        case .failure(let error):
            throw DocumentKitError(error, operation: "find the document", url: target)
        }
        guard status.isRegularFile else {
            throw DocumentKitError(
                .wrongFileType, operation: "find the document", url: target,
                detail: "it is not a regular file")
        }
        return target
    }
}

extension TextContainer {
    /// The URL of the existing document or other file called `name`: a document by its name
    /// (``url(forExistingDocumentNamed:)``), else any file ``files()`` lists, by its path in
    /// the container (`photo.jpg`, `Trips/map.pdf`).
    ///
    /// - Throws: What ``url(forExistingDocumentNamed:)`` throws when `name` is no file's path
    ///   either: a path that leaves the container, or names a hidden file, is none.
    public func url(forExistingFileNamed name: String) throws -> URL {
        do {
            return try url(forExistingDocumentNamed: name)
        } catch {
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") }),
                !name.utf8.contains(0)
            else { throw error }
            let target = url.appendingPathComponent(name)
            guard Self.isRegularFile(atPath: target.path) else { throw error }
            return target
        }
    }
}
