import DocumentKit
import Foundation

/// Where a WebDAV remote's user name and password come from, as the tools people already use
/// read them: never from the command line, where every user of the computer can read them.
///
/// The user name is the URL's, else the one given (`--user`), else `~/.netrc`'s login for the
/// host. The password is read from the file given (`--password-file`, which must be readable by
/// its owner only), else the `DOCS_PASSWORD` environment variable, else `~/.netrc`'s password
/// for the host (and the login, when one is given), as curl reads it.
///
/// For example:
///
/// ```swift
/// let credentials = try WebDAVCredentialSources(user: "ana").credentials(for: url)
/// ```
public struct WebDAVCredentialSources: Sendable {
    /// The user name given on the command line.
    public var user: String?
    /// A file holding the password (its first line), of mode 0600 or stricter.
    public var passwordFile: URL?
    /// The environment: `DOCS_PASSWORD`.
    public var environment: [String: String]
    /// The netrc file: by default `~/.netrc`.
    public var netrc: URL?

    public init(
        user: String? = nil, passwordFile: URL? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment, netrc: URL? = nil
    ) {
        self.user = user
        self.passwordFile = passwordFile
        self.environment = environment
        self.netrc =
            netrc ?? environment["HOME"].map { URL(fileURLWithPath: $0).appendingPathComponent(".netrc") }
    }

    /// Why credentials could not be read: names the file, never the password.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The user and password for `url`, or nil when no source has a password.
    ///
    /// - Throws: ``Failure`` when the password file is missing, unreadable or readable by
    ///   others, or the netrc file cannot be read.
    public func credentials(for url: URL) throws -> WebDAVRemote.Credentials? {
        let host = url.host ?? ""
        let fromURL = URLComponents(url: url, resolvingAgainstBaseURL: false)?.user.flatMap {
            $0.removingPercentEncoding ?? $0
        }
        var name = fromURL ?? user
        var password: String?
        if let passwordFile {
            password = try Self.readPasswordFile(passwordFile)
        } else if let value = environment["DOCS_PASSWORD"], !value.isEmpty {
            password = value
        }
        if password == nil || name == nil, let netrc,
            let entry = try NetrcFile.read(netrc)?.entry(host: host, login: name)
        {
            name = name ?? entry.login
            if password == nil, entry.login == nil || entry.login == name { password = entry.password }
        }
        guard let password else { return nil }
        return WebDAVRemote.Credentials(user: name ?? "", password: password)
    }

    static func readPasswordFile(_ url: URL) throws -> String {
        guard let status = FileStatus(path: url.path) else {
            throw Failure(description: "the password file \(url.path) does not exist")
        }
        guard status.isRegularFile else {
            throw Failure(description: "the password file \(url.path) is not a file")
        }
        guard status.permissions & 0o077 == 0 else {
            throw Failure(
                description:
                    "the password file \(url.path) can be read by others (mode \(String(status.permissions & 0o777, radix: 8))); "
                    + "make it private with chmod 600")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw Failure(description: "the password file \(url.path) cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }
}

/// A `~/.netrc` file: `machine HOST login NAME password SECRET` entries, and a `default` one,
/// separated by any white space, as curl and ftp read it (`macdef` blocks are skipped).
struct NetrcFile {
    struct Entry {
        var machine: String?
        var login: String?
        var password: String?
    }

    var entries: [Entry]

    /// The file at `url`, or nil when there is none.
    static func read(_ url: URL) throws -> NetrcFile? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw WebDAVCredentialSources.Failure(description: "\(url.path) cannot be read")
        }
        return NetrcFile(parsing: String(decoding: data, as: UTF8.self))
    }

    init(parsing text: String) {
        var entries: [Entry] = []
        var tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            .map(String.init)[...]
        while let token = tokens.popFirst() {
            switch token {
            case "machine": entries.append(Entry(machine: tokens.popFirst()))
            case "default": entries.append(Entry(machine: nil))
            case "login", "password", "account":
                let value = tokens.popFirst()
                guard !entries.isEmpty else { continue }
                if token == "login" { entries[entries.count - 1].login = value }
                if token == "password" { entries[entries.count - 1].password = value }
            case "macdef":
                // A macro runs to the next empty line; its words are not entries.
                _ = tokens.popFirst()
            default: continue
            }
        }
        self.entries = entries
    }

    /// The first entry for `host` (and `login`, when given) with a password; else the default.
    func entry(host: String, login: String?) -> Entry? {
        let matching = entries.filter {
            $0.password != nil && (login == nil || $0.login == nil || $0.login == login)
        }
        return matching.first { $0.machine?.lowercased() == host.lowercased() }
            ?? matching.first { $0.machine == nil }
    }
}
