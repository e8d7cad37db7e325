import CDocumentSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Syscall {
    /// Waits for, or with `LOCK_NB` tries once for, a whole-file lock (`LOCK_EX`, `LOCK_SH`)
    /// on `fd`'s open file description, or releases it (`LOCK_UN`).
    ///
    /// The corresponding C function is `flock(2)`.
    package static func flock(_ fd: CInt, _ operation: CInt) -> Result<CInt, Errno> {
        retrying { cFlock(fd, operation) }
    }

    /// Releases every lock `fd`'s open file description holds on its file.
    ///
    /// The corresponding C function is `fcntl(2)` with `F_OFD_SETLK` and `F_UNLCK` over the
    /// whole file.
    static func unlockAll(_ fd: CInt) -> Result<CInt, Errno> {
        retrying { cds_fcntl_lock(fd, CDS_F_OFD_SETLK, CShort(F_UNLCK), 0, 0) }
    }

    /// Tries once to take (`F_RDLCK`, `F_WRLCK`) or release (`F_UNLCK`) a lock of this
    /// process over the whole file open as `fd`; `false` when another process holds a
    /// conflicting one. A write lock needs `fd` open for writing, a read lock for reading.
    ///
    /// The lock is the process's, not the descriptor's: it does not keep out the process's
    /// own threads, and closing any descriptor of the file releases it.
    ///
    /// The corresponding C function is `fcntl(2)` with `F_SETLK`.
    package static func tryLockFile(_ fd: CInt, _ lockType: CShort) -> Result<Bool, Errno> {
        let result = retrying { cds_fcntl_lock(fd, F_SETLK, lockType, 0, 0) }
        switch result {
        case .success: return .success(true)
        // The kernel reports a conflict as either.
        case .failure(.resourceTemporarilyUnavailable), .failure(.permissionDenied): return .success(false)
        case .failure(let error): return .failure(error)
        }
    }

    /// The process holding a lock that conflicts with a `lockType` lock of this process over
    /// the whole file open as `fd`: nil when none does, 0 where the system does not say
    /// which (a lock taken on another computer of a network file system).
    ///
    /// The corresponding C function is `fcntl(2)` with `F_GETLK`.
    package static func fileLockHolder(_ fd: CInt, _ lockType: CShort) -> Result<pid_t?, Errno> {
        var holder: pid_t = 0
        var conflicting: CInt = 0
        return retrying { cds_fcntl_getlk(fd, F_GETLK, lockType, &holder, &conflicting) }.map { _ in
            conflicting == 0 ? nil : max(holder, 0)
        }
    }

    /// The corresponding C function is `openat(2)`, for a name already in C form.
    static func openat(
        _ directory: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t = 0
    ) -> Result<CInt, Errno> {
        retrying { Glibc.openat(directory, path, flags | O_CLOEXEC, mode) }
    }

    /// Tries once to lock (`F_RDLCK` or `F_WRLCK`) bytes `start..<start+length` of `fd`'s open file description;
    /// `false` when another open file description holds a conflicting lock.
    ///
    /// The corresponding C function is `fcntl(2)` with `F_OFD_SETLK`.
    static func tryLockRange(
        _ fd: CInt, _ lockType: CShort, start: off_t, length: off_t
    ) -> Result<Bool, Errno> {
        let result = retrying { cds_fcntl_lock(fd, CDS_F_OFD_SETLK, lockType, start, length) }
        switch result {
        case .success: return .success(true)
        // The kernel reports a conflict as either, depending on the path it took.
        case .failure(.resourceTemporarilyUnavailable), .failure(.permissionDenied): return .success(false)
        case .failure(let error): return .failure(error)
        }
    }
}

/// `flock(2)` under a name of its own: inside `Syscall` the name is the wrapper's, and
/// `Glibc.flock` finds only `struct flock`.
private func cFlock(_ fd: CInt, _ operation: CInt) -> CInt {
    flock(fd, operation)
}
