import Foundation

/// How to reach a remote beyond its URL: where the credentials come from, what to allow.
public struct RemoteOptions: Sendable {
    /// Where a WebDAV user name and password come from.
    public var credentials = WebDAVCredentialSources()
    /// Plain http to another computer (the password crosses the network unencrypted).
    public var allowsInsecureHTTP = false
    /// Syncs with a server the probe found unsafe, reading back every write.
    public var allowsUnsafeServer = false
    /// The file of the certificate authorities an https server's certificate is checked
    /// against instead of the system's (`--ca-file`).
    public var caFile: URL?
    /// The most connections to the remote at once: as many as the most requests a sync keeps
    /// in flight.
    public var connections = 64
    /// Seconds without a byte before a request fails.
    public var timeout: TimeInterval = 30
    /// The state folder (`$XDG_STATE_HOME`) holding the remotes' settings; nil for the default.
    public var stateHome: URL?
    /// Probes the server again even when its settings are kept.
    public var probesAgain = false
    /// Whether the remote holds an encrypted vault, and where its keys come from.
    public var vault = VaultKeySources()

    public init() {}
}

extension RemoteAddress {
    /// The address of the remote at `url` reached with `options`: the user, the password file
    /// and the allowances they hold.
    public init(url: String, options: RemoteOptions) {
        self.init(
            url: url, user: options.credentials.user, passwordFile: options.credentials.passwordFile?.path,
            allowsUnsafeServer: options.allowsUnsafeServer, allowsInsecureHTTP: options.allowsInsecureHTTP,
            caFile: options.caFile?.path, encrypted: options.vault.encrypted,
            passphraseFile: options.vault.passphraseFile?.path)
    }

    /// `options` with this address's settings: each one this address has replaces what the
    /// options say, except that an allowance given in either holds.
    public func applied(to options: RemoteOptions) -> RemoteOptions {
        var options = options
        if let user { options.credentials.user = user }
        if let passwordFile { options.credentials.passwordFile = URL(fileURLWithPath: passwordFile) }
        if let caFile { options.caFile = URL(fileURLWithPath: caFile) }
        if let passphraseFile { options.vault.passphraseFile = URL(fileURLWithPath: passphraseFile) }
        options.vault.encrypted = options.vault.encrypted || encrypted
        options.allowsUnsafeServer = options.allowsUnsafeServer || allowsUnsafeServer
        options.allowsInsecureHTTP = options.allowsInsecureHTTP || allowsInsecureHTTP
        return options
    }
}
