import CCrypto
import DocumentKit
import Foundation
import Synchronization

/// AES-SIV (RFC 5297): deterministic authenticated encryption, what the vault encrypts names
/// and directory IDs with.
///
/// The key is the MAC key (S2V's CMAC) followed by the encryption key (CTR), 32, 48 or 64
/// bytes in all for AES-128, -192 or -256. A vault's is 64 bytes: its MAC master key, then its
/// encryption master key. The sealed form is the 16-byte synthetic IV (the tag) followed by the
/// ciphertext, which is as long as the plaintext.
///
/// libcrypto does the work ("AES-256-SIV" through `EVP_CIPHER_fetch`), except for an empty
/// plaintext, which OpenSSL 3.0's SIV refuses (its final step fails; openssl issue 17268): the
/// vault needs exactly that for its root folder, whose directory ID is the empty string. For
/// it the tag is RFC 5297's S2V computed from libcrypto's CMAC; the ciphertext is empty.
///
/// For example:
///
/// ```swift
/// let sealed = try AESSIV.seal(Data("name".utf8), associatedData: [Data(directoryID.utf8)], key: key)
/// let name = try AESSIV.open(sealed, associatedData: [Data(directoryID.utf8)], key: key)
/// ```
public enum AESSIV {
    /// The length of the synthetic IV that leads the sealed form.
    public static let tagCount = 16

    /// `plaintext` encrypted and authenticated with `associatedData` (each element one of
    /// S2V's strings, in order): the tag, then the ciphertext.
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for a key of another length.
    public static func seal(_ plaintext: Data, associatedData: [Data] = [], key: SecretBytes) throws -> Data {
        try Keyed(key: key).seal(plaintext, associatedData: associatedData)
    }

    /// The plaintext of `sealed`, if it authenticates with `associatedData` under `key`.
    ///
    /// - Throws: ``VaultError`` `.authenticationFailed` if it does not (altered, other associated
    ///   data, another key, shorter than a tag); `.invalidArgument` for a key of another length.
    public static func open(_ sealed: Data, associatedData: [Data] = [], key: SecretBytes) throws -> Data {
        try Keyed(key: key).open(sealed, associatedData: associatedData)
    }

    /// AES-SIV under one key, keyed once: each message starts from a copy of a context whose
    /// key is set up already (`EVP_CIPHER_CTX_copy`). Setting a key up costs libcrypto a fetch
    /// of CMAC and of two ciphers and a CMAC of its own; a vault's names, two or three a file
    /// synced, spent most of their time there.
    ///
    /// Safe to share between threads: the keyed context is only copied, one copy at a time.
    final class Keyed: Sendable {
        let key: SecretBytes
        private let keyed = Mutex<KeyedContext?>(nil)

        /// AES-SIV under `key` (32, 48 or 64 bytes); keyed at the first message.
        init(key: SecretBytes) {
            self.key = key
        }

