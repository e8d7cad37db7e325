import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The name of the lock file that stands for one canonical path: a 128-bit FNV-1a digest
/// of the path's UTF-8 bytes.
///
/// The digest must be the same in every process, every run and every version of the
/// package, so it cannot be Swift's `Hasher`, which is seeded per process. A collision
/// between two paths only makes their coordinators wait for each other as though the two
/// were one item; it never lets conflicting accesses run together. Paths that are not valid
/// UTF-8 have already been repaired into `String`s by the time they get here, which can only
/// cause such collisions, never a missed conflict.
struct LockKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    let rawValue: UInt128

    private static let offsetBasis: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
    private static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013b

    init(rawValue: UInt128) { self.rawValue = rawValue }

    init<Bytes: Sequence<UInt8>>(bytes: Bytes) {
        var state = Self.offsetBasis
        for byte in bytes { Self.mix(byte, into: &state) }
        rawValue = state
    }

    init(path: String) { self.init(bytes: path.utf8) }

    /// The keys of `path` and of every folder above it, computed in one pass: FNV is a
    /// running digest, so the digest of "/a/b" is the state reached just before the slash
    /// that ends "/a/b" in "/a/b/c".
    ///
    /// - Parameter path: A canonical absolute path.
    /// - Returns: The item's own key and its ancestors' paths and keys, root first.
    static func keys(ofItemAndAncestors path: String) -> (
        item: LockKey, ancestors: [(path: Substring, key: LockKey)]
    ) {
        guard path != "/" else { return (LockKey(path: "/"), []) }
        var ancestors: [(path: Substring, key: LockKey)] = []
        var state = offsetBasis
        var index = path.utf8.startIndex
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                if index == path.utf8.startIndex {
                    // The empty prefix before the first slash is the root, spelled "/".
                    ancestors.append(("/", LockKey(path: "/")))
                } else {
                    ancestors.append((path[..<index], LockKey(rawValue: state)))
                }
            }
            mix(byte, into: &state)
            index = path.utf8.index(after: index)
        }
        return (LockKey(rawValue: state), ancestors)
    }

    @inline(__always)
    private static func mix(_ byte: UInt8, into state: inout UInt128) {
        state ^= UInt128(byte)
        state = state &* prime
    }

    static func < (lhs: LockKey, rhs: LockKey) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Where the item's two bytes (the item, then "something inside is in use") sit in the
    /// shared lock file: 62 bits of the digest, doubled, so every offset is positive and even.
    var byteOffset: off_t {
        off_t(UInt64(truncatingIfNeeded: rawValue) & 0x3FFF_FFFF_FFFF_FFFF) * 2
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// 32 lowercase hexadecimal digits: the lock file's name.
    var description: String { withFileName { String(cString: $0) } }

    /// Calls `body` with the lock file's name as a C string on the stack.
    ///
    /// Done by hand because this runs once per lock file per acquisition, and the generic
    /// `String(_:radix:)` on `UInt128` plus a heap string cost more than the lock itself.
    func withFileName<Result>(_ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: CChar.self, capacity: 33) { buffer in
            var value = rawValue
            for index in stride(from: 31, through: 0, by: -1) {
                buffer[index] = CChar(bitPattern: Self.hexDigits[Int(truncatingIfNeeded: value & 0xf)])
                value >>= 4
            }
            buffer[32] = 0
            return try body(buffer.baseAddress!)
        }
    }
}

/// How one acquisition holds a byte of a lock file.
enum LockStrength: Int, Comparable, Sendable {
    /// Others may hold it shared too: readers, and folders whose contents are in use.
    case shared
    /// No one else may hold it at all.
    case exclusive

    static func < (lhs: LockStrength, rhs: LockStrength) -> Bool { lhs.rawValue < rhs.rawValue }

    var lockType: CShort { CShort(self == .shared ? F_RDLCK : F_WRLCK) }
}

