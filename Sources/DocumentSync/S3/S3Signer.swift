import CCrypto
import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An access key, its secret and, for temporary credentials, the session token: what S3
/// requests are signed with, and where they came from.
///
/// The secret and the token never appear in a description, a message or a file of ours, and
/// neither does the access key id: a message about a refused key names where the key came
/// from (``source``: the environment, or a profile of the credentials file), which is what the
/// user can act on.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    /// The access key id (`AKIA…`): it names the key, and is sent with every request.
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials (`AWS_SESSION_TOKEN`), sent as
    /// `x-amz-security-token`.
    public var sessionToken: String?
    /// Where the credentials came from, in words: "AWS_ACCESS_KEY_ID in the environment", "the
    /// [work] profile in /home/ana/.aws/credentials"; "the credentials given" by default.
    public var source: String

    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil,
        source: String = "the credentials given"
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
    }

    /// Where the access key came from; nothing of the key itself.
    public var description: String { "the access key of \(source)" }
}

/// AWS Signature Version 4 for S3 requests: in the `Authorization` header of the requests sync
/// sends, and in the query of a presigned URL (a share link) that anyone may use until it
/// expires.
///
/// The canonical request is built from what the caller gives (the path already encoded the
/// S3 way, the query items, the headers) rather than read back from a `URL`, so that no
/// re-encoding by Foundation can make the signed request differ from the one sent.
/// HMAC-SHA256 and SHA-256 are libcrypto's.
///
/// For example:
///
/// ```swift
/// let signer = S3Signer(credentials: credentials, region: "eu-west-1")
/// let headers = signer.headers(
///     method: "GET", host: "bucket.s3.eu-west-1.amazonaws.com", path: "/notes/plan.txt",
///     query: [], headers: [:], payloadHash: S3Signer.emptyPayloadHash, date: Date())
/// ```
struct S3Signer: Sendable {
    var credentials: S3Credentials
    var region: String
    var service = "s3"

    /// SHA-256 of no bytes: the payload hash of a request without a body.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to add to the request: `Authorization`, `x-amz-date`,
    /// `x-amz-content-sha256` (unless `signsPayloadHeader` is false, for services other than
    /// S3) and `x-amz-security-token` for temporary credentials.
    ///
    /// - Parameters:
    ///   - path: The request's path, each segment encoded as ``encode(_:keepingSlashes:)`` does.
    ///   - query: The query's items, not encoded; sent in the order ``queryString(_:)`` gives.
    ///   - headers: The request's other headers that are signed (all of those given).
    func headers(
        method: String, host: String, path: String, query: [(String, String)], headers: [String: String],
        payloadHash: String, date: Date, signsPayloadHeader: Bool = true
    ) -> [String: String] {
        let stamp = Self.timestamp(date)
        var added = ["x-amz-date": stamp]
        if signsPayloadHeader { added["x-amz-content-sha256"] = payloadHash }
        if let token = credentials.sessionToken { added["x-amz-security-token"] = token }
        var signed: [String: String] = ["host": host]
        for (name, value) in headers.merging(added, uniquingKeysWith: { $1 }) {
            signed[name.lowercased()] = Self.trimmed(value)
        }
        let signature = self.signature(
            method: method, path: path, query: query, headers: signed, payloadHash: payloadHash, stamp: stamp)
        added["Authorization"] =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(signature.scope), "
            + "SignedHeaders=\(signature.signedHeaders), Signature=\(signature.value)"
        return added
    }

