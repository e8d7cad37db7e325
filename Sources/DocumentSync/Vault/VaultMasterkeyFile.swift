import Foundation

/// A vault's two master keys: the encryption key (Cryptomator's "primary master key") and the
/// MAC key ("HMAC master key"), 32 random bytes each.
///
/// They never change for the life of the vault; a new passphrase only wraps them anew.
public struct VaultMasterKeys: Sendable {
    /// AES-256-GCM's key for file headers; the second half of AES-SIV's key.
    public let encryptionKey: SecretBytes
    /// The first half of AES-SIV's key; the key of the masterkey file's version MAC.
    public let macKey: SecretBytes
    /// AES-SIV's 512-bit key: the MAC key, then the encryption key (RFC 5297's K1 for S2V, then
    /// K2 for CTR), as Cryptomator and pycryptomator put them.
    let sivKey: SecretBytes
    /// The key `vault.cryptomator` is signed with (HS256): the encryption key, then the MAC key.
    let signingKey: SecretBytes

    /// Keys of 32 bytes each.
    ///
    /// - Throws: ``VaultError`` `.invalidArgument` for keys of another length.
    public init(encryptionKey: SecretBytes, macKey: SecretBytes) throws {
        guard encryptionKey.count == 32, macKey.count == 32 else {
            throw VaultError(.invalidArgument, "a vault's master keys are 32 bytes each")
        }
        self.encryptionKey = encryptionKey
        self.macKey = macKey
        sivKey = SecretBytes(concatenating: [macKey, encryptionKey])
        signingKey = SecretBytes(concatenating: [encryptionKey, macKey])
    }

    /// Fresh keys from libcrypto's random generator.
    public static func random() throws -> VaultMasterKeys {
        try VaultMasterKeys(encryptionKey: .random(count: 32), macKey: .random(count: 32))
    }
}

/// The passphrase of a vault, in Unicode normalization form C and UTF-8, as Cryptomator
/// derives keys from it (so that a passphrase typed with composed or decomposed accents opens
/// the same vault).
///
/// Swift strings cannot be wiped; the caller keeps the passphrase's `String` no longer than it
/// must. The bytes kept here are wiped when released.
public struct VaultPassphrase: Sendable {
    let bytes: SecretBytes

    public init(_ text: String) {
        bytes = SecretBytes(copying: Array(text.precomposedStringWithCanonicalMapping.utf8))
    }
}

/// scrypt's cost for a vault's key-encryption key.
public struct VaultScryptCost: Sendable, Equatable {
    /// N, a power of two.
    public var cost: UInt64
    /// r.
    public var blockSize: UInt64

    public init(cost: UInt64, blockSize: UInt64) {
        self.cost = cost
        self.blockSize = blockSize
    }

    /// Cryptomator's: N = 32768, r = 8 (32 MiB, about a tenth of a second).
    public static let standard = VaultScryptCost(cost: 32768, blockSize: 8)
}

/// `masterkey.cryptomator`: the vault's master keys, each wrapped (RFC 3394) under a key that
/// scrypt derives from the passphrase, with scrypt's salt and cost and a MAC of the version.
///
/// For example:
///
/// ```swift
/// let keys = try VaultMasterKeys.random()
/// let file = try VaultMasterkeyFile(wrapping: keys, passphrase: VaultPassphrase("correct horse"))
/// try file.encoded().write(to: vault.appendingPathComponent(VaultMasterkeyFile.fileName))
/// let again = try VaultMasterkeyFile(contents: data, vault: "notes").unlock(VaultPassphrase("correct horse"), vault: "notes")
/// ```
public struct VaultMasterkeyFile: Sendable, Equatable {
    /// The file's name at the top of the vault.
    public static let fileName = "masterkey.cryptomator"
    /// The version vault format 8 writes (the format itself is in `vault.cryptomator`).
    public static let formatVersion = 999
    /// The most bytes a masterkey file is read as: a real one is about 400.
    public static let sizeLimit = 64 << 10

    /// The version, authenticated by ``versionMAC``.
    public var version: Int
    /// scrypt's salt (8 random bytes when this program makes it).
    public var scryptSalt: Data
    /// scrypt's N and r.
    public var scryptCost: VaultScryptCost
    /// The encryption master key wrapped under the key-encryption key (40 bytes).
    public var wrappedEncryptionKey: Data
    /// The MAC master key wrapped under the key-encryption key (40 bytes).
    public var wrappedMACKey: Data
    /// HMAC-SHA256 of the version (4 bytes, big-endian) under the MAC master key.
    public var versionMAC: Data

    /// A file holding `keys` under `passphrase`, with a fresh salt.
    ///
    /// - Throws: ``VaultError`` if libcrypto fails.
    public init(
        wrapping keys: VaultMasterKeys, passphrase: VaultPassphrase, cost: VaultScryptCost = .standard
    )
        throws
    {
        version = Self.formatVersion
        scryptSalt = try SecureRandom.bytes(8)
        scryptCost = cost
        let keyEncryptionKey = try Self.keyEncryptionKey(passphrase, salt: scryptSalt, cost: cost)
        wrappedEncryptionKey = try AESKeyWrap.wrap(keys.encryptionKey, keyEncryptionKey: keyEncryptionKey)
        wrappedMACKey = try AESKeyWrap.wrap(keys.macKey, keyEncryptionKey: keyEncryptionKey)
        versionMAC = Self.versionMAC(version, keys: keys)
    }

