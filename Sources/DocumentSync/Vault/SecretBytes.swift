import CCrypto
import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Key material that is overwritten with zeros when the last reference to it goes.
///
/// Keys live in one buffer of their own, never in `Data` or an array that the runtime may copy
/// and free unwiped. They are read only inside ``withUnsafeBytes(_:)``. The bytes are wiped
/// with libcrypto's `OPENSSL_cleanse`, which the compiler cannot remove as a dead store. Where the
/// system allows (`RLIMIT_MEMLOCK`, 8 MiB for a user on Debian), the buffer is locked in memory
/// (`mlock`), so that it is never written to swap; where it does not, it is kept all the same.
///
/// For example:
///
/// ```swift
/// let key = try SecretBytes.random(count: 32)
/// let sealed = try AESGCM(key: key).seal(Data("text".utf8), nonce: nonce)
/// ```
public final class SecretBytes: @unchecked Sendable {
    // Written only in init, read only through withUnsafeBytes: immutable, so Sendable.
    private let storage: UnsafeMutableRawBufferPointer

    /// How many bytes there are.
    public let count: Int
    /// Whether the bytes are locked in memory (never swapped out).
    public let isLocked: Bool

    /// The addresses the bytes' pages span, whole pages (for tests: no two secrets share one).
    var pages: Range<UInt> {
        let start = UInt(bitPattern: storage.baseAddress)
        return start..<start + UInt(storage.count)
    }

    /// The system's page: the unit of `mlock`.
    private static let pageSize = Swift.max(Int(sysconf(Int32(_SC_PAGESIZE))), 16)

    /// Bytes that `fill` writes, all `count` of them.
    package init(count: Int, filling fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0, "a negative byte count")
        // Pages of its own: locks are the kernel's per page and do not nest, so unlocking a
        // secret that shared a page with another would unlock that other one too.
        let page = Self.pageSize
        storage = .allocate(byteCount: (Swift.max(count, 1) + page - 1) / page * page, alignment: page)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        // Best effort: over the limit, the key is still wiped, only swappable.
        isLocked = mlock(storage.baseAddress, storage.count) == 0
        self.count = count
        // A throwing fill leaves a whole object behind: deinit wipes what it wrote.
        try fill(UnsafeMutableRawBufferPointer(rebasing: storage[..<count]))
    }

    /// A copy of `bytes`. The caller wipes or drops its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { $0.copyMemory(from: bytes) }
    }

    /// A copy of `bytes` (for known keys in tests, and keys read from a key file).
    public convenience init(copying bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        self.init(count: array.count) { target in array.withUnsafeBytes { target.copyMemory(from: $0) } }
    }

    /// Several secrets one after the other, as one (AES-SIV's two keys as its one key).
    public convenience init(concatenating parts: [SecretBytes]) {
        self.init(count: parts.reduce(0) { $0 + $1.count }) { target in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + bytes.count])
                        .copyMemory(from: bytes)
                }
                offset += part.count
            }
        }
    }

    /// `count` bytes from libcrypto's random generator (the system's entropy, through a DRBG).
    ///
    /// - Throws: ``VaultError`` `.libcrypto` if the generator cannot be seeded.
    public static func random(count: Int) throws -> SecretBytes {
        try SecretBytes(count: count) { try SecureRandom.fill($0) }
    }

    deinit {
        OPENSSL_cleanse(storage.baseAddress, storage.count)
        if isLocked { munlock(storage.baseAddress, storage.count) }
        storage.deallocate()
    }

    /// Calls `body` with the bytes, which it must not keep.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
    {
        try body(UnsafeRawBufferPointer(rebasing: storage[..<count]))
    }

    /// Whether `other` holds the same bytes, compared in time that does not depend on where
    /// they first differ.
    public func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in CRYPTO_memcmp(mine.baseAddress, theirs.baseAddress, count) == 0
            }
        }
    }

    /// The bytes `range` as a secret of their own.
    public func slice(_ range: Range<Int>) -> SecretBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "a slice outside the secret")
        return withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

/// Random bytes from libcrypto (`RAND_bytes`).
public enum SecureRandom {
    /// Fills `buffer` with random bytes.
    ///
    /// - Throws: ``VaultError`` `.libcrypto` if the generator cannot be seeded.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        LibCrypto.prepare()
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        // RAND_bytes takes an Int32 count: fill in pieces that fit.
        var offset = 0
        while offset < buffer.count {
            let count = Swift.min(buffer.count - offset, 1 << 30)
            guard RAND_bytes(base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(count)) == 1
            else {
                throw VaultError(.libcrypto, LibCryptoErrors.drain("RAND_bytes"))
            }
            offset += count
        }
    }

    /// `count` random bytes, for what is not secret (nonces, salts, IDs).
    public static func bytes(_ count: Int) throws -> Data {
        var data = Data(count: count)
        try data.withUnsafeMutableBytes { try fill($0) }
        return data
    }
}

/// libcrypto's error queue, read into a message and emptied.
enum LibCryptoErrors {
    /// `operation` and the reasons libcrypto queued for this thread, which are then cleared so
    /// that they are not reported again by a later call.
    static func drain(_ operation: String) -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            reasons.append(
                String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? operation : "\(operation): \(reasons.joined(separator: "; "))"
    }
}
