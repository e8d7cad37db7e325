#if !canImport(ObjectiveC)
    import Foundation

    /// A representation of a node (a file, directory, or symbolic link) in the file system.
    ///
    /// This is Apple's `FileWrapper` for platforms whose Foundation lacks it, with the same
    /// names and semantics. A file wrapper is one of three kinds: a regular file holding its
    /// contents, a directory holding child file wrappers keyed by unique file names, or a
    /// symbolic link holding its destination. A document stored as a package (a folder the
    /// user sees as one file) reads into a directory file wrapper and is written back from
    /// one.
    ///
    /// Reading is always immediate and never maps files into memory, so a file wrapper that
    /// was read successfully never fails later because a file changed or vanished on disk.
    /// Writing with ``WritingOptions/atomic`` is a safe save: a crash leaves the old package
    /// or the new one. Writing with an `originalContentsURL` hard-links every regular file
    /// that has not changed since it was read from there, instead of writing its bytes again.
    ///
    /// A file wrapper is not `Sendable`: it is a mutable tree. Hand it to another task with
    /// `sending`, or build a new one there.
    ///
    /// For example:
    ///
    /// ```swift
    /// let package = FileWrapper(directoryWithFileWrappers: [:])
    /// package.addRegularFile(withContents: Data("Hello".utf8), preferredFilename: "text.txt")
    /// package.addRegularFile(withContents: png, preferredFilename: "image.png")
    /// try package.write(to: url, options: .atomic, originalContentsURL: nil)
    ///
    /// let reread = try FileWrapper(url: url)
    /// let text = reread.fileWrappers?["text.txt"]?.regularFileContents
    /// ```
    open class FileWrapper {
        enum Contents {
            case regularFile(Data)
            case directory([String: FileWrapper])
            case symbolicLink(String)
        }

        var contents: Contents
        var storedPreferredFilename: String?
        /// Where the bytes of a regular file wrapper are known to be on disk unchanged: set when
        /// it is read and after it is written, it lets a later write hard-link instead of copy.
        /// The path is not part of it: a package moved by a safe save keeps its inodes.
        var diskIdentity: FileStatus?
        private var parents: [WeakFileWrapper] = []

        /// The name of the file-system node this file wrapper was last read from or written to,
        /// or `nil` when it has none.
        ///
        /// It is set when the file wrapper is read with ``init(url:options:)`` and when it is
        /// written with ``write(to:options:originalContentsURL:)`` and
        /// ``WritingOptions/withNameUpdating``. To learn the name a child is about to be written
        /// under, ask its parent with ``keyForChildFileWrapper(_:)`` instead.
        open var filename: String?

        /// The file-system attributes of the node, keyed by the raw values of `FileManager`'s
        /// attribute keys, as Apple's are (`[String: Any]`): for example
        /// `fileAttributes[FileAttributeKey.posixPermissions.rawValue]`.
        ///
        /// Reading fills in the type (a `FileAttributeType`), size, POSIX permissions,
        /// modification date, owner and group, and file system and file numbers. Writing
        /// applies the POSIX permissions and modification date when they are present; the
        /// others describe the node and are not applied.
        open var fileAttributes: [String: Any]

        /// Creates a directory file wrapper with the given children.
        ///
        /// A child without a preferred filename is given its key as one.
        ///
        /// - Parameter childrenByPreferredName: The children, keyed by the file names they are
        ///   to be written under.
        public init(directoryWithFileWrappers childrenByPreferredName: [String: FileWrapper]) {
            contents = .directory(childrenByPreferredName)
            fileAttributes = [:]
            for (key, child) in childrenByPreferredName {
                if child.storedPreferredFilename == nil { child.storedPreferredFilename = key }
                child.addParent(self)
            }
        }

        /// Creates a regular-file file wrapper with the given contents.
        ///
        /// - Parameter contents: The bytes of the file.
        public init(regularFileWithContents contents: Data) {
            self.contents = .regularFile(contents)
            fileAttributes = [:]
        }

        /// Creates a symbolic-link file wrapper pointing to the given destination.
        ///
        /// The destination is stored as written: a relative file URL such as
        /// `URL(fileURLWithPath: "../shared/image.png")` stays relative in the link.
        ///
        /// - Parameter url: The destination of the link.
        public init(symbolicLinkWithDestinationURL url: URL) {
            contents = .symbolicLink(Self.linkDestination(of: url))
            fileAttributes = [:]
        }

        /// Creates a file wrapper for the file-system node at `url`: a regular file, a
        /// directory with everything below it, or a symbolic link.
        ///
        /// A symbolic link at `url` itself is followed when it leads to a node; one that leads
        /// nowhere (dangling, looping, or through a file) is read as a symbolic-link file
        /// wrapper, as Apple's is. Symbolic links inside a directory are read as
        /// symbolic-link file wrappers, whether or not they point anywhere. All contents are
        /// read at once and no file is mapped into memory, so both reading options are
        /// always honoured.
        ///
        /// - Parameters:
        ///   - url: A file URL.
        ///   - options: Reading options; see ``ReadingOptions``.
        /// - Throws: ``DocumentKitError`` naming the node and the operation "read file wrapper":
        ///   ``DocumentKitError/Code/fileNotFound`` for a missing node,
        ///   ``DocumentKitError/Code/invalidSymbolicLink`` for a loop of links on the way to
        ///   `url`, ``DocumentKitError/Code/unsupportedFileType`` for a socket, FIFO or device,
        ///   ``DocumentKitError/Code/permissionDenied`` for an unreadable node.
        public init(url: URL, options: ReadingOptions = []) throws {
            let read = try Self.readRoot(at: url)
            contents = read.contents
            fileAttributes = read.fileAttributes
            diskIdentity = read.diskIdentity
            filename = url.lastPathComponent
            storedPreferredFilename = url.lastPathComponent
            adoptChildren(of: read)
        }

        /// Creates a file wrapper from its serialized representation.
        ///
        /// - Parameter serializedRepresentation: Bytes produced by ``serializedRepresentation``.
        /// - Returns: `nil` when the bytes are not a serialized file wrapper.
        public convenience init?(serializedRepresentation: Data) {
            guard let decoded = try? SerializedFileWrapper.decode(serializedRepresentation) else {
                return nil
            }
            self.init(contents: decoded.contents, fileAttributes: decoded.fileAttributes, diskIdentity: nil)
            storedPreferredFilename = decoded.storedPreferredFilename
            adoptChildren(of: decoded)
        }

        /// A node read from disk or decoded, before it is handed to a public initializer.
        init(contents: Contents, fileAttributes: [String: Any], diskIdentity: FileStatus?) {
            self.contents = contents
            self.fileAttributes = fileAttributes
            self.diskIdentity = diskIdentity
            if case .directory(let children) = contents {
                for child in children.values { child.addParent(self) }
            }
        }

        // MARK: - Kind

        /// Whether this is a directory file wrapper.
        ///
        /// ``read(from:options:)`` may change it when the node's kind changed on disk.
        open var isDirectory: Bool {
            if case .directory = contents { return true }
            return false
        }

        /// Whether this is a regular-file file wrapper.
        open var isRegularFile: Bool {
            if case .regularFile = contents { return true }
            return false
        }

        /// Whether this is a symbolic-link file wrapper.
        open var isSymbolicLink: Bool {
            if case .symbolicLink = contents { return true }
            return false
        }

        // MARK: - Contents

        /// The contents of a regular-file file wrapper, or `nil` for another kind.
        open var regularFileContents: Data? {
            if case .regularFile(let data) = contents { return data }
            return nil
        }

        /// The destination of a symbolic-link file wrapper, or `nil` for another kind.
        ///
        /// A relative destination gives a URL whose `relativePath` is the destination exactly
        /// as stored in the link.
        open var symbolicLinkDestinationURL: URL? {
            guard case .symbolicLink(let destination) = contents else { return nil }
            return URL(fileURLWithPath: destination)
        }

        /// The children of a directory file wrapper keyed by unique file names, or `nil` for
        /// another kind.
        open var fileWrappers: [String: FileWrapper]? {
            if case .directory(let children) = contents { return children }
            return nil
        }

        // MARK: - Names

        /// The name this file wrapper would like to have in a directory.
        ///
        /// A directory uses it as the child's key unless another child already has that key;
        /// then the key is the name with a unique prefix. Changing it makes every directory
        /// holding this file wrapper remove it and add it again under a key made from the new
        /// name. Reading a file wrapper from disk sets it to the node's name.
        open var preferredFilename: String? {
            get { storedPreferredFilename }
            set {
                guard newValue != storedPreferredFilename else { return }
                storedPreferredFilename = newValue
                guard newValue != nil else { return }
                for parent in liveParents { parent.rekey(self) }
            }
        }

        /// Adds a child to this directory file wrapper and returns its key.
        ///
        /// The key is the child's preferred filename, or, if a child already has that key,
        /// the name with a unique prefix such as `1__#$!@%!#__name`. Adding a child that is
        /// already in this directory returns its existing key.
        ///
        /// - Precondition: This is a directory file wrapper, and `child` has a preferred
        ///   filename (or, failing that, a filename), as Apple requires.
        /// - Parameter child: The file wrapper to add.
        /// - Returns: The key of `child` in ``fileWrappers``.
        @discardableResult
        open func addFileWrapper(_ child: FileWrapper) -> String {
            guard case .directory(var children) = contents else {
                preconditionFailure("addFileWrapper(_:) requires a directory file wrapper")
            }
            if let existing = key(of: child, in: children) { return existing }
            guard let name = child.storedPreferredFilename ?? child.filename else {
                preconditionFailure("addFileWrapper(_:) requires a child with a preferred filename")
            }
            if child.storedPreferredFilename == nil { child.storedPreferredFilename = name }
            let key = Self.uniqueKey(for: name, among: children)
            children[key] = child
            contents = .directory(children)
            child.addParent(self)
            return key
        }

        /// Creates a regular-file file wrapper, adds it to this directory file wrapper and
        /// returns its key.
        ///
        /// - Precondition: This is a directory file wrapper.
        /// - Parameters:
        ///   - data: The contents of the new file.
        ///   - fileName: The preferred filename of the new file.
        /// - Returns: The key of the new child in ``fileWrappers``.
        @discardableResult
        open func addRegularFile(withContents data: Data, preferredFilename fileName: String) -> String {
            let child = FileWrapper(regularFileWithContents: data)
            child.preferredFilename = fileName
            return addFileWrapper(child)
        }

        /// Removes a child from this directory file wrapper.
        ///
        /// Removing a file wrapper that is not a child does nothing.
        ///
        /// - Precondition: This is a directory file wrapper.
        /// - Parameter child: The file wrapper to remove.
        open func removeFileWrapper(_ child: FileWrapper) {
            guard case .directory(var children) = contents else {
                preconditionFailure("removeFileWrapper(_:) requires a directory file wrapper")
            }
            guard let key = key(of: child, in: children) else { return }
            children[key] = nil
            contents = .directory(children)
            child.removeParent(self)
        }

        /// The key under which this directory file wrapper holds `child`, or `nil` if it is
        /// not a child.
        ///
        /// - Parameter child: The child to look for.
        open func keyForChildFileWrapper(_ child: FileWrapper) -> String? {
            guard case .directory(let children) = contents else { return nil }
            return key(of: child, in: children)
        }

        // MARK: - Reading, writing and comparing

        /// Rereads this file wrapper, and everything below it, from the node at `url`.
        ///
        /// For a directory, children are added and removed to match the folder; a child whose
        /// name and kind are unchanged keeps its identity as an object and is reread in place.
        /// The kind of this file wrapper changes if the node's kind changed. On failure this
        /// file wrapper is left as it was.
        ///
        /// - Parameters:
        ///   - url: A file URL.
        ///   - options: Reading options; see ``ReadingOptions``.
        /// - Throws: ``DocumentKitError``, as ``init(url:options:)`` does.
        open func read(from url: URL, options: ReadingOptions = []) throws {
            let read = try Self.readRoot(at: url)
            update(from: read)
            filename = url.lastPathComponent
            if storedPreferredFilename == nil { storedPreferredFilename = url.lastPathComponent }
        }

        /// Writes this file wrapper, and everything below it, to `url`.
        ///
        /// Children are written under their keys in ``fileWrappers``. With
        /// ``WritingOptions/atomic`` the write is a safe save. Without it, the node is written
        /// in place: an existing folder at `url` is reused (so this can fill the staging folder
        /// of ``SafeSave/writeDirectory(at:options:_:)``), items in it that the file wrapper
        /// does not have are removed, and nothing is flushed; a file is replaced by unlinking
        /// it first, so a file hard-linked from another package is never overwritten.
        ///
        /// When `originalContentsURL` is the location of an earlier revision, each regular file
        /// that is still, on disk, exactly what it was when it was read from or written there
        /// (same inode, size, modification time and permissions) is hard-linked from there
        /// instead of written again, at any depth. Where a hard link is impossible (another
        /// file system, a file system without them) its bytes are written instead.
        ///
        /// - Parameters:
        ///   - url: Where to write.
        ///   - options: Writing options; see ``WritingOptions``.
        ///   - originalContentsURL: The location of an earlier revision of these contents, or
        ///     `nil` to write every byte.
        /// - Throws: ``DocumentKitError`` naming the item and the operation "write file
        ///   wrapper", or what ``SafeSave`` throws. Before anything is written, a child key that
        ///   is not a valid file name (empty, `.`, `..`, or containing `/`) or a directory that
        ///   contains itself throws ``DocumentKitError/Code/invalidArgument``. With
        ///   ``WritingOptions/atomic`` the node at `url` is untouched whenever an error is
        ///   thrown.
        open func write(to url: URL, options: WritingOptions = [], originalContentsURL: URL?) throws {
            guard url.isFileURL else {
                throw DocumentKitError(
                    .invalidArgument, operation: Self.writeOperation, url: url, detail: "not a file URL")
            }
            var ancestors: Set<ObjectIdentifier> = []
            try validate(url: url, ancestors: &ancestors)

            var session = WriteSession()
            let original = originalContentsURL.flatMap {
                try? FileDescriptor.openDirectory($0, operation: "open")
            }
            if options.contains(.atomic) {
                try writeAtomically(to: url, original: original, session: &session)
            } else {
                let parentURL = url.deletingLastPathComponent()
                let parent = try FileDescriptor.openDirectory(parentURL, operation: Self.writeOperation)
                // `original` is the earlier revision of this node itself, not of its parent folder.
                try Self.write(
                    self, named: url.lastPathComponent, in: parent, url: url, original: nil,
                    originalOfItem: original, inPlace: true, session: &session)
            }
            session.commit(updatingNames: options.contains(.withNameUpdating))
            if options.contains(.withNameUpdating) { filename = url.lastPathComponent }
        }

        /// Whether the node at `url` still matches this file wrapper.
        ///
        /// File contents are not compared byte by byte. A regular file matches when it is the
        /// same file, unmodified, as the one this file wrapper was read from or last written to:
        /// same inode, size and modification time (a file wrapper made in memory matches a file
        /// with the modification date in its ``fileAttributes``). A directory matches when it
        /// has exactly the children's keys and every child matches, recursively. A symbolic
        /// link matches when its destination is the same. A symbolic link at `url` itself is
        /// followed, as when reading, unless this file wrapper is a symbolic link.
        ///
        /// - Parameter url: The node to compare with.
        /// - Returns: `true` if this file wrapper matches the node; `false` otherwise, or if the
        ///   node cannot be inspected.
        open func matchesContents(of url: URL) -> Bool {
            compare(withItemAt: url, includingPermissions: false)
        }

        /// Whether this file wrapper needs to be reread to match the node at `url`.
        ///
        /// It compares what ``matchesContents(of:)`` compares and, for regular files, the access
        /// permissions too.
        ///
        /// - Parameter url: The node to compare with.
        /// - Returns: `true` when the node differs from this file wrapper or cannot be inspected.
        open func needsToBeUpdated(from url: URL) -> Bool {
            !compare(withItemAt: url, includingPermissions: true)
        }

        /// Whether this file wrapper needs to be reread to match the node at `path`.
        ///
        /// - Parameter path: The path of the node to compare with.
        /// - Returns: `true` when the node differs from this file wrapper or cannot be inspected.
        open func needsToBeUpdated(fromPath path: String) -> Bool {
            needsToBeUpdated(from: URL(fileURLWithPath: path))
        }

        /// The file wrapper, with everything below it, as bytes that
        /// ``init(serializedRepresentation:)`` turns back into an equal file wrapper.
        ///
        /// It holds each node's kind, contents, key, preferred filename, POSIX permissions and
        /// modification date. The format is DocumentKit's own (a binary property list); it is
        /// not the format Apple's Foundation produces, so exchange these bytes only between
        /// programs that use DocumentKit.
        open var serializedRepresentation: Data? {
            let root: [String: Any] = [
                SerializedFileWrapper.formatKey: SerializedFileWrapper.formatVersion,
                SerializedFileWrapper.rootKey: SerializedFileWrapper.encode(self),
            ]
            return try? PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
        }

        // MARK: - Internals

        /// The first key of the form Apple uses that no child has: the name itself, then
        /// `1__#$!@%!#__name`, `2__#$!@%!#__name` and so on.
        static func uniqueKey(for name: String, among children: [String: FileWrapper]) -> String {
            if children[name] == nil { return name }
            var number = 1
            while true {
                let candidate = "\(number)__#$!@%!#__\(name)"
                if children[candidate] == nil { return candidate }
                number += 1
            }
        }

        static func linkDestination(of url: URL) -> String {
            // A file URL made from a relative path keeps that path as `relativePath`; its
            // `path` would be made absolute against the working directory.
            url.isFileURL || url.scheme == nil ? url.relativePath : url.absoluteString
        }

        private func key(of child: FileWrapper, in children: [String: FileWrapper]) -> String? {
            children.first { $0.value === child }?.key
        }

        private var liveParents: [FileWrapper] {
            parents.compactMap(\.value)
        }

        func addParent(_ parent: FileWrapper) {
            parents.removeAll { $0.value == nil }
            if !parents.contains(where: { $0.value === parent }) { parents.append(WeakFileWrapper(parent)) }
        }

        func removeParent(_ parent: FileWrapper) {
            parents.removeAll { $0.value == nil || $0.value === parent }
        }

        private func rekey(_ child: FileWrapper) {
            guard case .directory(var children) = contents, let old = key(of: child, in: children),
                let name = child.storedPreferredFilename
            else { return }
            children[old] = nil
            children[Self.uniqueKey(for: name, among: children)] = child
            contents = .directory(children)
        }

        /// Makes the children of `other` (a freshly read node) children of this file wrapper.
        func adoptChildren(of other: FileWrapper) {
            guard case .directory(let children) = contents else { return }
            for child in children.values {
                child.removeParent(other)
                child.addParent(self)
            }
        }
    }

    /// A reference to a parent directory that does not keep it alive.
    final class WeakFileWrapper {
        weak var value: FileWrapper?
        init(_ value: FileWrapper) { self.value = value }
    }
#endif
