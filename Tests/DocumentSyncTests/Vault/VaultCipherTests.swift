import Foundation
import Testing

@testable import DocumentSync

/// Bytes from hexadecimal digits (spaces allowed), for the published vectors.
func hex(_ text: String) -> Data {
    let digits = Array(text.filter { !$0.isWhitespace }.utf8)
    precondition(digits.count % 2 == 0)
    func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case 48...57: digit - 48
        case 65...70: digit - 55
        case 97...102: digit - 87
        default: preconditionFailure("not a hex digit")
        }
    }
    return Data(
        stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) })
}

func secret(_ text: String) -> SecretBytes { SecretBytes(copying: hex(text)) }

/// Known-answer tests of the libcrypto wrappers the vault is built on, from the RFCs and the
/// GCM specification (every vector also checked against pycryptodome when it was written down).
@Suite struct VaultCipherTests {
    // RFC 5297 appendix A.1: deterministic authenticated encryption.
    @Test func aesSIVMatchesRFC5297DeterministicExample() throws {
        let key = secret("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let associated = hex("101112131415161718191a1b1c1d1e1f2021222324252627")
        let plaintext = hex("112233445566778899aabbccddee")
        let sealed = try AESSIV.seal(plaintext, associatedData: [associated], key: key)
        #expect(sealed == hex("85632d07c6e8f37f950acd320a2ecc93 40c02b9690c4dc04daef7f6afe5c"))
        #expect(try AESSIV.open(sealed, associatedData: [associated], key: key) == plaintext)
    }

    // RFC 5297 appendix A.2: nonce-based, two associated data and a nonce as S2V's strings.
    @Test func aesSIVMatchesRFC5297NonceBasedExample() throws {
        let key = secret("7f7e7d7c7b7a79787776757473727170 404142434445464748494a4b4c4d4e4f")
        let associated = [
            hex("00112233445566778899aabbccddeeffdeaddadadeaddadaffeeddccbbaa99887766554433221100"),
            hex("102030405060708090a0"), hex("09f911029d74e35bd84156c5635688c0"),
        ]
        let plaintext = hex(
            "7468697320697320736f6d6520706c61696e7465787420746f20656e6372797074207573696e67205349562d414553")
        let sealed = try AESSIV.seal(plaintext, associatedData: associated, key: key)
        #expect(
            sealed
                == hex(
                    "7bdb6e3b432667eb06f4d14bff2fbd0f cb900f2fddbe404326601965c889bf17dba77ceb094fa663b7a3f748ba8af829ea64ad544a272e9c485b62a3fd5c0d"
                ))
        #expect(try AESSIV.open(sealed, associatedData: associated, key: key) == plaintext)
    }

    // The empty plaintext, which OpenSSL 3.0's SIV refuses and the vault's root ID needs:
    // the tags of libaes_siv/miscreant's vector and of pycryptodome.
    @Test(arguments: [
        ([Data](), "f2007a5beb2b8900c588a7adf599f172"),
        ([Data()], "499e3994710218de7582e0f2c0ab5ed0"),
        (
            [Data("ab".utf8), Data(repeating: UInt8(ascii: "c"), count: 40)],
            "46491a59e93857034face270f6b6a891"
        ),
    ])
    func aesSIVSealsAnEmptyPlaintext(associated: [Data], tag: String) throws {
        let key = secret("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let sealed = try AESSIV.seal(Data(), associatedData: associated, key: key)
        #expect(sealed == hex(tag))
        #expect(try AESSIV.open(sealed, associatedData: associated, key: key) == Data())
        var altered = sealed
        altered[3] ^= 1
        #expect(throws: VaultError(.authenticationFailed, "AES-SIV open")) {
            try AESSIV.open(altered, associatedData: associated, key: key)
        }
    }

