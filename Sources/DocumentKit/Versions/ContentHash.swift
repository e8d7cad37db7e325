import CCrypto
import Foundation

/// The SHA-256 digest of some bytes, which names a chunk in the version store.
///
/// Computed by OpenSSL's libcrypto, which uses the processor's SHA instructions where it
/// has them. A chunk's name is its digest, so two equal chunks are stored once and a
/// damaged chunk is told from a good one by hashing it again.
///
/// For example:
///
/// ```swift
/// ContentHash(of: Data("abc".utf8)).hex
/// // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
package struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    /// The digest as 64 lowercase hexadecimal digits.
    package let hex: String

    init(hex: String) { self.hex = hex }

    /// Hashes `bytes`.
    package init(of bytes: UnsafeRawBufferPointer) {
        var hasher = Hasher()
        hasher.update(bytes)
        self = hasher.finalize()
    }

    package init(of data: Data) {
        var hasher = Hasher()
        hasher.update(data)
        self = hasher.finalize()
    }

    /// Whether `text` has the shape of a digest, so that a file name read from disk can be
    /// trusted as a path component.
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    package var description: String { hex }

    /// Hashes the file at `url`, read in blocks so that a file of any size takes little memory.
    ///
    /// - Throws: ``DocumentKitError`` naming the file if it cannot be opened or read.
    package init(contentsOf url: URL) throws {
        let file = try FileDescriptor.open(url, O_RDONLY | O_CLOEXEC, operation: "read to hash")
        var hasher = Hasher()
        // 1 MiB: large enough that the syscalls cost nothing beside the hashing, small
        // enough to stay in the processor's cache.
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { block.deallocate() }
        while true {
            let count = try Syscall.read(file.rawValue, block).get("read to hash", url)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: block[..<count]))
        }
        self = hasher.finalize()
    }

    /// A digest computed over bytes given in pieces, such as a file read in blocks.
    ///
    /// Not copyable: it owns libcrypto's digest context, freed when the hasher goes away.
    package struct Hasher: ~Copyable {
        private let context: OpaquePointer

        package init() {
            LibCrypto.prepare()
            // Allocation is the only way these fail; there is no digest without memory.
            guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto: out of memory for a digest") }
            guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
                fatalError("libcrypto: SHA-256 is unavailable")
            }
            self.context = context
        }

        deinit { EVP_MD_CTX_free(context) }

        /// Adds `bytes` to the digest.
        package mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            guard EVP_DigestUpdate(context, base, bytes.count) == 1 else {
                fatalError("libcrypto: SHA-256 update failed")
            }
        }

        package mutating func update(_ data: Data) {
            for region in data.regions {
                region.withUnsafeBytes { update($0) }
            }
        }

        /// The digest of everything added.
        package consuming func finalize() -> ContentHash {
            var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            var length: CUnsignedInt = 0
            let finished = withUnsafeMutableBytes(of: &digest) { buffer in
                EVP_DigestFinal_ex(
                    context, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
            }
            guard finished == 1, length == 32 else { fatalError("libcrypto: SHA-256 final failed") }
            let digits = Array("0123456789abcdef".utf8)
            let hex = withUnsafeBytes(of: &digest) { bytes in
                String(unsafeUninitializedCapacity: 64) { text in
                    for (index, byte) in bytes.enumerated() {
                        text[2 * index] = digits[Int(byte >> 4)]
                        text[2 * index + 1] = digits[Int(byte & 0xf)]
                    }
                    return 64
                }
            }
            return ContentHash(hex: hex)
        }
    }
}

/// libcrypto, set up once for the process without its exit-time cleanup.
///
/// By default libcrypto frees its tables in an `atexit` handler, while the version store may
/// still be hashing a version on its queue as an app quits (the termination hook's save): that
/// thread then crashed in `EVP_MD_fetch` on freed tables. The system frees everything at exit
/// anyway. Every use of libcrypto in the package calls ``prepare()`` first.
package enum LibCrypto {
    private static let prepared = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Sets libcrypto up (once) without its exit-time cleanup.
    package static func prepare() {
        guard prepared else { fatalError("libcrypto: OPENSSL_init_crypto failed") }
    }

    /// The digest of `bytes` by `algorithm` (`EVP_md5()`, `EVP_sha1()`, ...), in one call.
    package static func digest(of bytes: Data, by algorithm: OpaquePointer?) -> [UInt8] {
        prepare()
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        bytes.withUnsafeBytes { buffer in
            _ = EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, algorithm, nil)
        }
        return Array(digest.prefix(Int(length)))
    }

    /// `bytes` as lowercase hexadecimal digits.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = digits[Int(byte >> 4)]
                text[2 * index + 1] = digits[Int(byte & 0xF)]
            }
            return bytes.count * 2
        }
    }
}
