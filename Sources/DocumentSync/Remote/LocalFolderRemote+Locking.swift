import DocumentKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension LocalFolderRemote {
    /// Which thread of this process may take the lock of a folder remote. The lock is the
    /// process's (`fcntl` record locks are), so its threads take turns here, and only the one
    /// whose turn it is opens a lock file: closing any descriptor of the file would release
    /// the process's lock on it.
    static let lockTurn = LockTurn()

    /// How a try for the lock ended.
    private enum LockTry<T> {
        /// The lock was taken and `body` ran.
        case done(T)
        /// Another process holds it (its pid; 0 where the system does not say which).
        case held(by: pid_t)
    }

    /// Runs `body` holding the remote's lock: a write lock of this process on
    /// ``lockPath``, waited for at most ``lockTimeout``.
    ///
    /// The lock is an `fcntl` write lock, which only a descriptor open for writing can take,
    /// on a file only the users who can write the remote folder can open (mode 0600, with the
    /// group's or others' read and write where the folder gives them write): a user who can
    /// only read the remote can neither take it nor hold a read lock against it.
    ///
    /// - Throws: ``RemoteError``: `.other` naming the holder (process and user, as far as the
    ///   system tells) when the lock stayed held past the deadline, nothing done;
    ///   `.permissionDenied` when this user cannot open the lock file for writing.
    func withExclusiveLock<T>(
        _ operation: RemoteError.Operation, _ path: RemotePath, destination: RemotePath? = nil,
        _ body: (FileDescriptor) throws -> T
    ) throws -> T {
        let stuck = lockIsStuck.withLock { $0 }
        let timeout = stuck ? .zero : lockTimeout
        let deadline = ContinuousClock.now + timeout
        var wait = LockWait(timeout: timeout)
        while true {
            var holder = getpid()
            // Another thread's turn is waited for asleep, woken when it ends; another
            // process's lock is tried again after growing pauses.
            if Self.lockTurn.take(within: max(.zero, ContinuousClock.now.duration(to: deadline))) {
                // Released once `tryLock` returned, and with it the descriptor it opened.
                defer { Self.lockTurn.give() }
                switch try tryLock(operation, path, destination: destination, body) {
                case .done(let result):
                    if stuck { lockIsStuck.withLock { $0 = false } }
                    return result
                case .held(let pid): holder = pid
                }
            }
            guard let pause = wait.nextPause() else {
                lockIsStuck.withLock { $0 = true }
                let who =
                    holder == getpid() ? "another thread of this process" : ProcessIdentity.describe(holder)
                let how = stuck ? "is still locked by \(who), which held it" : "was locked by \(who)"
                throw failure(
                    .other, operation, path, destination: destination,
                    detail:
                        "\(absolutePath(Self.lockPath)) \(how) for longer than \(lockTimeout); nothing was done, and the next sync tries again"
                )
            }
            LockWait.sleep(pause)
        }
    }

    /// Tries once for the lock file's lock, and runs `body` if it got it. Called on this
    /// process's turn (``LockTurn``) only.
    ///
    /// The lock file stays open from one change to the next (``OpenLockFile``), so that a
    /// change costs a lock and an unlock, not an open, a close and the checks of the file's
    /// mode: once locked, it is checked to be still the file at ``lockPath`` (another program
    /// may have removed or replaced it, and a lock on a file that has no name there excludes
    /// no one); if not, it is closed and the one there now opened and locked instead.
    private func tryLock<T>(
        _ operation: RemoteError.Operation, _ path: RemotePath, destination: RemotePath?,
        _ body: (FileDescriptor) throws -> T
    ) throws -> LockTry<T> {
        while true {
            let (lock, identity) =
                try openLock.file ?? openLockFile(operation, path, destination: destination)
            openLock.file = (lock, identity)
            switch Syscall.tryLockFile(lock.rawValue, CShort(F_WRLCK)) {
            case .success(true): break
            case .success(false):
                // Nil when the holder let go since: it is named as the system names no one.
                let holder = (try? Syscall.fileLockHolder(lock.rawValue, CShort(F_WRLCK)).get()).flatMap {
                    $0
                }
                return .held(by: holder ?? 0)
            case .failure(let errno):
                throw failure(
                    .other, operation, path, destination: destination,
                    detail: "lock \(absolutePath(Self.lockPath)): \(errno)")
            }
            let named = try? Syscall.fileStatus(atPath: absolutePath(Self.lockPath), followingLinks: false)
                .get()
            guard let named, named.device == identity.device, named.inode == identity.inode else {
                // Closing it lets go of the lock, held on the turn of this thread only.
                _ = Syscall.tryLockFile(lock.rawValue, CShort(F_UNLCK))
                openLock.file = nil
                continue
            }
            defer { _ = Syscall.tryLockFile(lock.rawValue, CShort(F_UNLCK)) }
            return .done(try body(lock))
        }
    }

    /// The lock file, open for reading and writing, with its device and inode; made (with the
    /// metadata folder) if missing, and given the mode the remote folder's write permission
    /// calls for when it is this user's.
    private func openLockFile(
        _ operation: RemoteError.Operation, _ path: RemotePath, destination: RemotePath?
    ) throws -> (FileDescriptor, FileIdentity) {
        switch Syscall.mkdirat(AT_FDCWD, absolutePath(.metadataFolder), 0o777) {
        case .success, .failure(.fileExists): break
        case .failure(let errno):
            throw failure(errno, operation, path, destination: destination, missing: .unavailable)
        }
        let lockURL = URL(fileURLWithPath: absolutePath(Self.lockPath), isDirectory: false)
        let lock: FileDescriptor
        switch Syscall.openat(AT_FDCWD, lockURL.path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600) {
        case .success(let fd): lock = FileDescriptor(rawValue: fd, url: lockURL)
        case .failure(let errno) where errno == .permissionDenied:
            let owner =
                FileStatus(path: lockURL.path, followingLinks: false).map {
                    " (it is \(ProcessIdentity.userName(uid_t($0.owner)) ?? String($0.owner))'s, mode \(String($0.permissions, radix: 8)))"
                } ?? ""
            throw failure(
                .permissionDenied, operation, path, destination: destination,
                detail:
                    "this user cannot open the remote's lock file \(lockURL.path) for writing\(owner): only users who can write the remote folder sync with it"
            )
        case .failure(let errno):
            throw failure(errno, operation, path, destination: destination, missing: .unavailable)
        }
        let status: FileStatus
        switch Syscall.fileStatus(of: lock.rawValue) {
        case .success(let value): status = value
        case .failure(let errno):
            throw failure(errno, operation, path, destination: destination, missing: .unavailable)
        }
        let identity = FileIdentity(device: status.device, inode: status.inode)
        if status.owner == geteuid(), let folder = FileStatus(path: absolutePath(.root)) {
            let folderWrite = folder.permissions & 0o022
            let wanted =
                0o600 | (folderWrite & 0o020 != 0 ? 0o060 : 0) | (folderWrite & 0o002 != 0 ? 0o006 : 0)
            if folderWrite & 0o020 != 0, status.group != folder.group {
                // The folder's group may write it, so it may lock it: a group this user is not
                // in refuses, and the group stays this user's.
                _ = Syscall.fchown(lock.rawValue, uid_t.max, gid_t(folder.group))
            }
            if status.permissions != wanted { _ = Syscall.fchmod(lock.rawValue, mode_t(wanted)) }
        }
        return (lock, identity)
    }
}

