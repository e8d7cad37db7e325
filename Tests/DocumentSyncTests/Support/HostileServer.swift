import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback HTTP/1.1 server that answers as a hostile or broken WebDAV or S3 server would,
/// from a script the test gives: hrefs and keys that decode to names holding "/", "..", NUL or
/// control characters, names of sync's own files, bodies whose elements never close, answers
/// that come a byte every few seconds, listings that repeat their continuation token, name an
/// item twice or leave items out.
///
/// Every request is read whole (heads up to their blank line, bodies by `Content-Length` or
/// chunks) and handed to the script, whose ``Answer`` is sent as it says: whole, a few bytes at
/// a time with pauses, or cut off before the length its head announced. Each connection gets a
/// thread and is kept alive between requests. ``stop()`` (or deinit) shuts every connection
/// down, which also ends an answer being trickled.
///
/// For example:
///
/// ```swift
/// let server = try HostileServer { request in
///     .init(status: 207, body: HostileServer.multistatus(["/dav/C/", "/dav/C/x%2F..%2Fevil.txt"]))
/// }
/// let remote = try WebDAVRemote(.init(url: server.url("/dav/C/")))
/// ```
final class HostileServer: Sendable {
    /// A request as it arrived.
    struct Request: Sendable {
        var method: String
        /// The path as sent, percent-encoded, without the query.
        var path: String
        /// The query's items, percent-decoded (a name without "=" has the value "").
        var query: [String: String]
        /// The head's fields by lowercased name.
        var headers: [String: String]
        var body: Data
    }

    /// What the server answers a request.
    struct Answer: Sendable {
        /// How the body goes out.
        enum Delivery: Sendable, Equatable {
            /// At once.
            case whole
            /// The head at once, then `bytes` bytes of the body every `seconds`.
            case trickle(bytes: Int, seconds: Double)
            /// The head (with the whole body's length), then the first `bytes` bytes of the body,
            /// then the connection closes: an answer cut short on the wire.
            case cut(bytes: Int)
        }

        var status: Int
        var headers: [String: String] = [:]
        var body = Data()
        var delivery = Delivery.whole

        init(status: Int, headers: [String: String] = [:], body: Data = Data(), delivery: Delivery = .whole) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delivery = delivery
        }

        /// An XML answer of `status`.
        static func xml(_ status: Int, _ text: String, delivery: Delivery = .whole) -> Answer {
            Answer(
                status: status, headers: ["Content-Type": "application/xml; charset=utf-8"],
                body: Data(text.utf8),
                delivery: delivery)
        }

        /// A file's bytes, with an ETag.
        static func file(_ bytes: Data, etag: String, delivery: Delivery = .whole) -> Answer {
            Answer(status: 200, headers: ["ETag": etag], body: bytes, delivery: delivery)
        }

        static let notFound = Answer(status: 404, body: Data("not here\n".utf8))
    }

    /// The port it listens on, on 127.0.0.1.
    let port: Int
    private let core: Core

    /// Starts listening on a free port of 127.0.0.1; `answer` is called for each request, on
    /// the connection's thread.
    init(_ answer: @escaping @Sendable (Request) -> Answer) throws {
        core = try Core(answer: answer)
        port = core.port
        core.start()
    }

    deinit { core.stop() }

    /// The server's URL of `path` (percent-encoded as given).
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Every request answered or being answered, in the order their heads arrived.
    var requests: [Request] { core.state.withLock { $0.requests } }

    /// Answers the requests `answer` gives an answer for itself, before the script.
    func intercept(_ answer: @escaping @Sendable (Request) -> Answer?) {
        core.state.withLock { $0.intercept = answer }
    }

    /// Shuts every connection down and waits (a few seconds at most) for their threads.
    func stop() { core.stop() }

    // MARK: Bodies a test builds its answers from

    /// One `response` of a multistatus: a folder when `etag` is nil and the href ends in "/".
    struct Item: Sendable {
        var href: String
        var etag: String?
        var size: Int = 0

        init(_ href: String, etag: String? = nil, size: Int = 0) {
            self.href = href
            self.etag = etag
            self.size = size
        }
    }

    /// A PROPFIND answer describing `items` as Apache does (a 200 propstat each).
    static func multistatus(_ items: [Item]) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus xmlns:D=\"DAV:\">\n"
        for item in items {
            let folder = item.etag == nil && item.href.hasSuffix("/")
            text += "<D:response><D:href>\(item.href)</D:href><D:propstat><D:prop>"
            text += folder ? "<D:resourcetype><D:collection/></D:resourcetype>" : "<D:resourcetype/>"
            if let etag = item.etag {
                text +=
                    "<D:getetag>\"\(etag)\"</D:getetag><D:getcontentlength>\(item.size)</D:getcontentlength>"
            }
            text += "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>\n"
        }
        return text + "</D:multistatus>\n"
    }

    /// One object of a `ListObjectsV2` page: its key as the page spells it (URL-encoded when
    /// the request asked for it), its ETag and size.
    struct Object: Sendable {
        var key: String
        var etag: String
        var size: Int

        init(_ key: String, etag: String, size: Int) {
            self.key = key
            self.etag = etag
            self.size = size
        }
    }

    /// A `ListObjectsV2` page.
    static func listBucketResult(
        _ objects: [Object], prefixes: [String] = [], truncated: Bool = false, token: String? = nil,
        encoded: Bool = true
    ) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text += "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>"
        if encoded { text += "<EncodingType>url</EncodingType>" }
        text += "<KeyCount>\(objects.count + prefixes.count)</KeyCount><MaxKeys>1000</MaxKeys>"
        text += "<IsTruncated>\(truncated)</IsTruncated>"
        if let token { text += "<NextContinuationToken>\(token)</NextContinuationToken>" }
        for object in objects {
            text += "<Contents><Key>\(object.key)</Key><ETag>&quot;\(object.etag)&quot;</ETag>"
            text += "<Size>\(object.size)</Size><StorageClass>STANDARD</StorageClass></Contents>"
        }
        for prefix in prefixes { text += "<CommonPrefixes><Prefix>\(prefix)</Prefix></CommonPrefixes>" }
        return text + "</ListBucketResult>\n"
    }
}

