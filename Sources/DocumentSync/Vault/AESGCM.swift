import CCrypto
import Foundation

/// AES-256-GCM with a 12-byte nonce and a 16-byte tag: what the vault encrypts file headers
/// and content chunks with.
///
/// One value keeps libcrypto's contexts with the key schedule set up, and only the nonce
/// changes from one message to the next: a file's chunks are sealed without setting the key up
/// again for each. Not to be shared between threads; each file's encryptor has its own.
///
/// For example:
///
/// ```swift
/// let gcm = try AESGCM(key: key)
/// let sealed = try gcm.seal(Data("text".utf8), nonce: nonce, additionalData: header)
/// let text = try gcm.open(sealed, nonce: nonce, additionalData: header)
/// ```
public final class AESGCM {
    public static let keyCount = 32
    public static let nonceCount = 12
    public static let tagCount = 16

    private let sealing: CipherContext?
    private let opening: CipherContext?

    /// Which ways a cipher is used: each is a libcrypto context with its own key schedule.
    enum Use {
        case sealing, opening, both
    }

    /// A cipher under `key` (32 bytes).
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for a key of another length.
    public init(key: SecretBytes) throws {
        (sealing, opening) = try key.withUnsafeBytes { try Self.contexts(key: $0, use: .both) }
    }

    /// A cipher under `key` (32 bytes; the caller keeps them secret), set up for `use` only: a
    /// file's encryptor never opens, its decryptor never seals, and each file has its own.
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for a key of another length.
    init(key: UnsafeRawBufferPointer, use: Use) throws {
        (sealing, opening) = try Self.contexts(key: key, use: use)
    }

    /// The contexts for `use`, their key schedules set up under `key`.
    private static func contexts(key: UnsafeRawBufferPointer, use: Use) throws -> (
        sealing: CipherContext?, opening: CipherContext?
    ) {
        guard key.count == keyCount else {
            throw VaultError(.invalidArgument, "AES-256-GCM takes a 32-byte key, not \(key.count) bytes")
        }
        let cipher = FetchedCipher.aes256GCM.pointer
        let sealing = use == .opening ? nil : try CipherContext()
        let opening = use == .sealing ? nil : try CipherContext()
        if let sealing, EVP_EncryptInit_ex2(sealing.pointer, cipher, libcryptoBytes(key), nil, nil) != 1 {
            throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM init"))
        }
        if let opening, EVP_DecryptInit_ex2(opening.pointer, cipher, libcryptoBytes(key), nil, nil) != 1 {
            throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM init"))
        }
        return (sealing, opening)
    }