    /// The query of a presigned `GET` of `path`: anyone holding the URL may read the object
    /// until `date` plus `lifetime`, without credentials of their own. The URL carries the
    /// access key's id and the signature, never the secret (SigV4's query form, as AWS's
    /// presigned URLs are made).
    ///
    /// - Parameters:
    ///   - path: The object's path, encoded as ``encode(_:keepingSlashes:)`` does.
    ///   - lifetime: Whole seconds, 1 to 604,800 (seven days: SigV4's longest).
    /// - Returns: The query, encoded and in its signed order, `X-Amz-Signature` last.
    func presignedQuery(host: String, path: String, lifetime: Int, date: Date) -> String {
        let stamp = Self.timestamp(date)
        let day = String(stamp.prefix(8))
        var query = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", "\(credentials.accessKeyID)/\(day)/\(region)/\(service)/aws4_request"),
            ("X-Amz-Date", stamp), ("X-Amz-Expires", String(lifetime)), ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        // The bytes are not known to whoever signs a link: the payload is unsigned, as in AWS's.
        let signature = self.signature(
            method: "GET", path: path, query: query, headers: ["host": host], payloadHash: "UNSIGNED-PAYLOAD",
            stamp: stamp)
        return Self.queryString(query) + "&X-Amz-Signature=" + signature.value
    }

    /// SigV4's signature of a request: the canonical request made of the parts given
    /// (`headers` by lowercase name, their values trimmed), signed with the key derived from
    /// the secret for the day of `stamp`. What the header form and the query form share.
    private func signature(
        method: String, path: String, query: [(String, String)], headers: [String: String],
        payloadHash: String,
        stamp: String
    ) -> (value: String, scope: String, signedHeaders: String) {
        let names = headers.keys.sorted()
        let canonical = [
            method,
            path.isEmpty ? "/" : path,
            Self.queryString(query),
            names.map { "\($0):\(headers[$0]!)\n" }.joined(),
            names.joined(separator: ";"),
            payloadHash,
        ].joined(separator: "\n")
        let scope = self.scope(stamp)
        let toSign = ["AWS4-HMAC-SHA256", stamp, scope, Self.sha256Hex(Data(canonical.utf8))].joined(
            separator: "\n")
        return (
            Self.hex(Self.hmac(key: signingKey(stamp), Data(toSign.utf8))), scope,
            names.joined(separator: ";")
        )
    }

