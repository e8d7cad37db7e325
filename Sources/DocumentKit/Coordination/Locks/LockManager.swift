import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One item to coordinate access to, and how: the unit that ``LockManager`` acquires.
///
/// The modes follow `NSFileCoordinator`'s rules. Readers share; a writer excludes readers
/// and writers of the same item; a write that moves or deletes a folder excludes every
/// access to anything inside it, and waits for those already under way.
///
/// For example:
///
/// ```swift
/// let held = try LockManager.shared().acquire([
///     CoordinationLock(source, .writeSubtree),
///     CoordinationLock(destination, .write),
/// ])
/// defer { held.release() }
/// ```
package struct CoordinationLock: Hashable, Sendable, CustomStringConvertible {
    /// How an item is used; a later case is stronger and implies the earlier ones.
    package enum Mode: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        /// Reading the item: shares it with other readers.
        case read
        /// Writing the item: excludes its readers and writers, not things inside it.
        case write
        /// Moving or deleting a folder (or package): excludes the folder and everything in it.
        case writeSubtree

        package static func < (lhs: Mode, rhs: Mode) -> Bool { lhs.rawValue < rhs.rawValue }

        package var description: String {
            switch self {
            case .read: "read"
            case .write: "write"
            case .writeSubtree: "writeSubtree"
            }
        }
    }

    /// The item's absolute path, as given or, in a ``HeldLocks``, canonical.
    package var path: String
    /// How the item is used.
    package var mode: Mode

    /// Describes an access to the item at `path`.
    package init(path: String, mode: Mode) {
        self.path = path
        self.mode = mode
    }

    /// Describes an access to the file URL `url`.
    package init(_ url: URL, _ mode: Mode) {
        self.init(path: url.path, mode: mode)
    }

    package var description: String { "\(mode) \(path)" }

    /// Collapses a request set to one lock per canonical path, each with the strongest mode
    /// asked for it, so that a coordinator reading and writing one item in a single call
    /// never waits for itself.
    ///
    /// - Parameter requests: The accesses of one coordinated call, in any spelling.
    /// - Returns: The accesses by canonical path, sorted by path.
    package static func merged(_ requests: [CoordinationLock], pathsAreCanonical: Bool = false)
        -> [CoordinationLock]
    {
        if pathsAreCanonical, requests.count == 1 { return requests }
        var strongest: [String: Mode] = [:]
        for request in requests {
            let path = pathsAreCanonical ? request.path : canonicalPath(request.path)
            strongest[path] = max(strongest[path] ?? request.mode, request.mode)
        }
        return strongest.map { CoordinationLock(path: $0.key, mode: $0.value) }.sorted { $0.path < $1.path }
    }

    /// The one spelling of `path` that every process uses to name its lock: see
    /// ``CanonicalPath/of(path:)``.
    package static func canonicalPath(_ path: String) -> String {
        CanonicalPath.of(path: path)
    }
}

/// Locks held by one acquisition, released by ``release()`` or when the value goes away.
///
/// The locks are taken through an open file description of this acquisition's own, so
/// releasing unlocks that description and nothing else: other acquisitions in the process
/// keep theirs. A process that dies releases everything it held, because the kernel closes
/// its files. The descriptors are close-on-exec, so a program the holder spawns does not
/// inherit (and outlive it holding) the locks.
package final class HeldLocks: Sendable {
    /// The accesses held, by canonical path, each with its strongest mode.
    package let locks: [CoordinationLock]
    private let directory: LockDirectory
    /// The lock file description the locks are on (none when there was nothing to lock),
    /// or `nil` once released.
    private let descriptions: Mutex<[LockDescription]?>

    init(locks: [CoordinationLock], descriptions: [LockDescription], directory: LockDirectory) {
        self.locks = locks
        self.directory = directory
        self.descriptions = Mutex(descriptions)
    }

    deinit { release() }

    /// Whether ``release()`` has not been called yet.
    package var isHeld: Bool { descriptions.withLock { $0 != nil } }

    /// Releases every lock of this acquisition; later calls do nothing.
    package func release() {
        let taken = descriptions.withLock { descriptions in
            defer { descriptions = nil }
            return descriptions ?? []
        }
        for description in taken { directory.checkIn(description) }
    }

    /// Whether these locks already grant `request`, so that a coordinated call nested
    /// inside the one holding them can go ahead without acquiring (and waiting on) its own.
    ///
    /// A lock covers a weaker or equal access to its own item; a ``CoordinationLock/Mode/writeSubtree``
    /// lock also covers any access to an item inside its folder.
    package func covers(_ request: CoordinationLock) -> Bool {
        let path = CoordinationLock.canonicalPath(request.path)
        return locks.contains { held in
            if held.path == path { return held.mode >= request.mode }
            guard held.mode == .writeSubtree else { return false }
            let folder = held.path == "/" ? "/" : held.path + "/"
            return path.hasPrefix(folder)
        }
    }
}

