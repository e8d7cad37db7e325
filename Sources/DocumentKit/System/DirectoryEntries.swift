import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One name in a folder, as the folder lists it: nothing is opened or looked at to make it.
///
/// For example:
///
/// ```swift
/// for entry in try DirectoryEntry.entries(ofFolderAt: folder) where entry.kind != .directory {
///     print(entry.name)
/// }
/// ```
package struct DirectoryEntry: Hashable, Sendable {
    /// What kind of item a name is, as the folder says (`d_type`).
    package enum Kind: Hashable, Sendable {
        case regularFile
        case directory
        case symbolicLink
        /// A socket, pipe, device...
        case other
    }

    /// The name's bytes, which need not be UTF-8.
    package var fileSystemName: [UInt8]
    /// Nil where the file system does not say (`DT_UNKNOWN`): look at the item to know.
    package var kind: Kind?

    package init(fileSystemName: [UInt8], kind: Kind?) {
        self.fileSystemName = fileSystemName
        self.kind = kind
    }

    /// The name, with any byte that is not UTF-8 replaced.
    package var name: String { String(decoding: fileSystemName, as: UTF8.self) }
    /// The name, or nil when it is not UTF-8 (and so cannot be typed back).
    package var validName: String? { String(validating: fileSystemName, as: UTF8.self) }
    package var isDirectory: Bool { kind == .directory }

    /// The entries of the folder at `url`, without `.` and `..`, in the folder's order.
    ///
    /// - Parameters:
    ///   - url: The folder; a symbolic link to one is followed.
    ///   - operation: What the caller was doing, for the error.
    /// - Throws: ``DocumentKitError`` naming the folder and the operation when it cannot be
    ///   opened or read.
    package static func entries(ofFolderAt url: URL, operation: String = "list the folder") throws
        -> [DirectoryEntry]
    {
        let folder = try FileDescriptor.openDirectory(url, operation: operation)
        return try Syscall.directoryEntries(in: folder.rawValue).get(operation, url)
    }

    /// The entries of the folder at `url` that `include` selects, each with its status; an
    /// entry removed between the listing and its status is left out.
    ///
    /// One `readdir` pass and one `statx` per selected name, relative to the open folder: about
    /// what `ls -l` costs.
    ///
    /// - Parameters:
    ///   - url: The folder; a symbolic link to one is followed.
    ///   - followingLinks: Whether an entry that is a symbolic link has the status of what it
    ///     points to, or its own.
    ///   - operation: What the caller was doing, for the error.
    ///   - include: Which entries to look at, from what the listing says.
    /// - Throws: ``DocumentKitError`` naming the folder and the operation when it cannot be
    ///   opened or read.
    package static func entries(
        ofFolderAt url: URL, followingLinks: Bool, operation: String = "list the folder",
        where include: (DirectoryEntry) -> Bool
    ) throws -> [(entry: DirectoryEntry, status: FileStatus)] {
        let folder = try FileDescriptor.openDirectory(url, operation: operation)
        return try Syscall.directoryEntries(in: folder.rawValue).get(operation, url).compactMap { entry in
            guard include(entry) else { return nil }
            let status = Syscall.withCString(entry.fileSystemName) {
                Syscall.fileStatus(folder.rawValue, $0, followingLinks: followingLinks)
            }
            // Gone (or unreadable) since it was listed: the folder no longer holds it for us.
            guard case .success(let status) = status else { return nil }
            return (entry, status)
        }
    }
}

extension DirectoryEntry.Kind {
    init?(_ type: UInt8) {
        switch Int32(type) {
        case Int32(DT_UNKNOWN): return nil
        case Int32(DT_REG): self = .regularFile
        case Int32(DT_DIR): self = .directory
        case Int32(DT_LNK): self = .symbolicLink
        default: self = .other
        }
    }
}

extension Syscall {
    /// The entries of the folder open as `directory`, without `.` and `..`; with
    /// `onlyDirectories`, an entry the folder says is not a folder is skipped before its name is
    /// copied (a folder of 10,000 files has few folders).
    ///
    /// The descriptor is duplicated because `fdopendir` takes ownership of the one it is
    /// given; the caller's descriptor stays open and usable as an anchor for `*at` calls.
    /// The corresponding C functions are `fdopendir(3)` and `readdir(3)`.
    package static func directoryEntries(in directory: CInt, onlyDirectories: Bool = false) -> Result<
        [DirectoryEntry], Errno
    > {
        let copy: CInt
        switch retrying(true, { fcntl(directory, F_DUPFD_CLOEXEC, 0) }) {
        case .success(let fd): copy = fd
        case .failure(let error): return .failure(error)
        }
        guard let stream = fdopendir(copy) else {
            let error = Errno.current
            close(copy)
            return .failure(error)
        }
        // closedir fails only for a bad stream; the names are read either way.
        defer { closedir(stream) }
        // A duplicate shares the file offset: start from the top whatever was read before.
        rewinddir(stream)
        var entries: [DirectoryEntry] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { return .failure(.current) }
                return .success(entries)
            }
            let type = entry.pointee.d_type
            if onlyDirectories && type != UInt8(DT_DIR) && type != UInt8(DT_UNKNOWN) { continue }
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            entries.append(DirectoryEntry(fileSystemName: name, kind: DirectoryEntry.Kind(type)))
        }
    }

    /// The names in the folder open as `directory`, without `.` and `..`.
    ///
    /// The corresponding C functions are `fdopendir(3)` and `readdir(3)`.
    static func directoryNames(in directory: CInt) -> Result<[String], Errno> {
        directoryEntries(in: directory).map { $0.map(\.name) }
    }

    /// The entries of the folder at `path` (raw bytes, not following a symbolic link), each
    /// with its kind known (looked at where the folder does not say); with `onlyDirectories`,
    /// the folders only.
    ///
    /// The corresponding C functions are `openat(2)`, `fdopendir(3)`, `readdir(3)` and,
    /// where the file system does not fill in `d_type`, `statx(2)`.
    static func directoryEntries(
        atPath path: [UInt8], onlyDirectories: Bool = false
    ) -> Result<[DirectoryEntry], Errno> {
        let opened = withCString(path) { openat(AT_FDCWD, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW) }
        let fd: CInt
        switch opened {
        case .success(let value): fd = value
        case .failure(let error): return .failure(error)
        }
        defer { close(fd) }
        return directoryEntries(in: fd, onlyDirectories: onlyDirectories).map { entries in
            entries.compactMap { entry in
                var entry = entry
                if entry.kind == nil {
                    let status = withCString(entry.fileSystemName) {
                        fileStatus(fd, $0, followingLinks: false)
                    }
                    // One that cannot be looked at is listed as what it most likely is, a file.
                    entry.kind = (try? status.get())?.isDirectory == true ? .directory : .other
                }
                return entry.isDirectory || !onlyDirectories ? entry : nil
            }
        }
    }
}

extension Syscall {
    /// Sets the access and modification times of an open file; `nil` leaves a time as it is.
    ///
    /// The corresponding C function is `futimens(2)`.
    package static func futimens(_ fd: CInt, modification: timespec?) -> Result<CInt, Errno> {
        // UTIME_OMIT is a C macro Swift does not import: ((1 << 30) - 2) in <sys/stat.h>.
        let omit = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
        var times = [omit, modification ?? omit]
        return retrying { Glibc.futimens(fd, &times) }
    }
}

extension timespec {
    /// The time nearest to `date`, to the nanosecond.
    init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        var seconds = interval.rounded(.down)
        var nanoseconds = ((interval - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 {
            seconds += 1
            nanoseconds -= 1e9
        }
        self.init(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }
}
