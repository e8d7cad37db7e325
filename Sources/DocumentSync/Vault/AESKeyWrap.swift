import CCrypto
import DocumentKit
import Foundation

/// AES key wrap (RFC 3394, with its default initial value): how the vault keeps its master keys
/// under the key derived from the passphrase.
///
/// libcrypto's `EVP_aes_128_wrap`, `_192_` and `_256_wrap`, chosen by the length of the
/// key-encryption key, with the context flag that lets the wrap modes be used through EVP.
///
/// For example:
///
/// ```swift
/// let wrapped = try AESKeyWrap.wrap(masterKey, keyEncryptionKey: kek)  // 40 bytes for a 32-byte key
/// let masterKey = try AESKeyWrap.unwrap(wrapped, keyEncryptionKey: kek)
/// ```
public enum AESKeyWrap {
    /// `key` (16 bytes or more, a multiple of 8) wrapped under `keyEncryptionKey` (16, 24 or 32
    /// bytes): 8 bytes longer than `key`.
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for lengths the mode does not take.
    public static func wrap(_ key: SecretBytes, keyEncryptionKey: SecretBytes) throws -> Data {
        guard key.count >= 16, key.count % 8 == 0 else {
            throw VaultError(.invalidArgument, "AES key wrap takes a key of 16 bytes or more in 8-byte steps")
        }
        let context = try context(keyEncryptionKey, encrypting: true)
        var wrapped = Data(count: key.count + 8)
        let done = wrapped.withUnsafeMutableBytes { output in
            key.withUnsafeBytes { input in
                var written: Int32 = 0
                let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                guard
                    EVP_EncryptUpdate(
                        context.pointer, out, &written, libcryptoBytes(input), Int32(input.count)) == 1,
                    Int(written) == output.count
                else { return false }
                return EVP_EncryptFinal_ex(context.pointer, out + Int(written), &written) == 1
            }
        }
        guard done else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES key wrap")) }
        return wrapped
    }

    /// The key wrapped in `wrapped`, if its integrity check holds under `keyEncryptionKey`.
    ///
    /// - Throws: ``VaultError`` `.authenticationFailed` if it does not (another key-encryption
    ///   key: a wrong passphrase; or altered), or `wrapped` has a length no wrap has.
    public static func unwrap(_ wrapped: Data, keyEncryptionKey: SecretBytes) throws -> SecretBytes {
        guard wrapped.count >= 24, wrapped.count % 8 == 0 else {
            throw VaultError(
                .authenticationFailed, "AES key unwrap: \(wrapped.count) bytes is no wrapped key")
        }
        let context = try context(keyEncryptionKey, encrypting: false)
        // Unwrapped into a secret's own buffer (with room for libcrypto's final call), then
        // copied to one of the exact length; both are wiped.
        let buffer = try SecretBytes(count: wrapped.count) { output in
            let done = wrapped.withUnsafeBytes { input in
                var written: Int32 = 0
                let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                guard
                    EVP_DecryptUpdate(
                        context.pointer, out, &written, libcryptoBytes(input), Int32(input.count)) == 1,
                    Int(written) == input.count - 8
                else { return false }
                return EVP_DecryptFinal_ex(context.pointer, out + Int(written), &written) == 1
            }
            guard done else {
                _ = LibCryptoErrors.drain("")
                throw VaultError(.authenticationFailed, "AES key unwrap: the integrity check failed")
            }
        }
        return buffer.slice(0..<wrapped.count - 8)
    }

    private static func context(_ keyEncryptionKey: SecretBytes, encrypting: Bool) throws -> CipherContext {
        LibCrypto.prepare()
        let cipher: OpaquePointer?
        switch keyEncryptionKey.count {
        case 16: cipher = EVP_aes_128_wrap()
        case 24: cipher = EVP_aes_192_wrap()
        case 32: cipher = EVP_aes_256_wrap()
        default:
            throw VaultError(.invalidArgument, "AES key wrap takes a 16-, 24- or 32-byte key-encryption key")
        }
        let context = try CipherContext()
        EVP_CIPHER_CTX_set_flags(context.pointer, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW))
        let done = keyEncryptionKey.withUnsafeBytes { key in
            EVP_CipherInit_ex(context.pointer, cipher, nil, libcryptoBytes(key), nil, encrypting ? 1 : 0) == 1
        }
        guard done else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES key wrap init")) }
        return context
    }
}
