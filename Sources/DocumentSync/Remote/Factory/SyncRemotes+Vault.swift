import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a remote holds an encrypted vault (Cryptomator's format 8, ``EncryptedRemote``), and
/// where its passphrase or its unlocked keys come from.
///
/// The master keys are found in this order: the key file kept for the remote under the state
/// folder (``keyFile(for:)``, written when ``keepsKey`` asked for it); else the vault is
/// unlocked with the passphrase, read from ``passphraseFile`` (its first line; mode 0600 or
/// stricter, or it is refused), else from `DOCS_PASSPHRASE`, else asked with ``prompt`` (a
/// terminal). The passphrase is never kept, and never in an error.
public struct VaultKeySources: Sendable {
    /// The remote holds a vault.
    public var encrypted = false
    /// A remote with no vault yet, and nothing else, gets a new one (`--encrypt` given now).
    public var makesVault = false
    /// A file holding the passphrase.
    public var passphraseFile: URL?
    /// The environment: `DOCS_PASSPHRASE`.
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Asks the user for a passphrase with the question given, on a terminal; nil when none
    /// can be asked (no terminal) or the user gave none.
    public var prompt: (@Sendable (_ question: String) -> String?)?
    /// Keeps the unlocked master keys in a file of mode 0600 under the state folder, so that an
    /// agent syncs without the passphrase (`--keep-key`).
    public var keepsKey = false
    /// scrypt's cost for a new vault's key-encryption key.
    public var newVaultCost = VaultScryptCost.standard

    /// The shortest passphrase a new vault takes, as Cryptomator's apps ask.
    public static let shortestPassphrase = 8

    public init() {}
}

extension SyncRemotes {
    /// The vault at the root of `inner`, opened with the keys `sources` lead to, or made when
    /// there is none and `sources.makesVault`; `url` is the remote's as the user gave it, which
    /// names the key file.
    ///
    /// - Throws: ``RemoteSetupError``: `.credentials` for no passphrase, a wrong one, a
    ///   passphrase file or key file others can read, a key file of another vault; `.refused`
    ///   for a remote with no vault (and files, or no `--encrypt` now) or a vault that does not
    ///   verify; `.unreachable` when the vault's files cannot be read now. Nothing is written but
    ///   a new vault, and the key file when asked.
    static func vault(over inner: any Remote, url: String, options: RemoteOptions) throws -> EncryptedRemote {
        let sources = options.vault
        let keyFile = VaultKeyFile.url(for: url, stateHome: options.stateHome)
        let passphraseFile = sources.passphraseFile?.standardizedFileURL.path
        let configuration: Data
        do {
            configuration = try EncryptedRemote.readSmall(
                inner, RemotePath(VaultConfiguration.fileName), limit: EncryptedRemote.smallFileLimit)
        } catch let error as RemoteError where error.kind == .notFound {
            guard sources.makesVault else {
                throw RemoteSetupError(
                    .refused,
                    "\(url) holds no vault (no \(VaultConfiguration.fileName)); to make one there, add it again with --encrypt",
                    remoteError: error)
            }
            let passphrase = try newPassphrase(
                sources, url: url, question: "Passphrase for a new vault at \(url): ")
            let made = try setup(url) {
                try EncryptedRemote.create(over: inner, passphrase: passphrase, cost: sources.newVaultCost)
            }
            if sources.keepsKey { try VaultKeyFile.write(made.vault.keys, to: keyFile) }
            return EncryptedRemote(over: inner, vault: made.vault, passphraseFile: passphraseFile)
        } catch let error as RemoteError {
            throw RemoteSetupError.probeFailed(error, url)
        }
        if let keys = try VaultKeyFile.read(keyFile) {
            let vault = try setup(url) {
                do {
                    return try UnlockedVault(
                        configuration: configuration, keys: keys, vault: inner.displayName)
                } catch let error as VaultError where error.code == .forgedConfiguration {
                    throw RemoteSetupError(
                        .credentials,
                        "the key file \(keyFile.path) holds the keys of another vault than the one at \(url); remove it, and give the passphrase"
                    )
                }
            }
            return EncryptedRemote(over: inner, vault: vault, passphraseFile: passphraseFile)
        }
        let masterkey = try setup(url) {
            try EncryptedRemote.readSmall(
                inner, RemotePath(VaultMasterkeyFile.fileName), limit: EncryptedRemote.smallFileLimit)
        }
        // Asked at a terminal, a mistyped passphrase may be typed again; read from a file or the
        // environment, it would be the same again.
        var tries = 0
        while true {
            tries += 1
            let (passphrase, asked) = try passphrase(
                sources, url: url,
                question: (tries > 1 ? "That passphrase does not open it. " : "")
                    + "Passphrase of the vault at \(url): ")
            do {
                let vault = try setup(url) {
                    try UnlockedVault(
                        configuration: configuration, masterkeyFile: masterkey, passphrase: passphrase,
                        vault: inner.displayName)
                }
                if sources.keepsKey { try VaultKeyFile.write(vault.keys, to: keyFile) }
                return EncryptedRemote(over: inner, vault: vault, passphraseFile: passphraseFile)
            } catch let error as RemoteSetupError where asked && tries < 3 && error.kind == .credentials {
                continue
            }
        }
    }

    /// The passphrase of the vault at `url`, from the first of `sources` that has one, and
    /// whether it was asked (at a terminal).
    static func passphrase(_ sources: VaultKeySources, url: String, question: String) throws -> (
        VaultPassphrase, asked: Bool
    ) {
        if let text = try givenPassphrase(sources) { return (VaultPassphrase(text), false) }
        if let text = sources.prompt?(question), !text.isEmpty {
            return (VaultPassphrase(text), true)
        }
        throw RemoteSetupError(
            .credentials,
            "the vault at \(url) is locked and no passphrase was found (no --passphrase-file given, DOCS_PASSPHRASE not set, no terminal to ask at, no key kept with --keep-key)"
        )
    }

    /// The passphrase given without asking: the first line of the passphrase file, else
    /// `DOCS_PASSPHRASE`; nil when neither gives one.
    private static func givenPassphrase(_ sources: VaultKeySources) throws -> String? {
        if let file = sources.passphraseFile {
            do { return try PasswordFile.read(file, holding: "passphrase") } catch {
                throw RemoteSetupError(.credentials, error.description)
            }
        }
        guard let text = sources.environment["DOCS_PASSPHRASE"], !text.isEmpty else { return nil }
        return text
    }

    /// A new passphrase for the vault at `url` (a new vault's, or a vault's next): from a file or
    /// the environment as it is, else asked twice at a terminal with `question`; at least
    /// ``VaultKeySources/shortestPassphrase`` characters.
    static func newPassphrase(_ sources: VaultKeySources, url: String, question: String) throws
        -> VaultPassphrase
    {
        var text = try givenPassphrase(sources)
        if text == nil, let prompt = sources.prompt, let first = prompt(question) {
            guard prompt("The same passphrase again: ") == first else {
                throw RemoteSetupError(
                    .credentials,
                    "the two passphrases typed for the vault at \(url) differ; nothing was changed")
            }
            text = first
        }
        guard let text, !text.isEmpty else {
            throw RemoteSetupError(
                .credentials,
                "the vault at \(url) needs a new passphrase: give it in a file (mode 600) or the environment, or type it at a terminal (see docs help remote)"
            )
        }
        guard text.count >= VaultKeySources.shortestPassphrase else {
            throw RemoteSetupError(
                .credentials,
                "a passphrase for the vault at \(url) needs \(VaultKeySources.shortestPassphrase) characters or more; nothing was changed"
            )
        }
        return VaultPassphrase(text)
    }

    /// Refuses to sync the files of a vault as documents: a remote holding `vault.cryptomator`
    /// reached without ``VaultKeySources/encrypted`` would bring its ciphertext down as
    /// documents, and send documents up beside it that no vault reader sees.
    ///
    /// - Throws: ``RemoteSetupError`` `.refused` naming the URL and `--encrypt` when the remote
    ///   answers that it holds one.
    static func refuseVault(in remote: any Remote, url: String) throws {
        // Only what is found refuses: a remote that cannot be asked now (no password yet, out of
        // reach) is left to the sync, which says so and tries again as it always has.
        guard let entry = try? remote.entry(at: RemotePath(VaultConfiguration.fileName)), entry.kind == .file
        else { return }
        throw RemoteSetupError(
            .refused,
            "\(url) holds an encrypted vault (\(VaultConfiguration.fileName)): give --encrypt to sync its documents, never its ciphertext"
        )
    }

    /// Wraps the master keys of the vault at the root of `inner` under a new passphrase: the
    /// current one from `current`'s sources, the new one from `new`'s (asked twice at a
    /// terminal). Only `masterkey.cryptomator` is written, and only over the one read: a change
    /// made meanwhile elsewhere is never overwritten. The keys, and so every document and any
    /// kept key file, stay as they are.
    ///
    /// - Throws: ``RemoteSetupError`` naming `url`: `.credentials` for a wrong or missing
    ///   passphrase; `.refused` for a key file that does not verify or changed meanwhile.
    public static func changePassphrase(
        ofVaultAt url: String, options: RemoteOptions, current: VaultKeySources, new: VaultKeySources
    ) throws {
        let inner = try plainRemote(for: url, options: options)
        let path = RemotePath(VaultMasterkeyFile.fileName)
        var contents = Data()
        let tag = try setup(url) {
            try inner.read(path) { chunk in
                guard contents.count + chunk.count <= EncryptedRemote.smallFileLimit else {
                    throw VaultError(.malformedMasterkeyFile, item: url, "larger than a key file can be")
                }
                contents.append(chunk)
            }
        }
        let file = try setup(url) { try VaultMasterkeyFile(contents: contents, vault: url) }
        var tries = 0
        var old: VaultPassphrase
        while true {
            tries += 1
            let asked: Bool
            (old, asked) = try passphrase(
                current, url: url,
                question: (tries > 1 ? "That passphrase does not open it. " : "")
                    + "Current passphrase of the vault at \(url): ")
            do {
                _ = try setup(url) { try file.unlock(old, vault: url) }
                break
            } catch let error as RemoteSetupError where asked && tries < 3 && error.kind == .credentials {
                continue
            }
        }
        let changed = try setup(url) {
            try file.changingPassphrase(
                from: old,
                to: try newPassphrase(new, url: url, question: "New passphrase of the vault at \(url): "),
                vault: url)
        }
        do {
            try inner.write(path, from: UploadSource(changed.encoded()), condition: .matches(tag))
        } catch let error as RemoteError where error.kind == .preconditionFailed || error.kind == .notFound {
            throw RemoteSetupError(
                .refused,
                "the vault's \(VaultMasterkeyFile.fileName) at \(url) changed while its passphrase was being changed (on another device?); nothing was written: try again",
                remoteError: error)
        } catch let error as RemoteError {
            throw RemoteSetupError.probeFailed(error, url)
        }
    }

    /// Runs `body`, a vault's or the remote's errors made ``RemoteSetupError``s naming `url`.
    private static func setup<T>(_ url: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as VaultError {
            // It names the vault, by the URL the user gave.
            let kind: RemoteSetupError.Kind = error.code == .wrongPassphrase ? .credentials : .refused
            throw RemoteSetupError(kind, "\(error)")
        } catch let error as RemoteError {
            throw RemoteSetupError.probeFailed(error, url)
        }
    }
}

/// The unlocked master keys of a vault kept in a file of their own, for an agent that cannot
/// ask for the passphrase (`docs remote add --encrypt --keep-key`): the encryption key then the
/// MAC key, 64 bytes, in a file of mode 0600 under the state folder, named after the remote's
/// URL. Whoever can read it can read the vault, as whoever can read the passphrase file.
public enum VaultKeyFile {
    /// Where the keys of the vault at `url` are kept.
    public static func url(for url: String, stateHome: URL? = nil) -> URL {
        keptRemoteFile(in: "vault-keys", for: url, extension: "key", stateHome: stateHome)
    }

    /// The keys in `file`, or nil when there is no such file.
    ///
    /// - Throws: ``RemoteSetupError`` `.credentials` naming the file when others can read it,
    ///   or it is not 64 bytes.
    static func read(_ file: URL) throws -> VaultMasterKeys? {
        guard let status = FileStatus(path: file.path) else { return nil }
        guard status.isRegularFile, status.permissions & 0o077 == 0, status.size == 64 else {
            throw RemoteSetupError(
                .credentials,
                "the vault key file \(file.path) is not a private file of 64 bytes (mode 600); remove it, and give the passphrase"
            )
        }
        do {
            let descriptor = try FileDescriptor.open(
                file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, operation: "open")
            let bytes = try SecretBytes(count: 64) { buffer in
                var done = 0
                while done < 64 {
                    let count = try Syscall.read(
                        descriptor.rawValue, UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
                    ).get("read", file)
                    guard count > 0 else {
                        throw RemoteSetupError(.credentials, "the vault key file \(file.path) is cut short")
                    }
                    done += count
                }
            }
            return try VaultMasterKeys(encryptionKey: bytes.slice(0..<32), macKey: bytes.slice(32..<64))
        } catch let error as DocumentKitError {
            throw RemoteSetupError(.credentials, "cannot read the vault key file \(file.path): \(error)")
        }
    }

    /// Writes `keys` to `file`, private from its first byte, replacing what was there whole.
    static func write(_ keys: VaultMasterKeys, to file: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try SafeSave.write(to: file, permissions: 0o600) { temporary in
                try keys.encryptionKey.withUnsafeBytes { try temporary.write($0) }
                try keys.macKey.withUnsafeBytes { try temporary.write($0) }
            }
        } catch {
            throw RemoteSetupError(.settingsNotKept, "cannot keep the vault's keys in \(file.path): \(error)")
        }
    }

    /// Removes the key file of the vault at `url`, if there is one.
    public static func remove(for url: String, stateHome: URL? = nil) throws {
        let file = Self.url(for: url, stateHome: stateHome)
        guard FileStatus(path: file.path) != nil else { return }
        try FileManager.default.removeItem(at: file)
    }
}
