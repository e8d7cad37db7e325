import Foundation
import Synchronization

@testable import DocumentKit
@testable import DocumentSync

/// A WebDAV collection (`/dav/C/`) on a ``HostileServer``: honest answers from a tree of
/// files the test keeps, and a hook that rewrites each listing (or any answer) the way a
/// hostile server would.
///
/// It answers `PROPFIND` of `Depth: 1` and `0` as Apache does (a 200 propstat an item,
/// strong ETags from the bytes), `GET` with the bytes, and everything else with 404.
final class HostileDAV: Sendable {
    /// The collection's path on the server.
    static let base = "/dav/C/"

    private struct State {
        var files: [String: Data] = [:]
        var listing: @Sendable (_ folder: String, _ items: [HostileServer.Item]) -> HostileServer.Answer = {
            _, items in .xml(207, HostileServer.multistatus(items))
        }
        var other: @Sendable (HostileServer.Request) -> HostileServer.Answer? = { _ in nil }
    }

    private final class Box: Sendable {
        let state = Mutex(State())
    }

    private let box: Box
    let server: HostileServer

    init() throws {
        let box = Box()
        self.box = box
        server = try HostileServer { request in Self.answer(request, box.state) }
    }

    /// The collection's URL.
    var url: URL { server.url(Self.base) }

    /// A remote of the collection, with `deadline` and an idle timeout of 5 s.
    func remote(deadline: RequestDeadline = RequestDeadline()) throws -> WebDAVRemote {
        var configuration = WebDAVRemote.Configuration(url: url, writeProtocol: .conditional)
        configuration.timeout = 5
        configuration.deadline = deadline
        configuration.hasFileIDs = false
        return try WebDAVRemote(configuration)
    }

    /// Puts a file at `path` (relative, "/"-separated).
    func put(_ path: String, _ text: String) { box.state.withLock { $0.files[path] = Data(text.utf8) } }

    /// Rewrites the answer to each `PROPFIND` of `Depth: 1` of the folder (relative, "" for the
    /// collection) whose honest items (itself first) are given.
    func listing(
        _ answer:
            @escaping @Sendable (_ folder: String, _ items: [HostileServer.Item]) -> HostileServer.Answer
    ) {
        box.state.withLock { $0.listing = answer }
    }

    /// Answers requests `answer` gives an answer for, before anything else.
    func intercept(_ answer: @escaping @Sendable (HostileServer.Request) -> HostileServer.Answer?) {
        box.state.withLock { $0.other = answer }
    }

    /// The ETag of `bytes`: strong, from their hash.
    static func etag(_ bytes: Data) -> String { String(ContentHash(of: bytes).hex.prefix(16)) }

    private static func answer(_ request: HostileServer.Request, _ state: borrowing Mutex<State>)
        -> HostileServer.Answer
    {
        let (files, listing, other) = state.withLock { ($0.files, $0.listing, $0.other) }
        if let answer = other(request) { return answer }
        guard request.path.hasPrefix(base) else { return .notFound }
        let relative = (String(request.path.dropFirst(base.count)).removingPercentEncoding ?? "")
        let trimmed = relative.hasSuffix("/") ? String(relative.dropLast()) : relative
        switch request.method {
        case "GET":
            guard let bytes = files[trimmed] else { return .notFound }
            return .file(bytes, etag: "\"\(etag(bytes))\"")
        case "PROPFIND":
            if let bytes = files[trimmed] {
                return .xml(207, HostileServer.multistatus([item(trimmed, bytes)]))
            }
            let folderPrefix = trimmed.isEmpty ? "" : trimmed + "/"
            let inside = files.keys.filter { $0.hasPrefix(folderPrefix) }
            guard trimmed.isEmpty || !inside.isEmpty else { return .notFound }
            var items = [HostileServer.Item(base + folderPrefix)]
            if request.headers["depth"] != "0" {
                var folders: Set<String> = []
                for path in inside.sorted() {
                    let rest = path.dropFirst(folderPrefix.count)
                    if let slash = rest.firstIndex(of: "/") {
                        folders.insert(folderPrefix + rest[..<slash])
                    } else {
                        items.append(item(path, files[path]!))
                    }
                }
                items += folders.sorted().map { HostileServer.Item(base + $0 + "/") }
                return listing(trimmed, items)
            }
            return .xml(207, HostileServer.multistatus(items))
        default:
            return .notFound
        }
    }

