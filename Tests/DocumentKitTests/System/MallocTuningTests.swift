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
    /// pages in the middle too, as a pass calls it once its scan is let go of. In a child
    /// process: this one's other threads allocate between the blocks at any moment.
    @Test func freePagesBelowABlockInUseAreGivenBack() throws {
        let outcome = try TestChild.run(["malloc-free-pages"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let counts = outcome.standardOutput.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(counts.count == 3, "\(outcome.standardOutput)")
        let (pages, freed, returned) = (counts[0], counts[1], counts[2])
        #expect(freed > pages / 2, "freed blocks stay resident until given back: \(counts)")
        #expect(returned < pages / 4, "given back: \(counts)")
    }
}