// MARK: - The listener and its connections

extension HostileServer {
    fileprivate final class Core: Sendable {
        struct State {
            var requests: [Request] = []
            var intercept: @Sendable (Request) -> Answer? = { _ in nil }
        }

        let state = Mutex(State())
        let port: Int
        private let listener: FaultProxy.Listener
        private let answer: @Sendable (Request) -> Answer

        init(answer: @escaping @Sendable (Request) -> Answer) throws {
            self.answer = answer
            listener = try FaultProxy.Listener(name: "HostileServer")
            port = listener.port
        }

        func start() { listener.start { [self] in serve($0) } }

        func stop() { listener.stop() }

        /// Serves the connection's requests until the client closes it or an answer ends it.
        private func serve(_ client: FaultProxy.Socket) {
            defer { client.close() }
            do {
                while let bytes = try client.readHead() {
                    let head = try FaultProxy.Head(bytes)
                    let parts = head.startLine.split(separator: " ")
                    guard parts.count == 3 else { return }
                    let framing = try head.requestFraming()
                    if framing != .none, head.has("expect", token: "100-continue") {
                        try client.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    }
                    var body = Data()
                    try client.relayBody(framing) { body.append(contentsOf: $0) }
                    if framing == .chunked { body = Self.unchunked(body) }
                    let target = String(parts[1])
                    let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
                    var query: [String: String] = [:]
                    if pathEnd < target.endIndex {
                        for item in target[target.index(after: pathEnd)...].split(separator: "&") {
                            let pair = item.split(
                                separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                            let name = String(pair[0]).removingPercentEncoding ?? String(pair[0])
                            query[name] =
                                pair.count > 1 ? (String(pair[1]).removingPercentEncoding ?? "") : ""
                        }
                    }
                    let request = Request(
                        method: String(parts[0]), path: String(target[..<pathEnd]), query: query,
                        headers: head.fieldsByName, body: body)
                    let intercept = state.withLock {
                        $0.requests.append(request)
                        return $0.intercept
                    }
                    let answer = intercept(request) ?? answer(request)
                    guard try send(answer, to: client, method: request.method) else { return }
                }
            } catch {
                // The client went away, or the server stopped: the connection ends.
            }
        }

        /// Sends `answer`; whether the connection stays open for another request.
        private func send(_ answer: Answer, to client: FaultProxy.Socket, method: String) throws -> Bool {
            var head = "HTTP/1.1 \(answer.status) Hostile\r\n"
            for (name, value) in answer.headers.sorted(by: { $0.key < $1.key }) {
                head += "\(name): \(value)\r\n"
            }
            head += "Content-Length: \(answer.body.count)\r\n\r\n"
            try client.write(Array(head.utf8))
            let body = method == "HEAD" ? [] : [UInt8](answer.body)
            switch answer.delivery {
            case .whole:
                try client.write(body)
                return true
            case .cut(let count):
                try client.write(Array(body.prefix(count)))
                return false
            case .trickle(let count, let seconds):
                var offset = 0
                while offset < body.count {
                    let end = min(offset + max(count, 1), body.count)
                    try client.write(Array(body[offset..<end]))
                    offset = end
                    if offset < body.count, !client.waitWhileOpen(seconds: seconds) { return false }
                }
                return true
            }
        }

        /// A chunked body as ``FaultProxy/Socket/relayBody(_:to:)`` gives it, without its framing.
        private static func unchunked(_ framed: Data) -> Data {
            var body = Data()
            var rest = framed[...]
            while let lineEnd = rest.firstRange(of: Data([13, 10])) {
                let line = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
                let size = Int(line.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
                rest = rest[lineEnd.upperBound...]
                if size == 0 { break }
                body.append(rest.prefix(size))
                rest = rest.dropFirst(size + 2)
            }
            return body
        }
    }
}
