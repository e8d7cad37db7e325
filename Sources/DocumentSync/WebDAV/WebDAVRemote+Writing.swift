import DocumentKit
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension WebDAVRemote {
    @discardableResult
    public func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
        -> RemoteTag?
    {
        try validate(path, .write)
        switch (configuration.writeProtocol, condition) {
        case (.locking, .absent):
            // A large file goes under a hidden name: its bytes are sent streamed, never held.
            if let recipe = configuration.tagRecipe, source.size <= Self.mostBytesSentFromMemory {
                return try writeNewInPlace(path, from: source, recipe: recipe)
            }
            return try writeNew(path, from: source)
        case (.locking, .matches(let tag)): return try writeLocked(path, from: source, over: tag)
        case (.conditional, _): return try writeConditionally(path, from: source, condition: condition)
        }
    }

    /// A new file: written under a hidden name beside its place (no one else writes there, so
    /// the tag read back is its own), then moved into place with `Overwrite: F`.
    private func writeNew(_ path: RemotePath, from source: UploadSource) throws -> RemoteTag {
        let temporary = path.parent.appending(
            Self.temporaryName(now: Date()))
        var placed = false
        defer {
            if !placed {
                _ = try? send(request("DELETE", url(temporary)), .delete, temporary)
            }
        }
        let answer = try put(temporary, from: source, headers: ["If-None-Match": "*"], reportedAs: path)
        let tag = try tagAfterWrite(answer, temporary, size: source.size, reportedAs: path)
        let moved = try send(
            request(
                "MOVE", url(temporary), headers: ["Destination": url(path).absoluteString, "Overwrite": "F"]),
            .write, path)
        switch moved.status {
        case 200...299:
            placed = true
            return tag
        case 412: throw failure(.preconditionFailed, .write, path, detail: "an item is already there")
        default: throw error(status: moved, .write, path)
        }
    }

    /// A new file where tags are made of the bytes by a known recipe: `PUT` in place with
    /// `If-None-Match: *`, its tag the recipe's of the bytes sent. That tag names these bytes
    /// even if another client writes the file right after (the file's tag is then another), so
    /// no hidden name, no read of the tag and no `MOVE` are needed.
    private func writeNewInPlace(_ path: RemotePath, from source: UploadSource, recipe: WebDAVTagRecipe)
        throws -> RemoteTag
    {
        let stream = UploadStream(source)
        guard let bytes = stream.readAll() else {
            throw sourceFailure(stream, path) ?? failure(.sourceChanged, .write, path)
        }
        _ = try put(path, from: UploadSource(bytes), headers: ["If-None-Match": "*"], reportedAs: path)
        return Self.tag("\"\(recipe.etag(of: bytes))\"")
    }

    /// A file that exists: locked on the condition that it still has `tag`, written with the
    /// lock's token, its new tag read while the lock still keeps every other writer out.
    private func writeLocked(_ path: RemotePath, from source: UploadSource, over tag: RemoteTag) throws
        -> RemoteTag
    {
        let token = try lock(path, matching: tag, .write, seconds: max(60, Int(source.size >> 20)))
        defer { unlock(path, token) }
        let answer = try put(
            path, from: source, headers: ["If": ifHeader(path, "<\(token)>")], reportedAs: path)
        return try tagAfterWrite(answer, path, size: source.size, reportedAs: path)
    }

    /// `If-None-Match: *` or `If-Match`, for servers whose conditions hold.
    private func writeConditionally(_ path: RemotePath, from source: UploadSource, condition: WriteCondition)
        throws -> RemoteTag
    {
        let header: [String: String]
        switch condition {
        case .absent: header = ["If-None-Match": "*"]
        case .matches(let tag):
            // A server that cannot be trusted may take If-Match on a file that is not there as
            // no condition at all (wsgidav makes the file): looked at first there.
            if configuration.verifiesWrites, try entry(at: path)?.tag != tag {
                throw failure(.preconditionFailed, .write, path)
            }
            header = ["If-Match": Self.quoted(tag)]
        }
        let stream = UploadStream(source, hashing: configuration.verifiesWrites)
        let answer = try put(path, from: stream, size: source.size, headers: header, reportedAs: path)
        let tag = try tagAfterWrite(answer, path, size: source.size, reportedAs: path)
        return configuration.verifiesWrites ? try verify(path, sent: stream.digest()) : tag
    }

    /// Reads back what a write on a server that cannot be trusted left, and fails it as a
    /// refused condition when it is not the bytes sent: the engine then reconciles with what
    /// is there.
    private func verify(_ path: RemotePath, sent digest: ContentHash?) throws -> RemoteTag {
        var hasher = ContentHash.Hasher()
        let read = try self.read(path) { hasher.update($0) }
        guard hasher.finalize() == digest else {
            throw failure(
                .preconditionFailed, .write, path,
                detail: "another client wrote it at the same time (read back after the write)")
        }
        return read
    }

    /// `PUT`s the source's bytes to `path`, streamed.
    private func put(
        _ path: RemotePath, from source: UploadSource, headers: [String: String], reportedAs shown: RemotePath
    )
        throws -> HTTPAnswer
    {
        try put(path, from: UploadStream(source), size: source.size, headers: headers, reportedAs: shown)
    }

    private func put(
        _ path: RemotePath, from stream: UploadStream, size: Int64, headers: [String: String],
        reportedAs shown: RemotePath
    ) throws -> HTTPAnswer {
        var headers = headers
        headers["Content-Type"] = "application/octet-stream"
        // A small body goes from memory, with its length: libcurl can send it again, and Apache
        // keeps the connection for the next request.
        var body = HTTPBody.stream(stream, size: size)
        if size <= Self.mostBytesSentFromMemory {
            guard let data = stream.readAll() else {
                throw sourceFailure(stream, shown) ?? failure(.sourceChanged, .write, shown)
            }
            body = .data(data)
        }
        let answer: HTTPAnswer
        do {
            answer = try send(request("PUT", url(path), headers: headers), body: body, .write, shown)
        } catch {
            throw sourceFailure(stream, shown) ?? error
        }
        if let failure = sourceFailure(stream, shown) { throw failure }
        if stream.reopened {
            throw failure(.connectionLost, .write, shown, detail: "the upload's body could not be sent again")
        }
        switch answer.status {
        case 200...299: return answer
        case 412: throw failure(.preconditionFailed, .write, shown, detail: "HTTP 412")
        case 405: throw failure(.notAFile, .write, shown, detail: "HTTP 405")
        // RFC 4918 answers 409 for a folder that is not there; SabreDAV answers 404.
        case 404 where try entry(at: shown.parent)?.kind != .folder:
            throw failure(.parentMissing, .write, shown, detail: "HTTP 404")
        // Apache: "the URL contains extraneous path components", a file where a folder should be.
        case 400 where !shown.parent.isRoot: throw failure(.parentMissing, .write, shown, detail: "HTTP 400")
        default:
            if try entry(at: shown)?.kind == .folder {
                throw failure(.notAFile, .write, shown, detail: "HTTP \(answer.status)")
            }
            throw error(status: answer, .write, shown)
        }
    }

    /// What ended an upload's body early, if anything: the source's own error, or the source
    /// giving another size than it said.
    private func sourceFailure(_ stream: UploadStream, _ path: RemotePath) -> (any Error)? {
        if let thrown = stream.failure { return thrown }
        guard stream.sizeChanged else { return nil }
        return failure(
            .sourceChanged, .write, path,
            detail: "the source gave \(stream.givenBytes) bytes or more, not the size it said")
    }

    /// The tag of what a `PUT` wrote: from its answer where the server gives one (Nextcloud's
    /// `OC-ETag`, `ETag`), otherwise read back (safe only where no one else can have written
    /// since: under a lock, or at a name only this write uses).
    private func tagAfterWrite(
        _ answer: HTTPAnswer, _ path: RemotePath, size: Int64, reportedAs shown: RemotePath
    ) throws -> RemoteTag {
        if let etag = answer.header("OC-ETag") ?? answer.header("ETag") { return Self.tag(etag) }
        guard let responses = try propfind(path, depth: "0", folder: false, .write),
            let found = responses.first(where: { $0.hasProperties }), let etag = found.etag
        else {
            throw failure(.badAnswer, .write, shown, detail: "the server gives no ETag for the file written")
        }
        // Read where no one else writes: a size other than the upload's means the bytes did
        // not all arrive, whatever the answer said.
        if let stored = found.contentLength, stored != size {
            throw failure(
                .connectionLost, .write, shown,
                detail: "the server holds \(stored) bytes, not the \(size) sent")
        }
        return Self.tag(etag)
    }

    public func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try validate(path, .delete)
        guard case .matches(let tag) = condition else {
            // Nothing to delete can be absent.
            guard try entry(at: path) != nil else { throw failure(.notFound, .delete, path) }
            throw failure(.preconditionFailed, .delete, path)
        }
        // A folder goes only when empty: locked first where locks are real, so that nothing
        // is added to it between the look and the delete (Apache deletes a folder whole).
        var token: String?
        if configuration.writeProtocol == .locking {
            do {
                token = try lock(path, matching: tag, .delete, seconds: 60)
            } catch let error as RemoteError where error.kind == .preconditionFailed {
                if try entry(at: path) == nil { throw failure(.notFound, .delete, path) }
                throw error
            }
        }
        // Given back after the delete too: RFC 4918 has a delete end the item's locks, but
        // SabreDAV's Locks plugin keeps them until they time out, and a new file at the path
        // (an edit that beat this delete, written back) would be refused with 423 until then.
        defer { if let token { unlock(path, token) } }
        guard let responses = try propfind(path, depth: "1", folder: false, .delete) else {
            throw failure(.notFound, .delete, path)
        }
        var isFolder = false
        for response in responses where response.hasProperties {
            let found = try self.path(ofHref: response.href, .delete, path)
            if found == path {
                isFolder = response.isCollection
                if token == nil, Self.tag(of: response) != tag {
                    throw failure(.preconditionFailed, .delete, path)
                }
            } else if found.parent == path {
                throw failure(.notEmpty, .delete, path)
            }
        }
        var headers: [String: String] = [:]
        if let token {
            headers["If"] = ifHeader(path, "<\(token)>", folder: isFolder)
        } else if tag != Self.untaggedFolder {
            headers["If-Match"] = Self.quoted(tag)
        }
        let answer = try send(request("DELETE", url(path, folder: isFolder), headers: headers), .delete, path)
        switch answer.status {
        case 200...299: return
        case 404: throw failure(.notFound, .delete, path, detail: "HTTP 404")
        default: throw error(status: answer, .delete, path)
        }
    }

    @discardableResult
    public func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try validate(source, .move)
        try validate(destination, .move)
        if destination == source || destination.isDescendant(of: source) {
            throw failure(.invalidMove, .move, source, destination: destination)
        }
        var headers = ["Overwrite": "F"]
        switch condition {
        case .matches(let tag)? where tag == Self.untaggedFolder:
            // Nothing the server could compare: a folder is there, or the move finds nothing.
            break
        case .matches(let tag)?:
            if configuration.writeProtocol == .locking {
                headers["If"] = ifHeader(source, "[\(Self.quoted(tag))]")
            } else {
                // Some servers check no condition on a MOVE (SabreDAV before 2.0 checks
                // If-Match only on GET, PUT and DELETE): looked at first as well, so that a move
                // of what another client changed fails there, and If-Match closes the rest of
                // the window where the server checks it.
                guard try entry(at: source)?.tag == tag else {
                    throw failure(.preconditionFailed, .move, source, destination: destination)
                }
                headers["If-Match"] = Self.quoted(tag)
            }
        case .absent?: throw failure(.preconditionFailed, .move, source, destination: destination)
        case nil: break
        }
        var folder = false
        var released = false
        while true {
            headers["Destination"] = url(destination, folder: folder).absoluteString
            let answer = try send(
                request("MOVE", url(source, folder: folder), headers: headers), .move, source,
                destination: destination)
            switch answer.status {
            case 200...299:
                // A rename keeps what Apache's ETags are made of (inode, size, modification time, or
                // the bytes); a server whose tag changes with the move only costs a read back.
                if case .matches(let tag)? = condition { return tag }
                return nil
            case let status where Self.isRedirect(status) && !folder:
                folder = true
                continue
            case 404:
                // libcurl sends a request again when the connection it reused broke before any
                // answer: the first may have moved the item. Its tag at the destination says so.
                if case .matches(let tag)? = condition, try entry(at: destination)?.tag == tag { return tag }
                throw failure(.notFound, .move, source, destination: destination, detail: "HTTP 404")
            case 423:
                // Locked by a pass of this device that was killed (given back at once), or by
                // another device or client (named).
                let found = releaseOwnLocks(source)
                guard released || found.released == 0 else {
                    released = true
                    continue
                }
                throw lockedFailure(answer, .move, source, destination: destination, held: found.others)
            case 412:
                if try entry(at: destination) != nil {
                    throw failure(.exists, .move, source, destination: destination)
                }
                throw failure(
                    .preconditionFailed, .move, source, destination: destination, detail: "HTTP 412")
            default:
                // Apache answers 500 for a destination folder that is not there.
                if !destination.parent.isRoot, try entry(at: destination.parent)?.kind != .folder {
                    throw failure(
                        .parentMissing, .move, source, destination: destination,
                        detail: "HTTP \(answer.status)")
                }
                if try entry(at: source) == nil {
                    throw failure(
                        .notFound, .move, source, destination: destination, detail: "HTTP \(answer.status)")
                }
                throw error(status: answer, .move, source, destination: destination)
            }
        }
    }

    public func makeFolder(_ path: RemotePath) throws {
        try validate(path, .makeFolder)
        let answer = try send(request("MKCOL", url(path, folder: true)), .makeFolder, path)
        switch answer.status {
        case 200...299: return
        case 405: throw failure(.exists, .makeFolder, path, detail: "HTTP 405")
        case 400:
            let there = try entry(at: path) != nil
            throw failure(there ? .exists : .parentMissing, .makeFolder, path, detail: "HTTP 400")
        case 409: throw failure(.parentMissing, .makeFolder, path, detail: "HTTP 409")
        default: throw error(status: answer, .makeFolder, path)
        }
    }

    // MARK: Locks

    /// The body of every `LOCK`: an exclusive write lock.
    private static let lockBody = Data(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype>\
        <d:owner>OWNER</d:owner></d:lockinfo>
        """.utf8)

    /// Locks the item at `path` (`Depth: 0`; on a folder that also keeps its members from
    /// changing) if it still has `tag`, for `seconds`.
    ///
    /// - Returns: The lock's token.
    /// - Throws: ``RemoteError``: `.preconditionFailed` when the item has another tag or is not
    ///   there; `.other` when another client holds a lock on it.
    func lock(_ path: RemotePath, matching tag: RemoteTag, _ operation: RemoteError.Operation, seconds: Int)
        throws
        -> String
    {
        var folder = false
        var released = false
        let body = Data(
            String(decoding: Self.lockBody, as: UTF8.self).replacingOccurrences(of: "OWNER", with: lockOwner)
                .utf8)
        while true {
            var headers = [
                "Depth": "0", "Timeout": "Second-\(seconds)",
                "Content-Type": "application/xml; charset=utf-8",
            ]
            // A folder without an ETag: locked as it is (a look after finds whether it is empty).
            if tag != Self.untaggedFolder {
                headers["If"] = ifHeader(path, "[\(Self.quoted(tag))]", folder: folder)
            }
            let answer: HTTPAnswer
            do {
                answer = try send(
                    request("LOCK", url(path, folder: folder), headers: headers), body: .data(body),
                    operation, path)
            } catch let error as RemoteError where error.leavesOutcomeUnknown {
                // The lock may have been taken with its answer lost: give it back now.
                releaseOwnLocks(path)
                throw error
            }
            switch answer.status {
            case 200:
                guard let token = Self.lockToken(answer) else {
                    throw failure(
                        .badAnswer, operation, path, detail: "the server's LOCK answer has no Lock-Token")
                }
                return token
            case 201:
                // Made an empty item where there was none: the tag cannot have held. (Its lock
                // is given back too: not every server ends it with the delete.)
                if let token = Self.lockToken(answer) {
                    _ = try? send(
                        request("DELETE", url(path), headers: ["If": ifHeader(path, "<\(token)>")]), .delete,
                        path)
                    unlock(path, token)
                }
                throw failure(.preconditionFailed, operation, path)
            case let status where Self.isRedirect(status) && !folder:
                folder = true
                continue
            case 423:
                // Ours, left by a killed pass or a request whose answer was lost: given back at
                // once. Anyone else's is named.
                let found = releaseOwnLocks(path)
                guard released || found.released == 0 else {
                    released = true
                    continue
                }
                throw lockedFailure(answer, operation, path, held: found.others)
            case 404, 409, 412:
                throw failure(.preconditionFailed, operation, path, detail: "HTTP \(answer.status)")
            default: throw error(status: answer, operation, path)
            }
        }
    }

    /// The token a `LOCK` answer gives, without its angle brackets.
    private static func lockToken(_ answer: HTTPAnswer) -> String? {
        answer.header("Lock-Token")?.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
    }

    /// Gives back the locks on `path` this device took on this collection and no longer knows
    /// the tokens of (see ``lockOwner(device:collection:)``).
    ///
    /// - Returns: How many it gave back, and the locks of others it found.
    @discardableResult
    func releaseOwnLocks(_ path: RemotePath) -> (released: Int, others: [Multistatus.ActiveLock]) {
        guard
            let answer = try? send(
                request(
                    "PROPFIND", url(path),
                    headers: ["Depth": "0", "Content-Type": "application/xml; charset=utf-8"]),
                body: .data(Multistatus.lockRequest), .write, path, repeatable: true),
            answer.status == 207, let parsed = try? Multistatus(parsing: answer.body)
        else { return (0, []) }
        var released = 0
        var others: [Multistatus.ActiveLock] = []
        for response in parsed.responses {
            for lock in response.locks {
                if lock.owner == lockOwner && !lock.token.isEmpty {
                    unlock(path, lock.token)
                    released += 1
                } else {
                    others.append(lock)
                }
            }
        }
        return (released, others)
    }

    /// An `If` header whose one condition (a lock token in angle brackets, an entity tag in
    /// square ones) is tagged with the item's URL: mod_dav applies an untagged condition to
    /// the parent folder too, which a `DELETE` or `MOVE` also checks, and fails there.
    func ifHeader(_ path: RemotePath, _ state: String, folder: Bool = false) -> String {
        "<\(url(path, folder: folder).absoluteString)> (\(state))"
    }

    /// Gives the lock back; a lock that cannot be given back expires by its timeout.
    func unlock(_ path: RemotePath, _ token: String) {
        _ = try? send(
            request("UNLOCK", url(path), headers: ["Lock-Token": "<\(token)>"]), .write, path,
            repeatable: true)
    }
}