/// The folder of lock files, `<runtime>/documentkit/locks`, held open so that lock files
/// are opened with `openat` without walking the runtime path each time.
///
/// Lock files are never deleted. Deleting one safely would need every opener to check,
/// after locking, that the file it locked is still the one in the folder, and retry if not;
/// that costs two `stat`s on every acquisition to save a few empty files on a `tmpfs` that
/// is emptied at logout anyway.
final class LockDirectory: Sendable {
    /// The lock folder.
    let url: URL
    private let descriptor: CInt
    /// Open file descriptions of the lock file that hold no lock now, kept for the next
    /// acquisition instead of being closed; see ``checkOut(for:)``.
    private let idle = Mutex<[LockDescription]>([])
    /// More idle descriptions than this are closed: a process rarely holds more acquisitions
    /// at once, and each kept one is an open file.
    private static let idleLimit = 8

    /// Opens the lock folder inside `runtime`, creating it and its parent with mode 0700.
    ///
    /// - Parameter runtime: The private runtime folder, already checked by
    ///   ``StandardDirectories/makeRuntimeDirectory()``.
    /// - Throws: ``DocumentKitError`` naming the folder that could not be made or opened.
    init(runtime: URL) throws {
        let base = try Self.makePrivateFolder("documentkit", in: runtime)
        defer { Syscall.close(base.descriptor) }
        let locks = try Self.makePrivateFolder("locks", in: base.url, parent: base.descriptor)
        url = locks.url
        descriptor = locks.descriptor
    }

    deinit {
        for description in idle.withLock({ $0 }) { Syscall.close(description.descriptor) }
        Syscall.close(descriptor)
    }

