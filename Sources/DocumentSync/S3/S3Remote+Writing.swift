import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension S3Remote {
    /// An ``UploadSource`` read a part at a time: chunks are gathered until a part is full, so
    /// that a file of any size is in memory one part at a time.
    final class PartReader {
        private let source: UploadSource
        private var pending = Data()
        private var ended = false

        init(_ source: UploadSource) { self.source = source }

        /// The next `count` bytes; fewer only at the end of the source, none after it. Throws
        /// what the source throws. Holds no more than the part and one chunk of the source:
        /// a part is filled in place, never copied.
        func next(_ count: Int) throws -> Data {
            var part = Data()
            part.reserveCapacity(count)
            var chunk = pending
            pending = Data()
            while part.count < count {
                if chunk.isEmpty {
                    guard !ended, let next = try source.nextChunk() else {
                        ended = true
                        break
                    }
                    chunk = next
                    continue
                }
                let room = count - part.count
                if chunk.count <= room {
                    part.append(chunk)
                    chunk = Data()
                } else {
                    part.append(chunk.prefix(room))
                    chunk = Data(chunk.dropFirst(room))
                }
            }
            pending = chunk
            return part
        }
    }

    /// The headers of `condition` on a write.
    private static func headers(_ condition: WriteCondition) -> [String: String] {
        switch condition {
        case .absent: ["If-None-Match": "*"]
        case .matches(let tag): ["If-Match": tag.rawValue]
        }
    }

    @discardableResult
    public func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
        -> RemoteTag?
    {
        try write(path, from: source, condition: condition, placeListed: false)
    }

    /// A new file whose place the caller's listing vouches for (`placeListed`) is put without
    /// the two listings that look for a folder at its key and for its folder: a sync pass
    /// knows both from the listing it planned with, and they were two requests of every new
    /// document's three.
    @discardableResult
    public func write(
        _ path: RemotePath, from source: UploadSource, condition: WriteCondition, placeListed: Bool
    ) throws -> RemoteTag? {
        try validate(path, .write)
        if condition == .matches(Self.folderTag) {
            throw failure(.notAFile, .write, path, detail: "a folder has that tag")
        }
        if condition == .absent, !placeListed { try checkPlaceForNewFile(path) }
        if source.size > configuration.multipartThreshold, source.size <= Self.mostBytesInOnePut,
            source.sha256 != nil || configuration.streamsUnhashedUploads
        {
            return try putStreamed(path, from: source, hash: source.sha256, condition: condition)
        }
        let reader = PartReader(source)
        if source.size > configuration.multipartThreshold {
            return try writeInParts(path, from: reader, size: source.size, condition: condition)
        }
        let bytes = try reader.next(Int(source.size) + 1)
        guard Int64(bytes.count) == source.size else {
            throw failure(
                .sourceChanged, .write, path,
                detail:
                    "the file gave \(bytes.count > source.size ? "more" : "fewer") than its \(source.size) bytes"
            )
        }
        return try put(path, bytes, condition: condition)
    }

    /// Refuses a new file where a folder of its name is, or whose folder is not there (S3 would
    /// take both: a key is only a name).
    private func checkPlaceForNewFile(_ path: RemotePath) throws {
        if try folderExists(path, .write) {
            throw failure(.preconditionFailed, .write, path, detail: "a folder is there")
        }
        try checkFolder(path.parent, .write, path)
    }

    /// Refuses an operation whose folder `parent` is not there, or is a file.
    private func checkFolder(
        _ parent: RemotePath, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil
    ) throws {
        guard !parent.isRoot, try !folderExists(parent, operation, reportedAs: path) else { return }
        let file = try head(key(parent), operation, path).map { !isTombstone($0) } ?? false
        throw failure(
            .parentMissing, operation, path, destination: destination,
            detail: file ? "“\(parent)” is a file" : nil)
    }

    /// `PutObject` of `bytes` on `condition`; a new file over a tombstone replaces it.
    private func put(_ path: RemotePath, _ bytes: Data, condition: WriteCondition) throws -> RemoteTag {
        var headers = Self.headers(condition)
        headers["Content-Type"] = "application/octet-stream"
        let answer = try send(
            request("PUT", key: key(path), headers: headers, payloadHash: S3Signer.sha256Hex(bytes)),
            body: .data(bytes), .write, path)
        guard (200...299).contains(answer.status) else {
            if try refusedOverTombstone(path, answer, condition) {
                return try put(path, bytes, condition: .matches(Self.tombstoneTag))
            }
            throw error(written: answer, path, condition)
        }
        guard let etag = answer.header("ETag") else {
            throw failure(.badAnswer, .write, path, detail: "the store gives no ETag for the object written")
        }
        return Self.tag(etag)
    }

    /// Whether a new file was refused only because a tombstone holds its key.
    private func refusedOverTombstone(_ path: RemotePath, _ answer: HTTPAnswer, _ condition: WriteCondition)
        throws -> Bool
    {
        guard condition == .absent, error(status: answer, .write, path).kind == .preconditionFailed,
            let object = try head(key(path), .write, path)
        else { return false }
        return isTombstone(object)
    }

    /// The error of a refused write: a refused condition (412, 409, or a 404 for an `If-Match`
    /// over nothing) is `.preconditionFailed`.
    private func error(written answer: HTTPAnswer, _ path: RemotePath, _ condition: WriteCondition)
        -> RemoteError
    {
        let failure = error(status: answer, .write, path)
        if failure.kind == .notFound, condition != .absent {
            return self.failure(.preconditionFailed, .write, path, detail: failure.detail)
        }
        return failure
    }

    /// The most bytes one `PutObject` takes (S3's limit: 5 GiB).
    static let mostBytesInOnePut: Int64 = 5 << 30
    /// The chunks of a body streamed without its hash known (`aws-chunked`), each signed.
    static let streamedChunkSize = RemoteChunk.size

    /// `PutObject` of a large source streamed whole: one request, where a multipart upload
    /// holds a part in memory at a time, hashes each again, waits for each, and has the store
    /// join them (through a vault, whose bytes have no hash before they are sent, a 1 GiB upload
    /// to SeaweedFS took 1.65 times the plain one in 128 parts).
    ///
    /// With the SHA-256 the caller knows (`hash`), the request is signed with it. A store that
    /// checks the bytes against the signed hash (AWS does, SeaweedFS does not) refuses bytes
    /// that changed since they were hashed: the write fails as
    /// ``RemoteError/Kind/sourceChanged`` and nothing is written. Elsewhere the pass's own
    /// check (the file's size and time before and after it was read) finds such a file.
    /// Without it, the body goes as `aws-chunked`, each chunk of ``streamedChunkSize`` signed
    /// as it is sent and chained to the one before (``S3Signer/chunkedBody(of:chunkSize:signer:)``).
    ///
    /// A body read once cannot be sent again: a new file over a tombstone is looked for
    /// first (one `HEAD`, nothing beside the bytes), not retried as ``put(_:_:condition:)``
    /// does.
    private func putStreamed(
        _ path: RemotePath, from source: UploadSource, hash: String?, condition: WriteCondition
    )
        throws -> RemoteTag
    {
        let objectKey = key(path)
        let condition = try conditionOverTombstone(objectKey, condition, path)
        var headers = Self.headers(condition)
        headers["Content-Type"] = "application/octet-stream"
        var body = source
        if hash == nil {
            headers["Content-Encoding"] = "aws-chunked"
            headers["x-amz-decoded-content-length"] = String(source.size)
        }
        let signed = request(
            "PUT", key: objectKey, headers: headers, payloadHash: hash ?? S3Signer.streamingPayload)
        if hash == nil {
            // Sent in chunks each signed, chained to the request's own signature.
            let authorization = signed.value(forHTTPHeaderField: "Authorization") ?? ""
            let seed =
                authorization.range(of: "Signature=").map { String(authorization[$0.upperBound...]) } ?? ""
            let stamp = signed.value(forHTTPHeaderField: "x-amz-date") ?? ""
            body = S3Signer.chunkedBody(
                of: source, chunkSize: Self.streamedChunkSize,
                signer: S3Signer.ChunkSigner(signer, stamp: stamp, seed: seed))
        }
        let stream = UploadStream(body)
        let answer: HTTPAnswer
        do {
            answer = try send(signed, body: .stream(stream, size: body.size), .write, path)
        } catch {
            throw sourceFailure(stream, path) ?? error
        }
        if let failure = sourceFailure(stream, path) { throw failure }
        guard (200...299).contains(answer.status) else {
            if answer.status == 400, String(decoding: answer.body, as: UTF8.self).contains("SHA256Mismatch") {
                throw failure(
                    .sourceChanged, .write, path, detail: "the bytes sent are not the ones hashed before")
            }
            throw error(written: answer, path, condition)
        }
        guard let etag = answer.header("ETag") else {
            throw failure(.badAnswer, .write, path, detail: "the store gives no ETag for the object written")
        }
        return Self.tag(etag)
    }

    /// What ended a streamed body early: the source's error, or the source giving another
    /// size than it said.
    private func sourceFailure(_ stream: UploadStream, _ path: RemotePath) -> (any Error)? {
        if let thrown = stream.failure { return thrown }
        if stream.sizeChanged {
            return failure(
                .sourceChanged, .write, path,
                detail: "the source gave \(stream.givenBytes) bytes or more, not the size it said")
        }
        if stream.reopened {
            return failure(.connectionLost, .write, path, detail: "the upload's body could not be sent again")
        }
        return nil
    }

    /// The condition a write of a new object (`condition` `.absent`) takes where a tombstone
    /// holds its key: written over it; an object there already refuses it.
    private func conditionOverTombstone(_ objectKey: String, _ condition: WriteCondition, _ path: RemotePath)
        throws -> WriteCondition
    {
        guard condition == .absent, let object = try head(objectKey, .write, path) else { return condition }
        guard isTombstone(object) else {
            throw failure(.preconditionFailed, .write, path, detail: "an object is there")
        }
        return .matches(Self.tombstoneTag)
    }

    // MARK: Multipart uploads

    /// A multipart upload: the parts are sent one by one from the source, each signed with its
    /// own hash, and the object appears only when `CompleteMultipartUpload` succeeds on the
    /// condition. An upload that fails is aborted, so that its parts take no space; one a crash
    /// left is aborted by ``sweepStaleUploadsOnce()`` a day later.
    private func writeInParts(
        _ path: RemotePath, from reader: PartReader, size: Int64, condition: WriteCondition
    ) throws -> RemoteTag {
        let objectKey = key(path)
        let condition = try conditionOverTombstone(objectKey, condition, path)
        let created = try send(
            request(
                "POST", key: objectKey, query: [("uploads", "")],
                headers: ["Content-Type": "application/octet-stream"]),
            .write, path)
        guard created.status == 200 else { throw error(status: created, .write, path) }
        guard let uploadID = try xml(created, .write, path).root.value("UploadId"), !uploadID.isEmpty else {
            throw failure(
                .badAnswer, .write, path, detail: "the store started a multipart upload without an UploadId")
        }
        var completed = false
        defer { if !completed { abortUpload(objectKey, uploadID) } }
        var parts: [String] = []
        var sent: Int64 = 0
        while sent < size {
            let wanted = Int(min(Int64(configuration.partSize), size - sent))
            let bytes = try reader.next(wanted)
            guard bytes.count == wanted else {
                throw failure(
                    .sourceChanged, .write, path, detail: "the file gave fewer than its \(size) bytes")
            }
            let number = parts.count + 1
            // A part sent again replaces itself: safe to repeat.
            let answer = try send(
                request(
                    "PUT", key: objectKey, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                    payloadHash: S3Signer.sha256Hex(bytes)),
                body: .data(bytes), .write, path, repeatable: true)
            guard answer.status == 200, let etag = answer.header("ETag") else {
                throw error(status: answer, .write, path)
            }
            parts.append("<Part><PartNumber>\(number)</PartNumber><ETag>\(Self.escaped(etag))</ETag></Part>")
            sent += Int64(wanted)
        }
        guard try reader.next(1).isEmpty else {
            throw failure(.sourceChanged, .write, path, detail: "the file gave more than its \(size) bytes")
        }
        let body = Data(
            ("<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                + parts.joined() + "</CompleteMultipartUpload>").utf8)
        var headers = Self.headers(condition)
        headers["Content-Type"] = "application/xml"
        let answer = try send(
            request(
                "POST", key: objectKey, query: [("uploadId", uploadID)], headers: headers,
                payloadHash: S3Signer.sha256Hex(body)),
            body: .data(body), .write, path)
        // S3 may answer 200 and give an error in the body, found while it joined the parts.
        let result = answer.status == 200 ? try? S3XML(parsing: answer.body) : nil
        guard let result, result.root.name == "CompleteMultipartUploadResult" else {
            throw error(written: answer, path, condition)
        }
        completed = true
        guard let etag = result.root.value("ETag") else {
            throw failure(.badAnswer, .write, path, detail: "the store gives no ETag for the object written")
        }
        return Self.tag(etag)
    }

    /// `AbortMultipartUpload`, best effort: what it fails to free, the sweep frees later.
    private func abortUpload(_ objectKey: String, _ uploadID: String) {
        _ = try? send(
            request("DELETE", key: objectKey, query: [("uploadId", uploadID)]), .write, .root,
            repeatable: true)
    }

    /// Aborts the multipart uploads under the prefix begun more than
    /// ``Configuration/staleUploadAge`` ago (left by a crash, or by an abort that could not be
    /// sent), once per remote, best effort: a store that refuses the listing keeps them.
    func sweepStaleUploadsOnce() {
        let first = staleUploadsSwept.withLock { swept in
            defer { swept = true }
            return !swept
        }
        guard first else { return }
        let oldest = Date().addingTimeInterval(configuration.clockOffset - configuration.staleUploadAge)
        var markers: [(String, String)] = []
        var seen: Set<String> = []
        for _ in 0..<100 {
            guard
                let answer = try? send(
                    request("GET", key: nil, query: [("uploads", ""), ("prefix", keyPrefix)] + markers),
                    .list,
                    .root, repeatable: true),
                answer.status == 200, let listing = try? S3XML(parsing: answer.body)
            else { return }
            for upload in listing.root.children("Upload") {
                // Only ours: a store's word is no reason to abort uploads outside the prefix.
                guard let key = upload.value("Key"), key.hasPrefix(keyPrefix),
                    let id = upload.value("UploadId"),
                    let begun = upload.value("Initiated").flatMap(Self.date), begun <= oldest
                else { continue }
                abortUpload(key, id)
            }
            guard listing.root.value("IsTruncated") == "true", let key = listing.root.value("NextKeyMarker"),
                let id = listing.root.value("NextUploadIdMarker"),
                // A marker given before would go round again.
                seen.insert(key + "\u{0}" + id).inserted
            else { return }
            markers = [("key-marker", key), ("upload-id-marker", id)]
        }
    }

    /// An ISO 8601 time as S3 gives it, with or without fractions of a second.
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    // MARK: Deletes

    public func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try validate(path, .delete)
        guard case .matches(let tag) = condition else {
            // Nothing to delete can be absent.
            guard try entry(at: path) != nil else { throw failure(.notFound, .delete, path) }
            throw failure(.preconditionFailed, .delete, path)
        }
        if tag == Self.folderTag {
            try deleteFolder(path)
        } else {
            try deleteFile(path, tag)
        }
        keepFolder(path.parent)
    }

    /// `DeleteObject` with `If-Match`, or a tombstone written with it.
    private func deleteFile(_ path: RemotePath, _ tag: RemoteTag) throws {
        let answer: HTTPAnswer
        switch configuration.deletes {
        case .conditional:
            answer = try send(
                request("DELETE", key: key(path), headers: ["If-Match": tag.rawValue]), .delete, path)
        case .tombstones:
            answer = try send(
                request(
                    "PUT", key: key(path),
                    headers: ["If-Match": tag.rawValue, "Content-Type": "application/octet-stream"],
                    payloadHash: S3Signer.sha256Hex(Self.tombstoneBytes)),
                body: .data(Self.tombstoneBytes), .delete, path)
        }
        guard !(200...299).contains(answer.status) else { return }
        let failure = error(status: answer, .delete, path)
        guard failure.kind == .preconditionFailed || failure.kind == .notFound else { throw failure }
        if let object = try head(key(path), .delete, path), !isTombstone(object) {
            throw self.failure(.preconditionFailed, .delete, path, detail: failure.detail)
        }
        if try folderExists(path, .delete) {
            throw self.failure(.preconditionFailed, .delete, path, detail: "a folder is there")
        }
        throw self.failure(.notFound, .delete, path, detail: failure.detail)
    }

    /// Deletes the folder's marker, when nothing else is in it.
    private func deleteFolder(_ path: RemotePath) throws {
        let marker = folderKey(path)
        var hasMarker = false
        var holdsMore = false
        // Tombstones may come first in a listing: where there are any, all of it is read.
        let tombstones = configuration.deletes == .tombstones
        try listPages(
            prefix: marker, delimiter: true, maxKeys: tombstones ? nil : 2, pages: tombstones ? nil : 1,
            .delete, path
        ) { page in
            for object in page.objects {
                if object.key == marker {
                    hasMarker = true
                } else if !isTombstone(object) {
                    holdsMore = true
                }
            }
            holdsMore = holdsMore || !page.prefixes.isEmpty
        }
        if holdsMore { throw failure(.notEmpty, .delete, path) }
        guard hasMarker else {
            if let object = try head(key(path), .delete, path), !isTombstone(object) {
                throw failure(.preconditionFailed, .delete, path, detail: "a file is there")
            }
            throw failure(.notFound, .delete, path)
        }
        let answer = try send(request("DELETE", key: marker), .delete, path, repeatable: true)
        guard (200...299).contains(answer.status) || answer.status == 404 else {
            throw error(status: answer, .delete, path)
        }
    }

    /// Writes the marker of `folder` if it has none, so that deleting or moving the last item
    /// out of a folder made by another tool (keys only, no marker) leaves the folder. Best
    /// effort: the delete it follows is done either way.
    private func keepFolder(_ folder: RemotePath) {
        guard !folder.isRoot else { return }
        try? putMarker(folderKey(folder), .makeFolder, folder)
    }

    // MARK: Moves

    @discardableResult
    public func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try validate(source, .move)
        try validate(destination, .move)
        if destination == source || destination.isDescendant(of: source) {
            throw failure(.invalidMove, .move, source, destination: destination)
        }
        var expected: RemoteTag?
        switch condition {
        case .absent?: throw failure(.preconditionFailed, .move, source, destination: destination)
        case .matches(let tag)?: expected = tag
        case nil: break
        }
        let file = try head(key(source), .move, source).flatMap { isTombstone($0) ? nil : $0 }
        let isFolder: Bool
        if expected == Self.folderTag || file == nil {
            isFolder = try folderExists(source, .move)
            if !isFolder {
                throw failure(
                    file == nil ? .notFound : .preconditionFailed, .move, source, destination: destination)
            }
        } else {
            isFolder = false
        }
        if let expected, expected != (isFolder ? Self.folderTag : file.map { Self.tag($0.etag) }) {
            throw failure(.preconditionFailed, .move, source, destination: destination)
        }
        if try head(key(destination), .move, source).map({ !isTombstone($0) }) ?? false
            || folderExists(destination, .move, reportedAs: source)
        {
            throw failure(.exists, .move, source, destination: destination)
        }
        try checkFolder(destination.parent, .move, source, destination: destination)
        if isFolder {
            try moveFolder(source, to: destination)
            keepFolder(source.parent)
            return Self.folderTag
        }
        let tag = try copy(
            key(source), tag: file.map { Self.tag($0.etag) }, to: key(destination), source, destination)
        try deleteMoved(key(source), tag: file.map { Self.tag($0.etag) }, source, destination)
        keepFolder(source.parent)
        return tag
    }

    /// `CopyObject` of `sourceKey` if it still has `tag`, to `destinationKey` if nothing is
    /// there; the copy's tag.
    private func copy(
        _ sourceKey: String, tag: RemoteTag?, to destinationKey: String, _ source: RemotePath,
        _ destination: RemotePath
    ) throws -> RemoteTag {
        var headers = [
            "x-amz-copy-source": "/" + S3Signer.encode(configuration.bucket, keepingSlashes: false) + "/"
                + S3Signer.encode(sourceKey, keepingSlashes: true),
            "If-None-Match": "*",
        ]
        if let tag { headers["x-amz-copy-source-if-match"] = tag.rawValue }
        let answer = try send(
            request("PUT", key: destinationKey, headers: headers), .move, source, destination: destination)
        let result = answer.status == 200 ? try? S3XML(parsing: answer.body) : nil
        guard let result, result.root.name == "CopyObjectResult" else {
            let failure = error(status: answer, .move, source, destination: destination)
            guard failure.kind == .preconditionFailed || failure.kind == .notFound else { throw failure }
            if try head(destinationKey, .move, source).map({ !isTombstone($0) }) ?? false {
                throw self.failure(.exists, .move, source, destination: destination)
            }
            throw self.failure(
                try head(sourceKey, .move, source) == nil ? .notFound : .preconditionFailed, .move, source,
                destination: destination, detail: failure.detail)
        }
        guard let etag = result.root.value("ETag") else {
            throw failure(
                .other, .move, source, destination: destination,
                detail: "the store gives no ETag for the copy")
        }
        return Self.tag(etag)
    }

    /// Deletes the source of a copy if it still has `tag`. Written again since the copy (by
    /// another device), it stays: the move is then a copy, and nothing written is lost.
    @discardableResult
    private func deleteMoved(
        _ sourceKey: String, tag: RemoteTag?, _ source: RemotePath, _ destination: RemotePath
    ) throws -> Bool {
        var headers: [String: String] = [:]
        if let tag { headers["If-Match"] = tag.rawValue }
        let answer = try send(
            request("DELETE", key: sourceKey, headers: headers), .move, source, destination: destination)
        guard !(200...299).contains(answer.status) else { return true }
        let failure = error(status: answer, .move, source, destination: destination)
        guard failure.kind == .preconditionFailed || failure.kind == .notFound else { throw failure }
        return false
    }

    /// Copies every key of the folder under the destination, then deletes each source key
    /// that still has the tag it was copied at. A crash in between leaves keys at both places;
    /// ``finishMove(_:to:condition:)`` settles them.
    private func moveFolder(_ source: RemotePath, to destination: RemotePath) throws {
        let from = folderKey(source)
        let to = folderKey(destination)
        var objects: [Object] = []
        try listPages(prefix: from, delimiter: false, .move, source) { objects += $0.objects }
        // Every folder gets its marker at the destination, also one made only by the keys in it,
        // so that it stays when emptied. Markers are written, not copied: they hold nothing,
        // and some stores give them no tag to copy on.
        var markers: Set<String> = [from]
        for object in objects {
            var folder = object.key.hasSuffix("/") ? object.key : ""
            if folder.isEmpty, let slash = object.key.lastIndex(of: "/") {
                folder = String(object.key[...slash])
            }
            while folder.count > from.count {
                markers.insert(folder)
                folder = String(folder.dropLast())
                folder = folder.lastIndex(of: "/").map { String(folder[...$0]) } ?? ""
            }
        }
        for marker in markers.sorted() {
            try putMarker(to + marker.dropFirst(from.count), .move, source, destination: destination)
        }
        var kept: Set<String> = []
        for object in objects where !object.key.hasSuffix("/") && !isTombstone(object) {
            let target = to + object.key.dropFirst(from.count)
            let tag = Self.tag(object.etag)
            var moved: Bool
            do {
                _ = try copy(object.key, tag: tag, to: target, source, destination)
                moved = true
            } catch let error as RemoteError where error.kind == .exists || error.kind == .preconditionFailed
            {
                // Copied before a crash (the same tag there), or taken at the destination, or
                // written again since the listing: only the first goes from the source.
                moved = try head(target, .move, source).map { Self.tag($0.etag) == tag } ?? false
            }
            if moved {
                moved = try deleteMoved(object.key, tag: tag, source, destination)
            }
            if !moved {
                var folder = object.key
                while let slash = folder.dropLast().lastIndex(of: "/"), folder.count > from.count {
                    folder = String(folder[...slash])
                    kept.insert(folder)
                }
            }
        }
        // The source's markers, deepest first, but those of folders still holding a key.
        for marker in markers.sorted(by: >) where !kept.contains(marker) {
            let answer = try send(
                request("DELETE", key: marker), .move, source, destination: destination, repeatable: true)
            guard (200...299).contains(answer.status) || answer.status == 404 else {
                throw error(status: answer, .move, source, destination: destination)
            }
        }
    }

    /// Writes a folder's marker unless one is there.
    private func putMarker(
        _ marker: String, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil
    ) throws {
        let answer = try send(
            request(
                "PUT", key: marker,
                headers: ["If-None-Match": "*", "Content-Type": "application/x-directory"]),
            body: .data(Data()), operation, path, destination: destination)
        guard (200...299).contains(answer.status) || answer.status == 412 else {
            throw error(status: answer, operation, path, destination: destination)
        }
    }

    /// Completes a move a crash interrupted between its copy and its delete. A file is deleted
    /// at the source when its copy at the destination has its tag, or when it still has the
    /// tag the move was made on (the caller has checked that the destination holds its bytes);
    /// a folder's keys not yet copied are copied, and each source key deleted if it still has
    /// the tag it was copied at. Nothing another device wrote since is deleted.
    public func finishMove(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?)
        throws
    {
        try validate(source, .move)
        try validate(destination, .move)
        if let file = try head(key(source), .move, source), !isTombstone(file) {
            guard let copied = try head(key(destination), .move, source),
                Self.tag(copied.etag) == Self.tag(file.etag) || condition == .matches(Self.tag(file.etag))
            else { return }
            try deleteMoved(key(source), tag: Self.tag(file.etag), source, destination)
            keepFolder(source.parent)
            return
        }
        guard try folderExists(source, .move) else { return }
        try moveFolder(source, to: destination)
        keepFolder(source.parent)
    }

    // MARK: Folders

    public func makeFolder(_ path: RemotePath) throws {
        try validate(path, .makeFolder)
        if try folderExists(path, .makeFolder) {
            throw failure(.exists, .makeFolder, path)
        }
        if let object = try head(key(path), .makeFolder, path), !isTombstone(object) {
            throw failure(.exists, .makeFolder, path, detail: "a file is there")
        }
        try checkFolder(path.parent, .makeFolder, path)
        let answer = try send(
            request(
                "PUT", key: folderKey(path),
                headers: ["If-None-Match": "*", "Content-Type": "application/x-directory"]),
            body: .data(Data()), .makeFolder, path)
        switch answer.status {
        case 200...299: return
        case 412: throw failure(.exists, .makeFolder, path, detail: "HTTP 412")
        default: throw error(status: answer, .makeFolder, path)
        }
    }
}
