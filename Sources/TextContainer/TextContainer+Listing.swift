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
        /// The file name, with its `.txt` extension.
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

        /// The name to show: the file name without `.txt`.
        public var name: String { TextContainer.documentName(forFileName: fileName) }

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
        // A name that is not UTF-8 cannot be typed back as a document name: it is skipped.
        let listed = try DirectoryEntry.entries(
            ofFolderAt: url, followingLinks: true, operation: "list the container"
        ) { entry in
            guard entry.kind != .directory, let name = entry.validName else { return false }
            return Self.isDocumentFileName(name)
                || UbiquityPlaceholder.documentName(forPlaceholderName: name).map(Self.isDocumentFileName)
                    == true
        }
        var entries: [Entry] = []
        var placeholders: [Entry] = []
        for (entry, status) in listed where status.isRegularFile {
            var found = Entry(
                fileName: entry.name, size: status.size, modificationSeconds: status.modification.seconds,
                modificationNanoseconds: Int64(status.modification.nanoseconds), inode: status.inode)
            if let document = UbiquityPlaceholder.documentName(forPlaceholderName: entry.name) {
                // A document kept on the server only: its placeholder says its size.
                guard
                    let placeholder = UbiquityPlaceholder(contentsOf: url.appendingPathComponent(entry.name))
                else { continue }
                found.fileName = document
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
