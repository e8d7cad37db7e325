/// Starts the writeback of a large file being written a chunk at a time, every ``step``
/// bytes, so that the `fsync` that makes it durable at the end waits for the last step only:
/// the rest went to disk while the next bytes were still arriving (from a server, another
/// file). Without it, every byte of a 1 GiB download is written back only when the fsync
/// asks, after the last one arrived.
///
/// Only a hint (``Syscall/startWriteback(_:)``): `fsync` is still what makes the bytes durable.
package struct WritebackPacer {
    /// 8 MiB: a syscall per step costs nothing beside the bytes, and the fsync waits for at
    /// most a step's worth.
    package static let step = 8 << 20
    private var unstarted = 0

    package init() {}

    /// Counts `count` bytes just written to `file`, and starts their writeback once a step's
    /// worth is waiting.
    package mutating func wrote(_ count: Int, to file: FileDescriptor) {
        unstarted += count
        guard unstarted >= Self.step else { return }
        unstarted = 0
        _ = Syscall.startWriteback(file.rawValue)
    }
}
