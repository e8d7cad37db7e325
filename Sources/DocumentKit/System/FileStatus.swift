import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the file system says an item is: which inode it is, how big, of what kind and mode,
/// and when it was last written, changed and created.
///
/// One value is one look at the item. Two values that are equal describe an item nothing has
/// touched in between: same inode, same size, same modification and status-change times
/// (any write, rename, `chmod` or link moves the status-change time). To ask only whether the
/// bytes are the same whatever happened to the name, use ``isSameFileAndContents(as:)``.
///
/// For example:
///
/// ```swift
/// let before = FileStatus(path: "/tmp/notes.txt")
/// // ...
/// if FileStatus(path: "/tmp/notes.txt") != before { reload() }
/// ```
package struct FileStatus: Hashable, Sendable {
    /// A moment as the file system records it, to the nanosecond.
    package struct Timestamp: Hashable, Sendable, Comparable {
        package var seconds: Int64
        package var nanoseconds: UInt32

        package init(seconds: Int64, nanoseconds: UInt32) {
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        }

        package init(_ time: timespec) {
            self.init(seconds: Int64(time.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: time.tv_nsec))
        }

        package var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }

        package var timespec: timespec { Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)) }

        package static func < (a: Self, b: Self) -> Bool {
            (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
        }
    }

    package var device: UInt64
    package var inode: UInt64
    /// The file type and permission bits (`st_mode`).
    package var mode: UInt32
    /// How many names the inode has; zero once the last one is removed while it is open.
    package var linkCount: UInt64
    package var size: Int64
    package var modification: Timestamp
    package var statusChange: Timestamp
    /// Nil where the file system or kernel does not record when the item was created.
    package var birth: Timestamp?
    /// The user who owns the item (its uid).
    package var owner: UInt32
    /// The item's group (its gid).
    package var group: UInt32

    package init(
        device: UInt64, inode: UInt64, mode: UInt32, linkCount: UInt64, size: Int64,
        modification: Timestamp, statusChange: Timestamp, birth: Timestamp?, owner: UInt32 = 0,
        group: UInt32 = 0
    ) {
        self.owner = owner
        self.group = group
        self.device = device
        self.inode = inode
        self.mode = mode
        self.linkCount = linkCount
        self.size = size
        self.modification = modification
        self.statusChange = statusChange
        self.birth = birth
    }

    /// The status `stat(2)` or `fstat(2)` filled in; it carries no birth time.
    package init(_ info: stat) {
        self.init(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), mode: UInt32(info.st_mode),
            linkCount: UInt64(info.st_nlink), size: Int64(info.st_size),
            modification: Timestamp(info.st_mtim),
            statusChange: Timestamp(info.st_ctim), birth: nil, owner: UInt32(info.st_uid),
            group: UInt32(info.st_gid))
    }

    /// The status of the item at `path`, or nil when there is none (or it cannot be looked at).
    ///
    /// - Parameters:
    ///   - path: An absolute path, or one relative to the working directory.
    ///   - followingLinks: Whether a symbolic link stands for what it points to (as `stat(1)`
    ///     with `-L`), or for itself.
    package init?(path: String, followingLinks: Bool = true) {
        guard case .success(let status) = Syscall.fileStatus(atPath: path, followingLinks: followingLinks)
        else {
            return nil
        }
        self = status
    }

    package var fileType: UInt32 { mode & UInt32(S_IFMT) }
    package var isRegularFile: Bool { fileType == UInt32(S_IFREG) }
    package var isDirectory: Bool { fileType == UInt32(S_IFDIR) }
    package var isSymbolicLink: Bool { fileType == UInt32(S_IFLNK) }
    /// The permission bits, with set-user-ID, set-group-ID and sticky.
    package var permissions: mode_t { mode_t(mode & 0o7777) }

    /// Whether both describe the same file with the same contents, whatever happened to its
    /// name or status-change time (as a rename changes it).
    package func isSameFileAndContents(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode && size == other.size
            && modification == other.modification
    }

    package static func == (lhs: FileStatus, rhs: FileStatus) -> Bool {
        lhs.isSameFileAndContents(as: rhs) && lhs.statusChange == rhs.statusChange
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(inode)
        hasher.combine(size)
        hasher.combine(modification)
        hasher.combine(statusChange)
    }
}

/// `statx` is in glibc since 2.28, but Swift does not import it; it is looked up once.
private typealias StatxFunction =
    @convention(c) (CInt, UnsafePointer<CChar>, CInt, UInt32, UnsafeMutableRawPointer) -> CInt

