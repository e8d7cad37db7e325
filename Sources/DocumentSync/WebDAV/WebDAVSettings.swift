import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How to reach a remote beyond its URL: where the credentials come from, what to allow.
public struct RemoteOptions: Sendable {
    /// Where a WebDAV user name and password come from.
    public var credentials = WebDAVCredentialSources()
    /// Plain http to another computer (the password crosses the network unencrypted).
    public var allowsInsecureHTTP = false
    /// Syncs with a server the probe found unsafe, reading back every write.
    public var allowsUnsafeServer = false
    /// The most requests in flight at once.
    public var connections = 4
    /// Seconds without a byte before a request fails.
    public var timeout: TimeInterval = 30
    /// The state folder (`$XDG_STATE_HOME`) holding the remotes' settings; nil for the default.
    public var stateHome: URL?
    /// Probes the server again even when its settings are kept.
    public var probesAgain = false

    public init() {}
}

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

/// What is kept of a remote between runs, in a file of mode 0600 under the state folder
/// named after its URL (without credentials): never a password or a secret key.
protocol KeptRemoteSettings: Codable {
    /// The remote's URL, without credentials.
    var url: String { get }
}

extension KeptRemoteSettings {
    static func file(for url: String, stateHome: URL?) -> URL {
        let hash = ContentHash(of: Data(url.utf8)).hex
        return (stateHome ?? SyncJournal.defaultStateHome())
            .appendingPathComponent("DocumentKit/remotes", isDirectory: true)
            .appendingPathComponent("\(hash).json")
    }

    static func read(for url: String, stateHome: URL?) -> Self? {
        guard let data = FileManager.default.contents(atPath: file(for: url, stateHome: stateHome).path)
        else {
            return nil
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Self.self, from: data)
    }

    /// Writes the file, private to its owner from the first byte (made 0600, then filled).
    func write(stateHome: URL?) throws {
        let file = Self.file(for: url, stateHome: stateHome)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(self)
        let temporary = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).new")
        try? FileManager.default.removeItem(at: temporary)
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw SyncError(.failed, "cannot write the remote's settings at \(temporary.path)")
        }
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.write(contentsOf: data)
        try handle.synchronize()
        try handle.close()
        _ = try Syscall.renameat(AT_FDCWD, temporary.path, AT_FDCWD, file.path).get(
            "keep the remote's settings", file)
    }
}

extension SyncRemotes {
    /// Probes the WebDAV server at `url` afresh (and keeps what it found).
    ///
    /// - Throws: ``SyncError`` when the server cannot be reached or is not WebDAV.
    public static func probe(_ url: String, options: RemoteOptions) throws -> WebDAVProbe {
        guard let parsed = URL(string: url) else { throw SyncError(.unusable, "“\(url)” is not a URL") }
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
            throw SyncError(.unusable, "\(shown): \(failure.description)")
        }
        var configuration = WebDAVRemote.Configuration(url: url, credentials: credentials)
        configuration.allowsInsecureHTTP = options.allowsInsecureHTTP
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
                throw SyncError(.unusable, "\(shown): \(error.detail ?? error.description)")
            }
        }
        let probe: WebDAVProbe
        if let kept {
            probe = kept.probe
        } else {
            do { probe = try WebDAVProbe.run(on: try remote()) } catch let error as RemoteError {
                throw SyncError.probeFailed(error, text)
            }
        }
        configuration.hasFileIDs = probe.hasFileIDs
        configuration.address = address
        if let writes = probe.writeProtocol {
            configuration.writeProtocol = writes
        } else if options.allowsUnsafeServer {
            configuration.writeProtocol = .conditional
            configuration.verifiesWrites = true
        } else {
            throw SyncError(.unusable, "\(shown): \(probe.refusal ?? "the server is not safe to sync with")")
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
