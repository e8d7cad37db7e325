import Foundation

/// The SHA-256 digest of some bytes, which names a chunk in the version store.
///
/// Written here because Foundation on Linux has no CryptoKit and the package takes no
/// dependencies. A chunk's name is its digest, so two equal chunks are stored once and a
/// damaged chunk is told from a good one by hashing it again.
struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    /// The digest as 64 lowercase hexadecimal digits.
    let hex: String

    init(hex: String) { self.hex = hex }

    /// Hashes `bytes`.
    init(of bytes: UnsafeRawBufferPointer) {
        var hasher = SHA256()
        hasher.update(bytes)
        hex = hasher.finalizeHex()
    }

    init(of data: Data) {
        self = data.withUnsafeBytes { ContentHash(of: $0) }
    }

    /// Whether `text` has the shape of a digest, so that a file name read from disk can be
    /// trusted as a path component.
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    var description: String { hex }
}

/// SHA-256 as FIPS 180-4 defines it.
struct SHA256 {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5,
        0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3,
        0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc,
        0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
        0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13,
        0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3,
        0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5,
        0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208,
        0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        length &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            offset = take
            if pending.count == 64 {
                let block = pending
                block.withUnsafeBytes { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while bytes.count - offset >= 64 {
            compress(base + offset)
            offset += 64
        }
        if offset < bytes.count {
            pending.append(
                contentsOf: UnsafeRawBufferPointer(start: base + offset, count: bytes.count - offset))
        }
    }

    mutating func finalizeHex() -> String {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        let used = (pending.count + 1) % 64
        tail.append(contentsOf: repeatElement(0, count: used <= 56 ? 56 - used : 120 - used))
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let savedLength = length
        tail.withUnsafeBytes { update($0) }
        length = savedLength
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for word in words {
            for shift in stride(from: 28, through: 0, by: -4) {
                text.append(digits[Int((word >> UInt32(shift)) & 0xf)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func compress(_ block: UnsafeRawPointer) {
        @inline(__always) func rotate(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 {
                let b = block + i * 4
                w[i] =
                    UInt32(b.load(as: UInt8.self)) << 24 | UInt32(b.load(fromByteOffset: 1, as: UInt8.self))
                    << 16
                    | UInt32(b.load(fromByteOffset: 2, as: UInt8.self)) << 8
                    | UInt32(b.load(fromByteOffset: 3, as: UInt8.self))
            }
            for i in 16..<64 {
                let s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                    let choice = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ choice &+ k[i] &+ w[i]
                    let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ majority
                    h = g
                    g = f
                    f = e
                    e = d &+ t1
                    d = c
                    c = b
                    b = a
                    a = t1 &+ t2
                }
            }
            state = (
                state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f,
                state.6 &+ g,
                state.7 &+ h
            )
        }
    }
}
