import DocumentKit
import Foundation

/// What is kept of a WebDAV remote between runs, in a file of mode 0600 under the state
/// folder: its URL (without credentials), the user name, and what the probe found. Never a
/// password.
struct WebDAVSettings: KeptRemoteSettings, Equatable {
    var url: String
    var user: String?
    var probe: WebDAVProbe
    var probed: Date
    var unsafeServer: Bool
}

extension SyncRemotes {
    /// Probes the WebDAV server at `url` afresh (and keeps what it found).
    ///
    /// - Throws: ``RemoteSetupError`` when the server cannot be reached or is not WebDAV.
    public static func probe(_ url: String, options: RemoteOptions) throws -> WebDAVProbe {
        guard let parsed = URL(string: url) else {
            throw RemoteSetupError(.invalidAddress, "“\(url)” is not a URL")
        }
        var options = options
        options.probesAgain = true
        options.allowsUnsafeServer = true
        return try webDAVRemote(parsed, url, options: options).probe
    }

    /// The WebDAV remote at `url`, probed the first time (and kept), refused when the server
    /// cannot keep writes safe unless ``RemoteOptions/allowsUnsafeServer``.
    static func webDAV(_ url: URL, _ text: String, options: RemoteOptions) throws -> WebDAVRemote {
        try webDAVRemote(url, text, options: options).remote
    }

    /// The remote, set up as what its server was found to be, and what that is: probed
    /// unless kept from before (or ``RemoteOptions/probesAgain``).
    private static func webDAVRemote(_ url: URL, _ text: String, options: RemoteOptions) throws
        -> (remote: WebDAVRemote, probe: WebDAVProbe)
    {
        let shown = WebDAVRemote.displayName(of: url)
        let kept = options.probesAgain ? nil : WebDAVSettings.read(for: shown, stateHome: options.stateHome)
        var sources = options.credentials
        if sources.user == nil { sources.user = kept?.user }
        let credentials: WebDAVRemote.Credentials?
        do { credentials = try sources.credentials(for: url) } catch let failure
            as WebDAVCredentialSources.Failure
        {
            throw RemoteSetupError(.credentials, "\(shown): \(failure.description)")
        }
        var configuration = WebDAVRemote.Configuration(url: url, credentials: credentials)
        if credentials == nil { configuration.passwordLookedFor = sources.whereLookedFor(url) }
        configuration.allowsInsecureHTTP = options.allowsInsecureHTTP
        configuration.caFile = options.caFile?.path
        var address = RemoteAddress(url: shown, options: options)
        address.user =
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.user.map {
                $0.removingPercentEncoding ?? $0
            }
            ?? sources.user
        configuration.connections = options.connections
        configuration.timeout = options.timeout
        configuration.device = DeviceIdentity.kept(inStateFolder: options.stateHome)
        func remote() throws -> WebDAVRemote {
            do { return try WebDAVRemote(configuration) } catch let error as RemoteError {
                throw RemoteSetupError(.invalidAddress, "\(shown): \(error.detail ?? error.description)")
            }
        }
        let probe: WebDAVProbe
        if let kept {
            probe = kept.probe
        } else {
            do { probe = try WebDAVProbe.run(on: try remote()) } catch let error as RemoteError {
                throw RemoteSetupError.probeFailed(error, text)
            }
        }
        configuration.hasFileIDs = probe.hasFileIDs
        configuration.tagRecipe = probe.etagRecipe
        configuration.folderTagsPropagate = probe.folderETagsPropagate
        configuration.address = address
        if let writes = probe.writeProtocol {
            configuration.writeProtocol = writes
        } else if options.allowsUnsafeServer, probe.canSyncUnsafely {
            configuration.writeProtocol = .conditional
            configuration.verifiesWrites = true
        } else {
            throw RemoteSetupError(
                .refused, "\(shown): \(probe.refusal ?? "the server is not safe to sync with")")
        }
        if kept == nil || kept?.user != credentials?.user {
            let settings = WebDAVSettings(
                url: shown, user: credentials?.user, probe: probe, probed: kept?.probed ?? Date(),
                unsafeServer: probe.writeProtocol == nil)
            try settings.write(stateHome: options.stateHome)
        }
        return (try remote(), probe)
    }
}
