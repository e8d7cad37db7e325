import CCrypto
import DocumentKit
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A key prefix in an S3 bucket as a remote: AWS S3, or a store that speaks its API (MinIO,
/// Ceph RGW, SeaweedFS).
///
/// Documents are objects whose keys are the prefix and their relative paths, so the store's
/// console and other tools (`aws s3`, rclone) see ordinary files. Requests are signed with
/// AWS Signature Version 4 (``S3Signer``) and sent through `URLSession`; answers are parsed
/// with `XMLParser`.
///
/// S3 has no folders, only keys. A folder is there when a key is inside it; an empty one is
/// an empty object whose key ends in "/" (a marker, as the AWS console makes). So a write
/// into a folder another device just deleted brings the folder back (the write wins, as an
/// edit beats a delete), and a folder's tag is the same whatever it holds (S3 keeps no folder
/// versions): a folder is deleted only when it is empty, checked by a listing.
///
/// Every write is conditional, with the preconditions S3 has had since 2024: a new object is
/// written with `If-None-Match: *`, a replacement with `If-Match` and the ETag the caller
/// saw, on `PutObject` (a file over ``Configuration/multipartThreshold`` streamed from its
/// source, signed with its hash or in signed chunks) and on `CompleteMultipartUpload` for a
/// file sent in parts (over 5 GiB; from the source, never whole in memory). A delete is
/// `DeleteObject` with `If-Match`, or, on a store that ignores it
/// (``Deletes/tombstones``), a conditional write of a tombstone object. A move is a copy
/// (`x-amz-copy-source-if-match`, `If-None-Match: *`) and a conditional delete: two steps,
/// which the engine's journal settles after a crash between them.
///
/// A listing is believed only whole: every page a whole document (``S3XML``), saying whether
/// it goes on (`IsTruncated`, never taken as "no" when missing), never giving a continuation
/// token twice nor many pages with nothing new, and every key under the prefix asked for and
/// made of names that can be names (``RemoteListing``): `a/../b`, `a//b`, NUL or a terminal's
/// escape in a key fail the listing. Every request has a ``RequestDeadline``, and a refused
/// key is named by where it came from (``S3Credentials/source``), never by its id.
///
/// For example:
///
/// ```swift
/// var configuration = S3Remote.Configuration(
///     bucket: "team-docs", prefix: "Notes", region: "eu-west-1",
///     credentials: try S3CredentialSources().credentials())
/// let remote = try S3Remote(configuration)
/// let tag = try remote.write(RemotePath("plan.txt"), from: UploadSource(bytes), condition: .absent)
/// ```
public final class S3Remote: Remote {
    /// How a request names the bucket.
    public enum Addressing: String, Sendable, Codable {
        /// `https://endpoint/bucket/key`: what most stores one runs expect.
        case path
        /// `https://bucket.endpoint/key`: AWS's own form.
        case virtualHost
    }

    /// How a file is deleted without deleting a newer write.
    public enum Deletes: String, Sendable, Codable {
        /// `DeleteObject` with `If-Match` (AWS since 2025, SeaweedFS, MinIO).
        case conditional
        /// A tombstone written with `If-Match` over the object: for stores whose deletes take no
        /// condition. The tombstone stays (a small object listings skip); a later write over it
        /// is conditional on it.
        case tombstones
    }

    /// Where the bucket is and how to talk to it.
    public struct Configuration: Sendable {
        /// The bucket.
        public var bucket: String
        /// The key prefix holding the container ("" for the whole bucket), without slashes
        /// around.
        public var prefix: String
        /// The store's endpoint; nil for AWS's (`https://s3.REGION.amazonaws.com`).
        public var endpoint: URL?
        /// The region requests are signed for.
        public var region: String
        /// Path or virtual-host addressing; nil for virtual-host on AWS, path elsewhere.
        public var addressing: Addressing?
        public var credentials: S3Credentials
        /// How deletes are kept conditional; the probe says which the store supports.
        public var deletes: Deletes = .conditional
        /// Files larger than this are sent as a multipart upload (16 MiB).
        public var multipartThreshold: Int64 = 16 << 20
        /// The size of each part of a multipart upload (8 MiB; S3's least is 5 MiB).
        public var partSize: Int = 8 << 20
        /// Whether a file past ``multipartThreshold`` whose hash is not known (what a vault
        /// sends) goes up in one `PutObject` in signed chunks (`aws-chunked`, as AWS, MinIO,
        /// Ceph and SeaweedFS take it); false sends it in parts, as a file over 5 GiB.
        public var streamsUnhashedUploads = true
        /// Seconds without a byte before a request fails as timed out.
        public var timeout: TimeInterval = 30
        /// How long a request may take in all, whatever its bytes' pace (see ``RequestDeadline``).
        public var deadline = RequestDeadline()
        /// The most connections to the store at once: as many as the most requests a sync
        /// keeps in flight (it starts with fewer and adapts), so that none waits for a
        /// connection (libcurl's own default is 6).
        public var connections: Int = 64
        /// Whether plain `http` is allowed to a host other than this computer.
        public var allowsInsecureHTTP = false
        /// The absolute path of the file of certificate authorities the server's certificate is
        /// checked against instead of the system's (`--ca-file`); nil for the system's.
        public var caFile: String?
        /// How old a multipart upload left unfinished is before it is aborted (a day: one
        /// begun by another device may still be going).
        public var staleUploadAge: TimeInterval = 86_400
        /// Seconds added to this computer's clock when signing (tests of a skewed clock).
        public var clockOffset: TimeInterval = 0
        /// How the remote was given (``Remote/address``), when it was made from a URL.
        public var address: RemoteAddress?

        public init(
            bucket: String, prefix: String = "", endpoint: URL? = nil, region: String = "us-east-1",
            credentials: S3Credentials
        ) {
            self.bucket = bucket
            self.prefix = prefix
            self.endpoint = endpoint
            self.region = region
            self.credentials = credentials
        }
    }

    /// How many times a request that is safe to repeat is sent again after a failure that may pass.
    static let retries = 3
    /// A folder's tag: S3 keeps no folder versions, so every folder has this one.
    static let folderTag = RemoteTag("\"folder\"")
    /// The bytes of a tombstone (``Deletes/tombstones``): recognised in listings by their size
    /// and ETag (their MD5), so that no request is needed to skip one.
    static let tombstoneBytes = Data("DocumentSync tombstone 1 a1f3c0d2-5b7e-4e69-9c1a-2d8f6b3e7a90\n".utf8)
    static let tombstoneTag = RemoteTag("\"\(md5Hex(tombstoneBytes))\"")

    public let displayName: String
    let configuration: Configuration
    /// Scheme, host and port of requests (the bucket's host for virtual-host addressing).
    let origin: String
    /// The `Host` header as signed.
    let host: String
    /// The path before each key: "/bucket" for path addressing, "" otherwise.
    let bucketPath: String
    /// The prefix's keys begin with: "" or "Notes/".
    let keyPrefix: String
    let signer: S3Signer
    let transport: HTTPTransport
    /// The store's own spelling of keys it gives in another normalisation than NFC, by the
    /// NFC path, so that requests name what the store holds.
    let spellings = Mutex<[RemotePath: String]>([:])
    /// Whether the stale multipart uploads under the prefix were looked for by this remote.
    let staleUploadsSwept = Mutex(false)

    /// The remote of the prefix in the bucket; nothing is sent until it is used.
    ///
    /// - Throws: ``RemoteError`` of kind `.other` when the endpoint is not http(s), or is plain
    ///   http to another computer without ``Configuration/allowsInsecureHTTP``, or the bucket
    ///   name cannot be one.
    public init(_ configuration: Configuration) throws {
        var configuration = configuration
        configuration.prefix = configuration.prefix.split(separator: "/").joined(separator: "/")
        let endpoint =
            configuration.endpoint ?? URL(string: "https://s3.\(configuration.region).amazonaws.com")!
        let shown = Self.displayName(configuration, endpoint: endpoint)
        func refuse(_ why: String) -> RemoteError {
            RemoteError(.other, operation: .list, path: .root, remote: shown, detail: why)
        }
        guard let components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let endpointHost = components.host, !endpointHost.isEmpty
        else {
            throw refuse("the endpoint is an http:// or https:// URL with a host")
        }
        guard components.user == nil, components.password == nil else {
            throw refuse(
                "the endpoint holds credentials; give them in AWS_ACCESS_KEY_ID or ~/.aws/credentials")
        }
        let bucket = configuration.bucket
        guard !bucket.isEmpty, bucket.utf8.count <= 255,
            bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) })
        else {
            throw refuse("“\(bucket)” is not a bucket name (letters, digits, “-”, “.” and “_”)")
        }
        if let problem = HTTPEndpoint.trustProblem(caFile: configuration.caFile, scheme: scheme) {
            throw refuse(problem)
        }
        if scheme == "http", !configuration.allowsInsecureHTTP, !HTTPEndpoint.isLoopback(endpointHost) {
            throw refuse(
                "plain http to another computer sends every document unencrypted; use https:// (or allow it explicitly)"
            )
        }
        let addressing =
            configuration.addressing ?? (endpointHost.hasSuffix("amazonaws.com") ? .virtualHost : .path)
        let requestHost = addressing == .virtualHost ? "\(bucket).\(endpointHost)" : endpointHost
        let port = components.port.map { ":\($0)" } ?? ""
        origin = "\(scheme)://\(requestHost)\(port)"
        host = requestHost + port
        var basePath = components.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        bucketPath =
            basePath + (addressing == .path ? "/" + S3Signer.encode(bucket, keepingSlashes: false) : "")
        keyPrefix = configuration.prefix.isEmpty ? "" : configuration.prefix + "/"
        self.configuration = configuration
        displayName = shown
        signer = S3Signer(credentials: configuration.credentials, region: configuration.region)
        transport = HTTPTransport(
            timeout: configuration.timeout, connections: configuration.connections,
            deadline: configuration.deadline, caFile: configuration.caFile)
    }

    deinit { transport.invalidate() }

    /// S3 keeps no identity across a copy: a move is a copy and a delete.
    public var hasFileIDs: Bool { false }

    public var mostRequestsAtOnce: Int { min(configuration.connections, HTTPTransport.mostRequestsInFlight) }

    public var address: RemoteAddress? { configuration.address }

    public var movesAreAtomic: Bool { false }

    /// A source past the multipart threshold is sent whole, in a `PutObject` signed with its
    /// hash when it is known, in signed chunks otherwise (`write(_:from:condition:placeListed:)`):
    /// sync hashes a file first, so that a store that checks the signed hash (AWS) refuses a
    /// file that changed after it was hashed.
    public func wantsHashBeforeUpload(ofSize size: Int64) -> Bool {
        size > configuration.multipartThreshold && size <= Self.mostBytesInOnePut
    }

    /// `s3://bucket/prefix`, and the endpoint when it is not AWS's.
    static func displayName(_ configuration: Configuration, endpoint: URL) -> String {
        var shown = "s3://\(configuration.bucket)"
        if !configuration.prefix.isEmpty { shown += "/\(configuration.prefix)" }
        if configuration.endpoint != nil {
            var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
            components?.user = nil
            components?.password = nil
            components?.query = nil
            shown += " at \(components?.string ?? "its endpoint")"
        }
        return shown
    }

    // MARK: Keys

    /// The key of the file at `path`, in the store's spelling.
    func key(_ path: RemotePath) -> String {
        if let spelled = spellings.withLock({ $0[path] }) { return keyPrefix + spelled }
        return keyPrefix + path.string
    }

    /// The prefix of every key in the folder at `path`: "" or ending in "/".
    func folderKey(_ path: RemotePath) -> String {
        path.isRoot ? keyPrefix : key(path) + "/"
    }

    /// The path a key under the prefix names, in NFC; nil for a key outside it, or one whose
    /// names cannot be an item's (``names(ofKey:_:_:)``). Records the store's spelling of names
    /// that are not NFC.
    func path(ofKey key: String) -> RemotePath? {
        guard let names = try? names(ofKey: key, .list, .root) else { return nil }
        return path(ofNames: names)
    }

    /// The names a key gives below the prefix, as the store spells them; nil for a key outside
    /// the prefix.
    ///
    /// Each is checked when the listing is read: a key is any bytes, and `a/../../x`, `a//b`
    /// or one holding NUL or a control character must never reach the engine (see
    /// ``Remote/checkListedName(_:_:_:)``).
    ///
    /// - Throws: ``RemoteError`` for `operation` on `path` when a name cannot be an item's.
    func names(ofKey key: String, _ operation: RemoteError.Operation, _ path: RemotePath) throws
        -> [String]?
    {
        guard key.hasPrefix(keyPrefix) else { return nil }
        let names = key.dropFirst(keyPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        for name in names { try checkListedName(name, operation, path) }
        return names
    }

    /// The path of `names`, as ``names(ofKey:_:_:)`` gives them, in NFC; records the store's
    /// spelling when it is not.
    func path(ofNames names: [String]) -> RemotePath {
        let path = RemotePath(components: names)
        let spelled = names.joined(separator: "/")
        // Bytes, not `!=`: Swift's string equality holds across canonically equal spellings.
        if !path.string.utf8.elementsEqual(spelled.utf8) { spellings.withLock { $0[path] = spelled } }
        return path
    }

    // MARK: Requests

    /// A signed request of `method` for `key` (nil: the bucket itself).
    func request(
        _ method: String, key: String?, query: [(String, String)] = [], headers: [String: String] = [:],
        payloadHash: String = S3Signer.emptyPayloadHash
    ) -> URLRequest {
        let path = bucketPath + "/" + (key.map { S3Signer.encode($0, keepingSlashes: true) } ?? "")
        let queryString = S3Signer.queryString(query)
        var request = URLRequest(
            url: URL(string: origin + path + (queryString.isEmpty ? "" : "?" + queryString))!)
        request.httpMethod = method
        // Signed: what S3 requires (host, x-amz-*) and what says what the body is. Conditions
        // go unsigned, which SigV4 allows (TLS keeps them intact on the way).
        let signedHeaders = headers.filter { name, _ in
            let name = name.lowercased()
            return name.hasPrefix("x-amz-") || ["content-type", "content-md5", "range"].contains(name)
        }
        let signed = signer.headers(
            method: method, host: host, path: path, query: query, headers: signedHeaders,
            payloadHash: payloadHash, date: Date().addingTimeInterval(configuration.clockOffset))
        for (name, value) in headers.merging(signed, uniquingKeysWith: { $1 }) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    /// Sends a request and returns the answer, whatever its status; a failure to get one is a
    /// ``RemoteError`` for `operation` on `path`. A `repeatable` request (it changes nothing,
    /// or nothing more when repeated) is sent again after a failure that may pass.
    func send(
        _ request: URLRequest, body: HTTPBody = .none,
        into destination: HTTPTransport.Destination = .memory(limit: 8 << 20),
        _ operation: RemoteError.Operation, _ path: RemotePath, destination target: RemotePath? = nil,
        repeatable: Bool = false
    ) throws -> HTTPAnswer {
        do {
            return try transport.send(
                request, body: body, into: destination, retries: repeatable ? Self.retries : 0)
        } catch let failure as HTTPTransportFailure {
            throw error(failure, operation, path, destination: target, answerer: "store")
        }
    }

    /// The answer's XML, or a ``RemoteError`` saying it is not XML.
    func xml(_ answer: HTTPAnswer, _ operation: RemoteError.Operation, _ path: RemotePath) throws -> S3XML {
        do { return try S3XML(parsing: answer.body) } catch {
            throw failure(
                .badAnswer, operation, path, detail: "the store's answer to \(answer.method) is \(error)")
        }
    }

    // MARK: Errors

    /// The error an S3 error answer means: its `Code` first, then its status.
    func error(
        status answer: HTTPAnswer, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil
    ) -> RemoteError {
        let parsed = try? S3XML(parsing: answer.body)
        let code = parsed?.root.name == "Error" ? parsed?.root.value("Code") : nil
        let message = parsed?.root.value("Message")
        let request = "\(answer.method) answered HTTP \(answer.status)\(code.map { " \($0)" } ?? "")"
        var detail = request
        let kind: RemoteError.Kind
        switch (code, answer.status) {
        case ("NoSuchBucket", _):
            kind = .unavailable
            detail = "the bucket “\(configuration.bucket)” does not exist (\(request))"
        case ("RequestTimeTooSkewed", _), ("RequestExpired", _):
            kind = .other
            detail =
                "this computer's clock is \(skew(answer)) the store's, more than S3 allows (15 minutes); set the clock (NTP, timedatectl) and try again (\(request))"
        // Where the key came from, never the key: the user can act on the one.
        case ("InvalidAccessKeyId", _):
            kind = .permissionDenied
            detail =
                "the store does not know the access key of \(configuration.credentials.source) (\(request))"
        case ("SignatureDoesNotMatch", _):
            kind = .permissionDenied
            detail =
                "the secret key does not match the access key of \(configuration.credentials.source) (\(request))"
        case ("AccessDenied", _), (_, 401), (_, 403):
            kind = .permissionDenied
            detail =
                "the store refuses the access key of \(configuration.credentials.source) here (\(request))"
        case ("NoSuchKey", _), (_, 404): kind = .notFound
        case ("PreconditionFailed", _), (_, 412): kind = .preconditionFailed
        // A conditional write that raced another (AWS answers 409 ConditionalRequestConflict).
        case ("ConditionalRequestConflict", _), ("OperationAborted", _), (_, 409): kind = .preconditionFailed
        case ("EntityTooLarge", _), ("QuotaExceeded", _): kind = .outOfSpace
        case ("SlowDown", _): kind = .throttled(status: answer.status)
        case (_, 429), (_, 500...599): kind = .status(answer.status)
        default:
            kind = .other
            if let message { detail += ": \(message)" }
        }
        return failure(kind, operation, path, destination: destination, detail: detail)
    }

    /// How far this computer's clock is from the store's, in words, from the answer's `Date`.
    private func skew(_ answer: HTTPAnswer) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let text = answer.header("Date"), let theirs = formatter.date(from: text) else {
            return "off"
        }
        let ours = Date().addingTimeInterval(configuration.clockOffset)
        let minutes = Int((ours.timeIntervalSince(theirs) / 60).rounded())
        return minutes >= 0 ? "\(minutes) minutes ahead of" : "\(-minutes) minutes behind"
    }

    /// Refuses names the store cannot hold as files of ours, and the names of sync's own
    /// temporary files.
    func validate(_ path: RemotePath, _ operation: RemoteError.Operation, allowingRoot: Bool = false) throws {
        guard path.holdsStorableNames(allowingRoot: allowingRoot), key(path).utf8.count <= 1024 else {
            throw failure(.invalidName, operation, path)
        }
    }

    /// An S3 ETag as a tag: as the store gives it, quoted.
    static func tag(_ etag: String) -> RemoteTag {
        let trimmed = S3XML.trimmed(etag)
        return RemoteTag(trimmed.hasPrefix("\"") ? trimmed : "\"\(trimmed)\"")
    }

    static func md5Hex(_ data: Data) -> String { LibCrypto.hex(LibCrypto.digest(of: data, by: EVP_md5())) }
}
