import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a coordination-lock child command; returns false if `name` is not one.
///
/// The lock folder is the one `StandardDirectories.current` names, so a test points the
/// child at its own through `XDG_RUNTIME_DIR`.
func runLockCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "lock-hold":
        // lock-hold PATH MODE SECONDS [MARKER]: takes the lock, prints "locked", holds it for
        // SECONDS (until killed if negative), creates MARKER, then exits with the lock still
        // held, so the marker exists before the lock is released by the process's exit.
        guard arguments.count >= 3, let mode = lockMode(arguments[1]), let seconds = Double(arguments[2])
        else {
            fail("usage: lock-hold PATH read|write|writeSubtree SECONDS [MARKER]")
        }
        reportingErrors {
            let held = try LockManager.shared().acquire([CoordinationLock(path: arguments[0], mode: mode)])
            printUnbuffered("locked")
            if seconds < 0 {
                while true { pause() }
            }
            usleep(useconds_t(seconds * 1_000_000))
            if arguments.count > 3 {
                _ = FileManager.default.createFile(atPath: arguments[3], contents: nil)
            }
            exit(held.isHeld ? 0 : 1)
        }
    case "lock-append":
        // lock-append PATH COUNT TAG [START]: appends COUNT lines "TAG i" to PATH, each under
        // a write lock, after making START.ready-TAG and waiting for the file START to exist
        // (so that two children start together, however late each was started).
        guard arguments.count >= 3, let count = Int(arguments[1]) else {
            fail("usage: lock-append PATH COUNT TAG [START]")
        }
        if arguments.count > 3 {
            _ = FileManager.default.createFile(atPath: arguments[3] + ".ready-" + arguments[2], contents: nil)
            while !FileManager.default.fileExists(atPath: arguments[3]) { usleep(1000) }
        }
        reportingErrors { try appendLines(to: arguments[0], count: count, tag: arguments[2]) }
    case "lock-rate":
        // lock-rate PATH COUNT: prints the uncontended read acquire+release rate.
        guard arguments.count == 2, let count = Int(arguments[1]) else { fail("usage: lock-rate PATH COUNT") }
        reportingErrors { try measureLockRate(arguments[0], count: count) }
    default:
        return false
    }
    return true
}

private func lockMode(_ name: String) -> CoordinationLock.Mode? {
    CoordinationLock.Mode.allCases.first { $0.description == name }
}

/// Appends each line as a read of the file's size followed by two separate writes at that
/// offset, with a yield between them: without the lock, two writers would overwrite each
/// other's lines or split them, and the test would see it.
private func appendLines(to path: String, count: Int, tag: String) throws {
    let manager = try LockManager.shared()
    for index in 0..<count {
        let held = try manager.acquire([CoordinationLock(path: path, mode: .write)], timeout: .seconds(60))
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { fail("open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        fstat(fd, &info)
        let line = Array("\(tag) \(index)\n".utf8)
        let half = line.count / 2
        line.withUnsafeBytes { bytes in
            _ = pwrite(fd, bytes.baseAddress, half, info.st_size)
            sched_yield()
            _ = pwrite(fd, bytes.baseAddress! + half, line.count - half, info.st_size + off_t(half))
        }
        close(fd)
        held.release()
        // Outside the lock, so that the other writer gets its turns and the two interleave.
        sched_yield()
    }
}

/// Takes and releases a read lock on `path` `count` times and prints the rate, so that the
/// rate can be measured in a release build without building the tests for release.
func measureLockRate(_ path: String, count: Int) throws {
    let manager = try LockManager.shared()
    let lock = [CoordinationLock(path: path, mode: .read)]
    for _ in 0..<min(count, 500) { try manager.acquire(lock).release() }
    let started = ContinuousClock.now
    for _ in 0..<count { try manager.acquire(lock).release() }
    let elapsed = started.duration(to: .now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    printUnbuffered("\(Int(Double(count) / seconds)) acquire+release per second")
}
