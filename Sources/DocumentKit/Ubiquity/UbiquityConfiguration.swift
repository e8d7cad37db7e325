import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One ubiquity container: a local folder kept in sync with a remote, under an identifier
/// as iCloud names containers (`iCloud.com.example.Notes`).
public struct UbiquityContainer: Codable, Sendable, Equatable {
    /// The short name people use for it (`docs remote add NAME URL`).
    public var name: String
    /// The identifier apps pass to `FileManager.url(forUbiquityContainerIdentifier:)`.
    public var identifier: String
    /// The absolute path of the local folder: the container's root, as
    /// `url(forUbiquityContainerIdentifier:)` returns it. Documents an app shows to people go
    /// in its `Documents` folder (``NSMetadataQueryUbiquitousDocumentsScope``); the Simple
    /// Text Editor keeps its documents at the root.
    public var folder: String
    /// The remote's URL, without credentials: `file:///path`, `https://host/path/`, or
    /// `s3://bucket/prefix` with the store's endpoint, region and profile in its query.
    public var remote: String
    /// The user name for the remote, when it needs one; the password is never kept here.
    public var user: String?
    /// The absolute path of the file holding the remote's password (`--password-file`), read
    /// at each sync; nil to read it from `DOCS_PASSWORD` or `~/.netrc`.
    public var passwordFile: String?
    /// Whether sync may use a server the probe found unable to keep writes safe, reading back
    /// every write (`--unsafe-server`).
    public var allowsUnsafeServer = false
    /// Whether plain http to another computer is allowed (`--allow-http`).
    public var allowsInsecureHTTP = false
    /// The absolute path of the file of certificate authorities an https server's certificate
    /// is checked against instead of the system's (`--ca-file`); nil for the system's.
    public var caFile: String?
    /// Whether the remote holds a Cryptomator vault, whose documents are the container's
    /// (`--encrypt`): the server keeps only ciphertext.
    public var encrypted = false
    /// The absolute path of the file holding the vault's passphrase (`--passphrase-file`), read
    /// at each sync; nil to read it from `DOCS_PASSPHRASE`, the kept key or a terminal.
    public var passphraseFile: String?
    /// Whether documents new on the remote download as soon as sync sees them (true), or are
    /// to be kept on the server, shown by a placeholder, until opened or downloaded (false).
    /// Not acted on yet: sync downloads every document.
    public var downloadsEagerly: Bool
    /// How often the agent passes whatever it heard, in seconds; nil for its default (30 s).
    /// It is also the slowest the agent asks a network remote whether anything changed, which
    /// it asks every second while devices are active; changes here, and in a folder remote,
    /// are synced as they happen whatever it is.
    public var pollSeconds: Double?

    public init(
        name: String, identifier: String, folder: String, remote: String, user: String? = nil,
        downloadsEagerly: Bool = true, pollSeconds: Double? = nil, passwordFile: String? = nil,
        allowsUnsafeServer: Bool = false, allowsInsecureHTTP: Bool = false, caFile: String? = nil,
        encrypted: Bool = false, passphraseFile: String? = nil
    ) {
        self.caFile = caFile
        self.encrypted = encrypted
        self.passphraseFile = passphraseFile
        self.passwordFile = passwordFile
        self.allowsUnsafeServer = allowsUnsafeServer
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.pollSeconds = pollSeconds
        self.name = name
        self.identifier = identifier
        self.folder = folder
        self.remote = remote
        self.user = user
        self.downloadsEagerly = downloadsEagerly
    }

    private enum CodingKeys: String, CodingKey {
        case name, identifier, folder, remote, user, passwordFile, allowsUnsafeServer, allowsInsecureHTTP,
            caFile, encrypted, passphraseFile
        case downloadsEagerly, pollSeconds
    }

