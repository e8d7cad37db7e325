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

    /// Calls `body` with `bytes` as a NUL-terminated C string.
    static func withCString<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
