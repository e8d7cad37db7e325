import CDocumentSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The malloc settings `docs` starts with (see `Sources/docs/main.swift`).
@Suite struct MallocTuningTests {
    /// Once a large mapped block is freed, glibc raises its threshold to that block's size (up
    /// to 32 MiB), so that the next large blocks come from the heap and stay resident when
    /// freed. With the threshold fixed, a large block is still mapped on its own after that,
    /// so freeing it gives its pages back.
    @Test func aLargeBlockIsMappedOnItsOwnEvenAfterALargerOneWasFreed() throws {
        #expect(cds_return_large_blocks(128 << 10) == 1)
        let larger = try #require(malloc(24 << 20))
        memset(larger, 1, 24 << 20)
        free(larger)
        let before = cds_malloc_mapped_bytes()
        let block = try #require(malloc(16 << 20))
        memset(block, 1, 16 << 20)
        let during = cds_malloc_mapped_bytes()
        free(block)
        // Other tests' threads may map or free blocks meanwhile: half the block's size is
        // still far more than a heap block would add to the mapped total (nothing).
        #expect(during >= before + (8 << 20))
    }
}
