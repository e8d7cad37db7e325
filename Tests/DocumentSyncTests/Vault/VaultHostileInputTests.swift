import Foundation
import Testing

@testable import DocumentSync

/// Bytes a hostile server could serve in place of each vault file, from a seeded generator: every
/// one is a ``VaultError`` or a value, never a crash, and nothing forged decrypts.
@Suite struct VaultHostileInputTests {
    private static func bytes(_ count: Int, _ generator: inout SeededGenerator) -> Data {
        Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Bytes near the shape of real ones: a real file with a few bytes changed, cut or grown.
    private static func mutated(_ data: Data, _ generator: inout SeededGenerator) -> Data {
        var data = data
        switch Int.random(in: 0..<4, using: &generator) {
        case 0 where !data.isEmpty:
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                data[Int.random(in: 0..<data.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
        case 1: data = data.prefix(Int.random(in: 0...data.count, using: &generator))
        case 2: data += bytes(Int.random(in: 1...100, using: &generator), &generator)
        default: data = bytes(Int.random(in: 0...300, using: &generator), &generator)
        }
        return data
    }

    @Test func hostileContentsNeverDecryptAndNeverCrash() throws {
        let vault = try UnlockedVault.create(
            passphrase: VaultPassphrase("p"), vault: "v", cost: VaultScryptCost(cost: 1024, blockSize: 8)
        ).vault
        let plaintext = try SecureRandom.bytes(40_000)
        let real = try vault.encrypt(plaintext)
        var generator = SeededGenerator(seed: 30)
        var refused = 0
        for _ in 0..<300 {
            let served = Self.mutated(real, &generator)
            do {
                let decrypted = try vault.decrypt(served, file: "f")
                // Only the real file, or the real file cut at a chunk boundary (which the
                // format cannot see, docs/Encryption.md), decrypts.
                #expect(served == real.prefix(served.count))
                #expect(plaintext.starts(with: decrypted))
            } catch let error as VaultError {
                #expect(error.item == "f")
                refused += 1
            }
        }
        #expect(refused > 250)
    }

    @Test func hostileNamesConfigurationsAndMasterkeyFilesAreErrors() throws {
        let creation = try UnlockedVault.create(
            passphrase: VaultPassphrase("p"), vault: "v", cost: VaultScryptCost(cost: 1024, blockSize: 8))
        let vault = creation.vault
        let token = creation.files[0].contents
        let masterkey = creation.files[1].contents
        let name = Data(try vault.names.encryptedName(for: "real name.txt", parentDirectoryID: "").utf8)
        var generator = SeededGenerator(seed: 31)
        for _ in 0..<200 {
            let servedName = String(decoding: Self.mutated(name, &generator), as: UTF8.self)
            if let decrypted = try? vault.names.decryptedName(
                storedName: servedName, parentDirectoryID: "", item: "i")
            {
                #expect(decrypted == "real name.txt")
            }
            let servedToken = Self.mutated(token, &generator)
            if (try? VaultConfiguration(verifying: servedToken, keys: vault.keys, vault: "v")) != nil {
                // A token decodes the same only if its signed text and signature do: base64's
                // last character may carry bits nobody reads.
                #expect(servedToken.count >= token.count - 1)
            }
            let servedKeys = Self.mutated(masterkey, &generator)
            do {
                _ = try VaultMasterkeyFile(contents: servedKeys, vault: "v")
            } catch let error as VaultError {
                #expect(error.code == .malformedMasterkeyFile)
            }
            let servedID = Self.bytes(Int.random(in: 0...40, using: &generator), &generator)
            _ = try? VaultNameCipher.directoryID(contents: servedID, item: "i")
        }
    }
}
