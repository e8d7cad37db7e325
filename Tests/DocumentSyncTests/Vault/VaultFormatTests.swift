import Foundation
import Testing

@testable import DocumentSync

/// scrypt at a cost that keeps the many unlocks here quick; the interop tests use the standard.
private let cheap = VaultScryptCost(cost: 1024, blockSize: 8)

/// The error `body` throws, which must be a ``VaultError``.
private func vaultError(_ body: () throws -> Void) -> VaultError? {
    do {
        try body()
    } catch let error as VaultError {
        return error
    } catch {
        Issue.record("not a VaultError: \(error)")
        return nil
    }
    Issue.record("no error")
    return nil
}

/// A token with `header` and `claims` as given, signed under `keys` (or a signature of one's own).
private func token(header: [String: Any], claims: [String: Any], keys: VaultMasterKeys) throws -> Data {
    let signedPart =
        Base64URL.encode(try JSONSerialization.data(withJSONObject: header), padded: false) + "."
        + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims), padded: false)
    let signature = Digests.hmacSHA256(Data(signedPart.utf8), key: keys.signingKey)
    return Data((signedPart + "." + Base64URL.encode(signature, padded: false)).utf8)
}

private var goodHeader: [String: Any] {
    ["alg": "HS256", "kid": "masterkeyfile:masterkey.cryptomator", "typ": "JWT"]
}

private var goodClaims: [String: Any] {
    [
        "format": 8, "shorteningThreshold": 220, "jti": "5d1c4c3e-0000-4000-8000-000000000000",
        "cipherCombo": "SIV_GCM",
    ]
}

@Suite struct VaultMasterkeyFileTests {
    @Test func unlocksWithItsPassphraseOnlyAndNamesTheVault() throws {
        let keys = try VaultMasterKeys.random()
        let file = try VaultMasterkeyFile(wrapping: keys, passphrase: VaultPassphrase("right"), cost: cheap)
        let read = try VaultMasterkeyFile(contents: file.encoded(), vault: "s3://bucket/notes")
        #expect(read == file)
        #expect(read.version == 999)
        let unlocked = try read.unlock(VaultPassphrase("right"), vault: "s3://bucket/notes")
        #expect(unlocked.encryptionKey.isEqual(to: keys.encryptionKey))
        #expect(unlocked.macKey.isEqual(to: keys.macKey))

        let error = vaultError { _ = try read.unlock(VaultPassphrase("wrong"), vault: "s3://bucket/notes") }
        #expect(error?.code == .wrongPassphrase)
        #expect(error?.item == "s3://bucket/notes")
        #expect(error?.description.hasPrefix("s3://bucket/notes: wrong passphrase") == true)
        #expect(error?.description.contains("wrong (") == false)
    }

    @Test func passphraseIsTakenInNormalizationFormC() throws {
        let keys = try VaultMasterKeys.random()
        let file = try VaultMasterkeyFile(
            wrapping: keys, passphrase: VaultPassphrase("Gru\u{308}ße"), cost: cheap)
        #expect(try file.unlock(VaultPassphrase("Grüße"), vault: "v").macKey.isEqual(to: keys.macKey))
    }

