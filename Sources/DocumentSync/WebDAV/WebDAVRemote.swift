import DocumentKit
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A WebDAV collection as a remote: Apache's mod_dav_fs, Nextcloud, ownCloud, a NAS box.
///
/// Documents are plain files at their relative paths below the collection, so the server's web
/// interface and other clients see ordinary files. Requests go through `URLSession`
/// (libcurl on Linux) over kept-alive connections; answers are parsed with `XMLParser`.
///
/// A folder is listed with one `PROPFIND` of `Depth: 1` (never `infinity`, which Apache
/// refuses and Nextcloud silently answers as 1). The answer is believed only whole (a
/// multistatus in UTF-8 whose every element closed) and every href only below the collection
/// and made of names that can be names, each checked as it is read (``names(ofHref:_:_:)``,
/// ``RemoteListing``): a `%2F` that decodes to "/" inside a name, `%2e%2e`, NUL or a terminal's
/// escape fails the listing. Every request has a ``RequestDeadline``.
///
/// How a write is kept from overwriting another client's is the server's ``WriteProtocol``,
/// which ``WebDAVProbe`` finds out:
///
/// - ``WriteProtocol/locking`` (Apache): a file that exists is `LOCK`ed, with the tag the
///   caller saw as the lock's condition (`If: (["tag"])`, which mod_dav compares weakly, so it
///   holds in the second after a write when Apache's ETag is weak), written with the lock's
///   token, and its new tag read while the lock is still held, so the tag returned is the one of
///   the bytes written and no one else's. A new file is written under a hidden temporary name
///   beside it, its tag read, and moved into place with `Overwrite: F`; where tags are made of
///   the bytes by a known recipe (``Configuration/tagRecipe``), in place with
///   `If-None-Match: *`, its tag made of the bytes sent.
/// - ``WriteProtocol/conditional`` (servers whose `If-Match` and `If-None-Match` hold and
///   whose tags are strong, with no real locks): `PUT` with `If-None-Match: *` or `If-Match`.
///
/// Tags are the server's ETags without the weak marker and always quoted: Apache's tag for the
/// same bytes is weak for a second after a write and strong after, and wsgidav lists unquoted
/// the ETag its headers quote; each is one version. A folder the server gives no ETag has one
/// constant tag, never sent as a condition: such a folder is deleted only when a look just
/// before finds it empty.
///
/// What other servers need, by what they do rather than by name: a lock taken for a delete is
/// given back after it (SabreDAV keeps the locks of a deleted item, and would refuse a new file
/// there with 423 until they time out); a conditional `MOVE` is looked at before it is sent
/// (SabreDAV 1.8 checks no condition on it); a `PUT` into a folder that is not there is
/// `.parentMissing` whether the server answers 409 or 404; on a server the probe found unsafe,
/// a write on a tag is looked at first (wsgidav makes a file that is not there for it).
///
/// For example:
///
/// ```swift
/// let remote = try WebDAVRemote(
///     WebDAVRemote.Configuration(url: URL(string: "https://cloud.example.com/dav/Notes/")!,
///                                credentials: .init(user: "ana", password: password)))
/// let tag = try remote.write(RemotePath("plan.txt"), from: UploadSource(bytes), condition: .absent)
/// ```
public final class WebDAVRemote: Remote {
    /// How writes are kept from overwriting another client's.
    public enum WriteProtocol: String, Sendable, Codable, CaseIterable {
        /// `LOCK` with the tag as its condition, then write with the lock's token (Apache).
        case locking
        /// `If-Match` and `If-None-Match: *` on `PUT` (servers whose conditions hold).
        case conditional
    }