        /// `plaintext` sealed as ``AESSIV/seal(_:associatedData:key:)`` does.
        func seal(_ plaintext: Data, associatedData: [Data] = []) throws -> Data {
            _ = try sivCipher(for: key)
            if plaintext.isEmpty { return try emptyTag(associatedData: associatedData, key: key) }
            let context = try fresh(encrypting: true)
            var sealed = Data(count: tagCount + plaintext.count)
            try authenticate(associatedData, in: context, operation: "AES-SIV seal")
            try sealed.withUnsafeMutableBytes { output in
                let tag = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                try plaintext.withUnsafeBytes { input in
                    var written: Int32 = 0
                    guard
                        EVP_EncryptUpdate(
                            context.pointer, tag + tagCount, &written, libcryptoBytes(input),
                            Int32(input.count))
                            == 1,
                        Int(written) == input.count,
                        EVP_EncryptFinal_ex(context.pointer, tag + tagCount + Int(written), &written) == 1,
                        EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagCount), tag) == 1
                    else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-SIV seal")) }
                }
            }
            return sealed
        }

        /// The plaintext of `sealed` as ``AESSIV/open(_:associatedData:key:)`` gives it.
        func open(_ sealed: Data, associatedData: [Data] = []) throws -> Data {
            _ = try sivCipher(for: key)
            guard sealed.count >= tagCount else {
                throw VaultError(.authenticationFailed, "AES-SIV: \(sealed.count) bytes, shorter than a tag")
            }
            let tag = Data(sealed.prefix(tagCount))
            let ciphertext = Data(sealed.dropFirst(tagCount))
            if ciphertext.isEmpty {
                let expected = try emptyTag(associatedData: associatedData, key: key)
                let equal = expected.withUnsafeBytes { expected in
                    tag.withUnsafeBytes { CRYPTO_memcmp(expected.baseAddress, $0.baseAddress, tagCount) == 0 }
                }
                guard equal else { throw VaultError(.authenticationFailed, "AES-SIV open") }
                return Data()
            }
            let context = try fresh(encrypting: false)
            try tag.withUnsafeBytes { tag in
                guard
                    EVP_CIPHER_CTX_ctrl(
                        context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagCount),
                        UnsafeMutableRawPointer(mutating: tag.baseAddress))
                        == 1
                else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-SIV set tag")) }
            }
            try authenticate(associatedData, in: context, operation: "AES-SIV open")
            var plaintext = Data(count: ciphertext.count)
            let opened = plaintext.withUnsafeMutableBytes { output in
                ciphertext.withUnsafeBytes { input in
                    var written: Int32 = 0
                    return EVP_DecryptUpdate(
                        context.pointer, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                        libcryptoBytes(input),
                        Int32(input.count)) == 1
                        && EVP_DecryptFinal_ex(context.pointer, nil, &written) == 1
                }
            }
            guard opened else {
                // libcrypto has already wiped the output; a failed check is no libcrypto error.
                _ = LibCryptoErrors.drain("")
                throw VaultError(.authenticationFailed, "AES-SIV open")
            }
            return plaintext
        }

        /// A context for one message: a copy of the keyed one (made at the first call), set to
        /// encrypt or decrypt.
        private func fresh(encrypting: Bool) throws -> CipherContext {
            let context = try CipherContext()
            let copied = try keyed.withLock { keyed in
                if keyed == nil {
                    let made = try CipherContext()
                    try key.withUnsafeBytes { key in
                        guard
                            EVP_CipherInit_ex2(
                                made.pointer, try sivCipher(for: self.key), libcryptoBytes(key), nil, 1, nil)
                                == 1
                        else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-SIV init")) }
                    }
                    keyed = KeyedContext(context: made)
                }
                return EVP_CIPHER_CTX_copy(context.pointer, keyed!.context.pointer) == 1
            }
            guard copied, EVP_CipherInit_ex2(context.pointer, nil, nil, nil, encrypting ? 1 : 0, nil) == 1
            else {
                throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-SIV init"))
            }
            return context
        }
    }

    /// The keyed context a ``Keyed`` copies, only ever touched under its lock.
    private struct KeyedContext: @unchecked Sendable {
        let context: CipherContext
    }

    private static func sivCipher(for key: SecretBytes) throws -> OpaquePointer {
        switch key.count {
        case 32: return FetchedCipher.aes128SIV.pointer
        case 48: return FetchedCipher.aes192SIV.pointer
        case 64: return FetchedCipher.aes256SIV.pointer
        default:
            throw VaultError(
                .invalidArgument, "AES-SIV takes a 32-, 48- or 64-byte key, not \(key.count) bytes")
        }
    }

    private static func authenticate(_ associatedData: [Data], in context: CipherContext, operation: String)
        throws
    {
        for datum in associatedData {
            try datum.withUnsafeBytes { try context.authenticate([$0], operation: operation) }
        }
    }

    /// The tag of an empty plaintext: RFC 5297 section 2.4's S2V over the associated data and
    /// the empty plaintext, each CMAC libcrypto's, under the MAC half of `key`.
    private static func emptyTag(associatedData: [Data], key: SecretBytes) throws -> Data {
        let half = key.count / 2
        let blockCipher: String
        switch half {
        case 16: blockCipher = "AES-128-CBC"
        case 24: blockCipher = "AES-192-CBC"
        default: blockCipher = "AES-256-CBC"
        }
        let macKey = key.slice(0..<half)
        var sum = try cmac(Data(count: 16), key: macKey, cipher: blockCipher)
        for datum in associatedData {
            sum = doubled(sum)
            let mac = try cmac(datum, key: macKey, cipher: blockCipher)
            for index in 0..<16 { sum[index] ^= mac[index] }
        }
        // The empty plaintext is the last string, shorter than a block: T = dbl(D) xor pad("").
        sum = doubled(sum)
        sum[0] ^= 0x80
        return try cmac(sum, key: macKey, cipher: blockCipher)
    }

    /// Doubling in GF(2^128) as RFC 5297 defines `dbl`: a shift left by one bit, and the low
    /// byte xored with 0x87 when a bit fell off the top.
    private static func doubled(_ block: Data) -> Data {
        let bytes = Array(block)
        var result = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 {
            let carry = index < 15 ? bytes[index + 1] >> 7 : 0
            result[index] = (bytes[index] << 1) | carry
        }
        if bytes[0] & 0x80 != 0 { result[15] ^= 0x87 }
        return Data(result)
    }

    private static func cmac(_ message: Data, key: SecretBytes, cipher: String) throws -> Data {
        LibCrypto.prepare()
        guard let mac = EVP_MAC_fetch(nil, "CMAC", nil) else {
            throw VaultError(.libcrypto, LibCryptoErrors.drain("CMAC fetch"))
        }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else {
            throw VaultError(.libcrypto, LibCryptoErrors.drain("CMAC context"))
        }
        defer { EVP_MAC_CTX_free(context) }
        var output = Data(count: 16)
        var written = 0
        let done = cipher.withCString { name in
            var parameters = [
                OSSL_PARAM_construct_utf8_string(
                    OSSL_MAC_PARAM_CIPHER, UnsafeMutablePointer(mutating: name), 0),
                OSSL_PARAM_construct_end(),
            ]
            return key.withUnsafeBytes { key in
                message.withUnsafeBytes { message in
                    output.withUnsafeMutableBytes { output in
                        EVP_MAC_init(context, libcryptoBytes(key), key.count, &parameters) == 1
                            && EVP_MAC_update(context, libcryptoBytes(message), message.count) == 1
                            && EVP_MAC_final(
                                context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, 16
                            )
                                == 1
                    }
                }
            }
        }
        guard done, written == 16 else { throw VaultError(.libcrypto, LibCryptoErrors.drain("CMAC")) }
        return output
    }
}