    @Test func changingThePassphraseRewrapsTheSameKeys() throws {
        let keys = try VaultMasterKeys.random()
        let file = try VaultMasterkeyFile(wrapping: keys, passphrase: VaultPassphrase("old"), cost: cheap)
        let changed = try file.changingPassphrase(
            from: VaultPassphrase("old"), to: VaultPassphrase("new"), vault: "v")
        #expect(changed.scryptSalt != file.scryptSalt)
        #expect(changed.wrappedEncryptionKey != file.wrappedEncryptionKey)
        #expect(changed.scryptCost == cheap)
        #expect(changed.versionMAC == file.versionMAC)
        let unlocked = try VaultMasterkeyFile(contents: changed.encoded(), vault: "v").unlock(
            VaultPassphrase("new"), vault: "v")
        #expect(unlocked.encryptionKey.isEqual(to: keys.encryptionKey))
        #expect(unlocked.macKey.isEqual(to: keys.macKey))
        #expect(
            vaultError { _ = try changed.unlock(VaultPassphrase("old"), vault: "v") }?.code
                == .wrongPassphrase)
        let wrongOld = vaultError {
            _ = try file.changingPassphrase(
                from: VaultPassphrase("not it"), to: VaultPassphrase("new"), vault: "v")
        }
        #expect(wrongOld?.code == .wrongPassphrase)
    }

    @Test func anAlteredVersionOrVersionMACIsCaught() throws {
        let keys = try VaultMasterKeys.random()
        var file = try VaultMasterkeyFile(wrapping: keys, passphrase: VaultPassphrase("p"), cost: cheap)
        file.version = 7
        #expect(
            vaultError { _ = try file.unlock(VaultPassphrase("p"), vault: "v") }?.code == .forgedMasterkeyFile
        )
        file.version = 999
        file.versionMAC[0] ^= 1
        #expect(
            vaultError { _ = try file.unlock(VaultPassphrase("p"), vault: "v") }?.code == .forgedMasterkeyFile
        )
    }

    @Test(arguments: [
        "", "[]", "not json", #"{"version": 999}"#,
        #"{"version":999,"scryptSalt":"!!","scryptCostParam":32768,"scryptBlockSize":8,"primaryMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","hmacMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","versionMac":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#,
        #"{"version":999,"scryptSalt":"AAAAAAAAAAA=","scryptCostParam":32768,"scryptBlockSize":8,"primaryMasterKey":"AAAA","hmacMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","versionMac":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#,
        #"{"version":999,"scryptSalt":"AAAAAAAAAAA=","scryptCostParam":32767,"scryptBlockSize":8,"primaryMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","hmacMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","versionMac":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#,
        #"{"version":999,"scryptSalt":"AAAAAAAAAAA=","scryptCostParam":1073741824,"scryptBlockSize":8,"primaryMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","hmacMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","versionMac":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#,
        #"{"version":999,"scryptSalt":"AAAAAAAAAAA=","scryptCostParam":32768,"scryptBlockSize":8.5,"primaryMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","hmacMasterKey":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","versionMac":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#,
    ])
    func malformedMasterkeyFilesAreRefusedNamingTheVault(contents: String) {
        let error = vaultError {
            _ = try VaultMasterkeyFile(contents: Data(contents.utf8), vault: "webdav://h/v")
        }
        #expect(error?.code == .malformedMasterkeyFile)
        #expect(error?.item == "webdav://h/v")
    }
}

@Suite struct VaultConfigurationTests {
    @Test func signsAndVerifiesFormat8sClaims() throws {
        let keys = try VaultMasterKeys.random()
        let configuration = VaultConfiguration()
        let signed = configuration.signed(with: keys)
        #expect(try VaultConfiguration(verifying: signed, keys: keys, vault: "v") == configuration)
        #expect(
            try VaultConfiguration.checkedKeyID(of: signed, vault: "v")
                == "masterkeyfile:masterkey.cryptomator")

