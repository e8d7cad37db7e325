import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// How a large transfer moves its bytes: chunks in buffers used again once let go, and a hash
/// made on a thread of its own from the chunks in the order given.
@Suite struct ChunkBuffersTests {
    @Test func aChunkLetGoGivesItsBufferToTheNextAndOneKeptIsNotOverwritten() throws {
        let buffers = ChunkBuffers(size: 16)
        func chunk(_ byte: UInt8, count: Int) -> Data? {
            buffers.fill { buffer in
                buffer.initializeMemory(as: UInt8.self, repeating: byte)
                return count
            }
        }
        func address(_ data: Data) -> UnsafeRawPointer? { data.withUnsafeBytes { $0.baseAddress } }

        var first = try #require(chunk(1, count: 10))
        let firstAddress = address(first)
        #expect(first == Data(repeating: 1, count: 10))
        let kept = try #require(chunk(2, count: 16))
        #expect(address(kept) != firstAddress)
        first = Data()
        // The first chunk's buffer is free again: the next chunk is read into it.
        let third = try #require(chunk(3, count: 5))
        #expect(address(third) == firstAddress)
        #expect(kept == Data(repeating: 2, count: 16))
        #expect(third == Data(repeating: 3, count: 5))
        // Nothing read is no chunk, and keeps no buffer.
        #expect(chunk(4, count: 0) == nil)
        struct Unreadable: Error {}
        #expect(throws: Unreadable.self) { try buffers.fill { _ in throw Unreadable() } }
        let fourth = try #require(chunk(5, count: 1))
        #expect(fourth == Data([5]))
        #expect(kept == Data(repeating: 2, count: 16))
    }

    @Test func aHashMadeOnItsOwnThreadIsTheHashOfEveryChunkInOrder() {
        var generator = SeededGenerator(seed: 27)
        let chunks = (0..<40).map { index in
            Data((0..<(index * 997 % 5000)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        let hashing = HashingQueue()
        for chunk in chunks { hashing.add(chunk) }
        #expect(hashing.finalize() == ContentHash(of: chunks.reduce(Data(), +)))
        let empty = HashingQueue()
        #expect(empty.finalize() == ContentHash(of: Data()))
    }
}
