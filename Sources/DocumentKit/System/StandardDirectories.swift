import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a user's documents, application data, caches and runtime files live on this system.
///
/// The folders follow the XDG Base Directory and xdg-user-dirs conventions: an environment
/// variable (`XDG_DOCUMENTS_DIR`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`, `XDG_CONFIG_HOME`,
/// `XDG_RUNTIME_DIR`) wins; then, for Documents, the `XDG_DOCUMENTS_DIR` line of
/// `$XDG_CONFIG_HOME/user-dirs.dirs`, parsed as the spec says (quoted, `$HOME`-relative or
/// absolute, backslash escapes); then the conventional folder under the home folder.
///
/// Tests and apps can replace the process-wide value:
///
/// ```swift
/// StandardDirectories.current = StandardDirectories(environment: ["HOME": tree.path])
/// let container = StandardDirectories.current.documents
///     .appendingPathComponent("Simple Text Editor", isDirectory: true)
/// ```
public struct StandardDirectories: Sendable, Equatable {
    /// The user's home folder.
    public var home: URL
    /// The user's Documents folder.
    public var documents: URL
    /// Per-user application data (`$XDG_DATA_HOME`, `~/.local/share`), the equivalent of
    /// Application Support.
    public var applicationSupport: URL
    /// Per-user caches (`$XDG_CACHE_HOME`, `~/.cache`).
    public var caches: URL
    /// Per-user configuration (`$XDG_CONFIG_HOME`, `~/.config`).
    public var configuration: URL
    /// The runtime folder for sockets and locks, as the environment names it:
    /// `$XDG_RUNTIME_DIR`, or `documentkit-runtime-UID` in the temporary folder.
    ///
    /// Use what ``makeRuntimeDirectory()`` returns, not this: the folder may not exist yet,
    /// and when it is shared or another user's, the private folder is one inside or beside it.
    public var runtime: URL {
        didSet { runtimeIsFallback = false }
    }
    /// Whether ``runtime`` is DocumentKit's own fallback name rather than one the environment
    /// (or a caller) chose: the fallback's alternatives sit beside it, not inside it.
    private var runtimeIsFallback = false