        let parts = String(decoding: signed, as: UTF8.self).split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header =
            try JSONSerialization.jsonObject(with: #require(Base64URL.decode(parts[0]))) as? [String: String]
        #expect(header == ["alg": "HS256", "kid": "masterkeyfile:masterkey.cryptomator", "typ": "JWT"])
        let claims =
            try JSONSerialization.jsonObject(with: #require(Base64URL.decode(parts[1]))) as? [String: Any]
        #expect(claims?["format"] as? Int == 8)
        #expect(claims?["shorteningThreshold"] as? Int == 220)
        #expect(claims?["cipherCombo"] as? String == "SIV_GCM")
        #expect(claims?["jti"] as? String == configuration.vaultID)
    }

    @Test func aConfigurationAlteredOrSignedWithOtherKeysIsForged() throws {
        let keys = try VaultMasterKeys.random()
        let signed = String(decoding: VaultConfiguration().signed(with: keys), as: UTF8.self)
        let parts = signed.split(separator: ".").map(String.init)
        // Fewer names shortened: the claims changed, the signature kept.
        var claims = goodClaims
        claims["shorteningThreshold"] = 40
        let altered =
            parts[0] + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims), padded: false) + "."
            + parts[2]
        let forged = [
            Data(altered.utf8), try token(header: goodHeader, claims: goodClaims, keys: .random()),
            Data((parts[0] + "." + parts[1] + "." + Base64URL.encode(Data(count: 32), padded: false)).utf8),
        ]
        for token in forged {
            let error = vaultError {
                _ = try VaultConfiguration(verifying: token, keys: keys, vault: "s3://b/v")
            }
            #expect(error?.code == .forgedConfiguration)
            #expect(error?.item == "s3://b/v")
        }
    }

    @Test func otherFormatsAlgorithmsCipherCombosAndKeyIDsAreRefused() throws {
        let keys = try VaultMasterKeys.random()
        var cases: [(header: [String: Any], claims: [String: Any])] = []
        for alg in ["none", "HS512", "RS256"] {
            cases.append((goodHeader.merging(["alg": alg]) { $1 }, goodClaims))
        }
        cases.append((goodHeader.merging(["kid": "masterkeyfile:../../elsewhere"]) { $1 }, goodClaims))
        cases.append((goodHeader, goodClaims.merging(["format": 7]) { $1 }))
        cases.append((goodHeader, goodClaims.merging(["cipherCombo": "SIV_CTRMAC"]) { $1 }))
        cases.append((goodHeader, goodClaims.merging(["shorteningThreshold": 10]) { $1 }))
        for (header, claims) in cases {
            let signed = try token(header: header, claims: claims, keys: keys)
            let error = vaultError { _ = try VaultConfiguration(verifying: signed, keys: keys, vault: "v") }
            #expect(error?.code == .unsupportedConfiguration, "\(header) \(claims)")
        }
    }

    @Test(arguments: [
        "", "a.b", "a.b.c.d", "!!.!!.!!", "e30.e30.e30", "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.AAAA",
    ])
    func whatIsNoTokenIsMalformed(text: String) throws {
        let keys = try VaultMasterKeys.random()
        let error = vaultError {
            _ = try VaultConfiguration(verifying: Data(text.utf8), keys: keys, vault: "v")
        }
        #expect(error?.code == .malformedConfiguration || error?.code == .unsupportedConfiguration)
    }

    @Test func pycryptomatorsSpellingOfTheTokenIsTaken() throws {
        // Standard base64 with padding for the header and claims, as pycryptomator writes.
        let keys = try VaultMasterKeys.random()
        let signedPart =
            (try JSONSerialization.data(withJSONObject: goodHeader)).base64EncodedString() + "."
            + (try JSONSerialization.data(withJSONObject: goodClaims)).base64EncodedString()
        let signature = Digests.hmacSHA256(Data(signedPart.utf8), key: keys.signingKey)
        let token = Data((signedPart + "." + Base64URL.encode(signature)).utf8)
        #expect(
            try VaultConfiguration(verifying: token, keys: keys, vault: "v").vaultID == goodClaims["jti"]
                as? String)
    }
}

@Suite struct VaultContentTests {
    static let sizes = [
        0, 1, 1000, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 3 * 32 * 1024, 3 * 32 * 1024 + 5, 200_000,
    ]

    @Test(arguments: sizes)
    func contentsRoundTripInPiecesOfAnySize(size: Int) throws {
        let keys = try VaultMasterKeys.random()
        let plaintext = try SecureRandom.bytes(size)
        for pieceSize in [1 << 20, 4096, 32 * 1024 + 28, 7, size == 0 ? 1 : size]
        where size < 40_000 || pieceSize > 100 {
            let encryptor = try VaultContentEncryptor(keys: keys)
            var ciphertext = encryptor.header
            for start in stride(from: 0, to: size, by: pieceSize) {
                ciphertext += try encryptor.update(
                    plaintext.subdata(in: start..<min(start + pieceSize, size)))
            }
            ciphertext += try encryptor.finish()
            #expect(ciphertext.count == Int(VaultContent.ciphertextCount(plaintextCount: Int64(size))))
            #expect(VaultContent.plaintextCount(ciphertextCount: Int64(ciphertext.count)) == Int64(size))

            let decryptor = VaultContentDecryptor(keys: keys, file: "f")
            var decrypted = Data()
            for start in stride(from: 0, to: ciphertext.count, by: pieceSize) {
                decrypted += try decryptor.update(
                    ciphertext.subdata(in: start..<min(start + pieceSize, ciphertext.count)))
            }
            decrypted += try decryptor.finish()
            #expect(decrypted == plaintext, "size \(size) in pieces of \(pieceSize)")
        }
    }