/// Takes and waits for the cross-process locks behind file coordination.
///
/// Each item has two bytes in the one lock file, `<runtime>/documentkit/locks/coordination.lock`,
/// at its ``LockKey``'s offset, locked with open-file-description (OFD) locks:
///
/// - the first is the item itself: shared to read it, exclusive to write it;
/// - the second says "something inside this folder is in use": every access holds it shared on
///   each folder above its item, up to `/`, and moving or deleting a folder holds it
///   exclusive, so each excludes the other while accesses inside share.
///
/// One acquisition takes its ranges in a single global order (lock file key, then byte),
/// which is what keeps two multi-item acquisitions, such as writing A and B against
/// writing B and A, from deadlocking. It waits by polling with exponential backoff
/// (50 µs, doubling, at most 5 ms), so timeouts and cancellation take effect within a few
/// milliseconds. Polling has no queue: a steady stream of readers can keep a writer
/// waiting, as it can with `fcntl` locks generally.
///
/// For example:
///
/// ```swift
/// let held = try LockManager.shared().acquire([CoordinationLock(url, .write)], timeout: .seconds(30))
/// defer { held.release() }
/// try SafeSave.write(data, to: url)
/// ```
package final class LockManager: Sendable {
    /// The private runtime folder the lock folder lives in.
    package let runtime: URL
    private let directory: LockDirectory

    /// The lock folder, `<runtime>/documentkit/locks`.
    package var lockDirectory: URL { directory.url }

    /// Opens the lock folder of `directories`, creating the private runtime folder and the
    /// lock folder (mode 0700) if needed.
    ///
    /// - Throws: ``DocumentKitError`` if a folder cannot be made, is not private, or is not
    ///   this user's.
    package init(directories: StandardDirectories = .current) throws {
        runtime = try directories.makeRuntimeDirectory()
        directory = try LockDirectory(runtime: runtime)
    }

    /// The manager made for a runtime folder as the environment names it: the private folder
    /// it found may be another (one inside or beside it).
    private static let cached = Mutex<(named: URL, manager: LockManager)?>(nil)

    /// The lock manager for ``StandardDirectories/current``, made once and remade only if
    /// the runtime folder changes (as tests do).
    ///
    /// - Throws: ``DocumentKitError`` as ``init(directories:)`` does.
    package static func shared() throws -> LockManager {
        let directories = StandardDirectories.current
        return try cached.withLock { cached in
            if let cached, cached.named == directories.runtime { return cached.manager }
            let manager = try LockManager(directories: directories)
            cached = (directories.runtime, manager)
            return manager
        }
    }

    /// Acquires every lock of `requests` together, waiting as long as conflicting holders
    /// in this or other processes keep them.
    ///
    /// Paths are merged to their strongest mode first (``CoordinationLock/merged(_:)``), so
    /// the set never conflicts with itself. If the wait ends early, the locks already taken
    /// are released before the error is thrown.
    ///
    /// - Parameters:
    ///   - requests: The accesses of one coordinated call.
    ///   - timeout: How long to wait at most; `nil` waits for ever, `.zero` tries once.
    ///   - isCancelled: Asked whenever the acquisition has to wait; `true` gives up.
    /// - Returns: The held locks.
    /// - Throws: ``DocumentKitError`` with code `.timedOut`, naming the path waited for;
    ///   `CancellationError` when `isCancelled` says so; ``DocumentKitError`` naming the item
    ///   when a lock file cannot be opened or locked.
    package func acquire(
        _ requests: [CoordinationLock], timeout: Duration? = nil, pathsAreCanonical: Bool = false,
        isCancelled: () -> Bool = { false }
    ) throws -> HeldLocks {
        var acquisition = LockAcquisition(
            requests, directory: directory, pathsAreCanonical: pathsAreCanonical)
        var wait = LockWait(timeout: timeout)
        do {
            while try !acquisition.advance() {
                if acquisition.progressed { wait.restartBackoff() }
                if isCancelled() { throw CancellationError() }
                LockWait.sleep(try wait.nextPause(waitingFor: acquisition.blockingPath))
            }
        } catch {
            acquisition.abandon()
            throw error
        }
        return acquisition.held()
    }

    /// Acquires every lock of `requests` together without blocking a thread while waiting.
    ///
    /// Behaves as ``acquire(_:timeout:isCancelled:)``, with the task's cancellation in place
    /// of `isCancelled`.
    ///
    /// - Throws: ``DocumentKitError`` (`.timedOut` and others) or `CancellationError`.
    package func acquire(_ requests: [CoordinationLock], timeout: Duration? = nil) async throws -> HeldLocks {
        var acquisition = LockAcquisition(requests, directory: directory)
        var wait = LockWait(timeout: timeout)
        do {
            while try !acquisition.advance() {
                if acquisition.progressed { wait.restartBackoff() }
                try Task.checkCancellation()
                try await Task.sleep(for: try wait.nextPause(waitingFor: acquisition.blockingPath))
            }
        } catch {
            acquisition.abandon()
            throw error
        }
        return acquisition.held()
    }
}

