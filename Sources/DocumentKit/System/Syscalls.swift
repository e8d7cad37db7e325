import CDocumentSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Thin wrappers over the system calls DocumentKit uses: one function a call, a `Result`
/// instead of `-1` and `errno`, and `EINTR` retried here and nowhere else.
package enum Syscall {
    @inline(__always)
    static func retrying<T: BinaryInteger>(
        _ retryOnInterrupt: Bool = true, _ body: () -> T
    ) -> Result<T, Errno> {
        while true {
            let result = body()
            if result != -1 { return .success(result) }
            let error = Errno.current
            if retryOnInterrupt && error == .interrupted { continue }
            return .failure(error)
        }
    }

    /// The corresponding C function is `openat(2)`.
    package static func openat(
        _ directory: CInt, _ path: String, _ flags: CInt, _ mode: mode_t = 0
    ) -> Result<CInt, Errno> {
        retrying { Glibc.openat(directory, path, flags | O_CLOEXEC, mode) }
    }

    /// The corresponding C function is `close(2)`. `EINTR` is not retried: the descriptor
    /// is gone either way on Linux.
    @discardableResult
    static func close(_ fd: CInt) -> Result<CInt, Errno> {
        retrying(false) { Glibc.close(fd) }
    }

    /// The corresponding C function is `write(2)`; loops until every byte is written.
    static func writeAll(_ fd: CInt, _ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, 1 << 30)
            switch retrying(true, { Glibc.write(fd, buffer.baseAddress! + offset, chunk) }) {
            case .success(let written): offset += written
            case .failure(let error): return .failure(error)
            }
        }
        return .success(offset)
    }

    /// The corresponding C function is `read(2)`.
    package static func read(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// The corresponding C function is `pread(2)`.
    package static func pread(
        _ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer, _ offset: off_t
    ) -> Result<Int, Errno> {
        retrying { Glibc.pread(fd, buffer.baseAddress, buffer.count, offset) }
    }

    /// Writes all of `buffer` at `offset`. The corresponding C function is `pwrite(2)`.
    static func pwriteAll(_ fd: CInt, _ buffer: UnsafeRawBufferPointer, offset: off_t) -> Result<Int, Errno> {
        var written = 0
        while written < buffer.count {
            let result = retrying {
                Glibc.pwrite(
                    fd, buffer.baseAddress! + written, buffer.count - written, offset + off_t(written))
            }
            switch result {
            case .success(let count) where count > 0: written += count
            case .success: return .failure(.ioError)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(written)
    }

    /// The corresponding C function is `fchmodat(2)`; follows a symbolic link.
    package static func chmod(_ path: String, _ mode: mode_t) -> Result<CInt, Errno> {
        retrying { Glibc.fchmodat(AT_FDCWD, path, mode, 0) }
    }

    /// The path with every symbolic link, `.` and `..` resolved, of an item that exists.
    ///
    /// The corresponding C function is `realpath(3)`.
    static func realPath(_ path: String) -> Result<String, Errno> {
        guard let resolved = Glibc.realpath(path, nil) else { return .failure(.current) }
        defer { free(resolved) }
        return .success(String(cString: resolved))
    }

    /// ``realPath(_:)-(String)`` for a path as raw bytes, which need not be UTF-8.
    ///
    /// The corresponding C function is `realpath(3)`.
    static func realPath(_ path: [UInt8]) -> Result<[UInt8], Errno> {
        guard let resolved = withCString(path, { Glibc.realpath($0, nil) }) else { return .failure(.current) }
        defer { free(resolved) }
        return .success(
            Array(
                UnsafeBufferPointer(
                    start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self),
                    count: strlen(resolved))))
    }

    /// The corresponding C function is `ftruncate(2)`.
    static func ftruncate(_ fd: CInt, _ length: off_t) -> Result<CInt, Errno> {
        retrying { Glibc.ftruncate(fd, length) }
    }

    /// The corresponding C function is `fsync(2)`.
    static func fsync(_ fd: CInt) -> Result<CInt, Errno> {
        retrying { Glibc.fsync(fd) }
    }

    /// Flushes every change of the file system holding `fd` (data, names, metadata) to the
    /// disk; errors of earlier write-backs of that file system are reported here.
    ///
    /// The corresponding C function is `syncfs(2)`.
    static func syncfs(_ fd: CInt) -> Result<CInt, Errno> {
        retrying { cds_syncfs(fd) }
    }

    /// The corresponding C function is `fstat(2)`.
    static func fstat(_ fd: CInt) -> Result<stat, Errno> {
        var info = stat()
        return retrying { Glibc.fstat(fd, &info) }.map { _ in info }
    }

    /// The corresponding C function is `fstatat(2)`.
    static func fstatat(_ directory: CInt, _ path: String, followLinks: Bool) -> Result<stat, Errno> {
        var info = stat()
        let flags = followLinks ? 0 : AT_SYMLINK_NOFOLLOW
        return retrying { Glibc.fstatat(directory, path, &info, flags) }.map { _ in info }
    }

    /// Whether this user may access `path` as `mode` asks (`R_OK`, `W_OK`, `X_OK`), by its
    /// real ids as the kernel checks them.
    ///
    /// The corresponding C function is `access(2)`.
    static func isAccessible(_ path: String, _ mode: CInt) -> Bool {
        (try? retrying { Glibc.access(path, mode) }.get()) != nil
    }

    /// The corresponding C function is `fchmod(2)`.
    package static func fchmod(_ fd: CInt, _ mode: mode_t) -> Result<CInt, Errno> {
        retrying { Glibc.fchmod(fd, mode) }
    }

    /// The corresponding C function is `fchown(2)`.
    package static func fchown(_ fd: CInt, _ owner: uid_t, _ group: gid_t) -> Result<CInt, Errno> {
        retrying { Glibc.fchown(fd, owner, group) }
    }

    /// The corresponding C function is `renameat(2)`.
    package static func renameat(
        _ fromDirectory: CInt, _ from: String, _ toDirectory: CInt, _ to: String
    ) -> Result<CInt, Errno> {
        retrying { Glibc.renameat(fromDirectory, from, toDirectory, to) }
    }

    /// The corresponding C function is `renameat2(2)`.
    static func renameat2(
        _ fromDirectory: CInt, _ from: String, _ toDirectory: CInt, _ to: String, _ flags: CUnsignedInt
    ) -> Result<CInt, Errno> {
        retrying { cds_renameat2(fromDirectory, from, toDirectory, to, flags) }
    }

    /// The corresponding C function is `unlinkat(2)`.
    package static func unlinkat(_ directory: CInt, _ path: String, removeDirectory: Bool = false) -> Result<
        CInt, Errno
    > {
        retrying { Glibc.unlinkat(directory, path, removeDirectory ? AT_REMOVEDIR : 0) }
    }

    /// The corresponding C function is `mkdirat(2)`.
    package static func mkdirat(_ directory: CInt, _ path: String, _ mode: mode_t) -> Result<CInt, Errno> {
        retrying { Glibc.mkdirat(directory, path, mode) }
    }

    /// The corresponding C function is `linkat(2)`.
    static func linkat(
        _ fromDirectory: CInt, _ from: String, _ toDirectory: CInt, _ to: String
    ) -> Result<CInt, Errno> {
        retrying { Glibc.linkat(fromDirectory, from, toDirectory, to, 0) }
    }

    /// The corresponding C function is `symlinkat(2)`.
    static func symlinkat(_ destination: String, _ directory: CInt, _ path: String) -> Result<CInt, Errno> {
        retrying { Glibc.symlinkat(destination, directory, path) }
    }

    /// The corresponding C function is `readlinkat(2)`.
    static func readlinkat(_ directory: CInt, _ path: String) -> Result<String, Errno> {
        var capacity = 256
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let result = retrying { Glibc.readlinkat(directory, path, &buffer, capacity) }
            switch result {
            case .failure(let error): return .failure(error)
            case .success(let length) where length < capacity:
                let bytes = buffer[0..<length].map { UInt8(bitPattern: $0) }
                return .success(String(decoding: bytes, as: UTF8.self))
            case .success:
                capacity *= 4
            }
        }
    }

    /// The corresponding C function is `umask(2)`; reads the mask without changing it for long.
    static func currentUmask() -> mode_t {
        let mask = Glibc.umask(0o022)
        Glibc.umask(mask)
        return mask
    }

    /// The corresponding C function is `flistxattr(2)`.
    static func listExtendedAttributes(_ fd: CInt) -> Result<[String], Errno> {
        while true {
            let size = retrying { cds_flistxattr(fd, nil, 0) }
            guard case .success(let needed) = size else { return size.map { _ in [] } }
            if needed == 0 { return .success([]) }
            var buffer = [CChar](repeating: 0, count: needed)
            let listed = retrying { cds_flistxattr(fd, &buffer, needed) }
            switch listed {
            case .failure(.resultOutOfRange): continue  // grew between the two calls
            case .failure(let error): return .failure(error)
            case .success(let length):
                let names = buffer[0..<length].split(separator: 0).map {
                    String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                }
                return .success(names)
            }
        }
    }

    /// The corresponding C function is `fgetxattr(2)`.
    static func getExtendedAttribute(_ fd: CInt, _ name: String) -> Result<[UInt8], Errno> {
        while true {
            let size = retrying { cds_fgetxattr(fd, name, nil, 0) }
            guard case .success(let needed) = size else { return size.map { _ in [] } }
            var buffer = [UInt8](repeating: 0, count: needed)
            let read = buffer.withUnsafeMutableBytes { raw in
                retrying { cds_fgetxattr(fd, name, raw.baseAddress, needed) }
            }
            switch read {
            case .failure(.resultOutOfRange): continue
            case .failure(let error): return .failure(error)
            case .success(let length): return .success(Array(buffer[0..<length]))
            }
        }
    }

    /// The corresponding C function is `fsetxattr(2)`.
    static func setExtendedAttribute(_ fd: CInt, _ name: String, _ value: [UInt8]) -> Result<CInt, Errno> {
        value.withUnsafeBytes { raw in
            retrying { cds_fsetxattr(fd, name, raw.baseAddress, raw.count, 0) }
        }
    }

    /// The corresponding C function is `fremovexattr(2)`.
    static func removeExtendedAttribute(_ fd: CInt, _ name: String) -> Result<CInt, Errno> {
        retrying { cds_fremovexattr(fd, name) }
    }
}