    @Test func sinksAreHandedWholeChunksInOrder() throws {
        let keys = try VaultMasterKeys.random()
        let plaintext = try SecureRandom.bytes(2 * 32 * 1024 + 10)
        let encryptor = try VaultContentEncryptor(keys: keys)
        var chunks: [Data] = []
        try plaintext.withUnsafeBytes { try encryptor.update($0) { chunks.append(Data($0)) } }
        try encryptor.finish { chunks.append(Data($0)) }
        #expect(chunks.map(\.count) == [32 * 1024 + 28, 32 * 1024 + 28, 10 + 28])

        let decryptor = VaultContentDecryptor(keys: keys, file: "f")
        var opened: [Data] = []
        try encryptor.header.withUnsafeBytes { try decryptor.update($0) { opened.append(Data($0)) } }
        for chunk in chunks {
            try chunk.withUnsafeBytes { try decryptor.update($0) { opened.append(Data($0)) } }
        }
        try decryptor.finish { opened.append(Data($0)) }
        #expect(opened.map(\.count) == [32 * 1024, 32 * 1024, 10])
        #expect(opened.reduce(Data(), +) == plaintext)
    }

    @Test func sizesNoFileHasAreRefused() {
        for count in [0, 67, 68 + 1, 68 + 28, 68 + 32 * 1024 + 28 + 28] {
            #expect(VaultContent.plaintextCount(ciphertextCount: Int64(count)) == nil, "\(count)")
        }
        #expect(VaultContent.plaintextCount(ciphertextCount: 68 + 29) == 1)
        #expect(VaultContent.ciphertextCount(plaintextCount: 0) == 68)
    }