    /// Creates (if needed) and opens one private folder, refusing a link or a non-folder.
    private static func makePrivateFolder(
        _ name: String, in parentURL: URL, parent: CInt? = nil
    ) throws -> (url: URL, descriptor: CInt) {
        let url = parentURL.appendingPathComponent(name, isDirectory: true)
        let anchor = parent ?? AT_FDCWD
        let path = parent == nil ? url.path : name
        switch Syscall.mkdirat(anchor, path, 0o700) {
        case .success, .failure(.fileExists): break
        case .failure(let error): throw DocumentKitError(error, operation: "create the lock folder", url: url)
        }
        // O_NOFOLLOW: a link planted where the folder should be is refused, not followed.
        let fd = try Syscall.openat(anchor, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            .get("open the lock folder", url)
        do {
            let info = try Syscall.fstat(fd).get("inspect the lock folder", url)
            guard info.st_uid == getuid() else {
                throw DocumentKitError(
                    .permissionDenied, operation: "use the lock folder", url: url,
                    detail: "it belongs to another user")
            }
            if info.permissions != 0o700 {
                _ = try Syscall.fchmod(fd, 0o700).get("make the lock folder private", url)
            }
        } catch {
            Syscall.close(fd)
            throw error
        }
        return (url, fd)
    }

    /// An open file description of the one lock file every item's locks live in (each at its
    /// key's ``LockKey/byteOffset``) that no other acquisition in this process is using.
    ///
    /// One file rather than one per item: an acquisition locks the item and every folder
    /// above it, and one `open` with many `fcntl`s costs a fraction of as many `open`s. Two
    /// items whose 62-bit offsets collide only wait for each other.
    ///
    /// OFD locks belong to the open file description, so each acquisition needs one of its
    /// own: that is what makes two acquisitions in one process, on one thread or two,
    /// conflict exactly as two processes do. A description is not shared while checked out;
    /// ``checkIn(_:)`` unlocks it whole before another acquisition may take it, so reusing
    /// it is the same as opening a new one, minus an `open` and a `close`. A description
    /// made before a `fork` is never reused (see ``ForkGeneration``), since the other
    /// process of the fork shares it.
    ///
    /// - Parameter item: The path the lock stands for, to name in errors.
    func checkOut(for item: Substring) throws -> LockDescription {
        let generation = ForkGeneration.current
        while let kept = idle.withLock({ $0.popLast() }) {
            // A lock file someone deleted still takes locks, but no other process sees them:
            // such a description is dropped, and opening anew makes the file again (or fails,
            // naming the item, if the folder went too), as an acquisition always did.
            if kept.forkGeneration == generation, case .success(let info) = Syscall.fstat(kept.descriptor),
                info.st_nlink > 0
            {
                return kept
            }
            Syscall.close(kept.descriptor)
        }
        return LockDescription(descriptor: try openLockFile(for: item), forkGeneration: generation)
    }

    /// Takes back a description an acquisition is done with, releasing every lock on it.
    ///
    /// Unlocking the whole file releases exactly what the acquisition took, since no one
    /// else locks through this description. A description that cannot be unlocked, or is
    /// one too many to keep, is closed, which releases its locks too. After a `fork`, closing
    /// is the only safe release: unlocking would also drop the locks of the other process
    /// of the fork, which shares the description, while closing only drops this process's
    /// reference.
    func checkIn(_ description: LockDescription) {
        if description.forkGeneration == ForkGeneration.current,
            case .success = Syscall.unlockAll(description.descriptor)
        {
            let kept = idle.withLock { idle in
                guard idle.count < Self.idleLimit else { return false }
                idle.append(description)
                return true
            }
            if kept { return }
        }
        Syscall.close(description.descriptor)
    }

    /// Opens a new descriptor, and with it a new open file description, on the lock file.
    private func openLockFile(for item: Substring) throws -> CInt {
        switch Syscall.openat(descriptor, "coordination.lock", O_RDWR | O_NOFOLLOW) {
        case .success(let fd): return fd
        case .failure(.noSuchFileOrDirectory): break
        case .failure(let error): throw Self.openError(error, item)
        }
        // Opening without O_CREAT first skips the folder's inode lock in the common case
        // that the lock file exists.
        switch Syscall.openat(descriptor, "coordination.lock", O_RDWR | O_NOFOLLOW | O_CREAT, 0o600) {
        case .success(let fd): return fd
        case .failure(let error): throw Self.openError(error, item)
        }
    }

    private static func openError(_ error: Errno, _ item: Substring) -> DocumentKitError {
        DocumentKitError(
            error, operation: "open the lock file for", url: URL(fileURLWithPath: String(item)),
            detail: "the coordination lock could not be opened")
    }
}

/// One open file description of the lock file, checked out to one acquisition at a time.
struct LockDescription: Sendable {
    let descriptor: CInt
    /// ``ForkGeneration/current`` when it was opened.
    let forkGeneration: UInt32
}

/// Counts the `fork`s this process has been through, as parent or child.
///
/// After a `fork` both processes hold every open file description the parent had, and
/// OFD locks taken through a shared description belong to both: they would not exclude
/// each other, and would outlive the process that took them as long as the other one runs.
/// So a description made before the count last changed is never used to lock again.
/// Programs started with `posix_spawn` (as `Process` does) run no fork handlers and
/// inherit nothing here, since every lock file descriptor is close-on-exec.
enum ForkGeneration {
    private static let count = Atomic<UInt32>(0)
    private static let handlersInstalled: Bool = {
        pthread_atfork(
            nil,
            { ForkGeneration.count.add(1, ordering: .relaxed) },
            { ForkGeneration.count.add(1, ordering: .relaxed) }) == 0
    }()

    /// The number of forks so far; it changes in both processes of each.
    static var current: UInt32 {
        _ = handlersInstalled
        return count.load(ordering: .relaxed)
    }

    private static let knownProcessID = Mutex<(generation: UInt32, pid: pid_t)?>(nil)

    /// This process's id, asked of the kernel (`getpid` is a system call) once per fork.
    static var processID: pid_t {
        let generation = current
        return knownProcessID.withLock { known in
            if let known, known.generation == generation { return known.pid }
            let pid = getpid()
            known = (generation, pid)
            return pid
        }
    }
}