    /// Reads a container's settings; the allowances an older version did not write are off.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        name = try values.decode(String.self, forKey: .name)
        identifier = try values.decode(String.self, forKey: .identifier)
        folder = try values.decode(String.self, forKey: .folder)
        remote = try values.decode(String.self, forKey: .remote)
        user = try values.decodeIfPresent(String.self, forKey: .user)
        passwordFile = try values.decodeIfPresent(String.self, forKey: .passwordFile)
        allowsUnsafeServer = try values.decodeIfPresent(Bool.self, forKey: .allowsUnsafeServer) ?? false
        allowsInsecureHTTP = try values.decodeIfPresent(Bool.self, forKey: .allowsInsecureHTTP) ?? false
        caFile = try values.decodeIfPresent(String.self, forKey: .caFile)
        encrypted = try values.decodeIfPresent(Bool.self, forKey: .encrypted) ?? false
        passphraseFile = try values.decodeIfPresent(String.self, forKey: .passphraseFile)
        downloadsEagerly = try values.decode(Bool.self, forKey: .downloadsEagerly)
        pollSeconds = try values.decodeIfPresent(Double.self, forKey: .pollSeconds)
    }

    /// The container's root.
    public var url: URL { URL(fileURLWithPath: folder, isDirectory: true) }

    /// Whether `path` (absolute, with links resolved as ``CanonicalPath`` resolves them) is
    /// the container's root or inside it.
    public func contains(path: String) -> Bool {
        let root = CanonicalPath.of(url)
        return path == root || CanonicalPath.isAncestor(root, of: path)
    }

    /// The identifier a container named `name` gets when none is given: `iCloud.NAME`.
    public static func defaultIdentifier(forName name: String) -> String { "iCloud.\(name)" }
}

/// The ubiquity containers of this user: which local folders sync with which remotes.
///
/// Kept in `$XDG_CONFIG_HOME/DocumentKit/ubiquity.json` (mode 0600, in a folder of mode
/// 0700), written by `docs remote add` and `docs remote remove`. With no container
/// configured, `FileManager.default.url(forUbiquityContainerIdentifier:)` returns nil, as on
/// a device signed out of iCloud.
///
/// For example:
///
/// ```swift
/// try UbiquityConfiguration.update { configuration in
///     try configuration.add(UbiquityContainer(
///         name: "notes", identifier: "iCloud.com.example.Notes", folder: "/home/ana/Notes",
///         remote: "https://dav.example.com/notes/", user: "ana"))
/// }
/// let folder = FileManager.default.url(forUbiquityContainerIdentifier: nil)  // /home/ana/Notes
/// ```
public struct UbiquityConfiguration: Codable, Sendable, Equatable {
    /// In the order they were added: the first is the one a nil identifier names.
    public var containers: [UbiquityContainer] = []
    /// Made when the first container is added and dropped with the last: what
    /// `ubiquityIdentityToken` returns, so that an app can tell the account changed.
    public var identityToken: String?
    /// The program that syncs a container when asked (`PATH sync --watch --container
    /// FOLDER`), recorded by the `docs` that added it; nil when none is known.
    public var agent: String?

    public init() {}

    private static let homeOverride = Mutex<URL?>(nil)

    private static let linkLifetime = Mutex<Duration>(.seconds(7 * 86_400))

    /// How long a share link made by `url(forPublishingUbiquitousItemAt:expiration:)` works:
    /// seven days unless set (the longest an S3 presigned URL may live; a Nextcloud or ownCloud
    /// share lasts to the end of the day it reaches).
    public static var publishedLinkLifetime: Duration {
        get { linkLifetime.withLock { $0 } }
        set { linkLifetime.withLock { $0 = newValue } }
    }

    /// The folder standing for `$XDG_CONFIG_HOME`: ``StandardDirectories/configuration``
    /// unless set (tests set it, to keep their containers out of the user's settings). An
    /// agent started on demand is given it as its `XDG_CONFIG_HOME`.
    public static var configurationHome: URL {
        get { homeOverride.withLock { $0 } ?? StandardDirectories.current.configuration }
        set { homeOverride.withLock { $0 = newValue } }
    }

