import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Syscall {
    /// The names in the folder open as `directory`, without `.` and `..`.
    ///
    /// The descriptor is duplicated because `fdopendir` takes ownership of the one it is
    /// given; the caller's descriptor stays open and usable as an anchor for `*at` calls.
    /// The corresponding C functions are `fdopendir(3)` and `readdir(3)`.
    static func directoryEntries(_ directory: CInt) -> Result<[String], Errno> {
        let copy: CInt
        switch retrying(true, { fcntl(directory, F_DUPFD_CLOEXEC, 0) }) {
        case .success(let fd): copy = fd
        case .failure(let error): return .failure(error)
        }
        guard let stream = fdopendir(copy) else {
            let error = Errno.current
            close(copy)
            return .failure(error)
        }
        defer { closedir(stream) }
        // A duplicate shares the file offset: start from the top whatever was read before.
        rewinddir(stream)
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { return .failure(.current) }
                return .success(names)
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Sets the access and modification times of an open file; `nil` leaves a time as it is.
    ///
    /// The corresponding C function is `futimens(2)`.
    static func futimens(_ fd: CInt, modification: timespec?) -> Result<CInt, Errno> {
        // UTIME_OMIT is a C macro Swift does not import: ((1 << 30) - 2) in <sys/stat.h>.
        let omit = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
        var times = [omit, modification ?? omit]
        return retrying { Glibc.futimens(fd, &times) }
    }
}

extension timespec {
    /// The time nearest to `date`, to the nanosecond.
    init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        var seconds = interval.rounded(.down)
        var nanoseconds = ((interval - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 {
            seconds += 1
            nanoseconds -= 1e9
        }
        self.init(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }
}