    /// The credential scope of a request signed at `stamp`: day, region, service.
    private func scope(_ stamp: String) -> String {
        "\(stamp.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// The key SigV4 derives from the secret for the day of `stamp`, the region and the service.
    private func signingKey(_ stamp: String) -> Data {
        var key = Self.hmac(key: Data("AWS4\(credentials.secretAccessKey)".utf8), Data(stamp.prefix(8).utf8))
        for part in [region, service, "aws4_request"] { key = Self.hmac(key: key, Data(part.utf8)) }
        return key
    }

    // MARK: Streamed uploads

    /// The payload hash of a request whose body is sent in signed chunks (`aws-chunked`).
    static let streamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"

    /// Signs the chunks of a body sent as `aws-chunked` (SigV4's chunked upload, for a body
    /// whose hash is not known before it is sent): each chunk's signature covers its bytes and
    /// the signature before it, starting from the request's own (the seed), so that the store
    /// refuses a body altered, reordered or cut short on the way, as it refuses a signed
    /// payload that does not match.
    struct ChunkSigner {
        private let key: Data
        private let prefix: String
        private var previous: String

        /// The signer of the body of the request signed at `stamp` with signature `seed`.
        init(_ signer: S3Signer, stamp: String, seed: String) {
            key = signer.signingKey(stamp)
            prefix = "AWS4-HMAC-SHA256-PAYLOAD\n\(stamp)\n\(signer.scope(stamp))\n"
            previous = seed
        }

        /// The signature of the next chunk, `bytes` (none for the last, empty one).
        mutating func sign(_ bytes: Data) -> String {
            let toSign =
                prefix + previous + "\n" + S3Signer.emptyPayloadHash + "\n" + S3Signer.sha256Hex(bytes)
            previous = S3Signer.hex(S3Signer.hmac(key: key, Data(toSign.utf8)))
            return previous
        }
    }

    /// The `aws-chunked` body of `source` sent in chunks of `chunkSize` bytes (the last one
    /// shorter), each signed by `signer`: `hex-size;chunk-signature=SIG\r\nBYTES\r\n`, then an
    /// empty chunk signed the same way. Its size (``chunkedSize(of:chunkSize:)``) is known
    /// before a byte is read; a source that gives another size than it said makes a body of
    /// another size, which the upload refuses (``UploadSource``).
    static func chunkedBody(of source: UploadSource, chunkSize: Int, signer: ChunkSigner) -> UploadSource {
        var signer = signer
        // Gathered a chunk at a time as a multipart upload gathers a part.
        let reader = S3Remote.PartReader(source)
        var finished = false
        return UploadSource(size: chunkedSize(of: source.size, chunkSize: chunkSize)) {
            guard !finished else { return nil }
            let bytes = try reader.next(chunkSize)
            finished = bytes.isEmpty
            let head = String(bytes.count, radix: 16) + ";chunk-signature=" + signer.sign(bytes) + "\r\n"
            var framed = Data(head.utf8)
            framed.reserveCapacity(head.utf8.count + bytes.count + 2)
            framed.append(bytes)
            framed.append(contentsOf: [0x0D, 0x0A])
            return framed
        }
    }

    /// The size of the `aws-chunked` body of `size` bytes in chunks of `chunkSize`.
    static func chunkedSize(of size: Int64, chunkSize: Int) -> Int64 {
        // A chunk's frame: its size in hex, ";chunk-signature=", 64 hex digits, two CRLFs.
        func framed(_ count: Int64) -> Int64 {
            Int64(String(count, radix: 16).utf8.count) + 17 + 64 + 4 + count
        }
        let whole = size / Int64(chunkSize)
        let last = size % Int64(chunkSize)
        return whole * framed(Int64(chunkSize)) + (last > 0 ? framed(last) : 0) + framed(0)
    }

    /// The query as SigV4 and the URL both spell it: names and values encoded, sorted by name
    /// then value, `name=value` joined by `&` (a name without value keeps its `=`).
    static func queryString(_ query: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { item in
            (encode(item.0, keepingSlashes: false), encode(item.1, keepingSlashes: false))
        }
        let sorted = encoded.sorted { left, right in
            left.name == right.name ? left.value < right.value : left.name < right.name
        }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// `text` encoded as S3 wants it: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
    /// as `%XX`, and "/" kept when `keepingSlashes` (a key in a path).
    static func encode(_ text: String, keepingSlashes: Bool) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                encoded.append("/")
            default:
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(Unicode.Scalar(Self.upperDigits[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(Self.upperDigits[Int(byte & 0x0F)]))
            }
        }
        return encoded
    }

    /// `date` as SigV4's `YYYYMMDD'T'HHMMSS'Z'`, in UTC.
    static func timestamp(_ date: Date) -> String {
        // gmtime_r, not a Calendar: every request is signed, and a Calendar's date components
        // cost more than the rest of the signature.
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return digits(parts.tm_year + 1900, 4) + digits(parts.tm_mon + 1, 2) + digits(parts.tm_mday, 2) + "T"
            + digits(parts.tm_hour, 2) + digits(parts.tm_min, 2) + digits(parts.tm_sec, 2) + "Z"
    }

    /// A header value as SigV4 signs it: no spaces around, runs of spaces as one.
    private static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    static func sha256Hex(_ data: Data) -> String { ContentHash(of: data).hex }

    static func hmac(key: Data, _ message: Data) -> Data {
        key.withUnsafeBytes { Digests.hmacSHA256(message, key: $0) }
    }

    static func hex(_ data: Data) -> String {
        var text = ""
        text.reserveCapacity(data.count * 2)
        for byte in data {
            text.unicodeScalars.append(Unicode.Scalar(lowerDigits[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(lowerDigits[Int(byte & 0x0F)]))
        }
        return text
    }

    private static let lowerDigits = Array("0123456789abcdef".utf8)
    private static let upperDigits = Array("0123456789ABCDEF".utf8)
}
