import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension S3Remote {
    /// One object of a listing page.
    struct Object {
        var key: String
        var etag: String
        var size: Int64
    }

    /// One page of `ListObjectsV2`.
    struct Page {
        var objects: [Object] = []
        /// The common prefixes (folders), each ending in "/".
        var prefixes: [String] = []
        var isTruncated = false
        var continuation: String?
    }

    /// Every page of `ListObjectsV2` of `prefix`, in order, to `body`; with `delimiter`, keys
    /// in subfolders come as their folder's common prefix.
    ///
    /// A listing is over only when a page says it is not truncated, in a whole document (see
    /// ``S3XML``: a body cut short is never read as the last page). A page that says it goes on
    /// but gives no token to go on with, a token given before (the listing would go round for
    /// ever), or pages that bring no key or prefix not seen before (more than a few in a row)
    /// fail the listing: it is never taken as complete.
    ///
    /// - Parameter pages: The most pages to ask for (nil: all); a caller that asks for fewer
    ///   knows the listing may go on.
    func listPages(
        prefix: String, delimiter: Bool, maxKeys: Int? = nil, pages: Int? = nil,
        _ operation: RemoteError.Operation, _ path: RemotePath, _ body: (Page) throws -> Void
    ) throws {
        var continuation: String?
        var count = 0
        var tokens: Set<String> = []
        var seen: Set<String> = []
        var pagesWithNothingNew = 0
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix), ("encoding-type", "url")]
            if delimiter { query.append(("delimiter", "/")) }
            if let maxKeys { query.append(("max-keys", String(maxKeys))) }
            if let continuation { query.append(("continuation-token", continuation)) }
            let answer = try send(
                request("GET", key: nil, query: query), into: .memory(limit: 32 << 20), operation, path,
                repeatable: true)
            guard answer.status == 200 else { throw error(status: answer, operation, path) }
            let page = try parsePage(try xml(answer, operation, path), operation, path)
            try body(page)
            count += 1
            guard page.isTruncated else { return }
            guard let token = page.continuation else {
                throw failure(
                    .badAnswer, operation, path,
                    detail: "the store's listing says it goes on but gives no continuation token")
            }
            guard tokens.insert(token).inserted else {
                throw failure(
                    .badAnswer, operation, path,
                    detail:
                        "the store's listing gives the continuation token \(RemotePath.shown(token)) a second time (after \(count) pages): it would go round for ever"
                )
            }
            var new = false
            for object in page.objects where seen.insert(object.key).inserted { new = true }
            for prefix in page.prefixes where seen.insert(prefix).inserted { new = true }
            pagesWithNothingNew = new ? 0 : pagesWithNothingNew + 1
            if pagesWithNothingNew > Self.mostPagesWithNothingNew {
                throw failure(
                    .badAnswer, operation, path,
                    detail:
                        "the store's listing gave \(pagesWithNothingNew) pages in a row that say it goes on but hold nothing new (after \(count) pages)"
                )
            }
            continuation = token
        } while count < (pages ?? .max)
    }

    /// How many pages in a row a listing may give that hold no key or prefix it did not give
    /// before: a store may give an empty page now and then, never many.
    static let mostPagesWithNothingNew = 8

    func parsePage(_ xml: S3XML, _ operation: RemoteError.Operation, _ path: RemotePath) throws
        -> Page
    {
        guard xml.root.name == "ListBucketResult" else {
            throw failure(
                .badAnswer, operation, path, detail: "the store answered a listing with <\(xml.root.name)>")
        }
        let encoded = xml.root.value("EncodingType") == "url"
        func decoded(_ text: String) throws -> String {
            // Most keys have nothing encoded: kept as they are, without decoding them.
            guard encoded, text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") })
            else { return text }
            guard let decoded = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                throw failure(
                    .badAnswer, operation, path,
                    detail: "the store's listing gives a key that is not valid: \(RemotePath.shown(text))")
            }
            return decoded
        }
        var page = Page()
        switch xml.root.value("IsTruncated") {
        case "true": page.isTruncated = true
        case "false": page.isTruncated = false
        case let other:
            // Missing, it cannot be taken for "false": that would end the listing where the
            // store did not say it ends.
            throw failure(
                .badAnswer, operation, path,
                detail:
                    "the store's listing page says neither that it is complete nor that it goes on (IsTruncated is \(other.map(RemotePath.shown) ?? "missing"))"
            )
        }
        page.continuation = xml.root.value("NextContinuationToken").flatMap { $0.isEmpty ? nil : $0 }
        for contents in xml.root.children("Contents") {
            guard let key = contents.value("Key") else {
                throw failure(
                    .badAnswer, operation, path, detail: "the store's listing gives an object without a key")
            }
            page.objects.append(
                Object(
                    key: try decoded(key), etag: contents.value("ETag") ?? "",
                    size: contents.value("Size").flatMap(Int64.init) ?? 0))
        }
        for common in xml.root.children("CommonPrefixes") {
            if let prefix = common.value("Prefix") { page.prefixes.append(try decoded(prefix)) }
        }
        return page
    }

    /// Whether `object` is a tombstone (``Deletes/tombstones``): a deleted file.
    func isTombstone(_ object: Object) -> Bool {
        object.size == Int64(Self.tombstoneBytes.count) && Self.tag(object.etag) == Self.tombstoneTag
    }

    /// The one name `key` gives in the folder listed with prefix `prefix`, as the store spells
    /// it: a key outside the prefix, or one that is more than a name (with a "/", an empty or
    /// "." name), fails the listing.
    private func name(ofKey key: String, in prefix: String, _ folder: RemotePath) throws -> String {
        guard key.hasPrefix(prefix) else {
            throw failure(
                .badAnswer, .list, folder,
                detail:
                    "the store's listing gives a key outside the prefix asked for: \(RemotePath.shown(key))")
        }
        let name = String(key.dropFirst(prefix.count))
        try checkListedName(name, .list, folder)
        return name
    }

    public func list(_ folder: RemotePath) throws -> RemoteListing {
        try validate(folder, .list, allowingRoot: true)
        sweepStaleUploadsOnce()
        let prefix = folderKey(folder)
        var files: [RemoteEntry] = []
        var folders: [String: RemoteEntry] = [:]
        var keys: [String] = []
        var sawAnything = false
        try listPages(prefix: prefix, delimiter: true, .list, folder) { page in
            for object in page.objects {
                sawAnything = true
                // The folder's own marker.
                guard object.key != prefix, !isTombstone(object) else { continue }
                let name = try name(ofKey: object.key, in: prefix, folder)
                files.append(
                    RemoteEntry(name: name, kind: .file, size: object.size, tag: Self.tag(object.etag)))
                keys.append(object.key)
            }
            for common in page.prefixes {
                sawAnything = true
                guard common.hasSuffix("/") else {
                    throw failure(
                        .badAnswer, .list, folder,
                        detail:
                            "the store's listing gives a folder not ending in “/”: \(RemotePath.shown(common))"
                    )
                }
                let name = try name(ofKey: String(common.dropLast()), in: prefix, folder)
                folders[name] = RemoteEntry(name: name, kind: .folder, size: 0, tag: Self.folderTag)
                keys.append(String(common.dropLast()))
            }
        }
        if !sawAnything {
            // Nothing under the prefix: an empty folder has its marker, which the listing shows.
            // At the root, an empty container; unless its prefix is a file.
            if let object = try head(String(prefix.dropLast()), .list, folder), !prefix.isEmpty,
                !isTombstone(object)
            {
                throw failure(
                    .notAFolder, .list, folder,
                    detail: folder.isRoot
                        ? "the prefix “\(configuration.prefix)” is a file in the bucket" : nil)
            }
            if !folder.isRoot { throw failure(.notFound, .list, folder) }
        }
        // A name that is both a file and a folder (two devices made them at once, or another
        // tool): the folder is listed, as it holds more.
        let entries = files.filter { folders[$0.name] == nil } + folders.values
        let listing = try checkedListing(folder, entries, folderTag: Self.folderTag)
        for key in keys { _ = path(ofKey: key) }
        return listing
    }

    /// Every item of the container, from a listing of the prefix's top level with its
    /// folders as common prefixes and then a paginated listing of each of those folders,
    /// several at once (``listingsAtOnce``): files from their keys, folders from the keys
    /// inside them and from their markers. Every key's names are checked as ``list(_:)``
    /// checks them (see ``Remote/checkedListing(_:_:folderTag:)``): a name that cannot be an
    /// item's, two spellings of one name, or one key listed twice and differently fail the
    /// listing. Any listing that fails fails the whole: a partial tree is never returned.
    public func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws
        -> [RemotePath: RemoteEntry]?
    {
        sweepStaleUploadsOnce()
        let tree = SharedTree(keeping: keeping)
        var folders: [String] = []
        try listPages(prefix: keyPrefix, delimiter: true, .list, .root) { page in
            try tree.add(page, of: self)
            for common in page.prefixes {
                guard common.hasSuffix("/"), common.hasPrefix(keyPrefix), common.count > keyPrefix.count + 1,
                    !common.dropFirst(keyPrefix.count).dropLast().contains("/")
                else {
                    throw failure(
                        .badAnswer, .list, .root,
                        detail:
                            "the store's listing gives a folder that is not one name inside the prefix asked for: \(RemotePath.shown(common))"
                    )
                }
                folders.append(common)
            }
        }
        try RequestsAtOnce.forEach(
            Array(Set(folders)).sorted(), width: min(Self.listingsAtOnce, mostRequestsAtOnce),
            name: "DocumentSync S3 listing"
        ) { [self] folder in
            try listPages(prefix: folder, delimiter: false, .list, .root) { page in
                try tree.add(page, of: self)
            }
        }
        let (found, sawAnything) = tree.state.withLock { ($0.found, $0.sawAnything) }
        if !sawAnything, !keyPrefix.isEmpty,
            let object = try head(String(keyPrefix.dropLast()), .list, .root),
            !isTombstone(object)
        {
            throw failure(
                .notAFolder, .list, .root,
                detail: "the prefix “\(configuration.prefix)” is a file in the bucket")
        }
        return found
    }

    /// How many of the container's top-level folders ``listTree()`` lists at once: enough to
    /// keep the store busy while the pages already in are read.
    static let listingsAtOnce = 8

    /// The listing threads' tree.
    private final class SharedTree: Sendable {
        let state: Mutex<TreeListing>

        init(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) {
            state = Mutex(TreeListing(keeping: keeping))
        }

        /// Adds the items of `page`: each read from its key on the calling thread, then put in
        /// the tree under its lock.
        func add(_ page: Page, of remote: S3Remote) throws {
            let items = try page.objects.compactMap { try TreeListing.item($0, of: remote) }
            try state.withLock { tree in
                tree.sawAnything = tree.sawAnything || !page.objects.isEmpty || !page.prefixes.isEmpty
                for item in items { try tree.add(item, of: remote) }
            }
        }
    }

    /// The items a listing of the container found so far, whatever the order its pages come
    /// in: a file and a folder of one name keep the folder, in any order.
    struct TreeListing {
        var found: [RemotePath: RemoteEntry] = [:]
        /// The key each file was found at: for two spellings of one path, and one key twice.
        var fileKeys: [RemotePath: String] = [:]
        var sawAnything = false
        /// Asked of each file listed at its path's own spelling, whose path no other key gave
        /// yet: one it refuses is left out (see ``Remote/listTree(keeping:)``).
        var keeping: @Sendable (RemotePath, RemoteEntry) -> Bool = { _, _ in true }

        /// What a listed object stands for: read from its key on the listing's own thread,
        /// before the tree is locked. Nil for the container's marker, a tombstone and sync's
        /// own files.
        struct Item {
            var key: String
            var path: RemotePath
            var isMarker: Bool
            var size: Int64
            var etag: String
        }

        static func item(_ object: Object, of remote: S3Remote) throws -> Item? {
            // The container's own marker.
            guard object.key != remote.keyPrefix, !remote.isTombstone(object) else { return nil }
            let isMarker = object.key.hasSuffix("/")
            guard
                let names = try remote.names(
                    ofKey: isMarker ? String(object.key.dropLast()) : object.key, .list, .root)
            else {
                throw remote.failure(
                    .badAnswer, .list, .root,
                    detail:
                        "the store's listing gives a key outside the prefix asked for: \(RemotePath.shown(object.key))"
                )
            }
            guard !names.contains(where: { $0.utf8.first == UInt8(ascii: ".") }) else { return nil }
            return Item(
                key: object.key, path: remote.path(ofNames: names), isMarker: isMarker, size: object.size,
                etag: object.etag)
        }

        /// Adds the item, and the folders above it.
        mutating func add(_ item: Item, of remote: S3Remote) throws {
            let (path, isMarker) = (item.path, item.isMarker)
            if !isMarker, fileKeys[path] == nil,
                item.key.utf8.dropFirst(remote.keyPrefix.utf8.count).elementsEqual(path.string.utf8),
                !keeping(
                    path,
                    RemoteEntry(name: path.name, kind: .file, size: item.size, tag: S3Remote.tag(item.etag)))
            {
                // Left out, the caller knowing it: its key is kept by no table, so that a listing
                // holds what changed, not the container. Another key giving its path is then kept,
                // and the caller finds the two (see ``Remote/listTree(keeping:)``).
                addFolders(above: path)
                return
            }
            if !isMarker, let seenAt = fileKeys.updateValue(item.key, forKey: path) {
                guard seenAt.utf8.elementsEqual(item.key.utf8) else {
                    throw remote.failure(
                        .badAnswer, .list, .root,
                        detail:
                            "it lists two items, \(RemotePath.shown(seenAt)) and \(RemotePath.shown(item.key)), whose names differ only in how their letters are encoded (Unicode normalisation); rename one on the remote"
                    )
                }
                let entry = RemoteEntry(
                    name: path.name, kind: .file, size: item.size, tag: S3Remote.tag(item.etag))
                guard found[path].map({ $0.kind == .folder || $0 == entry }) ?? true else {
                    throw remote.failure(
                        .badAnswer, .list, .root,
                        detail: "it lists \(RemotePath.shown(item.key)) twice, and differently")
                }
            }
            addFolders(above: path)
            if isMarker {
                found[path] = RemoteEntry(name: path.name, kind: .folder, size: 0, tag: S3Remote.folderTag)
            } else if found[path]?.kind != .folder {
                found[path] = RemoteEntry(
                    name: path.name, kind: .file, size: item.size, tag: S3Remote.tag(item.etag))
            }
        }

        /// The folders above `path`, down from the root. A file and a folder of one name: the
        /// folder is kept, as in ``list(_:)``.
        private mutating func addFolders(above path: RemotePath) {
            var folder = path.parent
            while !folder.isRoot, found[folder]?.kind != .folder {
                found[folder] = RemoteEntry(
                    name: folder.name, kind: .folder, size: 0, tag: S3Remote.folderTag)
                folder = folder.parent
            }
        }
    }

    /// `HeadObject` of `key`: the object, or nil when there is none.
    func head(_ key: String, _ operation: RemoteError.Operation, _ path: RemotePath) throws -> Object? {
        let answer = try send(request("HEAD", key: key), operation, path, repeatable: true)
        switch answer.status {
        case 200:
            return Object(
                key: key, etag: answer.header("ETag") ?? "",
                size: answer.header("Content-Length").flatMap(Int64.init) ?? 0)
        case 404: return nil
        default:
            // A HEAD answer has no body: a 404 of a missing bucket reads as the object's, and a
            // 403 as a refusal, which is what it is.
            throw error(status: answer, operation, path)
        }
    }

    /// Whether anything is in the folder at `path` (a key under it, its marker included).
    func folderExists(_ path: RemotePath, _ operation: RemoteError.Operation, reportedAs: RemotePath? = nil)
        throws -> Bool
    {
        if path.isRoot { return true }
        var found = false
        try listPages(
            prefix: folderKey(path), delimiter: true, maxKeys: 1, pages: 1, operation, reportedAs ?? path
        ) {
            found = found || !$0.objects.filter { !isTombstone($0) }.isEmpty || !$0.prefixes.isEmpty
        }
        return found
    }

    public func entry(at path: RemotePath) throws -> RemoteEntry? {
        try validate(path, .entry, allowingRoot: true)
        if path.isRoot { return RemoteEntry(name: "", kind: .folder, size: 0, tag: Self.folderTag) }
        if let object = try head(key(path), .entry, path), !isTombstone(object) {
            return RemoteEntry(name: path.name, kind: .file, size: object.size, tag: Self.tag(object.etag))
        }
        if try folderExists(path, .entry) {
            return RemoteEntry(name: path.name, kind: .folder, size: 0, tag: Self.folderTag)
        }
        return nil
    }

    public func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try read(path, expectedSize: nil, into: sink)
    }

    /// `GetObject`: the body is given to `sink` as it arrives (a small one once whole, after its
    /// answer was checked), kept neither in memory nor in a file of the remote's own. S3 gives
    /// one version whole, so the bytes are never a mix of two writes. A read that fails may
    /// have given part of the bytes.
    public func read(_ path: RemotePath, expectedSize: Int64?, into sink: (Data) throws -> Void) throws
        -> RemoteTag
    {
        try validate(path, .read)
        let answer: HTTPAnswer
        do {
            answer = try transport.send(
                request("GET", key: key(path)), memoryLimit: RemoteChunk.size, retries: Self.retries,
                streamingTo: sink)
        } catch let failure as HTTPTransportFailure {
            throw error(failure, .read, path, answerer: "store")
        }
        guard answer.status == 200 else {
            if answer.status == 404 {
                let kind: RemoteError.Kind = try folderExists(path, .read) ? .notAFile : .notFound
                let failure = error(status: answer, .read, path)
                guard failure.kind != .unavailable else { throw failure }
                throw self.failure(kind, .read, path, detail: failure.detail)
            }
            throw error(status: answer, .read, path)
        }
        guard let etag = answer.header("ETag") else {
            throw failure(.badAnswer, .read, path, detail: "the store gives no ETag for the object")
        }
        let tag = Self.tag(etag)
        if tag == Self.tombstoneTag, answer.streamed == 0, answer.body == Self.tombstoneBytes {
            throw failure(.notFound, .read, path, detail: "it was deleted (a tombstone is there)")
        }
        if let expected = answer.header("Content-Length").flatMap(Int64.init) {
            guard answer.received == expected else {
                throw failure(
                    .connectionLost, .read, path, detail: "\(answer.received) of \(expected) bytes arrived")
            }
        }
        if !answer.body.isEmpty { try sink(answer.body) }
        return tag
    }
}
