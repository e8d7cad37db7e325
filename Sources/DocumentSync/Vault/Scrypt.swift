import CCrypto
import DocumentKit
import Foundation

/// scrypt (RFC 7914), libcrypto's `EVP_PBE_scrypt`: the key-encryption key from a passphrase.
public enum Scrypt {
    /// The most memory one derivation may take (about 128 · N · r bytes): 256 MiB, eight times
    /// what Cryptomator's defaults (N = 32768, r = 8) take. A masterkey file from a server
    /// that asks for more is refused rather than obeyed.
    public static let memoryLimit: UInt64 = 256 << 20

    /// `count` bytes derived from `passphrase` and `salt` with cost `cost` (N, a power of two
    /// above 1), block size `blockSize` (r) and parallelization `parallelization` (p).
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for parameters scrypt does not take or that
    ///   would need more than ``memoryLimit``.
    public static func derive(
        _ passphrase: SecretBytes, salt: Data, cost: UInt64, blockSize: UInt64, parallelization: UInt64 = 1,
        count: Int
    ) throws -> SecretBytes {
        LibCrypto.prepare()
        guard cost > 1, cost & (cost - 1) == 0, blockSize >= 1, parallelization >= 1, count >= 1,
            blockSize <= 1 << 16, parallelization <= 1 << 16, cost <= 1 << 32
        else { throw VaultError(.invalidArgument, "scrypt parameters out of range") }
        // What libcrypto allocates: 128 · r · (N + 2) bytes of V and 128 · r · p of B.
        let (table, tableOverflow) = (128 * blockSize).multipliedReportingOverflow(by: cost + 2)
        let (blocks, blocksOverflow) = (128 * blockSize).multipliedReportingOverflow(by: parallelization)
        let (needed, sumOverflow) = table.addingReportingOverflow(blocks)
        guard !tableOverflow, !blocksOverflow, !sumOverflow, needed <= memoryLimit else {
            throw VaultError(.invalidArgument, "scrypt parameters ask for more than \(memoryLimit >> 20) MiB")
        }
        return try SecretBytes(count: count) { output in
            let done = passphrase.withUnsafeBytes { passphrase in
                salt.withUnsafeBytes { salt in
                    passphrase.withMemoryRebound(to: CChar.self) { text in
                        EVP_PBE_scrypt(
                            text.baseAddress ?? UnsafePointer(OpaquePointer(libcryptoBytes(passphrase))),
                            passphrase.count, libcryptoBytes(salt), salt.count, cost, blockSize,
                            parallelization,
                            needed, output.baseAddress!.assumingMemoryBound(to: UInt8.self), count) == 1
                    }
                }
            }
            guard done else { throw VaultError(.libcrypto, LibCryptoErrors.drain("scrypt")) }
        }
    }
}