/// The bytes of `buffer` as libcrypto's `const unsigned char *` (a valid pointer even when
/// empty, which some libcrypto calls require).
func libcryptoBytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
    guard let base = buffer.baseAddress else { return UnsafePointer(emptyBytes) }
    return base.assumingMemoryBound(to: UInt8.self)
}

// One byte that stands for an empty buffer's address; never read.
private nonisolated(unsafe) let emptyBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

/// A libcrypto cipher context, freed (and so wiped: `EVP_CIPHER_CTX_free` cleanses its key
/// schedule) when it goes.
final class CipherContext {
    let pointer: OpaquePointer

    init() throws {
        LibCrypto.prepare()
        guard let pointer = EVP_CIPHER_CTX_new() else {
            throw VaultError(.libcrypto, LibCryptoErrors.drain("EVP_CIPHER_CTX_new"))
        }
        self.pointer = pointer
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }

    /// Gives the cipher `pieces` of associated data, one call each: AES-SIV takes each as one of
    /// S2V's strings, an empty one too (a vault's root folder ID). An empty piece goes by a
    /// pointer that is not null, since a null input is how libcrypto's SIV is told to finish.
    func authenticate(_ pieces: [UnsafeRawBufferPointer], operation: String) throws {
        for piece in pieces {
            var written: Int32 = 0
            guard EVP_CipherUpdate(pointer, nil, &written, libcryptoBytes(piece), Int32(piece.count)) == 1
            else {
                throw VaultError(.libcrypto, LibCryptoErrors.drain(operation))
            }
        }
    }
}

/// The ciphers the vault uses, fetched from libcrypto's default provider once: a fetch looks
/// the algorithm up under a lock, which a cipher context set up per chunk would pay each time.
struct FetchedCipher: @unchecked Sendable {
    // An EVP_CIPHER is immutable and reference counted once fetched: safe to share.
    let pointer: OpaquePointer

    private init(_ name: String) {
        LibCrypto.prepare()
        guard let pointer = EVP_CIPHER_fetch(nil, name, nil) else {
            fatalError("libcrypto: \(name) is unavailable (\(LibCryptoErrors.drain("EVP_CIPHER_fetch")))")
        }
        self.pointer = pointer
    }

    static let aes128SIV = FetchedCipher("AES-128-SIV")
    static let aes192SIV = FetchedCipher("AES-192-SIV")
    static let aes256SIV = FetchedCipher("AES-256-SIV")
    static let aes256GCM = FetchedCipher("AES-256-GCM")
}
