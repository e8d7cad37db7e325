import Dispatch
import DocumentKit
import Foundation

/// The SHA-256 of bytes given in order, a chunk at a time, computed on a thread of its own
/// while the caller goes on moving the next chunk: a transfer's hash then costs it no time
/// beside the network's and the disk's. On the caller's thread, libcrypto's ~1.6 GB/s added
/// about 0.13 s to every 200 MiB moved.
///
/// At most ``chunksWaiting`` chunks wait to be hashed: what it holds is bounded whatever the
/// file's size, and a caller that gives faster than it hashes waits for room.
///
/// For example:
///
/// ```swift
/// let hashing = HashingQueue()
/// while let chunk = try next() { hashing.add(chunk) }
/// let hash = hashing.finalize()
/// ```
final class HashingQueue: @unchecked Sendable {
    /// Four chunks (4 MiB of 1 MiB chunks): enough that neither side waits for the other at
    /// every chunk.
    static let chunksWaiting = 4

    private let queue = DispatchQueue(label: "DocumentSync.HashingQueue")
    private let room = DispatchSemaphore(value: HashingQueue.chunksWaiting)
    /// Used on `queue` only (hence unchecked Sendable), until ``finalize()`` takes it.
    private var hasher: ContentHash.Hasher? = ContentHash.Hasher()

    /// Adds `data` after the bytes added before; waits while ``chunksWaiting`` chunks wait.
    func add(_ data: Data) {
        room.wait()
        queue.async { [self] in
            hasher?.update(data)
            room.signal()
        }
    }

    /// The digest of every byte added, once they are all hashed. Asked once: nothing may be
    /// added after.
    func finalize() -> ContentHash {
        queue.sync {
            guard let hasher = hasher.take() else { preconditionFailure("a HashingQueue finalized twice") }
            return hasher.finalize()
        }
    }
}
