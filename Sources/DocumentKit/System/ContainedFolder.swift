import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A folder that file operations cannot leave, whatever names they are given.
///
/// The folder is opened once; every item inside is named by its components below it and
/// reached relative to that descriptor, never by a path from the root of the file system. The
/// rules it enforces:
///
/// - A component that is empty, `.` or `..`, or that holds `/` or NUL, is refused before any
///   system call, with ``DocumentKitError/Code/invalidArgument`` naming the path and the
///   operation: a name that came from elsewhere (a server) cannot climb out, nor be cut short
///   at a NUL into another name.
/// - No symbolic link is followed on the way to an item, nor as the item itself: a link inside
///   the folder, wherever it points, is refused (``DocumentKitError/Code/invalidSymbolicLink``),
///   so that no link can lead a write outside. The kernel resolves a nested path in one
///   `openat2(2)` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6 and later);
///   where it lacks the call, one `openat(2)` with `O_NOFOLLOW` a component does the same.
/// - Every creation, rename, removal and look at an item is made relative to a descriptor of
///   its parent folder opened that way (``Directory``), with the last component alone.
/// - What it makes is no more open than the folder itself: folders get the folder's
///   permissions (`& 0777`) and new files ``newFilePermissions`` (`& 0666`), both less the
///   umask, so a private folder (0700) gets private files (0600).
///
/// For example:
///
/// ```swift
/// let container = try ContainedFolder(at: documents)
/// let (folder, name) = try container.parent(of: ["Notes", "plan.txt"], creating: true, operation: "download")
/// let file = try folder.open(name, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600, operation: "download")
/// try container.status(of: ["..", "etc", "passwd"], operation: "look at")   // throws: ".." is not a name
/// ```
package final class ContainedFolder {
    /// How nested paths are resolved beneath the folder.
    package enum Resolution: Sendable {
        /// One `openat2(2)` call a path, or component by component where the kernel lacks it.
        case automatic
        /// One `openat(2)` with `O_NOFOLLOW` a component, as on kernels before Linux 5.6.
        case componentByComponent
    }

    /// The folder, as it was given.
    package let url: URL
    /// The folder itself, opened.
    package let root: Directory
    /// The folder's permission bits, as first asked for (private, 0700, if it cannot be looked at).
    package private(set) lazy var permissions: mode_t =
        (try? root.descriptor.stat(operation: "look at").permissions) ?? 0o700
    private let resolution: Resolution

    /// Whether `openat2(2)` answered `ENOSYS` once: then every later resolution walks.
    private static let kernelLacksOpenat2 = Atomic<Bool>(false)

    /// Opens the folder at `url` (the path to it is the caller's, and may hold links).
    ///
    /// - Throws: ``DocumentKitError`` naming the folder when it cannot be opened or is not a folder.
    package init(at url: URL, resolution: Resolution = .automatic, operation: String = "open the folder")
        throws
    {
        self.url = url
        self.resolution = resolution
        let descriptor = try FileDescriptor.openDirectory(url, operation: operation)
        root = Directory(descriptor: descriptor)
    }

    /// The permissions of a file made here that replaces nothing: the folder's read and write
    /// bits less the umask.
    package var newFilePermissions: mode_t { permissions & 0o666 & ~Syscall.currentUmask() }

    /// The permissions folders made here are asked for (the kernel takes the umask off).
    package var newFolderPermissions: mode_t { permissions & 0o777 }

    /// The URL of the item at `components`, for what needs one (coordination, messages); says
    /// nothing of whether the components are valid.
    package func url(of components: [String]) -> URL {
        // With a hint, so that Foundation does not look at the file system to make a URL.
        components.reduce(url) { $0.appendingPathComponent($1, isDirectory: false) }
    }

    /// The components below the folder of `url`, an item inside it (as ``url(of:)`` makes).
    ///
    /// - Throws: ``DocumentKitError/Code/invalidArgument`` when `url` is not inside the folder.
    package func components(of url: URL, operation: String) throws -> [String] {
        let base = self.url.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        let prefix = base.hasSuffix("/") ? base : base + "/"
        guard path.hasPrefix(prefix) else {
            throw DocumentKitError(
                .invalidArgument, operation: operation, url: url, errno: .invalidArgument,
                detail: "it is not inside \(self.url.path); nothing was done")
        }
        let components = path.dropFirst(prefix.count).split(separator: "/").map(String.init)
        try validate(components, operation: operation)
        return components
    }

    // MARK: - Opening

    /// Opens the folder at `components` (the folder itself for none), making it and the
    /// folders above it that are missing when `creating`.
    ///
    /// - Throws: ``DocumentKitError``: an invalid component, a symbolic link on the way
    ///   (``DocumentKitError/Code/invalidSymbolicLink``), or the system's error naming the folder.
    package func folder(_ components: [String], creating: Bool = false, operation: String) throws -> Directory
    {
        try validate(components, operation: operation)
        guard !components.isEmpty else { return root }
        let flags = O_RDONLY | O_DIRECTORY
        do {
            return Directory(descriptor: try resolve(components, flags, operation: operation))
        } catch Errno.noSuchFileOrDirectory where creating {
            var folder = root
            for (index, name) in components.enumerated() {
                let walked = Array(components[...index])
                switch folder.openFolder(name) {
                case .success(let fd):
                    folder = Directory(descriptor: FileDescriptor(rawValue: fd, url: url(of: walked)))
                    continue
                case .failure(.noSuchFileOrDirectory): break
                case .failure(let error):
                    throw refusal(error, walked, in: folder, name: name, operation: operation)
                }
                switch Syscall.mkdirat(folder.descriptor.rawValue, name, newFolderPermissions) {
                case .success, .failure(.fileExists): break
                case .failure(let error):
                    throw DocumentKitError(error, operation: operation, url: url(of: walked))
                }
                switch folder.openFolder(name) {
                case .success(let fd):
                    folder = Directory(descriptor: FileDescriptor(rawValue: fd, url: url(of: walked)))
                case .failure(let error):
                    throw refusal(error, walked, in: folder, name: name, operation: operation)
                }
            }
            return folder
        }
    }

    /// The folder that holds the item at `components`, opened, and the item's name in it.
    ///
    /// - Throws: As ``folder(_:creating:operation:)``; an empty path (the folder itself has no
    ///   parent here) is refused as invalid.
    package func parent(of components: [String], creating: Bool = false, operation: String) throws -> (
        folder: Directory, name: String
    ) {
        guard let name = components.last else {
            throw DocumentKitError(
                .invalidArgument, operation: operation, url: url, errno: .invalidArgument,
                detail: "an item inside it was expected, not the folder itself; nothing was done")
        }
        try validate(components, operation: operation)
        return (try folder(Array(components.dropLast()), creating: creating, operation: operation), name)
    }

    /// Opens the file at `components` with `flags` (`O_NOFOLLOW` is implied), creating it with
    /// `permissions` (less the umask) when `flags` hold `O_CREAT`.
    ///
    /// - Throws: As ``folder(_:creating:operation:)``.
    package func open(_ components: [String], _ flags: CInt, permissions: mode_t = 0, operation: String)
        throws
        -> FileDescriptor
    {
        try validate(components, operation: operation)
        guard !components.isEmpty else {
            throw DocumentKitError(
                .invalidArgument, operation: operation, url: url, errno: .invalidArgument,
                detail: "a file inside it was expected, not the folder itself; nothing was done")
        }
        return try resolve(components, flags | O_NOFOLLOW, permissions: permissions, operation: operation)
    }

    /// What the item at `components` is, itself (a link is a link); nil when nothing is there
    /// (nor, a file being in the way, can be).
    ///
    /// - Throws: An invalid component, a symbolic link on the way, or another failure to look.
    package func status(of components: [String], operation: String) throws -> FileStatus? {
        let (folder, name): (Directory, String)
        do {
            (folder, name) = try parent(of: components, operation: operation)
        } catch Errno.noSuchFileOrDirectory {
            return nil
        } catch Errno.notDirectory {
            return nil
        }
        return try folder.status(of: name, operation: operation)
    }

    /// Removes the item at `components` (a folder only if empty, with `folder`).
    ///
    /// - Throws: As ``folder(_:creating:operation:)``, or the system's error naming the item.
    package func removeItem(_ components: [String], folder: Bool = false, operation: String) throws {
        let (parent, name) = try parent(of: components, operation: operation)
        try parent.removeItem(name, folder: folder, operation: operation)
    }

    // MARK: - Resolution

    /// Opens `components` (valid, not empty) beneath the folder: `openat2(2)`, or a walk.
    private func resolve(_ components: [String], _ flags: CInt, permissions: mode_t = 0, operation: String)
        throws -> FileDescriptor
    {
        let target = url(of: components)
        if resolution == .automatic, !Self.kernelLacksOpenat2.load(ordering: .relaxed) {
            switch Syscall.openBeneath(
                root.descriptor.rawValue, components.joined(separator: "/"), flags, permissions)
            {
            case .success(let fd): return FileDescriptor(rawValue: fd, url: target)
            case .failure(.notImplemented): Self.kernelLacksOpenat2.store(true, ordering: .relaxed)
            case .failure(let error): throw refusal(error, components, operation: operation)
            }
        }
        var folder = root
        for (index, name) in components.dropLast().enumerated() {
            switch folder.openFolder(name, onlyToLookUp: true) {
            case .success(let fd):
                folder = Directory(
                    descriptor: FileDescriptor(rawValue: fd, url: url(of: Array(components[...index]))))
            case .failure(let error):
                throw refusal(
                    error, Array(components[...index]), in: folder, name: name, operation: operation)
            }
        }
        let name = components[components.count - 1]
        switch Syscall.openat(folder.descriptor.rawValue, name, flags | O_NOFOLLOW, permissions) {
        case .success(let fd): return FileDescriptor(rawValue: fd, url: target)
        case .failure(let error):
            throw refusal(error, components, in: folder, name: name, operation: operation)
        }
    }

    /// The error for a resolution the system refused; a link met on the way (`ELOOP`, or
    /// `ENOTDIR` where a walk asked for a folder and met a link) reads as such.
    private func refusal(
        _ error: Errno, _ components: [String], in folder: Directory? = nil, name: String? = nil,
        operation: String
    ) -> DocumentKitError {
        var isLink = error == .tooManySymbolicLinkLevels
        if error == .notDirectory, let folder, let name,
            case .success(let info) = Syscall.fstatat(folder.descriptor.rawValue, name, followLinks: false)
        {
            isLink = info.isSymbolicLink
        }
        if isLink {
            return DocumentKitError(
                .invalidSymbolicLink, operation: operation, url: url(of: components),
                errno: .tooManySymbolicLinkLevels,
                detail:
                    "a symbolic link is on the way, and none is followed inside \(url.path); nothing was done"
            )
        }
        if error == .crossDeviceLink {
            return DocumentKitError(
                .invalidArgument, operation: operation, url: url(of: components), errno: error,
                detail: "it leads outside \(url.path); nothing was done")
        }
        return DocumentKitError(error, operation: operation, url: url(of: components))
    }

    /// Refuses, before any system call, a path with a component that is no name here.
    private func validate(_ components: [String], operation: String) throws {
        for component in components {
            guard let reason = Self.invalidity(of: component) else { continue }
            throw DocumentKitError(
                .invalidArgument, operation: operation, url: url, errno: .invalidArgument,
                detail:
                    "“\(components.joined(separator: "/"))” is not a path inside it: \(reason); nothing was done"
            )
        }
    }

    /// Why `component` cannot be one name of a path here, or nil when it can.
    package static func invalidity(of component: String) -> String? {
        if component.isEmpty { return "a name is empty" }
        if component == "." || component == ".." { return "“\(component)” is not a name" }
        if component.utf8.contains(UInt8(ascii: "/")) { return "the name “\(component)” holds “/”" }
        if component.utf8.contains(0) { return "a name holds a NUL character" }
        return nil
    }
}

