import CDocumentSystem

extension Syscall {
    /// Starts writing the file's dirty pages back without waiting: flushing many files
    /// together, each one's data is on its way before the first `fsync` waits. Only a hint;
    /// `fsync` is still what makes the data durable.
    ///
    /// The corresponding C function is `sync_file_range(2)` with `SYNC_FILE_RANGE_WRITE`.
    static func startWriteback(_ fd: CInt) -> Result<CInt, Errno> {
        retrying { cds_start_writeback(fd) }
    }
}
