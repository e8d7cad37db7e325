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
