import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes files and package folders so that a crash at any instant leaves either the old
/// or the new contents, never a torn or empty file.
///
/// A flat file is written to a temporary file in the same folder, flushed with `fsync`,
/// given the original's permissions, owner and extended attributes, renamed over the
/// original, and the folder is flushed. A package folder is built beside the original and
/// swapped in with `renameat2(RENAME_EXCHANGE)`; where the file system lacks the exchange
/// (some network and FUSE file systems) the original is first renamed aside to a hidden
/// name, then the new folder renamed in, so a crash between the two renames leaves the old
/// package under `.NAME.dk-old-*` beside the original, never nothing.
///
/// `FileManager.replaceItemAt` is not used: on Linux it can lose the replacement.
///
/// For example:
///
/// ```swift
/// try SafeSave.write(Data("hello".utf8), to: url)
/// try SafeSave.writeDirectory(at: packageURL) { staging in
///     try FileWrapper(directoryWithFileWrappers: children).write(to: staging, originalContentsURL: nil)
/// }
/// ```
public enum SafeSave {
    /// How a safe save treats an existing item.
    public struct Options: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Fails with ``DocumentKitError/Code/fileExists`` if an item is already at the URL,
        /// even when one appears while the save runs.
        public static let withoutOverwriting = Options(rawValue: 1 << 0)
        /// Leaves the original's extended attributes behind instead of carrying them over.
        public static let discardingExtendedAttributes = Options(rawValue: 1 << 1)
        /// The writer of a package hard-linked some files from the original, whose data is
        /// already on disk: only files with a single link (written anew) need flushing.
        /// The folder flushes that follow make the new links durable.
        static let linkedFilesAreDurable = Options(rawValue: 1 << 16)
    }

    /// Safely replaces the file at `url` with `data`, or creates it.
    ///
    /// A symbolic link at `url` is kept: the file it points to is the one replaced.
    ///
    /// - Parameters:
    ///   - data: The new contents.
    ///   - url: A file URL. Its folder must exist.
    ///   - options: How to treat an existing file.
    ///   - permissions: The new file's mode; by default the original's, or `0666` less the
    ///     umask for a new file.
    /// - Throws: ``DocumentKitError`` naming the file and the step that failed. The
    ///   original is untouched whenever an error is thrown.
    public static func write(
        _ data: some DataProtocol, to url: URL, options: Options = [], permissions: mode_t? = nil
    ) throws {
        try write(to: url, options: options, permissions: permissions) { file in
            for region in data.regions {
                try region.withUnsafeBytes { try file.write($0) }
            }
        }
    }

    /// Safely replaces the file at `url` with bytes produced by `body`, or creates it.
    ///
    /// `body` writes into a temporary file; nothing reaches `url` unless it returns
    /// normally and every byte is on disk.
    ///
    /// - Throws: ``DocumentKitError``, or whatever `body` throws. The original is untouched
    ///   whenever an error is thrown.
    public static func write(
        to url: URL, options: Options = [], permissions: mode_t? = nil,
        _ body: (TemporaryFile) throws -> Void
    ) throws {
        let target = try resolvedTarget(url)
        let directory = try FileDescriptor.openDirectory(
            target.deletingLastPathComponent(), operation: "open the folder of")
        try write(
            named: target.lastPathComponent, in: directory, url: target, options: options,
            permissions: permissions, body)
    }

    /// Safely replaces the file `name` in the folder open as `directory`, or creates it, with
    /// bytes produced by `body`: ``write(to:options:permissions:_:)`` for a folder already
    /// pinned (opened beneath a ``ContainedFolder``, say). A symbolic link called `name` is
    /// replaced, never followed.
    ///
    /// - Parameters:
    ///   - url: The file's URL, for errors.
    ///   - newFilePermissions: The mode of a file that replaces nothing, by default `0666`
    ///     less the umask.
    /// - Throws: ``DocumentKitError``, or whatever `body` throws. The original is untouched
    ///   whenever an error is thrown.
    package static func write(
        named name: String, in directory: FileDescriptor, url target: URL, options: Options = [],
        permissions: mode_t? = nil, newFilePermissions: mode_t? = nil, _ body: (TemporaryFile) throws -> Void
    ) throws {
        let url = target
        let existing = try existingItem(name, in: directory, url: target)
        if existing != nil && options.contains(.withoutOverwriting) {
            throw DocumentKitError(.fileExists, operation: "create", url: url, errno: .fileExists)
        }
        if let existing, existing.isDirectory {
            throw DocumentKitError(
                .wrongFileType, operation: "save", url: url, errno: .isDirectory,
                detail: "a folder is in the way of the file")
        }
        // A link replaced, not followed, passes on nothing of its own.
        let original = existing.flatMap { $0.isSymbolicLink ? nil : $0 }

        sweepDebris(in: directory, path: target.deletingLastPathComponent().path)
        let temporaryName = temporaryName(for: name, kind: "tmp")
        let fd = try Syscall.openat(
            directory.rawValue, temporaryName, O_WRONLY | O_CREAT | O_EXCL, 0o600
        ).get("create a temporary file for", target)
        let temporary = FileDescriptor(rawValue: fd, url: target)
        var succeeded = false
        defer {
            if !succeeded { _ = Syscall.unlinkat(directory.rawValue, temporaryName) }
        }

        try body(TemporaryFile(descriptor: temporary))
        try install(
            temporary, named: temporaryName, as: name, in: directory, target: target, original: original,
            permissions: permissions ?? (original == nil ? newFilePermissions : nil), options: options,
            replacing: existing != nil)
        succeeded = true
        try directory.sync(operation: "flush (fsync) the folder of")
    }

    /// Safely replaces the package folder at `url` with one that `body` builds, or creates it.
    ///
    /// `body` receives the URL of an empty staging folder beside `url` and fills it. Every
    /// file and folder inside is flushed, then the staging folder is exchanged with the
    /// original in one step and the old contents are removed.
    ///
    /// - Throws: ``DocumentKitError``, or whatever `body` throws. The original is untouched
    ///   whenever an error is thrown.
    public static func writeDirectory(
        at url: URL, options: Options = [], _ body: (URL) throws -> Void
    ) throws {
        try writeItem(at: url, options: options) { staging in
            _ = try Syscall.mkdirat(AT_FDCWD, staging.path, 0o700).get("create a staging folder for", url)
            try body(staging)
        }
    }

    /// Safely puts whatever `body` writes, a file or a package folder, at `url`.
    ///
    /// `body` receives a URL beside `url` where nothing exists yet and writes a regular file
    /// or a folder there, without needing to flush it. The item is then flushed, given the
    /// original's permissions (and, for a file, owner and extended attributes), and renamed
    /// or exchanged into place. This is the step a ``Document`` uses, so that a subclass that
    /// writes its own files still saves safely.
    ///
    /// - Throws: ``DocumentKitError``, or whatever `body` throws. The original is untouched
    ///   whenever an error is thrown.
    public static func writeItem(
        at url: URL, options: Options = [], permissions: mode_t? = nil, _ body: (URL) throws -> Void
    ) throws {
        let target = try resolvedTarget(url)
        let parentURL = target.deletingLastPathComponent()
        let directory = try FileDescriptor.openDirectory(parentURL, operation: "open the folder of")
        let name = target.lastPathComponent
        let original = try existingItem(name, in: directory, url: target)
        if original != nil && options.contains(.withoutOverwriting) {
            throw DocumentKitError(.fileExists, operation: "create", url: url, errno: .fileExists)
        }
        sweepDebris(in: directory, path: parentURL.path)
        let stagingName = temporaryName(for: name, kind: "tmp")
        let stagingURL = parentURL.appendingPathComponent(stagingName)
        var succeeded = false
        defer {
            if !succeeded { try? removeTree(stagingURL) }
        }
        do {
            try body(stagingURL)
        } catch var error as DocumentKitError where error.url?.standardizedFileURL.path == stagingURL.path {
            // The temporary file is ours, not the user's: name the file being saved.
            error.url = target
            throw error
        }
        let staged = try Syscall.fstatat(directory.rawValue, stagingName, followLinks: false)
            .get("find what was written for", target)

        if staged.isRegularFile {
            if let original, original.isDirectory {
                throw DocumentKitError(
                    .wrongFileType, operation: "save", url: url, errno: .isDirectory,
                    detail: "a folder is in the way of the file")
            }
            let fd = try Syscall.openat(directory.rawValue, stagingName, O_RDONLY | O_NOFOLLOW)
                .get("open what was written for", target)
            try install(
                FileDescriptor(rawValue: fd, url: target), named: stagingName, as: name, in: directory,
                target: target, original: original, permissions: permissions, options: options,
                replacing: original != nil)
            succeeded = true
            try directory.sync(operation: "flush (fsync) the folder of")
            return
        }
        guard staged.isDirectory else {
            throw DocumentKitError(
                .unsupportedFileType, operation: "save", url: url,
                detail: "the writer produced neither a file nor a folder")
        }
        try syncTree(stagingURL, skippingLinkedFiles: options.contains(.linkedFilesAreDurable))
        let staging = try FileDescriptor.openDirectory(stagingURL, operation: "open the staging folder for")
        let defaultMode = 0o777 & ~Syscall.currentUmask()
        var mode = permissions ?? defaultMode
        if let original, original.isDirectory {
            _ = Syscall.fchown(staging.rawValue, original.st_uid, original.st_gid)
            mode = permissions ?? original.permissions
        }
        _ = try Syscall.fchmod(staging.rawValue, mode).get("set permissions of", target)
        try staging.sync()

        guard original != nil else {
            try renameWithoutReplacing(stagingName, to: name, in: directory, url: target)
            succeeded = true
            try directory.sync(operation: "flush (fsync) the folder of")
            return
        }
        let exchanged = Syscall.renameat2(
            directory.rawValue, stagingName, directory.rawValue, name, CUnsignedInt(CDS_RENAME_EXCHANGE))
        switch exchanged {
        case .success:
            succeeded = true
            try directory.sync(operation: "flush (fsync) the folder of")
            // The old contents now sit under the staging name; they are garbage.
            try? removeTree(stagingURL)
        case .failure(.invalidArgument), .failure(.notImplemented), .failure(.notSupported):
            let asideName = temporaryName(for: name, kind: "old")
            _ = try Syscall.renameat(directory.rawValue, name, directory.rawValue, asideName)
                .get("move the old package aside for", target)
            do {
                _ = try Syscall.renameat(directory.rawValue, stagingName, directory.rawValue, name)
                    .get("rename the new package over", target)
            } catch {
                _ = Syscall.renameat(directory.rawValue, asideName, directory.rawValue, name)
                throw error
            }
            succeeded = true
            try directory.sync(operation: "flush (fsync) the folder of")
            try? removeTree(parentURL.appendingPathComponent(asideName, isDirectory: true))
        case .failure(let error):
            throw DocumentKitError(error, operation: "exchange the new package with", url: target)
        }
    }

    /// An open temporary file that a safe save is writing.
    public struct TemporaryFile {
        let descriptor: FileDescriptor

        /// Appends `bytes` to the file.
        public func write(_ bytes: UnsafeRawBufferPointer) throws {
            try descriptor.writeAll(bytes, operation: "write")
        }

        /// Appends `data` to the file.
        public func write(_ data: Data) throws {
            try data.withUnsafeBytes { try descriptor.writeAll($0, operation: "write") }
        }
    }

    // MARK: - Steps

    /// A file URL whose last component is not a symbolic link: the link's destination if it is one.
    static func resolvedTarget(_ url: URL) throws -> URL {
        guard url.isFileURL else {
            throw DocumentKitError(.invalidArgument, operation: "save", url: url, detail: "not a file URL")
        }
        let standardized = url.standardizedFileURL
        var current = standardized
        for _ in 0..<40 {
            switch Syscall.fstatat(AT_FDCWD, current.path, followLinks: false) {
            case .success(let info) where info.isSymbolicLink:
                try refuseUnprotectedLink(current, info)
                let destination = try Syscall.readlinkat(AT_FDCWD, current.path).get("read the link", current)
                current =
                    URL(fileURLWithPath: destination, relativeTo: current.deletingLastPathComponent())
                    .standardizedFileURL
            default:
                return current
            }
        }
        throw DocumentKitError(
            .invalidSymbolicLink, operation: "save", url: url, errno: .tooManySymbolicLinkLevels)
    }

    /// Refuses to follow a link in a sticky folder anyone may write (such as /tmp) unless the
    /// link belongs to this user or to the folder's owner, as the kernel's
    /// `fs.protected_symlinks` does: otherwise another user could plant a link there that
    /// makes this save replace a file of theirs choosing, outside the folder.
    static func refuseUnprotectedLink(_ link: URL, _ info: stat) throws {
        let folder = link.deletingLastPathComponent()
        guard case .success(let parent) = Syscall.fstatat(AT_FDCWD, folder.path, followLinks: true),
            parent.st_mode & S_ISVTX != 0, parent.st_mode & 0o002 != 0,
            info.st_uid != geteuid(), info.st_uid != parent.st_uid
        else { return }
        throw DocumentKitError(
            .permissionDenied, operation: "save", url: link, errno: .permissionDenied,
            detail: "it is a link another user made in a folder anyone may write; it is not followed")
    }

    static func existingItem(_ name: String, in directory: FileDescriptor, url: URL) throws -> stat? {
        switch Syscall.fstatat(directory.rawValue, name, followLinks: false) {
        case .success(let info): return info
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw DocumentKitError(error, operation: "inspect", url: url)
        }
    }

    /// `.NAME.dk-KIND-PID-RANDOM`: hidden, naming the process that owns it (so that what a
    /// killed process left can be told from what a live one is writing), and within NAME_MAX
    /// bytes whatever the name: a long name is cut, by bytes, at a Unicode scalar boundary.
    static func temporaryName(for name: String, kind: String) -> String {
        let suffix = ".dk-\(kind)-\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let room = 255 - 1 - suffix.utf8.count
        var stem = ""
        var used = 0
        for scalar in name.unicodeScalars {
            let length = UTF8.width(scalar)
            if used + length > room { break }
            stem.unicodeScalars.append(scalar)
            used += length
        }
        return ".\(stem)\(suffix)"
    }

    /// The process that made a temporary name, if the name is one of ``temporaryName(for:kind:)``'s.
    static func owner(ofTemporaryName name: String) -> pid_t? {
        guard name.hasPrefix("."), let marker = name.range(of: ".dk-", options: .backwards) else {
            return nil
        }
        let parts = name[marker.upperBound...].split(separator: "-")
        guard parts.count == 3, ["tmp", "old"].contains(parts[0]), let pid = pid_t(parts[1]) else {
            return nil
        }
        return pid
    }

    private static let sweptFolders = Mutex<Set<String>>([])

    /// Removes the temporary files and folders that killed processes left in the folder open
    /// as `directory`: once per folder per process, at its first save there. Only debris whose
    /// process is gone is touched; a live process's save in progress is left alone.
    static func sweepDebris(in directory: FileDescriptor, path: String) {
        guard sweptFolders.withLock({ $0.insert(path).inserted }) else { return }
        guard case .success(let names) = Syscall.directoryNames(in: directory.rawValue) else { return }
        for name in names where name.hasPrefix(".") && name.contains(".dk-") {
            guard let pid = owner(ofTemporaryName: name), pid != getpid(), !ProcessIdentity.isAlive(pid)
            else {
                continue
            }
            let url = URL(fileURLWithPath: path).appendingPathComponent(name)
            switch Syscall.fstatat(directory.rawValue, name, followLinks: false) {
            case .success(let info) where info.isDirectory: try? removeTree(url)
            case .success: _ = Syscall.unlinkat(directory.rawValue, name)
            case .failure: continue
            }
        }
    }

    /// Gives a file written under `temporaryName` the original's mode, owner and extended
    /// attributes, flushes it, and renames it to `name`: the end of every file's safe save
    /// but the folder's flush, which comes once the caller has let go of the temporary.
    private static func install(
        _ file: FileDescriptor, named temporaryName: String, as name: String, in directory: FileDescriptor,
        target: URL, original: stat?, permissions: mode_t?, options: Options, replacing: Bool
    ) throws {
        try carryOver(
            from: original, name: name, in: directory, to: file, target: target,
            permissions: permissions, options: options)
        try file.sync(operation: "flush (fsync)")
        try place(
            temporaryName, as: name, in: directory, url: target, options: options, originalExists: replacing)
    }

    /// Gives `temporary`, about to replace `name` in `directory` (described by `original`, nil
    /// for none), the original's mode, owner and (unless `options` say otherwise) extended
    /// attributes: `permissions` when given, else the original's, else `0666` less the umask.
    package static func carryOver(
        from original: stat?, name: String, in directory: FileDescriptor, to temporary: FileDescriptor,
        target: URL, permissions: mode_t?, options: Options
    ) throws {
        let mode = permissions ?? original?.permissions ?? (0o666 & ~Syscall.currentUmask())
        if let original {
            // Only root (or the owner keeping their own group) may do this; failing is harmless.
            _ = Syscall.fchown(temporary.rawValue, original.st_uid, original.st_gid)
        }
        _ = try Syscall.fchmod(temporary.rawValue, mode).get("set permissions of", target)
        guard original != nil, !options.contains(.discardingExtendedAttributes) else { return }
        try copyExtendedAttributes(fromItemNamed: name, in: directory, to: temporary, url: target)
    }

    static func copyExtendedAttributes(
        fromItemNamed name: String, in directory: FileDescriptor, to destination: FileDescriptor, url: URL
    ) throws {
        // O_PATH descriptors cannot read attributes, and the original may be unreadable to us
        // (write-only): then it has no attributes we could carry anyway.
        guard
            case .success(let fd) = Syscall.openat(
                directory.rawValue, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        else { return }
        let source = FileDescriptor(rawValue: fd, url: url)
        let names: [String]
        switch Syscall.listExtendedAttributes(source.rawValue) {
        case .success(let list): names = list
        case .failure(.notSupported): return
        case .failure(let error):
            throw DocumentKitError(error, operation: "list extended attributes of", url: url)
        }
        for attribute in names {
            guard case .success(let value) = Syscall.getExtendedAttribute(source.rawValue, attribute) else {
                continue
            }
            switch Syscall.setExtendedAttribute(destination.rawValue, attribute, value) {
            case .success: continue
            case .failure(let error) where !attribute.hasPrefix("user."):
                // security.* and trusted.* belong to the system; losing them is not ours to fail on.
                _ = error
            case .failure(let error):
                throw DocumentKitError(
                    error, operation: "carry over extended attribute \(attribute) of", url: url)
            }
        }
    }

    /// Renames a flushed temporary file over the target, or to it without replacing anything.
    static func place(
        _ temporaryName: String, as name: String, in directory: FileDescriptor, url: URL, options: Options,
        originalExists: Bool
    ) throws {
        if options.contains(.withoutOverwriting) {
            try renameWithoutReplacing(temporaryName, to: name, in: directory, url: url)
        } else {
            _ = try Syscall.renameat(directory.rawValue, temporaryName, directory.rawValue, name)
                .get("rename the temporary file over", url)
        }
    }

    /// Moves the item at `source` to `destination`, never replacing an item there, even one
    /// that appears while the move runs.
    ///
    /// Within one file system the move is one `renameat2(RENAME_NOREPLACE)`, or, where the
    /// file system lacks that flag, a hard link then the removal of the old name (a folder,
    /// which cannot be hard-linked, gets a check then a rename). Across file systems a regular
    /// file is copied by a safe save that refuses an existing name, keeping its permissions
    /// and modification time, and a symbolic link is made anew; then the original is removed.
    /// Both folders are flushed.
    ///
    /// For example:
    ///
    /// ```swift
    /// try SafeSave.moveItem(at: draft, to: letter, operation: "rename the document")
    /// ```
    ///
    /// - Parameters:
    ///   - source: The item to move.
    ///   - destination: Where it goes: a name that must be free, in a folder that exists.
    ///   - operation: What the move is, in words, for the error to say.
    /// - Throws: ``DocumentKitError``: ``DocumentKitError/Code/fileExists`` naming
    ///   `destination` when an item is there (nothing moves); any other failure names `source`.
    ///   A folder or special file cannot move across file systems
    ///   (``Errno/crossDeviceLink``).
    package static func moveItem(at source: URL, to destination: URL, operation: String = "move") throws {
        let sourceFolder = try FileDescriptor.openDirectory(
            source.deletingLastPathComponent(), operation: operation)
        try moveItem(
            named: source.lastPathComponent, in: sourceFolder, source: source, to: destination,
            operation: operation)
    }

    /// ``moveItem(at:to:operation:)`` of the item `name` in the folder open as `sourceFolder`
    /// (pinned, as a ``ContainedFolder`` opens it): the name is never resolved from the root.
    ///
    /// - Parameters:
    ///   - source: The item's URL, for errors.
    ///   - permissions: The mode the moved file gets (a link or folder keeps its own), when given.
    package static func moveItem(
        named name: String, in sourceFolder: FileDescriptor, source: URL, to destination: URL,
        permissions: mode_t? = nil, operation: String = "move"
    ) throws {
        let destinationFolder = try FileDescriptor.openDirectory(
            destination.deletingLastPathComponent(), operation: operation)
        let newName = destination.lastPathComponent
        do {
            try renameWithoutReplacing(
                name, from: sourceFolder, to: newName, in: destinationFolder,
                url: destination, operation: operation, source: source)
            if let permissions,
                case .success(let info) = Syscall.fstatat(
                    destinationFolder.rawValue, newName, followLinks: false),
                info.isRegularFile
            {
                _ = try Syscall.fchmodat(destinationFolder.rawValue, newName, permissions).get(
                    operation, destination)
            }
        } catch Errno.crossDeviceLink {
            try copyWithoutReplacing(
                name, from: sourceFolder, source: source, to: destination, permissions: permissions,
                operation: operation)
            _ = try Syscall.unlinkat(sourceFolder.rawValue, name).get(operation, source)
        }
        try destinationFolder.sync(operation: operation)
        if source.deletingLastPathComponent().standardizedFileURL
            != destination.deletingLastPathComponent().standardizedFileURL
        {
            try sourceFolder.sync(operation: operation)
        }
    }

    /// Renames `from` (in `fromDirectory`, by default `directory`) to `name` in `directory`
    /// without replacing an item called `name`.
    ///
    /// - Throws: ``DocumentKitError``: `.fileExists` naming `url` (the destination) when
    ///   `name` is taken; any other failure names `source` when it is given, else `url`.
    package static func renameWithoutReplacing(
        _ from: String, from fromDirectory: FileDescriptor? = nil, to name: String,
        in directory: FileDescriptor,
        url: URL, operation: String = "create", source: URL? = nil
    ) throws {
        let fromDirectory = fromDirectory ?? directory
        let failing = source ?? url
        switch Syscall.renameat2(
            fromDirectory.rawValue, from, directory.rawValue, name, CUnsignedInt(CDS_RENAME_NOREPLACE))
        {
        case .success: return
        case .failure(.fileExists):
            throw DocumentKitError(.fileExists, operation: operation, url: url, errno: .fileExists)
        case .failure(.invalidArgument), .failure(.notImplemented), .failure(.notSupported):
            // No RENAME_NOREPLACE here: a hard link fails atomically if the name exists.
            // Folders cannot be hard-linked; for them a check-then-rename is the best we have.
            if case .success(let info) = Syscall.fstatat(fromDirectory.rawValue, from, followLinks: false),
                info.isDirectory
            {
                if (try existingItem(name, in: directory, url: url)) != nil {
                    throw DocumentKitError(.fileExists, operation: operation, url: url, errno: .fileExists)
                }
                _ = try Syscall.renameat(fromDirectory.rawValue, from, directory.rawValue, name).get(
                    operation, failing)
                return
            }
            switch Syscall.linkat(fromDirectory.rawValue, from, directory.rawValue, name) {
            case .success: break
            case .failure(.fileExists):
                throw DocumentKitError(.fileExists, operation: operation, url: url, errno: .fileExists)
            case .failure(let error):
                throw DocumentKitError(error, operation: operation, url: failing)
            }
            _ = Syscall.unlinkat(fromDirectory.rawValue, from)
        case .failure(let error):
            throw DocumentKitError(error, operation: operation, url: failing)
        }
    }

    /// The cross-file-system half of ``moveItem(at:to:operation:)``: puts a copy of `name`
    /// (in `folder`) at `destination` without replacing anything there.
    private static func copyWithoutReplacing(
        _ name: String, from folder: FileDescriptor, source: URL, to destination: URL, permissions: mode_t?,
        operation: String
    ) throws {
        let info = try Syscall.fstatat(folder.rawValue, name, followLinks: false).get(operation, source)
        if info.isSymbolicLink {
            let target = try Syscall.readlinkat(folder.rawValue, name).get(operation, source)
            switch Syscall.symlinkat(target, AT_FDCWD, destination.path) {
            case .success: return
            case .failure(.fileExists):
                throw DocumentKitError(
                    .fileExists, operation: operation, url: destination, errno: .fileExists)
            case .failure(let error):
                throw DocumentKitError(error, operation: operation, url: destination)
            }
        }
        guard info.isRegularFile else {
            throw DocumentKitError(
                .unsupportedFileType, operation: operation, url: source, errno: .crossDeviceLink,
                detail: "only a file or a symbolic link can move to another file system")
        }
        // The save resolves a link at its URL: a name taken by anything, even a dangling
        // link, is refused before it starts; one taken while it runs, by its no-replace rename.
        if case .success = Syscall.fstatat(AT_FDCWD, destination.path, followLinks: false) {
            throw DocumentKitError(.fileExists, operation: operation, url: destination, errno: .fileExists)
        }
        let input = FileDescriptor(
            rawValue: try Syscall.openat(folder.rawValue, name, O_RDONLY | O_NOFOLLOW).get(operation, source),
            url: source)
        try write(to: destination, options: .withoutOverwriting, permissions: permissions ?? info.permissions)
        {
            file in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = try buffer.withUnsafeMutableBytes {
                    try Syscall.read(input.rawValue, $0).get(operation, source)
                }
                if count == 0 { break }
                try buffer.withUnsafeBytes {
                    try file.write(UnsafeRawBufferPointer(rebasing: $0.prefix(count)))
                }
            }
            _ = try Syscall.futimens(file.descriptor.rawValue, modification: info.st_mtim).get(
                operation, destination)
        }
    }

    /// Flushes every file and folder below `url`, and `url` itself.
    static func syncTree(_ url: URL, skippingLinkedFiles: Bool = false) throws {
        let directory = try FileDescriptor.openDirectory(url, operation: "open")
        let entries = try FileManager.default.contentsOfDirectory(atPath: url.path)
        for entry in entries {
            let child = url.appendingPathComponent(entry)
            let info = try Syscall.fstatat(directory.rawValue, entry, followLinks: false).get(
                "inspect", child)
            if info.isDirectory {
                try syncTree(child, skippingLinkedFiles: skippingLinkedFiles)
            } else if info.isRegularFile && !(skippingLinkedFiles && info.st_nlink > 1) {
                let fd = try Syscall.openat(directory.rawValue, entry, O_RDONLY | O_NOFOLLOW).get(
                    "open", child)
                try FileDescriptor(rawValue: fd, url: child).sync()
            }
        }
        try directory.sync()
    }

    /// Removes `url` and everything below it without following symbolic links.
    static func removeTree(_ url: URL) throws {
        try FileManager.default.removeItem(at: url)
    }
}
