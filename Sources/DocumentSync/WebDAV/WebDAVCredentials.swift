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
            do { password = try PasswordFile.read(passwordFile) } catch {
                throw Failure(description: error.description)
            }
        } else if let value = environment["DOCS_PASSWORD"], !value.isEmpty {
            password = value
        }
        if password == nil || name == nil, let netrc,
            let entry = try Self.netrc(netrc)?.entry(host: host, login: name)
        {
            name = name ?? entry.login
            if password == nil, entry.login == nil || entry.login == name { password = entry.password }
        }
        guard let password else { return nil }
        return WebDAVRemote.Credentials(user: name ?? "", password: password)
    }

    /// Where a password for `url` was looked for, for a message when none was found: "none was
    /// found (no --password-file given, DOCS_PASSWORD not set, /home/ana/.netrc has no
    /// password for dav.example.com)".
    public func whereLookedFor(_ url: URL) -> String {
        var places = ["no --password-file given", "DOCS_PASSWORD not set"]
        if let netrc {
            let host = url.host ?? ""
            places.append(
                FileStatus(path: netrc.path) == nil
                    ? "no \(netrc.path)" : "\(netrc.path) has no password for \(host)")
        }
        return "none was found (\(places.joined(separator: ", ")))"
    }

    private static func netrc(_ url: URL) throws -> NetrcFile? {
        do { return try NetrcFile.read(url) } catch { throw Failure(description: error.description) }
    }
}
