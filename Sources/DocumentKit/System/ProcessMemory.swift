import CDocumentSystem

/// What the process's heap keeps resident once it let go of memory.
package enum ProcessMemory {
    /// Gives the system back every whole free page of the heap (`malloc_trim`), in its middle
    /// too: the C library otherwise keeps what was freed between blocks still in use, and a
    /// process's resident memory stays at the most it ever held.
    ///
    /// For after a step that let go of tables that grow with a container (a pass's scan once
    /// planned, a group of merge bases once kept); it walks the heap, so not for every small
    /// free.
    package static func returnFreePages() {
        _ = cds_return_free_pages()
    }
}