    @Test func sameBytesEncryptDifferentlyEachTime() throws {
        let vault = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "v", cost: cheap).vault
        let text = Data("same".utf8)
        #expect(try vault.encrypt(text) != vault.encrypt(text))
    }

    /// A file of three full chunks and a short one, and another file of the same vault.
    private func twoFiles() throws -> (vault: UnlockedVault, plaintext: Data, file: Data, other: Data) {
        let vault = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "v", cost: cheap).vault
        let plaintext = try SecureRandom.bytes(3 * 32 * 1024 + 100)
        return (vault, plaintext, try vault.encrypt(plaintext), try vault.encrypt(plaintext))
    }

    private func decryptionError(_ ciphertext: Data, vault: UnlockedVault) -> VaultError? {
        vaultError { _ = try vault.decrypt(ciphertext, file: "Notes/plan.txt") }
    }

    @Test func aFlippedBitAnywhereFailsItsChunkNamingTheFile() throws {
        let (vault, _, file, _) = try twoFiles()
        let chunk = VaultContent.chunkCiphertextCount
        // In each chunk: its nonce, its ciphertext's first and last byte, its tag.
        for number in 0..<4 {
            let start = 68 + number * chunk
            let end = min(start + chunk, file.count)
            for offset in [start, start + 11, start + 12, end - 17, end - 16, end - 1] {
                var altered = file
                altered[offset] ^= 0x10
                let error = decryptionError(altered, vault: vault)
                #expect(error?.code == .forgedChunk(number), "byte \(offset)")
                #expect(error?.item == "Notes/plan.txt")
                #expect(
                    error?.description.hasPrefix("Notes/plan.txt: chunk \(number) does not authenticate")
                        == true)
            }
        }
        for offset in [0, 11, 12, 40, 51, 52, 67] {
            var altered = file
            altered[offset] ^= 1
            #expect(decryptionError(altered, vault: vault)?.code == .forgedHeader, "header byte \(offset)")
        }
    }

    @Test func swappedChunksFail() throws {
        let (vault, _, file, _) = try twoFiles()
        let chunk = VaultContent.chunkCiphertextCount
        var swapped = file
        swapped.replaceSubrange(68..<68 + chunk, with: file.subdata(in: 68 + chunk..<68 + 2 * chunk))
        swapped.replaceSubrange(68 + chunk..<68 + 2 * chunk, with: file.subdata(in: 68..<68 + chunk))
        #expect(decryptionError(swapped, vault: vault)?.code == .forgedChunk(0))
        // A chunk dropped from the middle: the next one comes in its place.
        var dropped = file
        dropped.removeSubrange(68 + chunk..<68 + 2 * chunk)
        #expect(decryptionError(dropped, vault: vault)?.code == .forgedChunk(1))
    }

    @Test func truncatedFilesFail() throws {
        let (vault, _, file, _) = try twoFiles()
        #expect(decryptionError(file.prefix(file.count - 1), vault: vault)?.code == .forgedChunk(3))
        #expect(decryptionError(file.prefix(file.count - 50), vault: vault)?.code == .forgedChunk(3))
        let lastChunkStart = 68 + 3 * VaultContent.chunkCiphertextCount
        let cutToNonce = decryptionError(file.prefix(lastChunkStart + 20), vault: vault)
        #expect(cutToNonce?.code == .truncated)
        #expect(cutToNonce?.item == "Notes/plan.txt")
        #expect(decryptionError(file.prefix(50), vault: vault)?.code == .truncated)
        #expect(decryptionError(Data(), vault: vault)?.code == .truncated)
        // A full chunk cut short.
        let fullCut = file.prefix(68 + VaultContent.chunkCiphertextCount - 1)
        #expect(decryptionError(fullCut, vault: vault)?.code == .forgedChunk(0))
    }

    @Test func anotherFilesHeaderOrChunkFails() throws {
        let (vault, _, file, other) = try twoFiles()
        var header = file
        header.replaceSubrange(0..<68, with: other.prefix(68))
        #expect(decryptionError(header, vault: vault)?.code == .forgedChunk(0))
        let chunk = VaultContent.chunkCiphertextCount
        var mixed = file
        mixed.replaceSubrange(
            68 + chunk..<68 + 2 * chunk, with: other.subdata(in: 68 + chunk..<68 + 2 * chunk))
        #expect(decryptionError(mixed, vault: vault)?.code == .forgedChunk(1))
        // Another vault's file: its header does not open.
        let stranger = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "w", cost: cheap)
            .vault
        #expect(decryptionError(try stranger.encrypt(Data("x".utf8)), vault: vault)?.code == .forgedHeader)
    }

    @Test func aChunkThatFailsGivesNoneOfItsBytesAndStopsTheDecryptor() throws {
        let (vault, plaintext, file, _) = try twoFiles()
        var altered = file
        altered[68 + VaultContent.chunkCiphertextCount + 500] ^= 1
        let decryptor = VaultContentDecryptor(keys: vault.keys, file: "f")
        let first = try decryptor.update(altered.prefix(68 + VaultContent.chunkCiphertextCount))
        #expect(first == plaintext.prefix(32 * 1024))
        let error = vaultError {
            _ = try decryptor.update(altered.dropFirst(68 + VaultContent.chunkCiphertextCount))
        }
        #expect(error?.code == .forgedChunk(1))
        #expect(vaultError { _ = try decryptor.finish() }?.code == .forgedChunk(1))
    }
}

@Suite struct VaultNameTests {
    private let names: VaultNameCipher
    private let vault: UnlockedVault

