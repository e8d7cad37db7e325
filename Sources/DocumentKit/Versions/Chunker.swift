import Foundation

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
        // 15 top bits: a boundary once in 32 KiB on average after the minimum.
        let mask: UInt64 = ((1 << 15) - 1) << 49
        var lengths: [Int] = []
        var start = 0
        let count = bytes.count
        gear.withUnsafeBufferPointer { gear in
            while start < count {
                let remaining = count - start
                if remaining <= minimumSize {
                    lengths.append(remaining)
                    break
                }
                let limit = min(remaining, maximumSize)
                var hash: UInt64 = 0
                var length = limit
                var index = minimumSize
                while index < limit {
                    hash = (hash << 1) &+ gear[Int(bytes[start + index])]
                    if hash & mask == 0 {
                        length = index + 1
                        break
                    }
                    index += 1
                }
                lengths.append(length)
                start += length
            }
        }
        return lengths
    }
}