    /// The file read from `contents`, checked for shape only (no key is needed for that).
    ///
    /// - Parameters:
    ///   - vault: How errors name the vault.
    /// - Throws: ``VaultError`` `.malformedMasterkeyFile`, naming `vault`, for anything but a
    ///   masterkey file: not JSON, a field missing or of another type, base64 that is not,
    ///   wrapped keys of the wrong length, scrypt parameters out of range.
    public init(contents: Data, vault: String) throws {
        func malformed(_ detail: String) -> VaultError {
            VaultError(.malformedMasterkeyFile, item: vault, detail)
        }
        guard contents.count <= Self.sizeLimit else {
            throw malformed("\(contents.count) bytes, more than a masterkey file has")
        }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: contents)
        } catch {
            throw malformed("not the JSON of a masterkey file")
        }
        guard let salt = Data(base64Encoded: fields.scryptSalt), !salt.isEmpty, salt.count <= 1024 else {
            throw malformed("scryptSalt is not base64")
        }
        guard let encryption = Data(base64Encoded: fields.primaryMasterKey), encryption.count == 40,
            let mac = Data(base64Encoded: fields.hmacMasterKey), mac.count == 40
        else { throw malformed("a wrapped master key is not 40 bytes of base64") }
        guard let versionMAC = Data(base64Encoded: fields.versionMac), versionMAC.count == 32 else {
            throw malformed("versionMac is not 32 bytes of base64")
        }
        let cost = fields.scryptCostParam
        let blockSize = fields.scryptBlockSize
        // What Scrypt.derive would refuse, refused here with the file named.
        guard cost > 1, cost & (cost - 1) == 0, cost <= 1 << 24, blockSize >= 1, blockSize <= 64,
            128 * blockSize * (cost + 2) + 128 * blockSize <= Int(Scrypt.memoryLimit)
        else { throw malformed("scrypt parameters N = \(cost), r = \(blockSize) out of range") }
        guard (0...Int(Int32.max)).contains(fields.version) else {
            throw malformed("version \(fields.version)")
        }
        version = fields.version
        scryptSalt = salt
        scryptCost = VaultScryptCost(cost: UInt64(cost), blockSize: UInt64(blockSize))
        wrappedEncryptionKey = encryption
        wrappedMACKey = mac
        self.versionMAC = versionMAC
    }

    /// The file as JSON, as Cryptomator writes it (standard base64 for the binary fields).
    public func encoded() -> Data {
        let fields = Fields(
            version: version, scryptSalt: scryptSalt.base64EncodedString(),
            scryptCostParam: Int(scryptCost.cost),
            scryptBlockSize: Int(scryptCost.blockSize),
            primaryMasterKey: wrappedEncryptionKey.base64EncodedString(),
            hmacMasterKey: wrappedMACKey.base64EncodedString(), versionMac: versionMAC.base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        // Encoding strings and integers cannot fail.
        return try! encoder.encode(fields)
    }

    /// The master keys, unwrapped under `passphrase`, with the version MAC checked.
    ///
    /// - Parameters:
    ///   - vault: How errors name the vault.
    /// - Throws: ``VaultError`` naming `vault`: `.wrongPassphrase` if the keys do not unwrap
    ///   (nothing tells a wrong passphrase from altered wrapped keys); `.forgedMasterkeyFile` if
    ///   they do but the version MAC does not match.
    public func unlock(_ passphrase: VaultPassphrase, vault: String) throws -> VaultMasterKeys {
        let keyEncryptionKey = try Self.keyEncryptionKey(passphrase, salt: scryptSalt, cost: scryptCost)
        let keys: VaultMasterKeys
        do {
            keys = try VaultMasterKeys(
                encryptionKey: AESKeyWrap.unwrap(wrappedEncryptionKey, keyEncryptionKey: keyEncryptionKey),
                macKey: AESKeyWrap.unwrap(wrappedMACKey, keyEncryptionKey: keyEncryptionKey))
        } catch let error as VaultError where error.code == .authenticationFailed {
            throw VaultError(
                .wrongPassphrase, item: vault, "the master keys in \(Self.fileName) do not unwrap under it")
        }
        guard Digests.constantTimeEqual(Self.versionMAC(version, keys: keys), versionMAC) else {
            throw VaultError(.forgedMasterkeyFile, item: vault)
        }
        return keys
    }

    /// The same master keys wrapped under `newPassphrase`, with a fresh salt and the same
    /// scrypt cost: what changing a vault's passphrase writes. Nothing else in the vault changes.
    ///
    /// - Throws: ``VaultError`` naming `vault`: `.wrongPassphrase` if `oldPassphrase` does not
    ///   unlock this file (then nothing is to be written).
    public func changingPassphrase(
        from oldPassphrase: VaultPassphrase, to newPassphrase: VaultPassphrase, vault: String
    )
        throws -> VaultMasterkeyFile
    {
        let keys = try unlock(oldPassphrase, vault: vault)
        var changed = try VaultMasterkeyFile(wrapping: keys, passphrase: newPassphrase, cost: scryptCost)
        changed.version = version
        changed.versionMAC = versionMAC
        return changed
    }

    private static func keyEncryptionKey(_ passphrase: VaultPassphrase, salt: Data, cost: VaultScryptCost)
        throws
        -> SecretBytes
    {
        try Scrypt.derive(passphrase.bytes, salt: salt, cost: cost.cost, blockSize: cost.blockSize, count: 32)
    }

    private static func versionMAC(_ version: Int, keys: VaultMasterKeys) -> Data {
        let value = UInt32(truncatingIfNeeded: version).bigEndian
        return Digests.hmacSHA256(withUnsafeBytes(of: value) { Data($0) }, key: keys.macKey)
    }

    /// The JSON fields, by Cryptomator's names.
    private struct Fields: Codable {
        var version: Int
        var scryptSalt: String
        var scryptCostParam: Int
        var scryptBlockSize: Int
        var primaryMasterKey: String
        var hmacMasterKey: String
        var versionMac: String
    }
}