/// The device and inode of a file.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
}

/// A folder remote's lock file, kept open from one change to the next: read and changed only
/// on this process's turn at the lock (``LockTurn``), which is also the only time its
/// descriptor may be closed (closing any descriptor of the file lets go of the process's lock
/// on it, whichever thread holds it).
final class OpenLockFile: @unchecked Sendable {
    /// The open file and its identity, once a change opened it.
    var file: (FileDescriptor, FileIdentity)?

    /// Closes the file on this process's turn at the lock.
    func close(waitingAtMost timeout: Duration, turn: LockTurn) {
        let taken = turn.take(within: timeout)
        file = nil
        if taken { turn.give() }
    }
}

/// The turn of this process's threads at the folder remotes' lock: a thread that waits for it
/// sleeps until the thread holding it gives it back (or its time is up), rather than trying
/// again after pauses, which kept the lock idle between writes.
final class LockTurn: @unchecked Sendable {
    private let condition = NSCondition()
    private var isTaken = false

    /// Takes the turn, waiting at most `timeout` for the thread that has it; false when that
    /// thread kept it longer.
    func take(within timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while isTaken {
            if !condition.wait(until: deadline), isTaken { return false }
        }
        isTaken = true
        return true
    }

    /// Gives the turn back, waking one thread waiting for it.
    func give() {
        condition.lock()
        isTaken = false
        condition.signal()
        condition.unlock()
    }
}
