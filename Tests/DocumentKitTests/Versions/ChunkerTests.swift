import Foundation
import Testing

@testable import DocumentKit

/// A version is cut reusing the chunks of the one before: the result must be exactly the
/// chunks a fresh cut gives, named by their digests, whatever the edit.
@Suite struct ChunkerTests {
    /// Fresh chunks of `data`, named.
    static func freshChunks(_ data: Data) -> [Chunk] {
        data.withUnsafeBytes { bytes in
            var offset = 0
            return Chunker.chunkLengths(of: bytes).map { length in
                defer { offset += length }
                return Chunk(
                    offset: offset, length: length,
                    name: ContentHash(of: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]))
                        .hex)
            }
        }
    }

    /// A file too large to be read whole (`ChunkedContents.mostBytes`) is mapped and cut,
    /// hashed and stored a chunk at a time, its pages given back as the cut goes on: each
    /// version reads back byte for byte.
    @Test func aLargeFileIsStoredAChunkAtATimeAndReadsBackWhole() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let bytes = Self.randomBytes(ChunkedContents.mostBytes + (3 << 20) + 123, seed: 11)
        let file = tree.file("large.bin")
        try bytes.write(to: file)
        let first = try store.addOfItem(at: file, withContentsOf: file)
        var edited = bytes
        edited.replaceSubrange(5 << 20..<(5 << 20) + 10, with: Data("an edit in the middle".utf8))
        try edited.write(to: file)
        let second = try store.addOfItem(at: file, withContentsOf: file)

        #expect(try Data(contentsOf: first.url) == bytes)
        #expect(try Data(contentsOf: second.url) == edited)
    }

    /// `data` cut like `previous`, the new chunks then hashed; and how many were reused.
    static func reusedCut(_ data: Data, like previous: Data) -> (chunks: [Chunk], reused: Int) {
        let earlier = freshChunks(previous)
        var chunks = data.withUnsafeBytes { bytes in
            previous.withUnsafeBytes { Chunker.cut(bytes, like: $0, chunks: earlier) }
        }
        let reused = chunks.filter { !$0.name.isEmpty }.count
        for index in chunks.indices where chunks[index].name.isEmpty {
            chunks[index].name =
                ContentHash(
                    of: data[chunks[index].offset..<chunks[index].offset + chunks[index].length]
                ).hex
        }
        return (chunks, reused)
    }

    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var state = seed
        return Data(
            (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 33)
            })
    }

    enum Edit: String, CaseIterable {
        case replaceMiddle, insertMiddle, removeMiddle, replaceStart, insertStart, appendEnd, truncateEnd
        case unchanged, shrinkToOneChunk

        func apply(to data: Data) -> Data {
            var edited = data
            let middle = data.count / 2
            switch self {
            case .replaceMiddle:
                edited.replaceSubrange(middle..<middle + 40, with: Data(repeating: 0x41, count: 40))
            case .insertMiddle: edited.insert(contentsOf: Data(repeating: 0x42, count: 777), at: middle)
            case .removeMiddle: edited.removeSubrange(middle..<middle + 5000)
            case .replaceStart: edited.replaceSubrange(0..<10, with: Data(repeating: 0x43, count: 10))
            case .insertStart: edited.insert(contentsOf: Data(repeating: 0x44, count: 3), at: 0)
            case .appendEnd: edited.append(Data(repeating: 0x45, count: 20_000))
            case .truncateEnd: edited.removeLast(9000)
            case .unchanged: break
            case .shrinkToOneChunk: edited = data.prefix(5000)
            }
            return edited
        }
    }

    @Test(arguments: Edit.allCases)
    func cuttingLikeTheLastVersionGivesTheFreshCut(_ edit: Edit) {
        let previous = Self.randomBytes(1 << 20, seed: 7)
        let edited = edit.apply(to: previous)
        let (chunks, reused) = Self.reusedCut(edited, like: previous)
        #expect(chunks == Self.freshChunks(edited))
        #expect(chunks.map(\.length).reduce(0, +) == edited.count)
        if edit != .shrinkToOneChunk {
            // Most of a 1 MiB file is untouched by these edits: reuse must actually happen.
            #expect(reused >= chunks.count - 4, "\(reused) of \(chunks.count) reused")
        }
    }

    /// Text-like bytes, where equal runs recur: a chunk must be matched by its bytes, not
    /// taken for an equal-looking one elsewhere.
    @Test func repetitiveContentsAreCutAsFresh() {
        let line = Data("the quick brown fox jumps over the lazy dog\n".utf8)
        var previous = Data()
        while previous.count < 600_000 { previous.append(line) }
        for edit in Edit.allCases {
            let edited = edit.apply(to: previous)
            #expect(Self.reusedCut(edited, like: previous).chunks == Self.freshChunks(edited), "\(edit)")
        }
    }

    @Test func unrelatedContentsReuseNothing() {
        let previous = Self.randomBytes(300_000, seed: 1)
        let other = Self.randomBytes(300_000, seed: 2)
        let (chunks, reused) = Self.reusedCut(other, like: previous)
        #expect(chunks == Self.freshChunks(other))
        #expect(reused == 0)
    }
}
