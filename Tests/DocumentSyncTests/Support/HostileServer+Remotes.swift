import Foundation
import Synchronization

@testable import DocumentKit
@testable import DocumentSync

/// A remote's server on a ``HostileServer``: honest answers from files the test puts, and
/// listings the test rewrites; what the tests that hold for every remote are written against.
protocol HostileStore: Sendable {
    var server: HostileServer { get }
    /// How the remote asks for a listing ("PROPFIND", "GET").
    var listingMethod: String { get }
    /// Puts a file at `path` (relative, "/"-separated).
    func put(_ path: String, _ text: String)
    /// A remote of the store's files, with `deadline` and an idle timeout of 5 s.
    func anyRemote(deadline: RequestDeadline) throws -> any Remote
    /// Answers every listing with what `rewrite` makes of the honest answer's text.
    func rewritingListings(_ rewrite: @escaping @Sendable (String) -> (String, HostileServer.Answer.Delivery))
    /// Lists, besides the honest items, a file spelled `spelled` (an href, a key), and serves it
    /// if asked, until the listings are rewritten again.
    func listHostile(_ spelled: String)
}

extension HostileStore {
    /// Answers every listing honestly, but delivered as `delivery` says.
    func deliveringListings(_ delivery: HostileServer.Answer.Delivery) {
        rewritingListings { ($0, delivery) }
    }
}

/// The stores the tests that hold for every remote run against, by name.
enum HostileStores {
    static let names = ["WebDAV", "S3"]

    static func make(_ name: String) throws -> any HostileStore {
        name == "S3" ? try HostileS3() : try HostileDAV()
    }
}

/// A WebDAV collection (`/dav/C/`) on a ``HostileServer``: honest answers from a tree of
/// files the test keeps, and a hook that rewrites each listing (or any answer) the way a
/// hostile server would.
///
/// It answers `PROPFIND` of `Depth: 1` and `0` as Apache does (a 200 propstat an item,
/// strong ETags from the bytes), `GET` with the bytes, and everything else with 404.
final class HostileDAV: HostileStore {
    /// The collection's path on the server.
    static let base = "/dav/C/"

    private struct State {
        var files: [String: Data] = [:]
        var listing: @Sendable (_ folder: String, _ items: [HostileServer.Item]) -> HostileServer.Answer = {
            _, items in .xml(207, HostileServer.multistatus(items))
        }
    }

    private let box = Locked(State())
    let server: HostileServer

    init() throws {
        server = try HostileServer { [box] request in Self.answer(request, box.value) }
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
    func put(_ path: String, _ text: String) { box.value.withLock { $0.files[path] = Data(text.utf8) } }

    /// Rewrites the answer to each `PROPFIND` of `Depth: 1` of the folder (relative, "" for the
    /// collection) whose honest items (itself first) are given.
    func listing(
        _ answer:
            @escaping @Sendable (_ folder: String, _ items: [HostileServer.Item]) -> HostileServer.Answer
    ) {
        box.value.withLock { $0.listing = answer }
    }

    var listingMethod: String { "PROPFIND" }

    func anyRemote(deadline: RequestDeadline) throws -> any Remote { try remote(deadline: deadline) }

    func rewritingListings(_ rewrite: @escaping @Sendable (String) -> (String, HostileServer.Answer.Delivery))
    {
        listing { _, items in
            let (text, delivery) = rewrite(HostileServer.multistatus(items))
            return .xml(207, text, delivery: delivery)
        }
    }

    func listHostile(_ spelled: String) {
        listing { _, items in
            .xml(207, HostileServer.multistatus(items + [HostileServer.Item(spelled, etag: "e1", size: 5)]))
        }
        server.intercept {
            $0.method == "GET" && $0.path == spelled ? .file(Data("evil\n".utf8), etag: "\"e1\"") : nil
        }
    }

    /// The ETag of `bytes`: strong, from their hash.
    static func etag(_ bytes: Data) -> String { String(ContentHash(of: bytes).hex.prefix(16)) }

    private static func answer(_ request: HostileServer.Request, _ state: borrowing Mutex<State>)
        -> HostileServer.Answer
    {
        let (files, listing) = state.withLock { ($0.files, $0.listing) }
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
final class HostileS3: HostileStore {
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
    }

    private let box = Locked(State())
    let server: HostileServer

    init() throws {
        server = try HostileServer { [box] request in Self.answer(request, box.value) }
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

    func put(_ key: String, _ text: String) { box.value.withLock { $0.objects[key] = Data(text.utf8) } }

    /// Rewrites each `ListObjectsV2` answer, given the honest objects and common prefixes.
    func listing(
        _ answer: @escaping @Sendable (ListRequest, [HostileServer.Object], [String]) -> HostileServer.Answer
    ) {
        box.value.withLock { $0.listing = answer }
    }

    var listingMethod: String { "GET" }

    func anyRemote(deadline: RequestDeadline) throws -> any Remote { try remote(deadline: deadline) }

    func rewritingListings(_ rewrite: @escaping @Sendable (String) -> (String, HostileServer.Answer.Delivery))
    {
        listing { _, objects, prefixes in
            let (text, delivery) = rewrite(HostileServer.listBucketResult(objects, prefixes: prefixes))
            return .xml(200, text, delivery: delivery)
        }
    }

    func listHostile(_ spelled: String) {
        let bytes = Data("evil\n".utf8)
        listing { _, objects, prefixes in
            .xml(
                200,
                HostileServer.listBucketResult(objects + [Self.object(spelled, bytes)], prefixes: prefixes))
        }
        server.intercept {
            $0.method == "GET" && $0.path == "/b/" + Self.encoded(spelled)
                ? .file(bytes, etag: "\"\(S3Remote.md5Hex(bytes))\"") : nil
        }
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
        let (objects, listing) = state.withLock { ($0.objects, $0.listing) }
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

/// A value behind a lock, in a class: what a server's script and the test share.
final class Locked<Value: Sendable>: Sendable {
    let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }
}
