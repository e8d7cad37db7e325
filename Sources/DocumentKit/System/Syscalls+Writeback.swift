import CDocumentSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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

extension Syscall {
    /// Lets the kernel take back the whole pages of `bytes`, a part of a read-only mapping of
    /// a file: they leave the process's resident set and are read from the file again if
    /// touched. Only for a file's mapping: pages of ordinary memory would read back as zeros.
    /// Only a hint; nothing fails.
    ///
    /// The corresponding C function is `madvise(2)` with `MADV_DONTNEED`.
    static func releaseMappedPages(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let page = UInt(pageSize)
        let start = (UInt(bitPattern: base) + page - 1) / page * page
        let end = (UInt(bitPattern: base) + UInt(bytes.count)) / page * page
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(address, Int(end - start), MADV_DONTNEED)
    }

    /// The size of a page of memory.
    ///
    /// The corresponding C function is `sysconf(3)` with `_SC_PAGESIZE`.
    static let pageSize = Int(sysconf(CInt(_SC_PAGESIZE)))
}
