import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which processes are alive: how leftovers of a killed process (a temporary file, a staged
/// version, a presenter listing) are told from a live process's work in progress; and whose
/// they are, to name the holder of a lock.
package enum ProcessIdentity {
    /// Whether a process with this id exists. One that belongs to another user exists too
    /// (`EPERM`); only `ESRCH` says it is gone. The corresponding C function is `kill(2)` with
    /// signal 0.
    static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// The user running process `pid`: the owner of its `/proc` folder; nil when the process
    /// is gone or `/proc` is not there.
    package static func user(of pid: pid_t) -> uid_t? {
        FileStatus(path: "/proc/\(pid)").map { uid_t($0.owner) }
    }

    /// The name the user database gives `uid`; nil when it has none.
    ///
    /// The corresponding C function is `getpwuid_r(3)`.
    package static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var size = 1024
        while size <= 1 << 20 {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let result = getpwuid_r(uid, &entry, buffer, size, &found)
            if result == ERANGE {
                size *= 4
                continue
            }
            guard result == 0, found != nil, let name = entry.pw_name else { return nil }
            return String(cString: name)
        }
        return nil
    }

    /// “process PID (user NAME)”, as much of it as the system tells: the user's name, else its
    /// number, else nothing; for pid 0 (a lock held from another computer of a network file
    /// system), that the system does not name it.
    package static func describe(_ pid: pid_t) -> String {
        guard pid > 0 else { return "a process the system does not name (on another computer?)" }
        guard let uid = user(of: pid) else { return "process \(pid)" }
        return "process \(pid) (user \(userName(uid) ?? String(uid)))"
    }
}
