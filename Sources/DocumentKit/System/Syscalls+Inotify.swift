#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Paths here are raw bytes, not `String`: a file name on Linux is any bytes but `/` and
// NUL, and a `String` would replace bytes that are not UTF-8, naming a different file.

extension Syscall {
    /// Creates an inotify instance whose descriptor is non-blocking and closed on `exec`.
    ///
    /// The corresponding C function is `inotify_init1(2)`.
    static func inotifyInit() -> Result<CInt, Errno> {
        retrying { inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC)) }
    }

    /// Starts watching the folder at `path` (raw bytes, no terminating NUL) for the events
    /// in `mask`, or changes the mask of an existing watch of the same inode.
    ///
    /// Returns the watch descriptor; the kernel returns the same one for every path that
    /// leads to an inode it already watches. The corresponding C function is
    /// `inotify_add_watch(2)`.
    static func inotifyAddWatch(_ fd: CInt, _ path: [UInt8], _ mask: UInt32) -> Result<CInt, Errno> {
        withCString(path) { pointer in retrying { inotify_add_watch(fd, pointer, mask) } }
    }

    /// Stops a watch; the kernel then queues an `IN_IGNORED` event for it.
    ///
    /// The corresponding C function is `inotify_rm_watch(2)`.
    @discardableResult
    static func inotifyRemoveWatch(_ fd: CInt, _ watch: CInt) -> Result<CInt, Errno> {
        retrying { inotify_rm_watch(fd, watch) }
    }

    /// The entries of the folder at `path` (raw bytes), without `.` and `..`, each with
    /// whether it is a folder (not following symbolic links); with `onlyDirectories`, the folders only.
    ///
    /// The corresponding C functions are `openat(2)`, `fdopendir(3)`, `readdir(3)` and,
    /// where the file system does not fill in `d_type`, `fstatat(2)`.
    static func directoryEntries(
        atPath path: [UInt8], onlyDirectories: Bool = false
    ) -> Result<[(name: [UInt8], isDirectory: Bool)], Errno> {
        let opened = withCString(path) { pointer in
            retrying { Glibc.openat(AT_FDCWD, pointer, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) }
        }
        let fd: CInt
        switch opened {
        case .success(let value): fd = value
        case .failure(let error): return .failure(error)
        }
        guard let stream = fdopendir(fd) else {
            let error = Errno.current
            _ = Glibc.close(fd)
            return .failure(error)
        }
        defer { closedir(stream) }
        var entries: [(name: [UInt8], isDirectory: Bool)] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { return .failure(.current) }
                return .success(entries)
            }
            // Skipped before its name is copied: a folder of 10,000 files has few folders.
            if onlyDirectories && entry.pointee.d_type != UInt8(DT_DIR)
                && entry.pointee.d_type != UInt8(DT_UNKNOWN)
            {
                continue
            }
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                let status = withCString(name) { pointer in
                    retrying { Glibc.fstatat(dirfd(stream), pointer, &info, AT_SYMLINK_NOFOLLOW) }
                }
                isDirectory = (try? status.get()) != nil && (info.st_mode & S_IFMT) == S_IFDIR
            }
            if isDirectory || !onlyDirectories { entries.append((name, isDirectory)) }
        }
    }

    /// Calls `body` with `bytes` as a NUL-terminated C string.
    static func withCString<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
