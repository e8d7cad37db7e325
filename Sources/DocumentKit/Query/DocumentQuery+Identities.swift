import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DocumentQuery {
    /// Which item each path holds, for every query of the process: what makes two items
    /// equal, as `NSMetadataItem`s are, when two gatherings (a query started again, or two
    /// queries) find the same file.
    ///
    /// A path keeps its identity until a running query sees the file go (deleted, or moved
    /// away: a move carries the identity to the new path). So a file saved over, safely or
    /// not, stays the same item; a file deleted and created again while a query watches is
    /// a new one. Removals are conditional on the identity, so that a query that sees a
    /// deletion after another query already saw the new file leaves the new identity alone.
    struct Identities {
        static let shared = Mutex(Identities())

        private var byPath = PathTable<UInt64>()
        private var last: UInt64 = 0
        /// When the table next drops the paths of files that no longer exist: files deleted
        /// while no query watched them are otherwise never forgotten.
        private var sweepAt = 65_536

        /// The identity of the item at `path`, given one if it has none.
        mutating func identity(forPath path: [UInt8]) -> UInt64 {
            if let id = byPath[path] { return id }
            if byPath.count >= sweepAt { sweep() }
            last += 1
            byPath[path] = last
            return last
        }

        /// Records that the item `id` is now at `path` (it moved there).
        mutating func assign(_ id: UInt64, toPath path: [UInt8]) {
            byPath[path] = id
        }

        /// Forgets `path` if it still holds the item `id`: the file is gone.
        mutating func release(_ id: UInt64, atPath path: [UInt8]) {
            if byPath[path] == id { byPath.removeValue(forKey: path) }
        }

        private mutating func sweep() {
            var gone: [[UInt8]] = []
            // An item that cannot be looked at (gone, or its folder no longer searchable) is
            // forgotten: it is no longer a result either.
            for (path, _) in byPath
            where
                (try? Syscall.withCString(path, { Syscall.fileStatus(AT_FDCWD, $0, followingLinks: false) })
                .get())
                == nil
            {
                gone.append(path)
            }
            for path in gone { byPath.removeValue(forKey: path) }
            sweepAt = max(65_536, byPath.count * 2)
        }
    }
}