    /// `$XDG_CONFIG_HOME/DocumentKit/ubiquity.json`.
    public static var fileURL: URL {
        configurationHome.appendingPathComponent("DocumentKit/ubiquity.json", isDirectory: false)
    }

    /// The configuration as the file holds it; empty when there is no file.
    ///
    /// - Throws: ``DocumentKitError`` naming the file when it cannot be read or is not a
    ///   configuration.
    public static func load() throws -> UbiquityConfiguration {
        let file = fileURL
        guard
            let data = try SettingsFile.contents(
                of: file, operation: "read the ubiquity containers' settings")
        else { return UbiquityConfiguration() }
        do {
            return try JSONDecoder().decode(UbiquityConfiguration.self, from: data)
        } catch {
            throw DocumentKitError(
                .invalidArgument, operation: "read the ubiquity containers' settings", url: file,
                detail: "the file is not a settings file DocumentKit wrote (\(error)); fix or remove it")
        }
    }

    /// The container with identifier `identifier`, or the first one when nil.
    public func container(identifier: String?) -> UbiquityContainer? {
        guard let identifier else { return containers.first }
        return containers.first { $0.identifier == identifier }
    }

    /// The container named `name`.
    public func container(named name: String) -> UbiquityContainer? {
        containers.first { $0.name == name }
    }

    /// The container whose folder holds the item at `url`, if any.
    public func container(holding url: URL) -> UbiquityContainer? {
        let path = CanonicalPath.of(url)
        return containers.first { $0.contains(path: path) }
    }

    /// The container whose root is the folder at `url`, if any.
    public func container(at url: URL) -> UbiquityContainer? {
        let path = CanonicalPath.of(url)
        return containers.first { CanonicalPath.of($0.url) == path }
    }

    /// Adds `container`.
    ///
    /// - Throws: ``DocumentKitError`` with `.fileExists` when its name or identifier is taken,
    ///   or its folder is, holds or is inside another container's.
    public mutating func add(_ container: UbiquityContainer) throws {
        let folder = CanonicalPath.of(container.url)
        for other in containers {
            let reason: String? =
                other.name == container.name
                ? "a remote named “\(other.name)” exists"
                : other.identifier == container.identifier
                    ? "the container identifier \(other.identifier) is taken by “\(other.name)”"
                    : other.contains(path: folder) || container.contains(path: CanonicalPath.of(other.url))
                        ? "the folder \(folder) overlaps the folder of “\(other.name)”, \(other.folder)" : nil
            if let reason {
                throw DocumentKitError(
                    .fileExists, operation: "add the remote “\(container.name)”", url: Self.fileURL,
                    detail: reason)
            }
        }
        var added = container
        added.folder = folder
        containers.append(added)
        if identityToken == nil { identityToken = UUID().uuidString }
    }

    /// Removes the container named `name`; false when there is none.
    @discardableResult
    public mutating func remove(named name: String) -> Bool {
        guard let index = containers.firstIndex(where: { $0.name == name }) else { return false }
        containers.remove(at: index)
        if containers.isEmpty { identityToken = nil }
        return true
    }

    /// Reads the file, lets `body` change the configuration, and writes it back, holding a
    /// lock so that two processes changing it at once do not lose either's change.
    ///
    /// The file is written safely (a crash leaves the old or the new one) and is private to
    /// its owner from its first byte.
    ///
    /// - Throws: ``DocumentKitError`` naming the file, or what `body` throws (nothing is
    ///   written then).
    @discardableResult
    public static func update<Result>(_ body: (inout UbiquityConfiguration) throws -> Result) throws -> Result
    {
        let file = fileURL
        let lock = try SettingsFile.lock(file, operation: "lock the ubiquity containers' settings")
        defer { withExtendedLifetime(lock) {} }
        var configuration = try load()
        let result = try body(&configuration)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try SafeSave.write(try encoder.encode(configuration), to: file, permissions: 0o600)
        return result
    }
}