    /// Encrypts `plaintext` into `ciphertext` (as long) and writes the tag into `tag` (16 bytes),
    /// authenticating `additionalData` (its pieces one after the other) too.
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        additionalData: [UnsafeRawBufferPointer],
        into ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
    ) throws {
        try check(nonce: nonce, tag: UnsafeRawBufferPointer(tag), plaintext.count, ciphertext.count)
        guard let sealing else { preconditionFailure("AES-256-GCM set up for opening only") }
        let context = sealing.pointer
        guard EVP_EncryptInit_ex2(context, nil, nil, libcryptoBytes(nonce), nil) == 1 else {
            throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM nonce"))
        }
        try sealing.authenticate(
            additionalData.filter { !$0.isEmpty }, operation: "AES-256-GCM additional data")
        var written: Int32 = 0
        let output = ciphertext.baseAddress?.assumingMemoryBound(to: UInt8.self)
        if !plaintext.isEmpty {
            guard
                EVP_EncryptUpdate(
                    context, output, &written, libcryptoBytes(plaintext), Int32(plaintext.count)) == 1,
                Int(written) == plaintext.count
            else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM seal")) }
        }
        guard EVP_EncryptFinal_ex(context, output.map { $0 + plaintext.count }, &written) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagCount), tag.baseAddress) == 1
        else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM seal")) }
    }

    /// Decrypts `ciphertext` into `plaintext` (as long) if it authenticates with `tag` and
    /// `additionalData`; otherwise `plaintext` is left zeroed.
    ///
    /// - Throws: ``VaultError`` `.authenticationFailed` if it does not authenticate.
    func open(
        _ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        additionalData: [UnsafeRawBufferPointer],
        tag: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        try check(nonce: nonce, tag: tag, ciphertext.count, plaintext.count)
        guard let opening else { preconditionFailure("AES-256-GCM set up for sealing only") }
        let context = opening.pointer
        guard EVP_DecryptInit_ex2(context, nil, nil, libcryptoBytes(nonce), nil) == 1,
            EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagCount),
                UnsafeMutableRawPointer(mutating: tag.baseAddress))
                == 1
        else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM nonce")) }
        try opening.authenticate(
            additionalData.filter { !$0.isEmpty }, operation: "AES-256-GCM additional data")
        var written: Int32 = 0
        let output = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self)
        if !ciphertext.isEmpty {
            guard
                EVP_DecryptUpdate(
                    context, output, &written, libcryptoBytes(ciphertext), Int32(ciphertext.count)) == 1,
                Int(written) == ciphertext.count
            else { throw VaultError(.libcrypto, LibCryptoErrors.drain("AES-256-GCM open")) }
        }
        guard EVP_DecryptFinal_ex(context, output.map { $0 + ciphertext.count }, &written) == 1 else {
            // Not a libcrypto error but a failed check: nothing of the plaintext may be used.
            _ = LibCryptoErrors.drain("")
            plaintext.initializeMemory(as: UInt8.self, repeating: 0)
            throw VaultError(.authenticationFailed, "AES-256-GCM open")
        }
    }

    /// `plaintext` sealed under `nonce` (12 bytes): the ciphertext, then the 16-byte tag.
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for a nonce of another length.
    public func seal(_ plaintext: Data, nonce: Data, additionalData: Data = Data()) throws -> Data {
        var sealed = Data(count: plaintext.count + Self.tagCount)
        try sealed.withUnsafeMutableBytes { output in
            try plaintext.withUnsafeBytes { input in
                try nonce.withUnsafeBytes { nonce in
                    try additionalData.withUnsafeBytes { additional in
                        try seal(
                            input, nonce: nonce, additionalData: [additional],
                            into: UnsafeMutableRawBufferPointer(rebasing: output[..<input.count]),
                            tag: UnsafeMutableRawBufferPointer(rebasing: output[input.count...]))
                    }
                }
            }
        }
        return sealed
    }

    /// The plaintext of `sealed` (ciphertext, then tag) under `nonce`, if it authenticates.
    ///
    /// - Throws: ``VaultError`` `.authenticationFailed` if it does not, or is shorter than a tag.
    public func open(_ sealed: Data, nonce: Data, additionalData: Data = Data()) throws -> Data {
        guard sealed.count >= Self.tagCount else {
            throw VaultError(.authenticationFailed, "AES-256-GCM: \(sealed.count) bytes, shorter than a tag")
        }
        let count = sealed.count - Self.tagCount
        var plaintext = Data(count: count)
        try plaintext.withUnsafeMutableBytes { output in
            try sealed.withUnsafeBytes { input in
                try nonce.withUnsafeBytes { nonce in
                    try additionalData.withUnsafeBytes { additional in
                        try self.open(
                            UnsafeRawBufferPointer(rebasing: input[..<count]), nonce: nonce,
                            additionalData: [additional],
                            tag: UnsafeRawBufferPointer(rebasing: input[count...]),
                            into: output)
                    }
                }
            }
        }
        return plaintext
    }

    private func check(
        nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, _ input: Int, _ output: Int
    ) throws {
        guard nonce.count == Self.nonceCount else {
            throw VaultError(.invalidArgument, "AES-256-GCM takes a 12-byte nonce, not \(nonce.count) bytes")
        }
        guard tag.count == Self.tagCount, input == output, input <= Int(Int32.max) else {
            throw VaultError(.invalidArgument, "AES-256-GCM: buffers of the wrong size")
        }
    }
}
