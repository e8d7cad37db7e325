import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open file descriptor that closes itself, with the path it was opened for so that
/// every error can name the file.
package final class FileDescriptor {
    package let rawValue: CInt
    package let url: URL

    package init(rawValue: CInt, url: URL) {
        self.rawValue = rawValue
        self.url = url
    }

    deinit { Syscall.close(rawValue) }

    /// Opens `url` relative to nothing (an absolute path).
    package static func open(_ url: URL, _ flags: CInt, mode: mode_t = 0, operation: String) throws
        -> FileDescriptor
    {
        switch Syscall.openat(AT_FDCWD, url.path, flags, mode) {
        case .success(let fd): return FileDescriptor(rawValue: fd, url: url)
        case .failure(let error): throw DocumentKitError(error, operation: operation, url: url)
        }
    }

    /// Opens the folder `url` for use as the anchor of `*at` calls and for `fsync`.
    package static func openDirectory(_ url: URL, operation: String) throws -> FileDescriptor {
        try open(url, O_RDONLY | O_DIRECTORY, operation: operation)
    }

    func stat(operation: String) throws -> stat {
        try Syscall.fstat(rawValue).get(operation, url)
    }

    package func sync(operation: String = "fsync") throws {
        _ = try Syscall.fsync(rawValue).get(operation, url)
    }

    /// Flushes every change of the file system holding this file to the disk: one call for the
    /// changes of many files, where each `fsync` would flush the disk again.
    package func syncFileSystem(operation: String = "syncfs") throws {
        _ = try Syscall.syncfs(rawValue).get(operation, url)
    }

    package func writeAll(_ bytes: UnsafeRawBufferPointer, operation: String = "write") throws {
        _ = try Syscall.writeAll(rawValue, bytes).get(operation, url)
    }

    /// Reads the whole file from its start: `size` is a hint, the file may have grown or shrunk.
    func readToEnd(sizeHint: Int, operation: String = "read") throws -> Data {
        var data = Data(count: max(sizeHint, 0) + 1)
        var length = 0
        while true {
            if length == data.count { data.count = data.count * 2 }
            let count = try data.withUnsafeMutableBytes { raw -> Int in
                let slice = UnsafeMutableRawBufferPointer(rebasing: raw[length...])
                return try Syscall.read(rawValue, slice).get(operation, url)
            }
            if count == 0 { break }
            length += count
        }
        data.count = length
        return data
    }
}

extension Result where Failure == Errno {
    /// The value, or a ``DocumentKitError`` naming the operation and file.
    package func get(_ operation: String, _ url: URL?) throws -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let error): throw DocumentKitError(error, operation: operation, url: url)
        }
    }
}

extension stat {
    var fileType: mode_t { st_mode & S_IFMT }
    var isRegularFile: Bool { fileType == S_IFREG }
    var isDirectory: Bool { fileType == S_IFDIR }
    var isSymbolicLink: Bool { fileType == S_IFLNK }
    var permissions: mode_t { st_mode & 0o7777 }
    var modificationDate: Date {
        Date(timeIntervalSince1970: TimeInterval(st_mtim.tv_sec) + TimeInterval(st_mtim.tv_nsec) / 1e9)
    }
    var creationDate: Date {
        Date(timeIntervalSince1970: TimeInterval(st_ctim.tv_sec) + TimeInterval(st_ctim.tv_nsec) / 1e9)
    }
}
