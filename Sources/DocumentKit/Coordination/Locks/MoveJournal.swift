import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The moves coordinated writers announced with ``FileCoordinator/item(at:didMoveTo:)``, in
/// every process of this user: one append-only file beside the lock file.
///
/// A coordinated access that had to wait for its locks reads what was appended while it
/// waited: if the item, or a folder above it, moved meanwhile, the accessor is given the
/// new location, as Apple's coordinator does ("the actual URL passed to the reader may be
/// different"), rather than a path that no longer exists.
///
/// Each record is one `write` to a file opened with `O_APPEND`, which the kernel places
/// whole at the end: the length of the old path and the new path (4 bytes each, native
/// order), then both paths. A reader stops at a record not yet written whole.
final class MoveJournal: Sendable {
    private let descriptor: CInt
    /// Past this size, the next record starts the file afresh; a reader that remembered a
    /// larger offset then sees no moves, as before the journal existed.
    static let sizeLimit: off_t = 1 << 20

    private init(descriptor: CInt) {
        self.descriptor = descriptor
    }

    deinit { _ = Syscall.close(descriptor) }

    private static let cached = Mutex<(folder: URL, journal: MoveJournal)?>(nil)

    /// The journal in the lock folder of ``StandardDirectories/current``, or nil if it cannot
    /// be opened (coordination then works as without it).
    static var shared: MoveJournal? {
        guard let folder = try? LockManager.shared().lockDirectory else { return nil }
        return cached.withLock { cached in
            if let cached, cached.folder == folder { return cached.journal }
            let path = folder.appendingPathComponent("moves").path
            guard
                case .success(let fd) = Syscall.openat(
                    AT_FDCWD, path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW, 0o600)
            else { return nil }
            let journal = MoveJournal(descriptor: fd)
            cached = (folder, journal)
            return journal
        }
    }

    /// Where the next record will start.
    var end: off_t {
        (try? Syscall.fstat(descriptor).get())?.st_size ?? 0
    }

    /// Appends a move of the item at canonical path `old` to canonical path `new`.
    func record(from old: String, to new: String) {
        // A journal that cannot be emptied keeps growing; the records stay readable.
        if end > Self.sizeLimit { _ = Syscall.ftruncate(descriptor, 0) }
        var bytes: [UInt8] = []
        withUnsafeBytes(of: UInt32(old.utf8.count)) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(new.utf8.count)) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: old.utf8)
        bytes.append(contentsOf: new.utf8)
        // One append (O_APPEND): records of several processes never interleave. A failed one
        // costs only the redirect of an access that waited behind this move.
        if case .failure(let error) = bytes.withUnsafeBytes({ Syscall.writeAll(descriptor, $0) }) {
            CoordinationLog.warning("could not record a move in the move journal: \(error)")
        }
    }

    /// The moves recorded from `offset` on, oldest first.
    func moves(since offset: off_t) -> [(from: String, to: String)] {
        let length = Int(end - offset)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        guard
            case .success(let read) = bytes.withUnsafeMutableBytes({ Syscall.pread(descriptor, $0, offset) }),
            read > 0
        else { return [] }
        var moves: [(from: String, to: String)] = []
        var position = 0
        while position + 8 <= read {
            let (oldLength, newLength) = bytes.withUnsafeBytes {
                (
                    Int($0.loadUnaligned(fromByteOffset: position, as: UInt32.self)),
                    Int($0.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self))
                )
            }
            let start = position + 8
            guard start + oldLength + newLength <= read else { break }
            moves.append(
                (
                    String(decoding: bytes[start..<start + oldLength], as: UTF8.self),
                    String(decoding: bytes[start + oldLength..<start + oldLength + newLength], as: UTF8.self)
                ))
            position = start + oldLength + newLength
        }
        return moves
    }

    /// Where the item at canonical path `path` is after `moves`, applied in order: a move of
    /// the item itself or of a folder above it carries it along.
    static func location(of path: String, after moves: [(from: String, to: String)]) -> String {
        var current = path
        for move in moves {
            if current == move.from {
                current = move.to
            } else if CanonicalPath.isAncestor(move.from, of: current) {
                current = move.to + current.dropFirst(move.from.count)
            }
        }
        return current
    }
}
