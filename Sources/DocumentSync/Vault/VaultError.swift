import Foundation

/// A failure to read, write or unlock an encrypted vault, naming the vault or file it concerns.
///
/// The vault's files come from a server that may be hostile: every check that fails on them
/// is one of these, never a crash and never a partial answer. No key, passphrase or plaintext
/// ever appears in one.
///
/// For example:
///
/// ```swift
/// do {
///     _ = try UnlockedVault(configuration: token, masterkeyFile: keys, passphrase: passphrase, vault: "s3://b/notes")
/// } catch let error as VaultError where error.code == .wrongPassphrase {
///     print(error)  // s3://b/notes: wrong passphrase (...)
/// }
/// ```
public struct VaultError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of failure this is.
    public enum Code: Hashable, Sendable {
        /// The passphrase does not unwrap the vault's master keys.
        case wrongPassphrase
        /// `masterkey.cryptomator` is not the JSON it should be, or holds values out of range.
        case malformedMasterkeyFile
        /// The master keys unwrapped, but the masterkey file's version MAC does not match them:
        /// the file was altered.
        case forgedMasterkeyFile
        /// `vault.cryptomator` is not a JSON Web Token of the shape the vault format has.
        case malformedConfiguration
        /// `vault.cryptomator`'s signature does not verify under the vault's master keys.
        case forgedConfiguration
        /// The configuration names another vault format, signing algorithm or cipher combination.
        case unsupportedConfiguration
        /// The file ends inside its header or inside a chunk's nonce and tag: it was cut short.
        case truncated
        /// The file header does not authenticate: altered, or not made with this vault's key.
        case forgedHeader
        /// A chunk (numbered from 0) does not authenticate: altered, moved to another place in
        /// the file, or from a file with another header.
        case forgedChunk(Int)
        /// An encrypted name is not base64url ending in `.c9r`, or a long name's `name.c9s` is not
        /// one.
        case malformedName
        /// An encrypted name does not decrypt under its folder's directory ID: altered, or moved
        /// from another folder.
        case forgedName
        /// A plain name the vault cannot hold: empty, "." or "..", or with "/" or NUL; or a name
        /// that decrypted to one.
        case invalidName
        /// A `dir.c9r` holds no directory ID of the vault format's shape (1 to 36 ASCII characters).
        case malformedDirectoryID
        /// Authentication failed in a cipher used on its own (not yet tied to a file).
        case authenticationFailed
        /// An argument outside what the operation takes (a key or nonce of the wrong length).
        case invalidArgument
        /// libcrypto failed where no input of ours could be the cause (out of memory).
        case libcrypto
    }

    /// What kind of failure this is.
    public let code: Code
    /// The vault or file concerned, as the caller named it; empty for a cipher used on its own.
    public let item: String
    /// What was being done and what was found, for a person to read.
    public let detail: String

    public init(_ code: Code, item: String = "", _ detail: String = "") {
        self.code = code
        self.item = item
        self.detail = detail
    }

    /// `text` from a file as an error may show it: at most 64 characters, quoted, with control
    /// characters escaped.
    static func shown(_ text: String) -> String {
        let short = text.count > 64 ? String(text.prefix(64)) + "..." : text
        return short.debugDescription
    }

    /// The same failure, naming `item` (kept when this one already names something).
    func naming(_ item: String) -> VaultError {
        self.item.isEmpty ? VaultError(code, item: item, detail) : self
    }

    public var description: String {
        let summary: String
        switch code {
        case .wrongPassphrase: summary = "wrong passphrase"
        case .malformedMasterkeyFile: summary = "masterkey.cryptomator is malformed"
        case .forgedMasterkeyFile:
            summary = "masterkey.cryptomator was altered (its version MAC does not match)"
        case .malformedConfiguration: summary = "vault.cryptomator is malformed"
        case .forgedConfiguration:
            summary = "vault.cryptomator's signature does not verify (altered or forged)"
        case .unsupportedConfiguration:
            summary = "vault.cryptomator describes a vault this program cannot open"
        case .truncated: summary = "the encrypted file is cut short"
        case .forgedHeader: summary = "the file header does not authenticate (altered, or not of this vault)"
        case .forgedChunk(let index):
            summary =
                "chunk \(index) does not authenticate (altered, reordered, truncated, or under another file's header)"
        case .malformedName: summary = "not an encrypted name"
        case .forgedName:
            summary = "the name does not decrypt in this folder (altered, or moved from another folder)"
        case .invalidName: summary = "a name a vault cannot hold"
        case .malformedDirectoryID: summary = "dir.c9r holds no valid directory ID"
        case .authenticationFailed: summary = "authentication failed"
        case .invalidArgument: summary = "invalid argument"
        case .libcrypto: summary = "libcrypto failed"
        }
        let prefix = item.isEmpty ? "" : "\(item): "
        return detail.isEmpty ? prefix + summary : "\(prefix)\(summary) (\(detail))"
    }
}
