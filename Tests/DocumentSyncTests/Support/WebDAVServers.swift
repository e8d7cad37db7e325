import Foundation
import Testing

@testable import DocumentSync

/// The WebDAV servers `scripts/webdav-servers` runs for the tests (scripts/test starts them
/// and passes their addresses in `DOCUMENTSYNC_WEBDAV_*`), and a fresh collection on one of
/// them for each test.
enum WebDAVServers {
    /// One of the servers: Apache by how it makes its ETags, and two servers that are not Apache.
    enum Server: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// Apache's default `FileETag` (modification time and size).
        case `default`
        /// `FileETag INode MTime Size`.
        case inode
        /// `FileETag Digest`.
        case digest
        /// The default, over HTTPS with a certificate of a throwaway authority.
        case tls
        /// wsgidav (PyPI) over its file system provider: ETags of inode, whole-second
        /// modification time and size, quoted in headers but not in PROPFIND answers; If-Match
        /// on a file that is not there taken as no condition; real locks that do not check the
        /// ETags an `If` header tagged with an absolute URL gives.
        case wsgidav
        /// The same wsgidav with ETags of the nanosecond modification time.
        case wsgidavNS = "wsgidav-ns"
        /// SabreDAV (Debian's php-sabre-dav, what Nextcloud and ownCloud are built on) over its
        /// FSExt folder: strong ETags made of the bytes, fake locks as Nextcloud's.
        case sabre
        /// The same SabreDAV with its own Locks plugin: real locks, kept after the item they
        /// lock is deleted (until they time out).
        case sabreLocks = "sabre-locks"

        /// The four Apache configurations.
        static let apache: [Server] = [.default, .inode, .digest, .tls]

        var isApache: Bool { Self.apache.contains(self) }

        var testDescription: String { isApache ? "apache-\(rawValue)" : rawValue }

        var environmentName: String {
            "DOCUMENTSYNC_WEBDAV_" + rawValue.uppercased().replacingOccurrences(of: "-", with: "_")
        }

        /// How sync writes on it, as the probe finds it: under locks where they are real,
        /// conditional elsewhere.
        var writeProtocol: WebDAVRemote.WriteProtocol {
            isApache || self == .sabreLocks ? .locking : .conditional
        }

        /// How the ETags are made of the bytes, as the probe finds it, where they are.
        var tagRecipe: WebDAVTagRecipe? {
            switch self {
            case .digest: .sha1Base64
            case .sabre, .sabreLocks: .md5Hex
            default: nil
            }
        }

        /// Whether sync reads back every write: on wsgidav, which the probe refuses (it makes a
        /// file that is not there for a write on If-Match, and its stock ETags stay the same
        /// across two writes of the same size within one second), so only `--unsafe-server`
        /// syncs with it.
        var verifiesWrites: Bool { self == .wsgidav || self == .wsgidavNS }
    }

    /// The environment scripts/test gives, or a message saying how to get it.
    static func value(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw Missing(
                description:
                    "\(name) is not set: run the tests with scripts/test, or start the servers with "
                    + "`scripts/webdav-servers start DIR` and `source DIR/servers.env` first")
        }
        return value
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func url(_ server: Server) throws -> URL {
        URL(string: try value(server.environmentName))!
    }

    /// The file of the throwaway authority that signed the HTTPS server's certificate, which
    /// a remote of that server is given (`--ca-file`); nil for the other servers.
    static func caFile(_ server: Server) throws -> String? {
        server == .tls ? try value("DOCUMENTSYNC_WEBDAV_CA_FILE") : nil
    }

    static func credentials() throws -> WebDAVRemote.Credentials {
        let password = try String(
            contentsOfFile: try value("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE"), encoding: .utf8)
        return WebDAVRemote.Credentials(
            user: try value("DOCUMENTSYNC_WEBDAV_USER"),
            password: password.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Remote options for the servers' user, the password given as `DOCS_PASSWORD` would give
    /// it, and the remotes' settings kept in `state`.
    static func options(keepingSettingsIn state: TemporaryFolder) throws -> RemoteOptions {
        var options = RemoteOptions()
        options.stateHome = state.url
        options.credentials = WebDAVCredentialSources(
            user: try value("DOCUMENTSYNC_WEBDAV_USER"),
            environment: ["DOCS_PASSWORD": try credentials().password],
            netrc: nil)
        return options
    }

    /// The folder on disk that holds the server's files (its document root).
    static func dataFolder(_ server: Server) throws -> URL {
        URL(fileURLWithPath: try value("DOCUMENTSYNC_WEBDAV_DATA")).appendingPathComponent(server.rawValue)
            .appendingPathComponent("data")
    }

    /// A new, empty collection on `server` for one test, and a remote of it.
    ///
    /// - Parameter configure: Changes to the remote's configuration (its write protocol, a
    ///   timeout).
    static func collection(
        on server: Server, _ name: String = #function,
        configure: (inout WebDAVRemote.Configuration) -> Void = { _ in }
    ) throws -> (remote: WebDAVRemote, url: URL, folder: URL) {
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        let leaf = "t-\(safe)-\(UUID().uuidString.prefix(8))"
        let root = try url(server)
        var setup = WebDAVRemote.Configuration(url: root, credentials: try credentials())
        setup.timeout = 10
        setup.caFile = try caFile(server)
        let parent = try WebDAVRemote(setup)
        try parent.makeFolder(RemotePath(leaf))
        var configuration = WebDAVRemote.Configuration(
            url: root.appendingPathComponent(leaf, isDirectory: true), credentials: try credentials())
        configuration.timeout = 10
        configuration.caFile = setup.caFile
        // As the probe finds these servers: no file identities.
        configuration.hasFileIDs = false
        configuration.writeProtocol = server.writeProtocol
        configuration.verifiesWrites = server.verifiesWrites
        configuration.tagRecipe = server.tagRecipe
        configure(&configuration)
        return (
            try WebDAVRemote(configuration), configuration.url,
            try dataFolder(server).appendingPathComponent(leaf)
        )
    }
}