/// One byte range to lock in one lock file, in acquisition order.
private struct LockRange {
    /// Index into the acquisition's lock files.
    var file: Int
    var start: off_t
    var length: off_t
    var strength: LockStrength
}

/// The lock files an acquisition needs and what it takes on each.
private struct LockFilePlan {
    var key: LockKey
    /// The path the lock file stands for, named in errors; a slice, because ancestors'
    /// paths are rarely needed and would otherwise cost an allocation each.
    var path: Substring
    var item: LockStrength? = nil
    var contents: LockStrength? = nil
}

/// The progress of one acquisition: which ranges it holds and on which descriptors.
///
/// `advance` only ever tries the next range without blocking, so the sync and async
/// drivers share it and differ only in how they wait.
private struct LockAcquisition {
    let locks: [CoordinationLock]
    let directory: LockDirectory
    private var files: [LockFilePlan] = []
    private var ranges: [LockRange] = []
    private var description: LockDescription?
    private var next = 0
    /// Whether the last `advance` took at least one range.
    private(set) var progressed = false

    init(_ requests: [CoordinationLock], directory: LockDirectory, pathsAreCanonical: Bool = false) {
        locks = CoordinationLock.merged(requests, pathsAreCanonical: pathsAreCanonical)
        self.directory = directory
        // Sorted, then merged where keys repeat (several items share folders), rather than
        // gathered in a dictionary: an access to one item needs a dozen plans, and hashing
        // them cost more than sorting.
        var needed: [LockFilePlan] = []
        for lock in locks {
            let keys = LockKey.keys(ofItemAndAncestors: lock.path)
            for ancestor in keys.ancestors {
                needed.append(LockFilePlan(key: ancestor.key, path: ancestor.path, contents: .shared))
            }
            switch lock.mode {
            case .read: needed.append(LockFilePlan(key: keys.item, path: lock.path[...], item: .shared))
            case .write: needed.append(LockFilePlan(key: keys.item, path: lock.path[...], item: .exclusive))
            case .writeSubtree:
                needed.append(
                    LockFilePlan(key: keys.item, path: lock.path[...], item: .exclusive, contents: .exclusive)
                )
            }
        }
        needed.sort { $0.key < $1.key }
        for plan in needed {
            if let last = files.indices.last, files[last].key == plan.key {
                files[last].item = Self.stronger(files[last].item, plan.item)
                files[last].contents = Self.stronger(files[last].contents, plan.contents)
            } else {
                files.append(plan)
            }
        }
        for (index, plan) in files.enumerated() {
            let base = plan.key.byteOffset
            switch (plan.item, plan.contents) {
            case (let item?, let contents?) where item == contents:
                ranges.append(LockRange(file: index, start: base, length: 2, strength: item))
            default:
                if let item = plan.item {
                    ranges.append(LockRange(file: index, start: base, length: 1, strength: item))
                }
                if let contents = plan.contents {
                    ranges.append(LockRange(file: index, start: base + 1, length: 1, strength: contents))
                }
            }
        }
    }

