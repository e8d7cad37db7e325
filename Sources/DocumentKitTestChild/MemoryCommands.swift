import CDocumentSystem
import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a malloc-tuning child command; returns false if `name` is not one.
///
/// A process of its own: glibc serves a large block from any free chunk of the heap big enough
/// before it maps one, and the test process's other threads leave such chunks at any moment.
func runMemoryCommand(_ name: String, _ arguments: [String]) -> Bool {
    if name == "malloc-free-pages" {
        freePagesBelowABlockInUse()
        return true
    }
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

/// malloc-free-pages: 32 MiB in 4 KiB blocks (each below the mmap threshold) and one block kept
/// above them; the blocks are freed, and the child prints the pages of the longest run of them
/// laid out together, how many of those are resident once freed, and how many once
/// ``ProcessMemory/returnFreePages()`` has run: "PAGES FREED RETURNED".
private func freePagesBelowABlockInUse() {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let blocks = (0..<8192).map { _ in malloc(4096)! }
    for block in blocks { memset(block, 1, 4096) }
    guard let kept = malloc(4096) else { fail("malloc failed") }
    memset(kept, 1, 4096)
    defer { free(kept) }
    let addresses = blocks.map { UInt(bitPattern: $0) }.sorted()
    // The longest run of blocks next to each other: where the freed blocks join into one.
    var (runStart, runEnd, bestStart, bestEnd) = (addresses[0], addresses[0], addresses[0], addresses[0])
    for address in addresses.dropFirst() {
        if address - runEnd <= 4096 + 64 {
            runEnd = address
        } else {
            (runStart, runEnd) = (address, address)
        }
        if runEnd - runStart > bestEnd - bestStart { (bestStart, bestEnd) = (runStart, runEnd) }
    }
    let first = (bestStart + UInt(page)) & ~UInt(page - 1)
    let last = bestEnd & ~UInt(page - 1)
    guard last > first + UInt(16 << 20) else { fail("the blocks were not laid out together") }
    for block in blocks { free(block) }
    let pages = Int(last - first) / page
    func residentPages() -> Int {
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(UnsafeMutableRawPointer(bitPattern: first), Int(last - first), &vector) == 0 else {
            fail("mincore failed: errno \(errno)")
        }
        return vector.filter { $0 & 1 != 0 }.count
    }
    let freed = residentPages()
    ProcessMemory.returnFreePages()
    printUnbuffered("\(pages) \(freed) \(residentPages())")
}
