import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DocumentQuery {
    /// A moment as the file system records it, to the nanosecond.
    struct Timestamp: Hashable, Sendable, Comparable {
        var seconds: Int64
        var nanoseconds: UInt32

        var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }

        static func < (a: Self, b: Self) -> Bool {
            (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
        }
    }

    /// What one `statx(2)` (or `fstatat(2)`) says about an item, without following a
    /// symbolic link. Two statuses that are equal describe an unchanged item: any write
    /// moves the change time.
    struct FileStatus: Hashable, Sendable {
        var mode: UInt32
        var inode: UInt64
        var size: Int64
        var modification: Timestamp
        var change: Timestamp
        /// Nil where the file system or kernel does not record when the item was created.
        var birth: Timestamp?

        var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
        var isSymbolicLink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }
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
    /// The status of `name` in the folder open as `directory` (or `AT_FDCWD` for a path),
    /// not following a symbolic link, with the birth time where the system records it.
    ///
    /// The corresponding C functions are `statx(2)` and, where it is missing, `fstatat(2)`.
    static func itemStatus(_ directory: CInt, _ name: UnsafePointer<CChar>) -> Result<
        DocumentQuery.FileStatus, Errno
    > {
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
            let result = withUnsafeMutableBytes(of: &buffer) {
                raw -> Result<DocumentQuery.FileStatus, Errno> in
                switch retrying(
                    true,
                    { statx(directory, name, AT_SYMLINK_NOFOLLOW, basicStats | birthTime, raw.baseAddress!) })
                {
                case .failure(let error): return .failure(error)
                case .success: break
                }
                let bytes = UnsafeRawBufferPointer(raw)
                func time(_ offset: Int) -> DocumentQuery.Timestamp {
                    DocumentQuery.Timestamp(
                        seconds: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self),
                        nanoseconds: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
                }
                let mask = bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
                return .success(
                    DocumentQuery.FileStatus(
                        mode: UInt32(bytes.loadUnaligned(fromByteOffset: 28, as: UInt16.self)),
                        inode: bytes.loadUnaligned(fromByteOffset: 32, as: UInt64.self),
                        size: Int64(bitPattern: bytes.loadUnaligned(fromByteOffset: 40, as: UInt64.self)),
                        modification: time(112), change: time(96),
                        birth: mask & birthTime != 0 ? time(80) : nil))
            }
            if case .failure(.notImplemented) = result {} else { return result }
        }
        var info = stat()
        switch retrying(true, { Glibc.fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) }) {
        case .failure(let error): return .failure(error)
        case .success: break
        }
        return .success(
            DocumentQuery.FileStatus(
                mode: UInt32(info.st_mode), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                modification: .init(
                    seconds: Int64(info.st_mtim.tv_sec), nanoseconds: UInt32(info.st_mtim.tv_nsec)),
                change: .init(seconds: Int64(info.st_ctim.tv_sec), nanoseconds: UInt32(info.st_ctim.tv_nsec)),
                birth: nil))
    }
}