    /// The item of the file at `path`.
    static func item(_ path: String, _ bytes: Data) -> HostileServer.Item {
        HostileServer.Item(base + path, etag: etag(bytes), size: bytes.count)
    }
}

/// A bucket (`b`, path addressing) on a ``HostileServer``: honest `ListObjectsV2` pages of the
/// objects the test keeps, `GetObject` and `HeadObject` with MD5 ETags, no multipart uploads;
/// and a hook that rewrites each listing page the way a hostile store would.
final class HostileS3: Sendable {
    /// A listing request: its prefix, whether it asked for a delimiter, its continuation token.
    struct ListRequest: Sendable {
        var prefix: String
        var delimiter: Bool
        var token: String?
    }

    private struct State {
        var objects: [String: Data] = [:]
        var listing:
            @Sendable (_ request: ListRequest, _ objects: [HostileServer.Object], _ prefixes: [String]) ->
                HostileServer.Answer = { _, objects, prefixes in
                    .xml(200, HostileServer.listBucketResult(objects, prefixes: prefixes))
                }
        var other: @Sendable (HostileServer.Request) -> HostileServer.Answer? = { _ in nil }
    }

    private final class Box: Sendable {
        let state = Mutex(State())
    }

    private let box: Box
    let server: HostileServer

    init() throws {
        let box = Box()
        self.box = box
        server = try HostileServer { request in Self.answer(request, box.state) }
    }

    /// A remote of the bucket (under `prefix`), with `deadline` and an idle timeout of 5 s.
    func remote(prefix: String = "", deadline: RequestDeadline = RequestDeadline(), source: String? = nil)
        throws -> S3Remote
    {
        var credentials = S3Credentials(accessKeyID: "AKIAHOSTILETEST", secretAccessKey: "hostile-secret")
        if let source { credentials.source = source }
        var configuration = S3Remote.Configuration(
            bucket: "b", prefix: prefix, endpoint: server.url("/"), credentials: credentials)
        configuration.timeout = 5
        configuration.deadline = deadline
        return try S3Remote(configuration)
    }

    func put(_ key: String, _ text: String) { box.state.withLock { $0.objects[key] = Data(text.utf8) } }

    /// Rewrites each `ListObjectsV2` answer, given the honest objects and common prefixes.
    func listing(
        _ answer: @escaping @Sendable (ListRequest, [HostileServer.Object], [String]) -> HostileServer.Answer
    ) {
        box.state.withLock { $0.listing = answer }
    }

    /// Answers requests `answer` gives an answer for, before anything else.
    func intercept(_ answer: @escaping @Sendable (HostileServer.Request) -> HostileServer.Answer?) {
        box.state.withLock { $0.other = answer }
    }

    /// `key` as a listing with `encoding-type=url` spells it.
    static func encoded(_ key: String) -> String { S3Signer.encode(key, keepingSlashes: true) }

    /// The listing entry of the object at `key`.
    static func object(_ key: String, _ bytes: Data) -> HostileServer.Object {
        HostileServer.Object(encoded(key), etag: S3Remote.md5Hex(bytes), size: bytes.count)
    }

    private static func answer(_ request: HostileServer.Request, _ state: borrowing Mutex<State>)
        -> HostileServer.Answer
    {
        let (objects, listing, other) = state.withLock { ($0.objects, $0.listing, $0.other) }
        if let answer = other(request) { return answer }
        if request.path == "/b/" || request.path == "/b" {
            if request.query["uploads"] != nil {
                return .xml(
                    200,
                    "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>"
                )
            }
            let prefix = request.query["prefix"] ?? ""
            let delimiter = request.query["delimiter"] == "/"
            var found: [HostileServer.Object] = []
            var prefixes: Set<String> = []
            for key in objects.keys.sorted() where key.hasPrefix(prefix) {
                let rest = key.dropFirst(prefix.count)
                if delimiter, let slash = rest.firstIndex(of: "/") {
                    prefixes.insert(encoded(prefix + rest[...slash]))
                } else {
                    found.append(object(key, objects[key]!))
                }
            }
            return listing(
                ListRequest(prefix: prefix, delimiter: delimiter, token: request.query["continuation-token"]),
                found,
                prefixes.sorted())
        }
        guard request.path.hasPrefix("/b/"),
            let key = String(request.path.dropFirst(3)).removingPercentEncoding,
            let bytes = objects[key]
        else { return .notFound }
        switch request.method {
        case "GET", "HEAD": return .file(bytes, etag: "\"\(S3Remote.md5Hex(bytes))\"")
        default: return .notFound
        }
    }
}
