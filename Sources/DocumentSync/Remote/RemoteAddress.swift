import Foundation

/// A remote as the user gave it, whole: the URL and every setting needed to reach the same
/// remote again, never a secret.
///
/// What a sync journal and `docs remote add` remember, so that a later sync that names no
/// remote reaches the one given, with the settings given:
///
/// - the URL without credentials, with an S3 store's endpoint, region, profile and
///   addressing in its query (``S3Address/url``);
/// - the WebDAV user name, and the path of the file holding the password (never the
///   password: it is read from the file each time, and from `DOCS_PASSWORD` or `~/.netrc`
///   when no file is named);
/// - whether the user allowed a server that cannot keep writes safe (`--unsafe-server`) and
///   plain http to another computer (`--allow-http`);
/// - the path of the file of certificate authorities an https server is checked against
///   instead of the system's (`--ca-file`);
/// - whether the remote holds an encrypted vault (`--encrypt`), and the path of the file
///   holding its passphrase (`--passphrase-file`), never the passphrase or the keys.
///
/// A secret key, a password, a passphrase or a token is never part of it.
///
/// For example:
///
/// ```swift
/// var address = RemoteAddress(url: "https://dav.example.com/notes/")
/// address.user = "ana"
/// address.passwordFile = "/home/ana/.config/notes-password"
/// let remote = try SyncRemotes.remote(for: address)
/// ```
public struct RemoteAddress: Codable, Sendable, Equatable {
    /// The remote's URL, without user or password.
    public var url: String
    /// The WebDAV user name.
    public var user: String?
    /// The absolute path of a file holding the WebDAV password.
    public var passwordFile: String?
    /// Syncs with a server the probe found unsafe, reading back every write.
    public var allowsUnsafeServer: Bool
    /// Plain http to another computer.
    public var allowsInsecureHTTP: Bool
    /// The absolute path of the file of certificate authorities the server is checked against
    /// instead of the system's.
    public var caFile: String?
    /// The remote holds a Cryptomator vault, whose documents are synced (``EncryptedRemote``).
    public var encrypted: Bool
    /// The absolute path of a file holding the vault's passphrase.
    public var passphraseFile: String?

    public init(
        url: String, user: String? = nil, passwordFile: String? = nil, allowsUnsafeServer: Bool = false,
        allowsInsecureHTTP: Bool = false, caFile: String? = nil, encrypted: Bool = false,
        passphraseFile: String? = nil
    ) {
        self.caFile = caFile
        self.encrypted = encrypted
        self.passphraseFile = passphraseFile
        self.url = url
        self.user = user
        self.passwordFile = passwordFile
        self.allowsUnsafeServer = allowsUnsafeServer
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    private enum CodingKeys: String, CodingKey {
        case url, user, passwordFile, allowsUnsafeServer, allowsInsecureHTTP, caFile, encrypted,
            passphraseFile
    }

    /// Reads an address; the settings an older writer left out are off.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        url = try values.decode(String.self, forKey: .url)
        user = try values.decodeIfPresent(String.self, forKey: .user)
        passwordFile = try values.decodeIfPresent(String.self, forKey: .passwordFile)
        allowsUnsafeServer = try values.decodeIfPresent(Bool.self, forKey: .allowsUnsafeServer) ?? false
        allowsInsecureHTTP = try values.decodeIfPresent(Bool.self, forKey: .allowsInsecureHTTP) ?? false
        caFile = try values.decodeIfPresent(String.self, forKey: .caFile)
        encrypted = try values.decodeIfPresent(Bool.self, forKey: .encrypted) ?? false
        passphraseFile = try values.decodeIfPresent(String.self, forKey: .passphraseFile)
    }

    /// This address with what it leaves open taken from `remembered`, the address of the same
    /// URL given before: a setting given now wins, one not given now is the one given then. A
    /// vault stays a vault: a remote once synced encrypted is never read as plain files.
    public func filled(from remembered: RemoteAddress) -> RemoteAddress {
        guard remembered.url == url else { return self }
        var address = self
        address.user = user ?? remembered.user
        address.passwordFile = passwordFile ?? remembered.passwordFile
        address.allowsUnsafeServer = allowsUnsafeServer || remembered.allowsUnsafeServer
        address.allowsInsecureHTTP = allowsInsecureHTTP || remembered.allowsInsecureHTTP
        address.caFile = caFile ?? remembered.caFile
        address.encrypted = encrypted || remembered.encrypted
        address.passphraseFile = passphraseFile ?? remembered.passphraseFile
        return address
    }

    /// The address as the journal keeps it: JSON, keys sorted.
    var encoded: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, optional strings and booleans always encode.
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The address `text` (``encoded``) holds, or nil when it holds none.
    init?(encoded text: String) {
        guard let address = try? JSONDecoder().decode(RemoteAddress.self, from: Data(text.utf8)) else {
            return nil
        }
        self = address
    }
}