    /// A user name and password for HTTP basic authentication.
    public struct Credentials: Sendable {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// Where the collection is and how to talk to it.
    public struct Configuration: Sendable {
        /// The collection; a "/" is added at the end when missing. A user name in it is used
        /// when `credentials` is nil and kept out of messages; a password in it is refused.
        public var url: URL
        /// The user and password, sent with every request (basic authentication).
        public var credentials: Credentials?
        /// Where a password was looked for when none was found (see
        /// ``WebDAVCredentialSources/whereLookedFor(_:)``): a server that asks for one is then
        /// said to have had none, not to have refused it.
        public var passwordLookedFor: String?
        /// How writes are made safe; ``WebDAVProbe`` tells which one the server supports.
        public var writeProtocol: WriteProtocol = .locking
        /// Seconds without a byte before a request fails as timed out.
        public var timeout: TimeInterval = 30
        /// How long a request may take in all, whatever its bytes' pace (see ``RequestDeadline``).
        public var deadline = RequestDeadline()
        /// The most connections to the server at once: as many as the most requests a sync
        /// keeps in flight (it starts with fewer and adapts), so that none waits for a
        /// connection (libcurl's own default is 6).
        public var connections: Int = 64
        /// Whether the server gives file identities (Nextcloud's `oc:fileid`), as the probe
        /// found; unknown counts as yes.
        public var hasFileIDs = true
        /// Whether a folder's ETag changes with anything below it (Nextcloud), as the probe
        /// found (``WebDAVProbe/folderETagsPropagate``): then the root's ETag is the remote's
        /// change marker (``WebDAVRemote/changeMarker()``).
        public var folderTagsPropagate = false
        /// How the server makes its ETags of a file's bytes, where they are made of them
        /// (Apache's `FileETag Digest`, SabreDAV's), as the probe found
        /// (``WebDAVProbe/etagRecipe``): then a new file's tag is known from the bytes sent and
        /// names them whoever writes after, and a new file is written in place in one request
        /// (see ``WriteProtocol/locking``).
        public var tagRecipe: WebDAVTagRecipe?
        /// The most bytes a folder's PROPFIND answer may have; nil for 128 MiB.
        public var mostListingBytes: Int?
        /// Whether every write is read back and compared with what was sent: for a server whose
        /// conditions cannot be trusted (`--unsafe-server`), so that a write another client's
        /// overwrote at once is found and reconciled instead of taken as done.
        public var verifiesWrites = false
        /// Whether plain `http` is allowed to a host other than this computer (a password would
        /// cross the network readable by anyone on the way).
        public var allowsInsecureHTTP = false
        /// The absolute path of the file of certificate authorities the server's certificate is
        /// checked against instead of the system's (`--ca-file`); nil for the system's.
        public var caFile: String?
        /// The device the remote acts for, whose locks it knows for its own (see
        /// ``WebDAVRemote``'s lock owner); nil for ``DeviceIdentity/current``.
        public var device: DeviceIdentity?
        /// How the remote was given (``Remote/address``), when it was made from a URL.
        public var address: RemoteAddress?

        public init(url: URL, credentials: Credentials? = nil, writeProtocol: WriteProtocol = .locking) {
            self.url = url
            self.credentials = credentials
            self.writeProtocol = writeProtocol
        }
    }

    /// The bounds of one folder's PROPFIND answer: a folder of 100,000 items is about 40 MB.
    static let mostListingBytes = 128 << 20
    /// Uploads up to this size are sent from memory, larger ones streamed (4 MiB).
    static let mostBytesSentFromMemory: Int64 = 4 << 20
    /// This remote's bound on a PROPFIND answer (``mostListingBytes`` unless a test sets less).
    var listingLimit: Int { configuration.mostListingBytes ?? Self.mostListingBytes }
    /// How many times a request that is safe to repeat is sent again after a failure that may
    /// pass (a timeout, a broken connection, 502–504), with waits doubling from 0.2 s.
    static let retries = 3
    /// How the names of writes in progress begin: hidden, so listings pass over them.
    static let temporaryPrefix = RemotePath.writeInProgressPrefix

    public let displayName: String
    let configuration: Configuration
    /// The owner every lock of this remote names, the same in every process of the device for
    /// the collection (see ``lockOwner(device:collection:)``): a lock a killed pass left, or
    /// whose answer was lost, is found by it and given back at once, rather than left to keep
    /// every device out until it times out.
    let lockOwner: String
    /// The collection's URL, ending in "/", without user or password.
    let base: URL
    /// The collection's path segments, decoded: an href must start with them.
    let baseSegments: [String]
    let transport: HTTPTransport
    /// Held by each request that writes the server's lock database (see
    /// ``writesLockDatabase(method:if:)``), so that this remote sends one at a time.
    let lockDatabaseTurn = Mutex(())
    private let authorization: String?
    /// The server's own spelling of names it gives in another normalisation than NFC (macOS
    /// servers give NFD), by the NFC path, so that requests name what the server holds.
    let spellings = Mutex<[RemotePath: String]>([:])
    /// Set once the root answered the change marker's `PROPFIND` without an ETag (see
    /// ``changeMarker()``).
    let rootGivesNoTag = Atomic(false)

