import DocumentKit
import Foundation

/// The remotes a URL can name.
public enum SyncRemotes {
    /// The remote at `address`, reached with its settings (``RemoteAddress/applied(to:)``) and
    /// what `options` add: see ``remote(for:options:)-(String,_)``.
    public static func remote(for address: RemoteAddress, options: RemoteOptions = RemoteOptions()) throws
        -> any Remote
    {
        try remote(for: address.url, options: address.applied(to: options))
    }

    /// The files the remote at `address` is reached with, besides the container's settings:
    /// the credentials, when they are read from files, and the certificate authority file. A
    /// sync agent that sees one change reads them again (a password fixed in `~/.netrc`
    /// reaches an agent that failed with it).
    public static func settingsFiles(for address: RemoteAddress, options: RemoteOptions = RemoteOptions())
        -> [URL]
    {
        let options = address.applied(to: options)
        let vaultFiles =
            options.vault.encrypted
            ? [
                options.vault.passphraseFile,
                VaultKeyFile.url(for: address.url, stateHome: options.stateHome),
            ]
            .compactMap { $0 } : []
        return vaultFiles + plainSettingsFiles(address.url, options)
    }

    private static func plainSettingsFiles(_ url: String, _ options: RemoteOptions) -> [URL] {
        switch URL(string: url)?.scheme?.lowercased() {
        case "http", "https":
            return [options.credentials.netrc, options.credentials.passwordFile, options.caFile].compactMap {
                $0
            }
        case "s3":
            return [S3CredentialSources().credentialsFile] + [options.caFile].compactMap { $0 }
        default:
            return []
        }
    }

    /// The remote at `url`: `file:///absolute/path` is a folder (a disk, a mounted share);
    /// `https://host/path/` a WebDAV collection, probed the first time it is used;
    /// `s3://bucket/prefix?endpoint=…&region=…` a key prefix of an S3 store (``S3Address``),
    /// probed each time. With ``VaultKeySources/encrypted``, the documents are those of the
    /// Cryptomator vault at the URL (``EncryptedRemote``), opened (or made) with the keys
    /// ``RemoteOptions/vault`` leads to.
    ///
    /// - Throws: ``RemoteSetupError`` naming the URL when its scheme is not one sync speaks, or the
    ///   folder it names is missing or not a folder.
    public static func remote(for url: String, options: RemoteOptions = RemoteOptions()) throws -> any Remote
    {
        let plain = try plainRemote(for: url, options: options)
        if options.vault.encrypted { return try vault(over: plain, url: url, options: options) }
        try refuseVault(in: plain, url: url)
        return plain
    }

    /// The remote at `url` as it is, a vault's files and all: what an encrypted remote keeps
    /// its vault in.
    static func plainRemote(for url: String, options: RemoteOptions) throws -> any Remote {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else {
            throw RemoteSetupError(
                .invalidAddress, "“\(url)” is not a URL; a folder is file:///absolute/path")
        }
        switch scheme {
        case "file":
            if let caFile = options.caFile {
                throw RemoteSetupError(
                    .invalidAddress,
                    "“\(url)” is a folder: a certificate authority file (\(caFile.path), --ca-file) is for https:// servers"
                )
            }
            let path = parsed.path
            // `file://notes/x` is the folder /x on a host called "notes", not the relative
            // path it looks like: refused, never read as /x.
            if let host = parsed.host, !host.isEmpty, host.lowercased() != "localhost" {
                throw RemoteSetupError(
                    .invalidAddress,
                    "“\(url)” names the host “\(host)”, and sync reaches folders on this computer only: a folder is file:///absolute/path (three slashes)"
                )
            }
            guard path.hasPrefix("/") else {
                throw RemoteSetupError(
                    .invalidAddress, "“\(url)” is not an absolute file URL (file:///absolute/path)")
            }
            guard let status = FileStatus(path: path) else {
                throw RemoteSetupError(.invalidAddress, "the remote folder \(path) (\(url)) does not exist")
            }
            guard status.isDirectory else {
                throw RemoteSetupError(.invalidAddress, "the remote \(url) is not a folder")
            }
            // The folder the kernel reaches, links and `..` resolved as it resolves them, so
            // that what is checked (existence, overlap with the container) is what is used.
            return LocalFolderRemote(
                root: URL(fileURLWithPath: CanonicalPath.resolved(path), isDirectory: true), displayName: url,
                address: RemoteAddress(url: url))
        case "http", "https":
            return try webDAV(parsed, url, options: options)
        case "s3":
            return try s3(url, options: options, environment: ProcessInfo.processInfo.environment)
        default:
            throw RemoteSetupError(
                .invalidAddress,
                "“\(url)”: sync speaks file://, http(s):// (WebDAV) and s3:// URLs, not \(scheme)://")
        }
    }
}
