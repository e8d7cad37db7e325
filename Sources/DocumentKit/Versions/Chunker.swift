import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Splits bytes into content-defined chunks with a gear rolling hash, so that an edit in one
/// place changes the chunks around it and no others: the rest of the file dedupes against
/// earlier versions however many bytes the edit inserted or removed.
///
/// Boundaries fall where the top bits of the hash are zero, giving chunks of about
/// ``averageSize`` bytes, never shorter than ``minimumSize`` (but at the end) nor longer
/// than ``maximumSize``.
struct Chunker: Sendable {
    static let minimumSize = 8 << 10
    static let averageSize = 32 << 10
    static let maximumSize = 128 << 10

    /// One pseudo-random word per byte value, fixed forever: changing it would move every
    /// boundary and end deduplication against versions already stored.
    static let gear: [UInt64] = {
        var seed: UInt64 = 0x646f_636b_6974_6765  // "dockitge"
        return (0..<256).map { _ in
            seed &+= 0x9e37_79b9_7f4a_7c15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }()

    /// The lengths of the chunks of `bytes`, in order.
    static func chunkLengths(of bytes: UnsafeRawBufferPointer) -> [Int] {
        var lengths: [Int] = []
        var start = 0
        while start < bytes.count {
            let length = chunkLength(of: bytes, from: start)
            lengths.append(length)
            start += length
        }
        return lengths
    }

    /// The length of the chunk of `bytes` that begins at `start`.
    ///
    /// It depends only on the bytes from `start` to the boundary and on whether the end of
    /// `bytes` comes first: what lets ``cut(_:like:chunks:)`` reuse a chunk seen before.
    static func chunkLength(of bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        // 15 top bits: a boundary once in 32 KiB on average after the minimum.
        let mask: UInt64 = ((1 << 15) - 1) << 49
        let remaining = bytes.count - start
        if remaining <= minimumSize { return remaining }
        let limit = min(remaining, maximumSize)
        return gear.withUnsafeBufferPointer { gear in
            var hash: UInt64 = 0
            var index = minimumSize
            while index < limit {
                hash = (hash << 1) &+ gear[Int(bytes[start + index])]
                if hash & mask == 0 { return index + 1 }
                index += 1
            }
            return limit
        }
    }

    /// The chunks of `bytes`, cut exactly as ``chunkLengths(of:)`` cuts them, knowing that
    /// `previous` was cut into `chunks`: a chunk of `previous` found unchanged where it was,
    /// or moved by the difference in length (what an edit that inserted or removed bytes
    /// does to everything after it), keeps its name and is neither scanned nor hashed again.
    /// The other chunks have an empty name, for the caller to hash.
    ///
    /// A reused chunk is never the last of either contents: a chunk that ended at a
    /// boundary ends there again over the same bytes, whatever comes before or after it.
    static func cut(_ bytes: UnsafeRawBufferPointer, like previous: UnsafeRawBufferPointer, chunks: [Chunk])
        -> [Chunk]
    {
        var byOffset: [Int: Chunk] = [:]
        for chunk in chunks { byOffset[chunk.offset] = chunk }
        let shift = bytes.count - previous.count
        func unchanged(at start: Int) -> Chunk? {
            for offset in shift == 0 ? [start] : [start, start - shift] {
                guard let old = byOffset[offset], old.offset + old.length < previous.count,
                    start + old.length < bytes.count,
                    let new = bytes.baseAddress, let earlier = previous.baseAddress,
                    memcmp(new + start, earlier + old.offset, old.length) == 0
                else { continue }
                return Chunk(offset: start, length: old.length, name: old.name)
            }
            return nil
        }
        var result: [Chunk] = []
        var start = 0
        while start < bytes.count {
            let chunk =
                unchanged(at: start)
                ?? Chunk(offset: start, length: chunkLength(of: bytes, from: start), name: "")
            result.append(chunk)
            start += chunk.length
        }
        return result
    }
}

/// One chunk of some contents: where it is and the digest that names it.
struct Chunk: Sendable, Equatable {
    var offset: Int
    var length: Int
    var name: String
}

/// A file's contents as last stored, with their chunks, kept so that the next version of the
/// same file is cut and hashed only where it changed (see ``Chunker/cut(_:like:chunks:)``).
struct ChunkedContents: Sendable {
    var bytes: Data
    var chunks: [Chunk]

    /// Files up to this size are kept; a larger one is read mapped and cut afresh.
    static let mostBytes = 8 << 20
    /// Contents of at most this many items are kept, the least recently stored going first.
    static let mostItems = 8
}

/// The contents of the items whose versions were stored last, least recent first.
struct RememberedContents {
    var items: [String: ChunkedContents] = [:]
    var order: [String] = []
}