    @Test func aesSIVRefusesAlteredCiphertextOtherDataAndShortInput() throws {
        let key = try SecretBytes.random(count: 64)
        let sealed = try AESSIV.seal(
            Data("a name.txt".utf8), associatedData: [Data("folder-1".utf8)], key: key)
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x80
            #expect(throws: VaultError.self) {
                try AESSIV.open(altered, associatedData: [Data("folder-1".utf8)], key: key)
            }
        }
        #expect(throws: VaultError.self) {
            try AESSIV.open(sealed, associatedData: [Data("folder-2".utf8)], key: key)
        }
        #expect(throws: VaultError.self) { try AESSIV.open(sealed, associatedData: [], key: key) }
        #expect(throws: VaultError.self) { try AESSIV.open(Data(count: 15), key: key) }
        #expect(throws: VaultError.self) {
            try AESSIV.seal(Data("x".utf8), key: SecretBytes.random(count: 40))
        }
    }

    // The GCM specification's (McGrew and Viega) test cases 13 to 16: AES-256.
    @Test func aesGCMMatchesTheSpecificationsAES256Cases() throws {
        let zero = try AESGCM(key: SecretBytes(copying: Data(count: 32)))
        #expect(try zero.seal(Data(), nonce: Data(count: 12)) == hex("530f8afbc74536b9a963b4f1c4cb738b"))
        #expect(
            try zero.seal(Data(count: 16), nonce: Data(count: 12))
                == hex("cea7403d4d606b6e074ec5d3baf39d18 d0d1c8a799996bf0265b98b5d48ab919"))

        let gcm = try AESGCM(key: secret("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"))
        let nonce = hex("cafebabefacedbaddecaf888")
        let plaintext = hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
        )
        let ciphertext = hex(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
        )
        let case15 = try gcm.seal(plaintext, nonce: nonce)
        #expect(case15 == ciphertext + hex("b094dac5d93471bdec1a502270e3cc6c"))
        #expect(try gcm.open(case15, nonce: nonce) == plaintext)

        let additional = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let case16 = try gcm.seal(plaintext.prefix(60), nonce: nonce, additionalData: additional)
        #expect(case16 == ciphertext.prefix(60) + hex("76fc6ece0f4e1768cddf8853bb2d551b"))
        #expect(try gcm.open(case16, nonce: nonce, additionalData: additional) == plaintext.prefix(60))
    }

    @Test func aesGCMRefusesAlteredBytesOtherDataAndBadArguments() throws {
        let gcm = try AESGCM(key: SecretBytes.random(count: 32))
        let nonce = try SecureRandom.bytes(12)
        let sealed = try gcm.seal(Data("chunk".utf8), nonce: nonce, additionalData: Data("aad".utf8))
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 1
            #expect(throws: VaultError(.authenticationFailed, "AES-256-GCM open")) {
                try gcm.open(altered, nonce: nonce, additionalData: Data("aad".utf8))
            }
        }
        #expect(throws: VaultError.self) {
            try gcm.open(sealed, nonce: nonce, additionalData: Data("aae".utf8))
        }
        #expect(throws: VaultError.self) {
            try gcm.open(sealed, nonce: Data(count: 12), additionalData: Data("aad".utf8))
        }
        #expect(throws: VaultError.self) { try gcm.open(Data(count: 15), nonce: nonce) }
        #expect(throws: VaultError.self) { try gcm.seal(Data(), nonce: Data(count: 16)) }
        #expect(throws: VaultError.self) { try AESGCM(key: SecretBytes.random(count: 16)) }
        // The context is still good after failures.
        #expect(try gcm.open(sealed, nonce: nonce, additionalData: Data("aad".utf8)) == Data("chunk".utf8))
    }

    // RFC 3394 section 4.1 to 4.6.
    @Test(arguments: [
        (
            "000102030405060708090A0B0C0D0E0F", "00112233445566778899AABBCCDDEEFF",
            "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"
        ),
        (
            "000102030405060708090A0B0C0D0E0F1011121314151617", "00112233445566778899AABBCCDDEEFF",
            "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"
        ),
        (
            "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
            "00112233445566778899AABBCCDDEEFF",
            "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"
        ),
        (
            "000102030405060708090A0B0C0D0E0F1011121314151617",
            "00112233445566778899AABBCCDDEEFF0001020304050607",
            "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"
        ),
        (
            "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
            "00112233445566778899AABBCCDDEEFF0001020304050607",
            "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"
        ),
        (
            "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
            "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
            "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"
        ),
    ])
    func keyWrapMatchesRFC3394(keyEncryptionKey: String, key: String, wrapped: String) throws {
        let kek = secret(keyEncryptionKey)
        #expect(try AESKeyWrap.wrap(secret(key), keyEncryptionKey: kek) == hex(wrapped))
        #expect(try AESKeyWrap.unwrap(hex(wrapped), keyEncryptionKey: kek).isEqual(to: secret(key)))
    }

    @Test func keyUnwrapRefusesAnotherKeyAndAlteredBytes() throws {
        let kek = secret("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F")
        let wrapped = hex("64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7")
        let other = secret("100102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F")
        #expect(throws: VaultError(.authenticationFailed, "AES key unwrap: the integrity check failed")) {
            try AESKeyWrap.unwrap(wrapped, keyEncryptionKey: other)
        }
        var altered = wrapped
        altered[20] ^= 4
        #expect(throws: VaultError.self) { try AESKeyWrap.unwrap(altered, keyEncryptionKey: kek) }
        #expect(throws: VaultError.self) { try AESKeyWrap.unwrap(wrapped.prefix(20), keyEncryptionKey: kek) }
        #expect(throws: VaultError.self) { try AESKeyWrap.unwrap(Data(), keyEncryptionKey: kek) }
    }

    // RFC 7914 section 12, the three vectors that take at most 16 MiB.
    @Test(arguments: [
        (
            "", "", UInt64(16), UInt64(1), UInt64(1),
            "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
        ),
        (
            "password", "NaCl", UInt64(1024), UInt64(8), UInt64(16),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        ),
        (
            "pleaseletmein", "SodiumChloride", UInt64(16384), UInt64(8), UInt64(1),
            "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"
        ),
    ])
    func scryptMatchesRFC7914(
        passphrase: String, salt: String, cost: UInt64, blockSize: UInt64, parallelization: UInt64,
        key: String
    ) throws {
        let derived = try Scrypt.derive(
            SecretBytes(copying: Array(passphrase.utf8)), salt: Data(salt.utf8), cost: cost,
            blockSize: blockSize,
            parallelization: parallelization, count: 64)
        #expect(derived.isEqual(to: secret(key)))
    }

    @Test func scryptRefusesParametersOutOfRange() {
        let passphrase = SecretBytes(copying: Array("p".utf8))
        for (cost, blockSize) in [(UInt64(1000), UInt64(8)), (1, 8), (1 << 20, 8), (1024, 0)] {
            #expect(throws: VaultError.self) {
                try Scrypt.derive(passphrase, salt: Data(), cost: cost, blockSize: blockSize, count: 32)
            }
        }
    }

    // RFC 4231 test case 2; FIPS 180's "abc".
    @Test func digestsMatchTheirStandards() {
        #expect(
            Digests.hmacSHA256(
                Data("what do ya want for nothing?".utf8), key: SecretBytes(copying: Array("Jefe".utf8)))
                == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        #expect(Digests.sha1(Data("abc".utf8)) == hex("a9993e364706816aba3e25717850c26c9cd0d89d"))
        #expect(Digests.constantTimeEqual(Data([1, 2]), Data([1, 2])))
        #expect(!Digests.constantTimeEqual(Data([1, 2]), Data([1, 3])))
        #expect(!Digests.constantTimeEqual(Data([1, 2]), Data([1])))
    }

    // RFC 4648 section 10.
    @Test(arguments: [
        ("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
        ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"),
    ])
    func base32MatchesRFC4648(plain: String, encoded: String) {
        #expect(Base32.encode(Data(plain.utf8)) == encoded)
        #expect(Base32.decode(encoded) == Data(plain.utf8))
    }

    @Test func base32RefusesWhatNoEncoderWrites() {
        for text in ["MY=====", "my======", "MZ======", "MY=Y====", "M1======", "MZXW6YTBO======="] {
            #expect(Base32.decode(text) == nil, "\(text)")
        }
    }

    @Test func base64URLUsesTheURLAlphabetAndRefusesOthers() {
        #expect(Base64URL.encode(Data([0xFB, 0xFF])) == "-_8=")
        #expect(Base64URL.encode(Data([0xFB, 0xFF]), padded: false) == "-_8")
        #expect(Base64URL.decode("-_8=") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("-_8") == Data([0xFB, 0xFF]))
        for text in ["+/8=", "-_8==", "-_9=", "-_8=x", "a", "-_ 8"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
        #expect(Base64URL.decodeAnyAlphabet("+/8=") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decodeAnyAlphabet("-_8") == Data([0xFB, 0xFF]))
    }

    @Test func secretBytesCompareAndSlice() throws {
        let random = try SecretBytes.random(count: 64)
        let joined = SecretBytes(concatenating: [random.slice(0..<32), random.slice(32..<64)])
        #expect(joined.isEqual(to: random))
        #expect(!random.isEqual(to: try SecretBytes.random(count: 64)))
        #expect(!random.isEqual(to: random.slice(0..<32)))
        #expect(SecretBytes(copying: [UInt8]()).count == 0)
    }
}
