import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which processes are alive: how leftovers of a killed process (a temporary file, a staged
/// version, a presenter listing) are told from a live process's work in progress.
enum ProcessIdentity {
    /// Whether a process with this id exists. One that belongs to another user exists too
    /// (`EPERM`); only `ESRCH` says it is gone. The corresponding C function is `kill(2)` with
    /// signal 0.
    static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}