    /// Resolves the folders from an environment, by default the process's own.
    ///
    /// - Parameters:
    ///   - environment: Variables to consult; `HOME` falls back to the password database.
    ///   - userID: Whose private runtime fallback folder to name.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, userID: uid_t = getuid()
    ) {
        let homePath = Self.absolute(environment["HOME"]) ?? Self.passwordDatabaseHome(userID) ?? "/"
        home = URL(fileURLWithPath: homePath, isDirectory: true)

        func base(_ variable: String, _ fallback: String) -> URL {
            // The spec says relative values are invalid and must be ignored.
            let path =
                Self.absolute(environment[variable])
                ?? (homePath as NSString).appendingPathComponent(fallback)
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        configuration = base("XDG_CONFIG_HOME", ".config")
        applicationSupport = base("XDG_DATA_HOME", ".local/share")
        caches = base("XDG_CACHE_HOME", ".cache")

        var documentsPath = Self.absolute(environment["XDG_DOCUMENTS_DIR"])
        if documentsPath == nil {
            let file = configuration.appendingPathComponent("user-dirs.dirs")
            if let text = try? String(contentsOf: file, encoding: .utf8) {
                documentsPath = Self.parseUserDirectories(text, home: homePath)["XDG_DOCUMENTS_DIR"]
            }
        }
        documents = URL(
            fileURLWithPath: documentsPath ?? (homePath as NSString).appendingPathComponent("Documents"),
            isDirectory: true)

        if let runtimePath = Self.absolute(environment["XDG_RUNTIME_DIR"]) {
            runtime = URL(fileURLWithPath: runtimePath, isDirectory: true)
        } else {
            let temporary = Self.absolute(environment["TMPDIR"]) ?? "/tmp"
            runtime = URL(fileURLWithPath: temporary, isDirectory: true)
                .appendingPathComponent("documentkit-runtime-\(userID)", isDirectory: true)
            runtimeIsFallback = true
        }
    }

    private static let shared = Mutex<StandardDirectories?>(nil)

    /// The folders this process uses, resolved from its environment on first use.
    ///
    /// Setting it redirects every later lookup in the process, which is what tests need.
    public static var current: StandardDirectories {
        get {
            shared.withLock { stored in
                if let stored { return stored }
                let resolved = StandardDirectories()
                stored = resolved
                return resolved
            }
        }
        set { shared.withLock { $0 = newValue } }
    }

    /// `$XDG_STATE_HOME` when it is an absolute path (the spec says to ignore any other),
    /// else `~/.local/state`: where sync keeps what it knows of containers and remotes, and
    /// where the device's identity is kept.
    package static func stateHome(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL
    {
        if let path = environment["XDG_STATE_HOME"], path.hasPrefix("/") {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        let home =
            environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? StandardDirectories.current.home.path
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
            ".local/state", isDirectory: true)
    }

    /// The application data folder of one app, `applicationSupport/NAME`.
    public func applicationSupport(for applicationName: String) -> URL {
        applicationSupport.appendingPathComponent(applicationName, isDirectory: true)
    }

    /// Finds or creates the private folder for sockets and locks: a real folder, owned by this
    /// user, that no one else can read, write or replace.
    ///
    /// The mode of a folder DocumentKit did not create is never changed (as root with
    /// `XDG_RUNTIME_DIR=/tmp`, tightening it would lock everyone else out of `/tmp`):
    ///
    /// - A private `$XDG_RUNTIME_DIR` (the usual `/run/user/UID`) is used as it is; a missing
    ///   one is created with mode 0700.
    /// - A shared or loose one (such as a 1777 `/tmp`, or a 0755 folder) gets a private folder
    ///   inside it, `documentkit-runtime-UID`, made with mode 0700. That needs a folder whose
    ///   entries only this user or root can replace: one owned by this user or by root that
    ///   others cannot write in, unless it is sticky.
    /// - Without `XDG_RUNTIME_DIR`, the folder is `documentkit-runtime-UID` in `$TMPDIR` or
    ///   `/tmp`, which must be a folder of that kind too.
    ///
    /// Where that name is taken by something that is not this user's private folder (another
    /// user planted it, or it is a link, a file or not private), the names `NAME.1` to
    /// `NAME.7` beside it are tried in order: the first that is this user's private folder is
    /// used, or else the first free one is created. Every process of the user finds the same
    /// folder this way, so they still coordinate with each other.
    ///
    /// For example:
    ///
    /// ```swift
    /// let runtime = try StandardDirectories.current.makeRuntimeDirectory()
    /// let locks = runtime.appendingPathComponent("documentkit/locks", isDirectory: true)
    /// ```
    ///
    /// - Returns: The private folder: ``runtime`` itself, or one inside or beside it.
    /// - Throws: ``DocumentKitError`` naming the folder when there is no private folder to be
    ///   had: `.wrongFileType` for an `XDG_RUNTIME_DIR` that is a link or not a folder,
    ///   `.permissionDenied` when it belongs to another user or every name is taken.
    @discardableResult
    public func makeRuntimeDirectory() throws -> URL {
        if runtimeIsFallback {
            let base = runtime.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
            var info = stat()
            guard stat(base.path, &info) == 0 else {
                throw DocumentKitError(Errno.current, operation: "inspect the temporary folder", url: base)
            }
            try Self.checkCanHoldPrivateFolders(info, base, role: "the temporary folder")
            return try Self.privateFolder(named: runtime.lastPathComponent, in: base, for: runtime)
        }
        var info = stat()
        if lstat(runtime.path, &info) != 0 {
            let error = Errno.current
            guard error == .noSuchFileOrDirectory else {
                throw DocumentKitError(error, operation: "inspect the runtime folder", url: runtime)
            }
            try FileManager.default.createDirectory(
                at: runtime.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.makeFolder(runtime)
            guard lstat(runtime.path, &info) == 0 else {
                throw DocumentKitError(Errno.current, operation: "inspect the runtime folder", url: runtime)
            }
        }
        guard info.isDirectory else {
            throw DocumentKitError(
                .wrongFileType, operation: "use the runtime folder", url: runtime,
                detail: "the runtime folder is not a folder")
        }
        if Self.isPrivateFolder(info) { return runtime }
        try Self.checkCanHoldPrivateFolders(info, runtime, role: "the runtime folder")
        return try Self.privateFolder(named: "documentkit-runtime-\(getuid())", in: runtime, for: runtime)
    }

    /// How many names ``makeRuntimeDirectory()`` tries for a private folder: NAME, then
    /// NAME.1 to NAME.7.
    static let privateFolderNameCount = 8

    /// Whether what `lstat` said is a folder of this user's that no one else may enter.
    private static func isPrivateFolder(_ info: stat) -> Bool {
        info.isDirectory && info.st_uid == getuid() && info.permissions & 0o077 == 0
    }

    /// Refuses a folder in which someone other than this user or root could delete or
    /// replace the private folder made there.
    private static func checkCanHoldPrivateFolders(_ info: stat, _ url: URL, role: String) throws {
        guard info.st_uid == getuid() || info.st_uid == 0 else {
            throw DocumentKitError(
                .permissionDenied, operation: "use \(role)", url: url,
                detail: "\(role) belongs to another user")
        }
        let sticky: mode_t = 0o1000
        guard info.permissions & 0o022 == 0 || info.permissions & sticky != 0 else {
            throw DocumentKitError(
                .permissionDenied, operation: "use \(role)", url: url,
                detail:
                    "others can write in \(role) and it is not sticky, so they could replace a private folder in it"
            )
        }
    }

    /// The first of `name`, `name.1` … in `folder` that is this user's private folder, or else
    /// the first free one, created.
    private static func privateFolder(named name: String, in folder: URL, for runtime: URL) throws -> URL {
        let candidates = [name] + (1..<privateFolderNameCount).map { "\(name).\($0)" }
        // Twice: a name another process takes between the scan and mkdir is looked at again.
        for _ in 0..<2 {
            var free: URL?
            for candidate in candidates {
                let url = folder.appendingPathComponent(candidate, isDirectory: true)
                var info = stat()
                if lstat(url.path, &info) == 0 {
                    // Anything else there is not ours to use or to change.
                    if isPrivateFolder(info) { return url }
                } else if Errno.current == .noSuchFileOrDirectory, free == nil {
                    free = url
                }
            }
            guard let free else { break }
            if try makeFolder(free) { return free }
        }
        throw DocumentKitError(
            .permissionDenied, operation: "make a private runtime folder", url: runtime,
            detail:
                "\(name) and the \(privateFolderNameCount - 1) names after it in \(folder.path) belong to another user or are not private"
        )
    }

    /// Creates a folder with mode 0700 whatever the umask; false if something is there already.
    @discardableResult
    private static func makeFolder(_ url: URL) throws -> Bool {
        guard mkdir(url.path, 0o700) == 0 else {
            let error = Errno.current
            if error == .fileExists { return false }
            throw DocumentKitError(error, operation: "create the runtime folder", url: url)
        }
        // Ours, just made: a umask that took the owner's bits must not leave it unusable.
        if chmod(url.path, 0o700) != 0 {
            throw DocumentKitError(Errno.current, operation: "make the runtime folder private", url: url)
        }
        return true
    }

    /// Parses the contents of a `user-dirs.dirs` file into absolute paths by variable name.
    ///
    /// Each line is `XDG_NAME_DIR="$HOME/path"` or `XDG_NAME_DIR="/absolute/path"`; anything
    /// else is ignored, as the xdg-user-dirs spec requires. Backslash escapes inside the
    /// quotes are honoured, and a folder equal to the home folder (the way xdg-user-dirs
    /// marks a disabled folder) is left out.
    public static func parseUserDirectories(_ text: String, home: String) -> [String: String] {
        var result: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let name = String(line[..<equals])
            guard name.hasPrefix("XDG_"), name.hasSuffix("_DIR"),
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
            else { continue }
            var value = line[line.index(after: equals)...]
            guard value.first == "\"" else { continue }
            value = value.dropFirst()
            var unquoted = ""
            var closed = false
            var iterator = value.makeIterator()
            while let character = iterator.next() {
                if character == "\\" {
                    if let escaped = iterator.next() { unquoted.append(escaped) }
                } else if character == "\"" {
                    closed = true
                    break
                } else {
                    unquoted.append(character)
                }
            }
            guard closed else { continue }
            let path: String
            if unquoted == "$HOME" || unquoted == "$HOME/" {
                continue
            } else if unquoted.hasPrefix("$HOME/") {
                path = (home as NSString).appendingPathComponent(String(unquoted.dropFirst("$HOME/".count)))
            } else if unquoted.hasPrefix("/") {
                path = unquoted
            } else {
                continue
            }
            let standardized = (path as NSString).standardizingPath
            if standardized == (home as NSString).standardizingPath { continue }
            result[name] = standardized
        }
        return result
    }

    private static func absolute(_ value: String?) -> String? {
        guard let value, value.hasPrefix("/") else { return nil }
        return value
    }

    private static func passwordDatabaseHome(_ userID: uid_t) -> String? {
        guard let entry = getpwuid(userID), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
