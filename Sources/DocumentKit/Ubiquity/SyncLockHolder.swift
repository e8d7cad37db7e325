import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The process that holds a container's sync lock (``SyncStateFiles/lock(forContainer:stateHome:)``),
/// and what it said of itself: how `docs status` lists the agents running for this user and
/// `docs sync --stop` finds the one to stop.
///
/// The holder writes a record into the lock file once it holds the lock: its container, and
/// whether it is an agent (a sync that goes on, `docs sync --watch`) or a one-shot sync. The
/// process itself is named by the system (`/proc/locks`), not by the record: a record left by
/// a holder that died names a process id the system may have given another program since.
package struct SyncLockHolder: Codable, Sendable, Equatable {
    /// The process holding the lock.
    package var pid: Int32
    /// The container's path, as the holder synced it.
    package var container: String
    /// Whether the holder keeps syncing (an agent) rather than syncing once.
    package var isAgent: Bool

    package init(pid: Int32, container: String, isAgent: Bool) {
        self.pid = pid
        self.container = container
        self.isAgent = isAgent
    }

    /// The largest record read: a path and two numbers.
    private static let largest = 65_536

    /// Writes this record into the lock file open at `fd`, which this process holds; a record
    /// that cannot be written leaves the lock held and unnamed (the list shows its process).
    package func write(toLockAt fd: CInt) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        _ = Syscall.ftruncate(fd, 0)
        _ = data.withUnsafeBytes { Syscall.pwriteAll(fd, $0, offset: 0) }
    }

    /// Whether a process holds the lock at `lock` now.
    package static func isHeld(_ lock: URL) -> Bool {
        whileHeld(lock) { _ in true } ?? false
    }

    /// `body` with the lock file at `lock` open, when a process holds the lock; nil when
    /// none does (or there is no lock file).
    private static func whileHeld<T>(_ lock: URL, _ body: (CInt) -> T?) -> T? {
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, lock.path, O_RDONLY | O_CLOEXEC, 0) else {
            return nil
        }
        defer { _ = Syscall.close(fd) }
        if case .success = Syscall.flock(fd, LOCK_SH | LOCK_NB) {
            _ = Syscall.flock(fd, LOCK_UN)
            return nil
        }
        return body(fd)
    }

    /// The holder of the lock at `lock`; nil when no process holds it.
    package static func of(lock: URL) -> SyncLockHolder? {
        whileHeld(lock) { fd in holder(ofLockOpenAt: fd) }
    }

    private static func holder(ofLockOpenAt fd: CInt) -> SyncLockHolder? {
        guard case .success(let status) = Syscall.fstat(fd) else { return nil }
        var record: SyncLockHolder?
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: largest, alignment: 1)
        defer { buffer.deallocate() }
        if case .success(let count) = Syscall.pread(fd, buffer, 0), count > 0 {
            record = try? JSONDecoder().decode(Self.self, from: Data(buffer[..<count]))
        }
        let pid = Self.flockHolder(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        guard let pid = pid ?? record?.pid else { return nil }
        guard let record, record.pid == pid else {
            // Held by a process that has not said what it is yet, or whose record is gone.
            return SyncLockHolder(pid: pid, container: record?.container ?? "", isAgent: false)
        }
        return record
    }

    /// The holders of every container's sync lock under `stateHome`, by container path.
    package static func all(stateHome: URL? = nil) -> [SyncLockHolder] {
        let folder = SyncStateFiles.folder(stateHome: stateHome)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return
            names
            .filter { $0.hasSuffix(".sqlite3.lock") }
            .compactMap { of(lock: folder.appendingPathComponent($0)) }
            .sorted { $0.container < $1.container }
    }

    /// The process holding a `flock` on the file (`device`, `inode`), as `/proc/locks` names
    /// it; nil when it names none (no `/proc`, or the lock was just let go).
    static func flockHolder(device: UInt64, inode: UInt64) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        func hex(_ number: UInt64) -> String {
            let digits = String(number, radix: 16)
            return digits.count < 2 ? "0" + digits : digits
        }
        let file = "\(hex(major)):\(hex(minor)):\(inode)"
        for line in text.split(separator: "\n") {
            // `1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; a waiter's line has `->`.
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == file, let pid = Int32(fields[4])
            else { continue }
            return pid
        }
        return nil
    }
}
