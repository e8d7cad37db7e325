import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension WebDAVRemote {
    public func list(_ folder: RemotePath) throws -> RemoteListing {
        try validate(folder, .list, allowingRoot: true)
        guard let responses = try propfind(folder, depth: "1", folder: true, .list) else {
            // At the root: the collection itself was deleted (the engine pauses rather than take
            // that for every document deleted).
            throw failure(.notFound, .list, folder, detail: "PROPFIND answered HTTP 404")
        }
        var entries: [RemoteEntry] = []
        var folderTag: RemoteTag?
        var sawItself = false
        for response in responses where response.hasProperties {
            let names = try names(ofHref: response.href, .list, folder)
            let path = path(ofNames: names)
            if path == folder {
                guard response.isCollection else { throw failure(.notAFolder, .list, folder) }
                sawItself = true
                folderTag = Self.tag(of: response)
                continue
            }
            // A server that answers deeper than asked: the deeper items are listed with their
            // own folders. An item outside the folder is not this folder's.
            guard path.parent == folder else {
                if path.isDescendant(of: folder) { continue }
                throw failure(
                    .badAnswer, .list, folder,
                    detail: "the server's answer names “\(path)”, which is not in the folder")
            }
            guard !path.name.hasPrefix(Self.temporaryPrefix) else {
                removeIfAbandoned(path, response)
                continue
            }
            // As the server spells it: the check finds two spellings of one name.
            entries.append(entry(response, named: names.last ?? path.name))
        }
        guard sawItself else {
            throw failure(
                .badAnswer, .list, folder,
                detail: "the server's PROPFIND answer does not describe the folder itself")
        }
        return try checkedListing(folder, entries, folderTag: folderTag)
    }

    public func entry(at path: RemotePath) throws -> RemoteEntry? {
        try validate(path, .entry, allowingRoot: true)
        guard let responses = try propfind(path, depth: "0", folder: path.isRoot, .entry) else {
            if path.isRoot { throw failure(.unavailable, .entry, path, detail: "HTTP 404") }
            return nil
        }
        for response in responses where response.hasProperties {
            if try self.path(ofHref: response.href, .entry, path) == path {
                return entry(response, named: path.name)
            }
        }
        throw failure(
            .badAnswer, .entry, path, detail: "the server's PROPFIND answer does not describe the item")
    }

    public func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try read(path, expectedSize: nil, into: sink)
    }

    /// The body is given to `sink` as it arrives, a chunk at a time (a small one once whole,
    /// after its answer was checked): nothing of it is kept in memory or
    /// in a file of the remote's own. A read that fails may have given part of the bytes.
    public func read(_ path: RemotePath, expectedSize: Int64?, into sink: (Data) throws -> Void) throws
        -> RemoteTag
    {
        try validate(path, .read)
        let answer: HTTPAnswer
        do {
            answer = try transport.send(
                request("GET", url(path)), memoryLimit: RemoteChunk.size, retries: Self.retries,
                streamingTo: sink)
        } catch let failure as HTTPTransportFailure {
            throw error(failure, .read, path, answerer: "server")
        }
        guard answer.status == 200 else {
            // A folder answers a GET with a redirect, a listing or a refusal, as configured.
            switch try entry(at: path)?.kind {
            case .folder?: throw failure(.notAFile, .read, path, detail: "HTTP \(answer.status)")
            case nil: throw failure(.notFound, .read, path, detail: "HTTP \(answer.status)")
            case .file?: throw error(status: answer, .read, path)
            }
        }
        let tag: RemoteTag
        if let etag = answer.header("ETag") {
            tag = Self.tag(etag)
        } else if let found = try entry(at: path)?.tag {
            tag = found
        } else {
            throw failure(.badAnswer, .read, path, detail: "the server gives no ETag for the file")
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

    /// The name a new file is written under before it is moved into place: hidden, and
    /// holding the time it was made, so that one a crash left behind can be told from one in
    /// progress.
    static func temporaryName(now: Date) -> String {
        temporaryPrefix + "\(Int64(now.timeIntervalSince1970))-"
            + String(UInt64.random(in: .min ... .max), radix: 16)
    }

    /// Deletes a temporary file of a write a crash or a cut connection left more than a day
    /// ago (no upload takes that long), on the condition that it is still the one listed;
    /// any failure leaves it for the next listing.
    func removeIfAbandoned(_ path: RemotePath, _ response: Multistatus.Response, now: Date = Date()) {
        let stamp = path.name.dropFirst(Self.temporaryPrefix.count).prefix { $0 != "-" }
        guard let made = Int64(stamp), Double(made) < now.timeIntervalSince1970 - 86_400,
            let etag = response.etag, !response.isCollection
        else { return }
        _ = try? send(
            request("DELETE", url(path), headers: ["If": ifHeader(path, "[\(Self.quoted(Self.tag(etag)))]")]),
            .delete, path)
    }
}
