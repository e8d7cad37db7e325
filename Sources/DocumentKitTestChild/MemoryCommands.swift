import CDocumentSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a malloc-tuning child command; returns false if `name` is not one.
///
/// A process of its own: glibc serves a large block from any free chunk of the heap big enough
/// before it maps one, and the test process's other threads leave such chunks at any moment.
func runMemoryCommand(_ name: String, _ arguments: [String]) -> Bool {
    guard name == "malloc-large-block" else { return false }
    // malloc-large-block [untuned]: fixes the thresholds as `docs` does (unless `untuned`),
    // maps and frees a 24 MiB block (which raises glibc's own threshold to its size), then
    // prints how many bytes a 16 MiB block adds to the mapped total while it is held.
    if arguments != ["untuned"] {
        guard cds_return_large_blocks(128 << 10) == 1 else { fail("mallopt refused the thresholds") }
    }
    guard let larger = malloc(24 << 20) else { fail("malloc failed") }
    memset(larger, 1, 24 << 20)
    free(larger)
    let before = cds_malloc_mapped_bytes()
    guard let block = malloc(16 << 20) else { fail("malloc failed") }
    memset(block, 1, 16 << 20)
    let during = cds_malloc_mapped_bytes()
    free(block)
    printUnbuffered("\(Int(during) - Int(before))")
    return true
}
