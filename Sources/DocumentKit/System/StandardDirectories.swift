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
    /// The private runtime folder for sockets and locks (`$XDG_RUNTIME_DIR`, or a mode-0700
    /// folder of this user's under the temporary folder). Call ``makeRuntimeDirectory()``
    /// before use: it may not exist yet.
    public var runtime: URL

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

    /// The application data folder of one app, `applicationSupport/NAME`.
    public func applicationSupport(for applicationName: String) -> URL {
        applicationSupport.appendingPathComponent(applicationName, isDirectory: true)
    }

    /// Creates the private runtime folder if needed and checks that only this user can use it.
    ///
    /// The folder must be a real folder (not a link), owned by this user, with mode 0700;
    /// a fallback folder that another user planted is refused rather than used.
    ///
    /// - Returns: ``runtime``.
    /// - Throws: ``DocumentKitError`` naming the folder.
    @discardableResult
    public func makeRuntimeDirectory() throws -> URL {
        let path = runtime.path
        var info = stat()
        if lstat(path, &info) != 0 {
            let error = Errno.current
            guard error == .noSuchFileOrDirectory else {
                throw DocumentKitError(error, operation: "inspect the runtime folder", url: runtime)
            }
            try FileManager.default.createDirectory(
                at: runtime.deletingLastPathComponent(), withIntermediateDirectories: true)
            if mkdir(path, 0o700) != 0 && Errno.current != .fileExists {
                throw DocumentKitError(Errno.current, operation: "create the runtime folder", url: runtime)
            }
            guard lstat(path, &info) == 0 else {
                throw DocumentKitError(Errno.current, operation: "inspect the runtime folder", url: runtime)
            }
        }
        guard info.isDirectory else {
            throw DocumentKitError(
                .wrongFileType, operation: "use the runtime folder", url: runtime,
                detail: "it is not a folder")
        }
        guard info.st_uid == getuid() else {
            throw DocumentKitError(
                .permissionDenied, operation: "use the runtime folder", url: runtime,
                detail: "it belongs to another user")
        }
        if info.permissions & 0o077 != 0 && chmod(path, 0o700) != 0 {
            throw DocumentKitError(Errno.current, operation: "make the runtime folder private", url: runtime)
        }
        return runtime
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
