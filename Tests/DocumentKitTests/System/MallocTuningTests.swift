import CDocumentSystem
import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// The malloc settings `docs` starts with (see `Sources/docs/main.swift`).
@Suite struct MallocTuningTests {
    /// Once a large mapped block is freed, glibc raises its threshold to that block's size (up
    /// to 32 MiB), so that the next large blocks come from the heap and stay resident when
    /// freed. With the threshold fixed, a large block is still mapped on its own after that,
    /// so freeing it gives its pages back. Run in a child process: in this one, other tests'
    /// threads leave free heap chunks large enough to serve the block without a mapping.
    @Test func aLargeBlockIsMappedOnItsOwnEvenAfterALargerOneWasFreed() throws {
        func mappedByTheBlock(_ arguments: [String]) throws -> Int {
            let outcome = try TestChild.run(["malloc-large-block"] + arguments)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            return try #require(Int(outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        #expect(try mappedByTheBlock([]) >= 16 << 20)
        // Without the fixed threshold, glibc's raised one serves it from the heap.
        #expect(try mappedByTheBlock(["untuned"]) == 0)
    }

    /// Blocks freed below one still in use stay resident: glibc gives back only the free
    /// memory at the top of the heap. ``ProcessMemory/returnFreePages()`` gives back the free
    /// pages in the middle too, as a pass calls it once its scan is let go of.
    @Test func freePagesBelowABlockInUseAreGivenBack() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        // 32 MiB in 4 KiB blocks, each below the mmap threshold, then one block kept above them.
        let blocks = (0..<8192).map { _ in malloc(4096)! }
        for block in blocks { memset(block, 1, 4096) }
        let kept = try #require(malloc(4096))
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
        try #require(last > first + UInt(16 << 20), "the blocks were not laid out together")
        for block in blocks { free(block) }
        func residentPages() -> Int {
            let count = Int(last - first) / page
            var vector = [UInt8](repeating: 0, count: count)
            #expect(mincore(UnsafeMutableRawPointer(bitPattern: first), Int(last - first), &vector) == 0)
            return vector.filter { $0 & 1 != 0 }.count
        }
        let pages = Int(last - first) / page
        // Other tests' threads may take some of the freed memory meanwhile: most of it is free.
        #expect(residentPages() > pages / 2)
        ProcessMemory.returnFreePages()
        #expect(residentPages() < pages / 4)
    }
}