    /// The remote of the collection at `configuration.url`; nothing is sent until it is used.
    ///
    /// - Throws: ``RemoteError`` of kind `.other` when the URL is not http(s), holds a
    ///   password, or is plain http to another computer without ``Configuration/allowsInsecureHTTP``.
    public init(_ configuration: Configuration) throws {
        var components =
            URLComponents(url: configuration.url, resolvingAgainstBaseURL: false) ?? URLComponents()
        let shown = Self.displayName(of: configuration.url)
        func refuse(_ why: String) -> RemoteError {
            RemoteError(.other, operation: .list, path: .root, remote: shown, detail: why)
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw refuse("a WebDAV remote is an http:// or https:// URL with a host")
        }
        guard components.password == nil else {
            throw refuse(
                "the URL holds a password; give it in ~/.netrc, DOCS_PASSWORD or --password-file instead")
        }
        if let problem = HTTPEndpoint.trustProblem(caFile: configuration.caFile, scheme: scheme) {
            throw refuse(problem)
        }
        if scheme == "http", !configuration.allowsInsecureHTTP, !HTTPEndpoint.isLoopback(host) {
            throw refuse(
                "plain http to another computer sends the password unencrypted; use https:// (or allow it explicitly)"
            )
        }
        var credentials = configuration.credentials
        if credentials == nil, let user = components.user {
            credentials = Credentials(user: user.removingPercentEncoding ?? user, password: "")
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        if !components.percentEncodedPath.hasSuffix("/") { components.percentEncodedPath += "/" }
        guard let base = components.url else { throw refuse("the URL is not valid") }
        self.base = base
        baseSegments = components.percentEncodedPath.split(separator: "/").map {
            $0.removingPercentEncoding ?? String($0)
        }
        self.configuration = configuration
        lockOwner = Self.lockOwner(device: configuration.device ?? .current, collection: base)
        displayName = shown
        authorization = credentials.map {
            "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString()
        }
        transport = HTTPTransport(
            timeout: configuration.timeout, connections: configuration.connections,
            deadline: configuration.deadline, caFile: configuration.caFile)
    }

    deinit { transport.invalidate() }

    public var hasFileIDs: Bool { configuration.hasFileIDs }

    public var mostRequestsAtOnce: Int {
        min(configuration.connections, HTTPTransport.webDAVRequestsInFlight)
    }

    public var address: RemoteAddress? { configuration.address }

    /// The URL as messages show it: no user, no password, no query.
    static func displayName(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "a WebDAV server"
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "a WebDAV server"
    }

    static func isRedirect(_ status: Int) -> Bool { [301, 302, 307, 308].contains(status) }

    // MARK: Requests

    /// The URL of `path`, its components percent-encoded in the server's spelling; a folder's
    /// ends in "/".
    func url(_ path: RemotePath, folder: Bool = false) -> URL {
        var text = base.absoluteString
        var prefix = RemotePath.root
        let known = spellings.withLock { $0 }
        for component in path.components {
            prefix = prefix.appending(component)
            let spelled = known[prefix] ?? component
            text += spelled.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? spelled
            text += "/"
        }
        if !folder, !path.isRoot { text.removeLast() }
        return URL(string: text)!
    }

    /// Characters left as they are in a path segment: RFC 3986's unreserved ones.
    private static let segmentCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A request of `method` to `url` with the headers every request carries.
    func request(_ method: String, _ url: URL, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Whether a request writes the server's lock database: a `LOCK`, an `UNLOCK`, or a
    /// `DELETE` or `MOVE` of an item locked with the token it carries (which ends that lock).
    ///
    /// On a server whose locks sync uses (``WriteProtocol/locking``) these go one at a time:
    /// Debian's Apache keeps its `DavLockDB` in a Berkeley DB file that its threads open
    /// without a shared environment, and two of them writing it at once corrupt it. Measured on
    /// loopback: 1,000 `LOCK`s of existing files, 8 at once (a pass replacing many files keeps
    /// that many requests in flight), gave HTTP 500 and "BDB0060 PANIC: fatal region error
    /// detected; run recovery" in its error log, after which `LOCK`s of that server can fail
    /// until its lock database is recovered by hand; the same `LOCK`s one at a time beside 8
    /// `PUT`s at once, and 1,000 `MOVE`s of unlocked files 8 at once, gave none.
    static func writesLockDatabase(method: String, if condition: String?) -> Bool {
        switch method {
        case "LOCK", "UNLOCK": true
        case "DELETE", "MOVE": condition?.contains("(<") == true
        default: false
        }
    }

    /// Sends a request and returns the answer, whatever its status; a failure to get one is
    /// a ``RemoteError`` for `operation` on `path`. A request that is `repeatable` (it changes
    /// nothing, or changes nothing again) is sent again after a failure that may pass.
    func send(
        _ request: URLRequest, body: HTTPBody = .none,
        into destination: HTTPTransport.Destination = .memory(limit: 1 << 20),
        _ operation: RemoteError.Operation, _ path: RemotePath, destination target: RemotePath? = nil,
        repeatable: Bool = false
    ) throws -> HTTPAnswer {
        if configuration.writeProtocol == .locking, let method = request.httpMethod,
            Self.writesLockDatabase(method: method, if: request.value(forHTTPHeaderField: "If"))
        {
            return try lockDatabaseTurn.withLock { _ in
                try sendNow(
                    request, body: body, into: destination, operation, path, destination: target,
                    repeatable: repeatable)
            }
        }
        return try sendNow(
            request, body: body, into: destination, operation, path, destination: target,
            repeatable: repeatable)
    }

    private func sendNow(
        _ request: URLRequest, body: HTTPBody, into destination: HTTPTransport.Destination,
        _ operation: RemoteError.Operation, _ path: RemotePath, destination target: RemotePath?,
        repeatable: Bool
    ) throws -> HTTPAnswer {
        do {
            return try transport.send(
                request, body: body, into: destination, retries: repeatable ? Self.retries : 0)
        } catch let failure as HTTPTransportFailure {
            throw error(failure, operation, path, destination: target, answerer: "server")
        }
    }

    /// `PROPFIND` of `path` at `depth`, parsed.
    ///
    /// - Returns: nil when the server answers 404.
    func propfind(_ path: RemotePath, depth: String, folder: Bool, _ operation: RemoteError.Operation)
        throws -> [Multistatus.Response]?
    {
        let headers = ["Depth": depth, "Content-Type": "application/xml; charset=utf-8"]
        let answer = try send(
            request("PROPFIND", url(path, folder: folder), headers: headers),
            body: .data(configuration.hasFileIDs ? Multistatus.request : Multistatus.plainRequest),
            into: .memory(limit: listingLimit), operation, path, repeatable: true)
        switch answer.status {
        case 207: break
        case 404: return nil
        // Apache: "the URL contains extraneous path components", a file where a folder should be.
        case 400 where folder && !path.isRoot:
            if let item = try propfind(path, depth: "0", folder: false, operation),
                item.contains(where: { !$0.isCollection })
            {
                throw failure(.notAFolder, operation, path, detail: "HTTP 400")
            }
            throw error(status: answer, operation, path)
        case let status where Self.isRedirect(status) && !folder:
            return try propfind(path, depth: depth, folder: true, operation)
        default: throw error(status: answer, operation, path)
        }
        do {
            return try Multistatus(parsing: answer.body).responses
        } catch let malformed as Multistatus.Malformed {
            throw failure(.badAnswer, operation, path, detail: "the server's PROPFIND answer is \(malformed)")
        }
    }

    /// The path an href names, relative to the collection, in NFC; records the server's spelling
    /// of names that are not.
    ///
    /// - Throws: ``RemoteError`` when the href is outside the collection or not valid, or a
    ///   name in it cannot be an item's (see ``names(ofHref:_:_:)``).
    func path(ofHref href: String, _ operation: RemoteError.Operation, _ listed: RemotePath) throws
        -> RemotePath
    {
        path(ofNames: try names(ofHref: href, operation, listed))
    }

    /// The path of `names`, as ``names(ofHref:_:_:)`` gives them, in NFC; records the server's
    /// spelling of the last when it is not.
    func path(ofNames names: [String]) -> RemotePath {
        let path = RemotePath(components: names)
        // Bytes, not `!=`: Swift's string equality holds across canonically equal spellings.
        if !path.isRoot, let raw = names.last, !raw.utf8.elementsEqual(path.name.utf8) {
            spellings.withLock { $0[path] = raw }
        }
        return path
    }

    /// The names an href gives below the collection, percent-decoded, as the server spells them.
    ///
    /// Each is checked when the answer is read: a `%2F` decodes to a "/" inside one name, a
    /// `%2e%2e` to "..", a `%00` to NUL, and such a name must never reach the engine (see
    /// ``Remote/checkListedName(_:_:_:)``).
    ///
    /// - Throws: ``RemoteError`` when the href is outside the collection or not valid, or a
    ///   name in it cannot be an item's.
    func names(ofHref href: String, _ operation: RemoteError.Operation, _ listed: RemotePath) throws
        -> [String]
    {
        var encoded = Substring(href)
        if let scheme = encoded.range(of: "://") {
            let rest = encoded[scheme.upperBound...]
            encoded = rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
        }
        var segments: [String] = []
        for segment in encoded.split(separator: "/") {
            guard let decoded = segment.removingPercentEncoding else {
                throw failure(
                    .badAnswer, operation, listed,
                    detail: "the server gave an href that is not valid: \(RemotePath.shown(href))")
            }
            segments.append(decoded)
        }
        guard segments.count >= baseSegments.count,
            zip(segments, baseSegments).allSatisfy({
                $0.precomposedStringWithCanonicalMapping == $1.precomposedStringWithCanonicalMapping
            })
        else {
            throw failure(
                .badAnswer, operation, listed,
                detail: "the server gave an href outside the remote's folder: \(RemotePath.shown(href))")
        }
        let names = Array(segments[baseSegments.count...])
        for name in names { try checkListedName(name, operation, listed) }
        return names
    }

    /// The entry of a parsed response.
    func entry(_ response: Multistatus.Response, named name: String) -> RemoteEntry {
        RemoteEntry(
            name: name, kind: response.isCollection ? .folder : .file,
            size: response.isCollection ? 0 : response.contentLength ?? 0,
            tag: Self.tag(of: response), fileID: response.fileID)
    }

    /// A server's ETag as a tag: one spelling for one version, whichever way the server
    /// writes it.
    ///
    /// The weak marker goes (Apache's ETag is weak for a second after a write and strong
    /// after, one version either way), and the opaque part is quoted: RFC 4918 gives
    /// `getetag` the quoted form of the `ETag` header, but wsgidav lists it unquoted while its
    /// headers quote it, and the tag a write returns must be the tag the next listing gives.
    static func tag(_ etag: String) -> RemoteTag {
        var text = Substring(etag.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else {
            return RemoteTag("\"\(text)\"")
        }
        return RemoteTag(String(text))
    }

    /// The tag of a listed item: its ETag, or ``untaggedFolder`` for a folder the server gives
    /// none (RFC 4918 makes `getetag` optional; wsgidav and SabreDAV tag no folders).
    static func tag(of response: Multistatus.Response) -> RemoteTag? {
        if let etag = response.etag { return tag(etag) }
        return response.isCollection ? untaggedFolder : nil
    }

    /// The tag of every folder its server gives no ETag: not quoted, so never equal to an
    /// ETag's tag. A condition on it is never sent to the server (which has nothing to
    /// compare it with); it holds for the folder as long as a folder is there, and a folder is
    /// deleted only when a look just before finds it empty, as on S3.
    static let untaggedFolder = RemoteTag("folder")

    /// The tag as an entity tag in a header: quoted, as the server gave it.
    static func quoted(_ tag: RemoteTag) -> String {
        tag.rawValue.hasPrefix("\"") ? tag.rawValue : "\"\(tag.rawValue)\""
    }

    // MARK: Errors

    /// The error an HTTP status means, where the operation gives it no meaning of its own.
    func error(
        status answer: HTTPAnswer, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil
    ) -> RemoteError {
        let status = answer.status
        let kind: RemoteError.Kind
        let request = "\(answer.method) answered HTTP \(status)"
        var detail = request
        switch status {
        case 401 where configuration.credentials.map({ $0.password.isEmpty }) ?? true:
            kind = .permissionDenied
            let looked = configuration.passwordLookedFor.map { ": \($0)" } ?? ""
            detail =
                "the server asks for a user name and password, and no password was sent\(looked) (\(request))"
        case 401:
            kind = .permissionDenied
            detail = "the server refused the user name or password (\(request))"
        case 403:
            kind = .permissionDenied
            detail = "the server forbids it (\(request))"
        case 404: kind = .notFound
        case 200 where answer.method == "PROPFIND", 405, 501:
            kind = .other
            detail =
                "the server does not take this WebDAV request here (\(request)): is the URL a WebDAV folder?"
        case 409: kind = .parentMissing
        case 412: kind = .preconditionFailed
        case 413:
            kind = .other
            detail =
                "the server takes no upload this large (\(request)): its limit (Apache's LimitRequestBody, 1 GiB by default since 2.4.54) is below the file's size, which in a vault is the document's and 28 bytes a 32 KiB chunk"
        case 423:
            kind = .other
            detail = "another client holds a lock on it (\(request)); try again later"
        case 507: kind = .outOfSpace
        case 429, 500...599: kind = .status(status)
        default: kind = .other
        }
        return failure(kind, operation, path, destination: destination, detail: detail)
    }

    /// Refuses names the server cannot hold, and the names of sync's own temporary files.
    func validate(_ path: RemotePath, _ operation: RemoteError.Operation, allowingRoot: Bool = false) throws {
        guard path.holdsStorableNames(allowingRoot: allowingRoot) else {
            throw failure(.invalidName, operation, path)
        }
    }
}