    private static func stronger(_ lhs: LockStrength?, _ rhs: LockStrength?) -> LockStrength? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return max(lhs, rhs)
    }

    /// The path whose lock the acquisition is waiting for.
    var blockingPath: String { String(files[ranges[min(next, ranges.count - 1)].file].path) }

    /// Takes ranges in order until one is held elsewhere.
    ///
    /// - Returns: `true` once every range is held.
    mutating func advance() throws -> Bool {
        progressed = false
        while next < ranges.count {
            let range = ranges[next]
            if description == nil {
                description = try directory.checkOut(for: files[range.file].path)
            }
            let taken = Syscall.tryLockRange(
                description!.descriptor, range.strength.lockType, start: range.start, length: range.length)
            switch taken {
            case .success(true):
                next += 1
                progressed = true
            case .success(false):
                return false
            case .failure(let error):
                let code =
                    error == .invalidArgument
                    ? DocumentKitError.Code.notSupported : DocumentKitError.code(for: error)
                throw DocumentKitError(
                    code, operation: "lock", url: URL(fileURLWithPath: String(files[range.file].path)),
                    errno: error,
                    detail: error == .invalidArgument ? "the system lacks open file description locks" : nil)
            }
        }
        return true
    }

    /// Releases whatever was taken.
    mutating func abandon() {
        if let description { directory.checkIn(description) }
        description = nil
    }

    /// Hands the locks to the caller.
    mutating func held() -> HeldLocks {
        defer { description = nil }
        return HeldLocks(locks: locks, descriptions: description.map { [$0] } ?? [], directory: directory)
    }
}

/// Exponential backoff between polls, bounded by an optional deadline: how the cross-process
/// locks of coordination and of a folder remote are waited for.
package struct LockWait {
    static let firstPause = Duration.microseconds(50)
    static let longestPause = Duration.milliseconds(5)

    package let timeout: Duration?
    let deadline: ContinuousClock.Instant?
    private var pause = firstPause

    package init(timeout: Duration?) {
        self.timeout = timeout
        deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
    }

    /// Starts over from the shortest pause, after the acquisition moved on to a new range.
    mutating func restartBackoff() { pause = Self.firstPause }

    /// How long to wait before the next try; nil once the deadline has passed.
    package mutating func nextPause() -> Duration? {
        var next = pause
        pause = min(pause * 2, Self.longestPause)
        if let deadline {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            next = min(next, remaining)
        }
        return next
    }

    /// How long to wait before the next try.
    ///
    /// - Throws: ``DocumentKitError`` with code `.timedOut` naming `path` once the deadline
    ///   has passed.
    mutating func nextPause(waitingFor path: String) throws -> Duration {
        guard let next = nextPause() else {
            throw DocumentKitError(
                .timedOut, operation: "coordinate access to", url: URL(fileURLWithPath: path),
                detail: "another reader or writer kept it busy for longer than \(timeout ?? .zero)")
        }
        return next
    }

    package static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        // An early wake-up (a signal) only means an early poll.
        _ = nanosleep(&request, nil)
    }
}