    init() throws {
        vault = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "v", cost: cheap).vault
        names = vault.names
    }

    @Test(arguments: ["todo.txt", "Grüße ☂.md", "日本語のノート", "a b", ".hidden", "x", "emoji 🧭"])
    func namesRoundTripInTheirFolderOnly(name: String) throws {
        let parent = VaultNameCipher.newDirectoryID()
        let stored = try names.encryptedName(for: name, parentDirectoryID: parent)
        #expect(stored.hasSuffix(".c9r"))
        #expect(try names.decryptedName(storedName: stored, parentDirectoryID: parent, item: "i") == name)
        #expect(try names.encryptedName(for: name, parentDirectoryID: parent) == stored)
        #expect(try names.encryptedName(for: name, parentDirectoryID: "") != stored)
        let moved = vaultError {
            _ = try names.decryptedName(
                storedName: stored, parentDirectoryID: "another", item: "d/AB/CD/\(stored)")
        }
        #expect(moved?.code == .forgedName)
        #expect(moved?.item == "d/AB/CD/\(stored)")
    }

    @Test func namesAreEncryptedInNormalizationFormC() throws {
        let composed = try names.encryptedName(for: "Grüße", parentDirectoryID: "")
        #expect(try names.encryptedName(for: "Gru\u{308}ße", parentDirectoryID: "") == composed)
        #expect(try names.decryptedName(storedName: composed, parentDirectoryID: "", item: "i") == "Grüße")
    }

    @Test(arguments: ["", ".", "..", "a/b", "a\u{0}b"])
    func namesNoFolderHoldsAreRefused(name: String) {
        #expect(
            vaultError { _ = try names.encryptedName(for: name, parentDirectoryID: "") }?.code == .invalidName
        )
    }

    @Test func decryptedNamesNoFolderHoldsAreRefused() throws {
        for plain in ["..", "a/b", ""] {
            let sealed = try AESSIV.seal(Data(plain.utf8), associatedData: [Data()], key: vault.keys.sivKey)
            let stored = Base64URL.encode(sealed) + ".c9r"
            #expect(
                vaultError {
                    _ = try names.decryptedName(storedName: stored, parentDirectoryID: "", item: "i")
                } != nil)
        }
    }

    @Test(arguments: [
        "plain.txt", "x.c9r", "!!!!.c9r", "AAAA.c9r", "AAAAAAAAAAAAAAAAAAAAAA==.c9r",
        "+/+/+/+/+/+/+/+/+/+/+/+/.c9r",
    ])
    func storedNamesThatAreNotEncryptedNamesAreMalformed(stored: String) {
        let error = vaultError {
            _ = try names.decryptedName(storedName: stored, parentDirectoryID: "", item: "i")
        }
        #expect(error?.code == .malformedName || error?.code == .forgedName)
    }

    @Test func namesOverTheThresholdAreShortened() throws {
        // 146 ASCII characters encrypt to exactly 220 (4 · ⌈(16 + 146) / 3⌉ + 4): kept; 147 are shortened.
        let kept = try names.entryName(for: String(repeating: "k", count: 146), parentDirectoryID: "")
        guard case .regular(let keptName) = kept else {
            Issue.record("146 characters were shortened")
            return
        }
        #expect(keptName.utf8.count == 220)

        let long = String(repeating: "l", count: 147)
        let entry = try names.entryName(for: long, parentDirectoryID: "")
        guard case .shortened(let stored, let fullName) = entry else {
            Issue.record("147 characters were not shortened")
            return
        }
        #expect(fullName.utf8.count == 224)
        #expect(stored == Base64URL.encode(Digests.sha1(Data(fullName.utf8))) + ".c9s")
        #expect(stored.utf8.count == 32)
        #expect(
            try names.decryptedName(
                storedName: stored, longName: Data(fullName.utf8), parentDirectoryID: "", item: "i")
                == long)
        let other = try names.encryptedName(for: "other", parentDirectoryID: "")
        let mismatched = vaultError {
            _ = try names.decryptedName(
                storedName: stored, longName: Data(other.utf8), parentDirectoryID: "", item: "i")
        }
        #expect(mismatched?.code == .malformedName)
        #expect(
            vaultError { _ = try names.decryptedName(storedName: stored, parentDirectoryID: "", item: "i") }?
                .code == .malformedName)
    }

    @Test func directoryPathsHaveTheFormatsShape() throws {
        let root = try names.directoryPath(of: VaultNameCipher.rootDirectoryID)
        let other = try names.directoryPath(of: VaultNameCipher.newDirectoryID())
        for path in [root, other] {
            let parts = path.split(separator: "/")
            #expect(parts.count == 3)
            #expect(parts[0] == "d")
            #expect(parts[1].count == 2)
            #expect(parts[2].count == 30)
            #expect(Base32.decode(String(parts[1] + parts[2]))?.count == 20)
        }
        #expect(root != other)
        #expect(try names.directoryPath(of: "") == root)
    }

    @Test func directoryIDsAreCheckedForShape() throws {
        let id = VaultNameCipher.newDirectoryID()
        #expect(try VaultNameCipher.directoryID(contents: Data(id.utf8), item: "x") == id)
        for contents in [Data(), Data(repeating: 0x61, count: 37), Data("a\nb".utf8), Data("é".utf8)] {
            let error = vaultError {
                _ = try VaultNameCipher.directoryID(contents: contents, item: "d/AB/C/x.c9r/dir.c9r")
            }
            #expect(error?.code == .malformedDirectoryID)
            #expect(error?.item == "d/AB/C/x.c9r/dir.c9r")
        }
    }
}