extension ContainedFolder {
    /// A folder opened beneath a ``ContainedFolder``: operations on one name in it, made
    /// relative to its descriptor, never through a symbolic link.
    package struct Directory {
        /// The folder, open.
        package let descriptor: FileDescriptor

        /// The folder's URL.
        package var url: URL { descriptor.url }

        /// The URL of `name` in the folder.
        package func url(of name: String) -> URL { url.appendingPathComponent(name, isDirectory: false) }

        /// What `name` is, itself (a link is a link); nil when there is nothing by that name.
        package func status(of name: String, operation: String) throws -> FileStatus? {
            try check(name, operation)
            switch Syscall.fileStatus(descriptor.rawValue, name, followingLinks: false) {
            case .success(let status): return status
            case .failure(.noSuchFileOrDirectory): return nil
            case .failure(let error): throw DocumentKitError(error, operation: operation, url: url(of: name))
            }
        }

        /// What `name` is, as `stat(2)` says (ownership and permissions too); nil when absent.
        package func information(about name: String, operation: String) throws -> stat? {
            try check(name, operation)
            switch Syscall.fstatat(descriptor.rawValue, name, followLinks: false) {
            case .success(let info): return info
            case .failure(.noSuchFileOrDirectory): return nil
            case .failure(let error): throw DocumentKitError(error, operation: operation, url: url(of: name))
            }
        }

        /// Opens the file `name` with `flags` and `O_NOFOLLOW`, made with `permissions` (less
        /// the umask) when `flags` hold `O_CREAT`.
        package func open(_ name: String, _ flags: CInt, permissions: mode_t = 0, operation: String) throws
            -> FileDescriptor
        {
            try check(name, operation)
            let fd = try Syscall.openat(descriptor.rawValue, name, flags | O_NOFOLLOW, permissions)
                .get(operation, url(of: name))
            return FileDescriptor(rawValue: fd, url: url(of: name))
        }

        /// Removes `name`: a folder (only if empty) with `folder`, else a file or link.
        package func removeItem(_ name: String, folder: Bool = false, operation: String) throws {
            try check(name, operation)
            _ = try Syscall.unlinkat(descriptor.rawValue, name, removeDirectory: folder).get(
                operation, url(of: name))
        }

        /// Renames `name` to `newName` in `destination` (this folder or another of the same
        /// file system); with `replacing` false, never over an item there, even one that
        /// appears meanwhile (``DocumentKitError/Code/fileExists`` naming the destination).
        package func moveItem(
            _ name: String, to destination: Directory, as newName: String, replacing: Bool, operation: String
        ) throws {
            try check(name, operation)
            try destination.check(newName, operation)
            if replacing {
                _ = try Syscall.renameat(descriptor.rawValue, name, destination.descriptor.rawValue, newName)
                    .get(operation, url(of: name))
            } else {
                try SafeSave.renameWithoutReplacing(
                    name, from: descriptor, to: newName, in: destination.descriptor,
                    url: destination.url(of: newName), operation: operation, source: url(of: name))
            }
        }

        /// Sets the permissions of `name`, never through a link.
        package func setPermissions(of name: String, to permissions: mode_t, operation: String) throws {
            try check(name, operation)
            _ = try Syscall.fchmodat(descriptor.rawValue, name, permissions).get(operation, url(of: name))
        }

        /// Flushes the folder's entries (`fsync`), so that what was made or renamed in it lasts.
        package func sync(operation: String) throws {
            try descriptor.sync(operation: operation)
        }

        /// Opens the folder `name` in this one, not through a link: for a look up only (no
        /// `fsync`, no listing) with `onlyToLookUp`.
        fileprivate func openFolder(_ name: String, onlyToLookUp: Bool = false) -> Result<CInt, Errno> {
            let access = onlyToLookUp ? CInt(CDS_O_PATH) : O_RDONLY
            return Syscall.openat(descriptor.rawValue, name, access | O_DIRECTORY | O_NOFOLLOW)
        }

        /// Refuses a name that is not one component.
        fileprivate func check(_ name: String, _ operation: String) throws {
            guard let reason = ContainedFolder.invalidity(of: name) else { return }
            throw DocumentKitError(
                .invalidArgument, operation: operation, url: url, errno: .invalidArgument,
                detail: "\(reason); nothing was done")
        }
    }
}