private struct StatxLookup: @unchecked Sendable {
    // A C function pointer found by `dlsym` is immutable code: safe to share.
    let function: StatxFunction?

    static let shared = StatxLookup(
        function: dlsym(nil, "statx").map { unsafeBitCast($0, to: StatxFunction.self) })
}

extension Syscall {
    /// The status of `name` in the folder open as `directory` (or `AT_FDCWD` for a path), with
    /// the birth time where the system records it; an empty `name` with `AT_EMPTY_PATH` in
    /// `flags` is the open file `directory` itself.
    ///
    /// The corresponding C functions are `statx(2)` and, where it is missing, `fstatat(2)`.
    static func fileStatus(
        _ directory: CInt, _ name: UnsafePointer<CChar>, followingLinks: Bool
    ) -> Result<FileStatus, Errno> {
        let flags = followingLinks ? 0 : AT_SYMLINK_NOFOLLOW
        return fileStatus(directory, name, flags: flags)
    }

    private static func fileStatus(
        _ directory: CInt, _ name: UnsafePointer<CChar>, flags: CInt
    ) -> Result<FileStatus, Errno> {
        if let statx = StatxLookup.shared.function {
            // struct statx is 256 bytes with a fixed layout (linux/stat.h).
            var buffer = (
                UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0)
            )
            let basicStats: UInt32 = 0x7ff
            let birthTime: UInt32 = 0x800
            let result = withUnsafeMutableBytes(of: &buffer) { raw -> Result<FileStatus, Errno> in
                switch retrying(
                    true, { statx(directory, name, flags, basicStats | birthTime, raw.baseAddress!) })
                {
                case .failure(let error): return .failure(error)
                case .success: break
                }
                let bytes = UnsafeRawBufferPointer(raw)
                func time(_ offset: Int) -> FileStatus.Timestamp {
                    FileStatus.Timestamp(
                        seconds: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self),
                        nanoseconds: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
                }
                let mask = bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
                let major = UInt64(bytes.loadUnaligned(fromByteOffset: 136, as: UInt32.self))
                let minor = UInt64(bytes.loadUnaligned(fromByteOffset: 140, as: UInt32.self))
                // glibc's makedev, so that the device equals the one stat(2) reports.
                let device =
                    ((major & 0xfff) << 8) | ((major & 0xffff_f000) << 32) | (minor & 0xff)
                    | ((minor & 0xffff_ff00) << 12)
                return .success(
                    FileStatus(
                        device: device, inode: bytes.loadUnaligned(fromByteOffset: 32, as: UInt64.self),
                        mode: UInt32(bytes.loadUnaligned(fromByteOffset: 28, as: UInt16.self)),
                        linkCount: UInt64(bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
                        size: Int64(bitPattern: bytes.loadUnaligned(fromByteOffset: 40, as: UInt64.self)),
                        modification: time(112), statusChange: time(96),
                        birth: mask & birthTime != 0 ? time(80) : nil,
                        owner: bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self),
                        group: bytes.loadUnaligned(fromByteOffset: 24, as: UInt32.self)))
            }
            if case .failure(.notImplemented) = result {} else { return result }
        }
        var info = stat()
        return retrying { Glibc.fstatat(directory, name, &info, flags) }.map { _ in FileStatus(info) }
    }

    /// The status of the item at `path`.
    ///
    /// The corresponding C function is `statx(2)`.
    package static func fileStatus(atPath path: String, followingLinks: Bool = true) -> Result<
        FileStatus, Errno
    > {
        fileStatus(AT_FDCWD, path, followingLinks: followingLinks)
    }

    /// The status of `name` in the folder open as `directory`.
    ///
    /// The corresponding C function is `statx(2)`.
    package static func fileStatus(_ directory: CInt, _ name: String, followingLinks: Bool) -> Result<
        FileStatus, Errno
    > {
        name.withCString { fileStatus(directory, $0, followingLinks: followingLinks) }
    }

    /// The status of the open file `fd`, whatever its name is now.
    ///
    /// The corresponding C function is `statx(2)` with `AT_EMPTY_PATH`.
    package static func fileStatus(of fd: CInt) -> Result<FileStatus, Errno> {
        // AT_EMPTY_PATH (0x1000 in <fcntl.h>) is hidden behind _GNU_SOURCE from Swift.
        fileStatus(fd, "", flags: 0x1000)
    }
}