@Suite struct UnlockedVaultTests {
    @Test func aNewVaultOpensUnderItsPassphraseOnly() throws {
        let creation = try UnlockedVault.create(passphrase: VaultPassphrase("right"), vault: "v", cost: cheap)
        let files = Dictionary(uniqueKeysWithValues: creation.files.map { ($0.path, $0.contents) })
        let configuration = try #require(files[VaultConfiguration.fileName])
        let masterkey = try #require(files[VaultMasterkeyFile.fileName])
        let root = try creation.vault.names.directoryPath(of: "")
        let backup = try #require(files[root + "/dirid.c9r"])
        #expect(try creation.vault.decrypt(backup, file: "dirid.c9r") == Data())

        let opened = try UnlockedVault(
            configuration: configuration, masterkeyFile: masterkey, passphrase: VaultPassphrase("right"),
            vault: "v")
        #expect(opened.configuration == creation.vault.configuration)
        let error = vaultError {
            _ = try UnlockedVault(
                configuration: configuration, masterkeyFile: masterkey, passphrase: VaultPassphrase("wrong"),
                vault: "webdav://host/Vault")
        }
        #expect(error?.code == .wrongPassphrase)
        #expect(error?.description.hasPrefix("webdav://host/Vault: wrong passphrase") == true)
    }

    @Test func anotherVaultsConfigurationIsForged() throws {
        let one = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "v", cost: cheap)
        let two = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "v", cost: cheap)
        let error = vaultError {
            _ = try UnlockedVault(
                configuration: one.files[0].contents, masterkeyFile: two.files[1].contents,
                passphrase: VaultPassphrase("p"),
                vault: "v")
        }
        #expect(error?.code == .forgedConfiguration)
    }

    @Test func newFoldersAndFilesAreLaidOutAsTheFormatSays() throws {
        let vault = try UnlockedVault.create(passphrase: VaultPassphrase("p"), vault: "v", cost: cheap).vault
        let root = try vault.names.directoryPath(of: "")
        let folder = try vault.newFolder(named: "Projects", parentDirectoryID: "")
        let entry = try vault.names.encryptedName(for: "Projects", parentDirectoryID: "")
        #expect(folder.entry == .regular(entry))
        #expect(
            folder.files[0]
                == UnlockedVault.File(
                    path: "\(root)/\(entry)/dir.c9r", contents: Data(folder.directoryID.utf8)))
        let own = try vault.names.directoryPath(of: folder.directoryID)
        #expect(folder.files[1].path == own + "/dirid.c9r")
        #expect(try vault.decrypt(folder.files[1].contents, file: "b") == Data(folder.directoryID.utf8))

        let long = String(repeating: "n", count: 200)
        let longFolder = try vault.newFolder(named: long, parentDirectoryID: folder.directoryID)
        guard case .shortened(let stored, let fullName) = longFolder.entry else {
            Issue.record("not shortened")
            return
        }
        #expect(
            longFolder.files.map(\.path) == [
                "\(own)/\(stored)/dir.c9r", "\(own)/\(stored)/name.c9s",
                try vault.names.directoryPath(of: longFolder.directoryID) + "/dirid.c9r",
            ])
        #expect(longFolder.files[1].contents == Data(fullName.utf8))

        let paths = try vault.filePaths(named: long, parentDirectoryID: folder.directoryID)
        #expect(paths.contents.hasPrefix(own + "/") && paths.contents.hasSuffix(".c9s/contents.c9r"))
        #expect(paths.longName?.path.hasSuffix(".c9s/name.c9s") == true)
        let short = try vault.filePaths(named: "a.txt", parentDirectoryID: folder.directoryID)
        #expect(short.longName == nil)
        #expect(
            short.contents == own + "/"
                + (try vault.names.encryptedName(for: "a.txt", parentDirectoryID: folder.directoryID)))
    }
}
