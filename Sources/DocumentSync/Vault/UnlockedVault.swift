import Foundation

/// A vault in Cryptomator's format 8 whose configuration verified and whose master keys are
/// unlocked: what encrypts and decrypts its names and contents.
///
/// It knows nothing of where the vault's files are; the caller reads and writes them (a local
/// folder, a WebDAV or S3 remote) by the paths it gives, relative to the vault's top.
///
/// For example:
///
/// ```swift
/// let made = try UnlockedVault.create(passphrase: VaultPassphrase(text), vault: "notes")
/// for file in made.files { try write(file.contents, to: file.path) }
/// let vault = try UnlockedVault(
///     configuration: read("vault.cryptomator"), masterkeyFile: read("masterkey.cryptomator"),
///     passphrase: VaultPassphrase(text), vault: "notes")
/// ```
public struct UnlockedVault: Sendable {
    /// How errors name the vault.
    public let vault: String
    /// The verified configuration.
    public let configuration: VaultConfiguration
    /// The master keys.
    public let keys: VaultMasterKeys
    /// Names and directory paths under the vault's keys and shortening threshold.
    public let names: VaultNameCipher

    /// A file of a vault, by its path relative to the vault's top.
    public struct File: Sendable, Equatable {
        public var path: String
        public var contents: Data
    }

    /// What a new vault is made of: the vault, and the files to write (each path's folders made
    /// first): `vault.cryptomator`, `masterkey.cryptomator` and the root folder's directory
    /// with its ID backup, `d/XX/YYYY.../dirid.c9r`.
    public struct Creation: Sendable {
        public let vault: UnlockedVault
        public let files: [File]
    }

    /// What a new folder is made of.
    public struct NewFolder: Sendable {
        /// The folder's own directory ID.
        public let directoryID: String
        /// How the folder's entry is stored in its parent's directory.
        public let entry: VaultEntryName
        /// The files to write, relative to the vault's top: the entry's `dir.c9r` (and `name.c9s`
        /// for a shortened name), and the backup of the ID in the folder's own directory.
        public let files: [File]
    }

    /// Unlocks the vault whose `vault.cryptomator` is `configuration` and whose
    /// `masterkey.cryptomator` is `masterkeyFile`.
    ///
    /// - Throws: ``VaultError`` naming `vault`: `.wrongPassphrase`; `.malformedConfiguration`,
    ///   `.unsupportedConfiguration` or `.forgedConfiguration` for the configuration;
    ///   `.malformedMasterkeyFile` or `.forgedMasterkeyFile` for the keys.
    public init(configuration: Data, masterkeyFile: Data, passphrase: VaultPassphrase, vault: String) throws {
        // The header first: a vault of another algorithm is refused before scrypt runs.
        _ = try VaultConfiguration.checkedKeyID(of: configuration, vault: vault)
        let keys = try VaultMasterkeyFile(contents: masterkeyFile, vault: vault).unlock(
            passphrase, vault: vault)
        try self.init(configuration: configuration, keys: keys, vault: vault)
    }

    /// Opens the vault with master keys already unlocked (kept by the caller since).
    ///
    /// - Throws: ``VaultError`` naming `vault` for a configuration that does not verify.
    public init(configuration: Data, keys: VaultMasterKeys, vault: String) throws {
        self.vault = vault
        self.configuration = try VaultConfiguration(verifying: configuration, keys: keys, vault: vault)
        self.keys = keys
        names = VaultNameCipher(keys: keys, shorteningThreshold: self.configuration.shorteningThreshold)
    }

    /// A new vault under `passphrase`, with fresh keys and an empty root folder.
    ///
    /// - Throws: ``VaultError`` if libcrypto fails.
    public static func create(
        passphrase: VaultPassphrase, vault: String, cost: VaultScryptCost = .standard,
        configuration: VaultConfiguration = VaultConfiguration()
    ) throws -> Creation {
        let keys = try VaultMasterKeys.random()
        let masterkeyFile = try VaultMasterkeyFile(wrapping: keys, passphrase: passphrase, cost: cost)
        let token = configuration.signed(with: keys)
        let unlocked = try UnlockedVault(configuration: token, keys: keys, vault: vault)
        let root = try unlocked.names.directoryPath(of: VaultNameCipher.rootDirectoryID)
        return Creation(
            vault: unlocked,
            files: [
                File(path: VaultConfiguration.fileName, contents: token),
                File(path: VaultMasterkeyFile.fileName, contents: masterkeyFile.encoded()),
                File(
                    path: root + "/" + VaultNameCipher.directoryIDBackupFileName,
                    contents: try unlocked.encrypt(Data(VaultNameCipher.rootDirectoryID.utf8))),
            ])
    }

    /// A new folder named `name` in the folder whose directory ID is `parentDirectoryID`.
    ///
    /// - Throws: ``VaultError`` `.invalidName` for a name a vault cannot hold.
    public func newFolder(named name: String, parentDirectoryID: String) throws -> NewFolder {
        let directoryID = VaultNameCipher.newDirectoryID()
        let entry = try names.entryName(for: name, parentDirectoryID: parentDirectoryID)
        let parent = try names.directoryPath(of: parentDirectoryID)
        let own = try names.directoryPath(of: directoryID)
        var files = [
            File(
                path: parent + "/" + entry.storedName + "/" + VaultNameCipher.directoryIDFileName,
                contents: Data(directoryID.utf8))
        ]
        if case .shortened(let stored, let fullName) = entry {
            files.append(
                File(
                    path: parent + "/" + stored + "/" + VaultNameCipher.longNameFileName,
                    contents: Data(fullName.utf8)))
        }
        files.append(
            File(
                path: own + "/" + VaultNameCipher.directoryIDBackupFileName,
                contents: try encrypt(Data(directoryID.utf8))))
        return NewFolder(directoryID: directoryID, entry: entry, files: files)
    }

    /// The path, relative to the vault's top, of the file that holds the contents of a file
    /// named `name` in the folder whose directory ID is `parentDirectoryID`, and for a shortened
    /// name the `name.c9s` file to write beside it.
    ///
    /// - Throws: ``VaultError`` `.invalidName` for a name a vault cannot hold.
    public func filePaths(named name: String, parentDirectoryID: String) throws -> (
        contents: String, longName: File?
    ) {
        let parent = try names.directoryPath(of: parentDirectoryID)
        switch try names.entryName(for: name, parentDirectoryID: parentDirectoryID) {
        case .regular(let stored):
            return (parent + "/" + stored, nil)
        case .shortened(let stored, let fullName):
            let folder = parent + "/" + stored
            return (
                folder + "/" + VaultNameCipher.contentsFileName,
                File(path: folder + "/" + VaultNameCipher.longNameFileName, contents: Data(fullName.utf8))
            )
        }
    }

    /// `plaintext` encrypted as a whole file (header and chunks), for small files: larger ones
    /// go through ``VaultContentEncryptor`` a piece at a time.
    public func encrypt(_ plaintext: Data) throws -> Data {
        let encryptor = try VaultContentEncryptor(keys: keys)
        return try encryptor.header + encryptor.update(plaintext) + encryptor.finish()
    }

    /// The plaintext of the whole encrypted file `ciphertext`, for small files.
    ///
    /// - Throws: ``VaultError`` naming `file` if it does not authenticate or is cut short.
    public func decrypt(_ ciphertext: Data, file: String) throws -> Data {
        let decryptor = VaultContentDecryptor(keys: keys, file: file)
        return try decryptor.update(ciphertext) + decryptor.finish()
    }
}
