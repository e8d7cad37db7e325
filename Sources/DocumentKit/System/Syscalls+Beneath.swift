import CDocumentSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Syscall {
    /// Opens `path` relative to the folder open as `directory`, resolved beneath it: no
    /// absolute path, no `..` above it, and no symbolic link followed at any step (`ELOOP`).
    /// `ENOSYS` where the kernel (before Linux 5.6) or a seccomp filter lacks the call.
    ///
    /// The corresponding C function is `openat2(2)` with `RESOLVE_BENEATH |
    /// RESOLVE_NO_SYMLINKS`.
    static func openBeneath(
        _ directory: CInt, _ path: String, _ flags: CInt, _ mode: mode_t = 0
    ) -> Result<CInt, Errno> {
        retrying { cds_openat2_beneath(directory, path, flags | O_CLOEXEC, CUnsignedInt(mode)) }
    }

    /// Sets the permissions of `name` in the folder open as `directory`, never through a
    /// symbolic link (`EOPNOTSUPP` for one).
    ///
    /// The corresponding C function is `fchmodat(2)` with `AT_SYMLINK_NOFOLLOW`.
    static func fchmodat(_ directory: CInt, _ name: String, _ mode: mode_t) -> Result<CInt, Errno> {
        retrying { Glibc.fchmodat(directory, name, mode, AT_SYMLINK_NOFOLLOW) }
    }
}
