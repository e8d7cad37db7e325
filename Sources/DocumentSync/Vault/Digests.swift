import CCrypto
import DocumentKit
import Foundation

/// HMAC-SHA256 and SHA-1, libcrypto's.
public enum Digests {
    /// The HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256(_ message: Data, key: SecretBytes) -> Data {
        key.withUnsafeBytes { hmacSHA256(message, key: $0) }
    }

    /// The HMAC-SHA256 of `message` under `key` (any length), for keys kept elsewhere (SigV4's
    /// signing keys).
    static func hmacSHA256(_ message: Data, key: UnsafeRawBufferPointer) -> Data {
        LibCrypto.prepare()
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = message.withUnsafeBytes { message in
            HMAC(
                EVP_sha256(), key.baseAddress ?? UnsafeRawPointer(libcryptoBytes(key)), Int32(key.count),
                libcryptoBytes(message), message.count, &digest, &length) != nil
        }
        // HMAC fails only without memory or without SHA-256, neither of which input can cause.
        guard done, length == 32 else { fatalError("libcrypto: HMAC-SHA256 failed") }
        return Data(digest.prefix(32))
    }

    /// The SHA-1 digest of `data` (20 bytes). The vault format uses it only to name things
    /// (directory paths, shortened names), never to authenticate.
    public static func sha1(_ data: Data) -> Data {
        Data(LibCrypto.digest(of: data, by: EVP_sha1()))
    }

    /// Whether `a` and `b` are equal, compared in time that does not depend on where they differ.
    public static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { CRYPTO_memcmp(a.baseAddress, $0.baseAddress, a.count) == 0 }
        }
    }
}
