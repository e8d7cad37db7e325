import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a WebDAV server does with the requests sync depends on, found out by trying them in
/// a scratch folder on the server (removed after): run when a remote is first set up, and kept
/// with the remote's settings.
///
/// A server is usable when its ETags change on every write, also at equal size within one
/// second, and either its locks are real (a write without the lock's token is refused, and a
/// lock's ETag condition holds) or its `If-Match` (also on a file that is not there) and
/// `If-None-Match: *` are honoured with strong ETags. A server that does neither would let one
/// device silently overwrite another's edit; it is refused with what it failed and what to
/// change.
///
/// ETags that stay the same within a second are told apart from ETags made of the bytes by
/// three writes of one size a clock tick apart, which cannot cross two seconds: a server is
/// never found safe by the luck of its timing. A request whose answer is lost (no answer in
/// time, a connection reset or cut short, a 5xx) ends the probe with that error, never read
/// as the server refusing something: the caller reports a failure to try again, and keeps
/// nothing.
///
/// For example:
///
/// ```swift
/// let probe = try WebDAVProbe.run(on: remote)
/// print(probe.summary)            // "Apache-like: real locks, ETags weak for a second after a write ..."
/// guard let writes = probe.writeProtocol else { throw ... probe.refusal }
/// ```
public struct WebDAVProbe: Sendable, Codable, Equatable {
    /// Whether items carry ETags at all.
    public var hasETags = false
    /// Whether two writes of the same size within one second give two ETags.
    public var etagsChangeWithinASecond = false
    /// Whether an ETag read right after a write is weak (`W/"..."`, Apache's for one second).
    public var etagsWeakAfterWrite = false
    /// Whether an ETag is made of the bytes (the same bytes written twice give the same one).
    public var etagsAreDigests = false
    /// How the ETags are made of the bytes, when they are and one of ``WebDAVTagRecipe``'s
    /// makes every tag the probe saw; nil otherwise, and in settings kept from before this was
    /// probed.
    public var etagRecipe: WebDAVTagRecipe?
    /// Whether `If-Match` with a wrong ETag is refused with 412, the file left as it was, and
    /// on a file that is not there too (nothing made).
    public var honoursIfMatch = false
    /// Whether `If-None-Match: *` on an existing file is refused with 412.
    public var honoursIfNoneMatch = false
    /// Whether a lock keeps a write without its token out (423).
    public var locksAreReal = false
    /// Whether a `LOCK` with an ETag condition that does not hold is refused (412).
    public var lockConditionsHold = false
    /// Whether a folder's ETag changes when a file two levels below it changes: then an
    /// unchanged folder's subtree need not be listed.
    public var folderETagsPropagate = false
    /// Nextcloud's and ownCloud's `oc:fileid`, kept across renames.
    public var hasFileIDs = false
    /// The server's name as its `Server` header gives it, when it does.
    public var server: String?

    public init() {}

    /// How writes can be kept safe on this server; nil when they cannot.
    public var writeProtocol: WebDAVRemote.WriteProtocol? {
        guard hasETags, etagsChangeWithinASecond || etagsAreDigests else { return nil }
        if locksAreReal, lockConditionsHold { return .locking }
        if honoursIfMatch, honoursIfNoneMatch, !etagsWeakAfterWrite { return .conditional }
        return nil
    }

    /// Whether `--unsafe-server` can make sync work with the server: not without ETags, which
    /// every pass reads to know what changed, and every write to know what it wrote (with
    /// none, every upload was reported failed though written, a device that never edited a
    /// file got a conflict, and each file was downloaded again on every pass).
    public var canSyncUnsafely: Bool { hasETags }

    /// What the server failed, and what to change, when ``writeProtocol`` is nil.
    public var refusal: String? {
        guard writeProtocol == nil else { return nil }
        guard hasETags else {
            return
                "the server gives no ETags, so sync cannot tell what changed on it nor what it wrote there, and cannot be made to work with it (--unsafe-server does not help). "
                + "Use a WebDAV server that gives ETags: Apache's mod_dav (without FileETag None), Nextcloud, ownCloud, SabreDAV, or a NAS's WebDAV service; nginx's dav-ext module gives none. "
                + "Or sync through a folder: mount the share and give file:///path/to/it"
        }
        var failed: [String] = []
        if !etagsChangeWithinASecond, !etagsAreDigests {
            failed.append(
                "its ETags stay the same across two writes of the same size within one second (made of whole-second times), "
                    + "so such an edit is missed; on Apache set FileETag Digest")
        }
        if !(locksAreReal && lockConditionsHold) {
            if !honoursIfMatch {
                failed.append(
                    "it ignores If-Match (always, or on a file that is not there), so a write overwrites what another client wrote or brings back what it deleted"
                )
            }
            if !honoursIfNoneMatch {
                failed.append("it ignores If-None-Match: *, so a new file overwrites one made meanwhile")
            }
            if honoursIfMatch, honoursIfNoneMatch, etagsWeakAfterWrite {
                failed.append(
                    "its ETags are weak after a write and it has no real locks, so If-Match cannot hold")
            }
            if !locksAreReal { failed.append("its locks do not keep other writers out") }
        }
        return "the server cannot keep one device from overwriting another's edit: "
            + failed.joined(separator: "; ")
            + ". Use a server that honours If-Match (Apache's mod_dav with DavLockDB, Nextcloud), or --unsafe-server to sync anyway, reading back every write"
    }

    /// The server's class in words, for `docs remote test`.
    public var summary: String {
        var parts: [String] = []
        switch writeProtocol {
        case .locking?:
            parts.append(
                "safe: writes are made under real WebDAV locks with the ETag as the lock's condition")
        case .conditional?: parts.append("safe: writes are conditional (If-Match, If-None-Match: *)")
        case nil: parts.append("unsafe: \(refusal ?? "")")
        }
        if hasETags {
            var etags =
                "ETags "
                + (etagsAreDigests
                    ? "made of the bytes"
                    : etagsChangeWithinASecond ? "change on every write" : "change only once a second")
            if etagsWeakAfterWrite { etags += ", weak for about a second after a write" }
            parts.append(etags)
        }
        parts.append(locksAreReal ? "real locks" : "no real locks")
        parts.append(
            folderETagsPropagate
                ? "folder ETags propagate (unchanged folders are skipped)" : "folder ETags do not propagate")
        if hasFileIDs { parts.append("file IDs kept across renames") }
        return (server.map { "\($0): " } ?? "") + parts.joined(separator: "; ")
    }

    /// Tries the requests in a scratch folder at the top of `remote`'s collection.
    ///
    /// - Throws: ``RemoteError`` when the collection cannot be reached or is not WebDAV
    ///   (401, 404, a server that does not answer PROPFIND).
    public static func run(on remote: WebDAVRemote) throws -> WebDAVProbe {
        try Run(remote).probe()
    }

    /// The requests, on raw HTTP: the remote's own calls would hide what the server does.
    private struct Run {
        let remote: WebDAVRemote
        let scratch: RemotePath

        init(_ remote: WebDAVRemote) {
            self.remote = remote
            scratch = RemotePath(".documentsync-probe-" + String(UInt64.random(in: .min ... .max), radix: 16))
        }

        func send(
            _ method: String, _ path: RemotePath, folder: Bool = false, headers: [String: String] = [:],
            body: Data? = nil
        )
            throws -> HTTPAnswer
        {
            try remote.send(
                remote.request(method, remote.url(path, folder: folder), headers: headers),
                body: body.map(HTTPBody.data) ?? .none, .write, path)
        }

        func properties(_ path: RemotePath, folder: Bool = false) throws -> Multistatus.Response? {
            try remote.propfind(path, depth: "0", folder: folder, .entry)?.first(where: \.hasProperties)
        }

        func etag(_ path: RemotePath, folder: Bool = false) throws -> String? {
            try properties(path, folder: folder)?.etag
        }

        /// Longer than the coarsest clock tick a kernel stamps file times with (10 ms at 100 Hz).
        static let tick: TimeInterval = 0.025

        func isFolder(_ path: RemotePath) -> Bool {
            (try? properties(path, folder: true))?.isCollection == true
        }

        /// What `body` gives, or nil when the server refuses it; a failure to get an answer
        /// is thrown, never taken for a refusal (it would class the server by chance).
        func refusable<Value>(_ body: () throws -> Value) throws -> Value? {
            do { return try body() } catch let error as RemoteError where !error.isTransient { return nil }
        }

        func contents(_ path: RemotePath) throws -> Data? {
            let answer = try send("GET", path)
            return answer.status == 200 ? answer.body : nil
        }

        func probe() throws -> WebDAVProbe {
            var probe = WebDAVProbe()
            // Reachable, WebDAV, credentials accepted: the remote's own listing says which not.
            _ = try remote.list(.root)
            let made = try send("MKCOL", scratch, folder: true)
            // 405 to a name only this probe uses: the MKCOL was done and libcurl sent it again
            // after the connection broke (a folder is there now), not a refusal.
            guard (200...299).contains(made.status) || made.status == 405 && isFolder(scratch) else {
                throw remote.error(status: made, .makeFolder, scratch)
            }
            probe.server = made.header("Server")
            defer { _ = try? send("DELETE", scratch, folder: true) }

            let file = scratch.appending("a.txt")
            _ = try send("PUT", file, headers: ["If-None-Match": "*"], body: Data("aaaa".utf8))
            let written = try properties(file)
            probe.hasETags = written?.etag != nil
            probe.etagsWeakAfterWrite = written?.etag?.hasPrefix("W/") ?? false
            probe.hasFileIDs = written?.fileID != nil
            // Writes of the same size one after the other: each must give a new tag. Tags made
            // of whole-second times (wsgidav's, nginx's) stay the same within a second, and at
            // most one of three steps this quick can cross a second; the same bytes again
            // giving the first tag is a tag made of the bytes. The steps are a little apart:
            // the kernel stamps a file's time by its clock tick (4 ms at 250 Hz), so two writes
            // within one tick keep Apache's time-and-size ETag too.
            var tags = [written?.etag.map(WebDAVRemote.tag)]
            for text in ["bbbb", "aaaa", "cccc"] {
                Thread.sleep(forTimeInterval: Self.tick)
                _ = try send("PUT", file, body: Data(text.utf8))
                tags.append(try etag(file).map(WebDAVRemote.tag))
            }
            probe.etagsChangeWithinASecond =
                tags.allSatisfy { $0 != nil } && zip(tags, tags.dropFirst()).allSatisfy { $0 != $1 }
            probe.etagsAreDigests = probe.etagsChangeWithinASecond && tags[2] == tags[0]
            if probe.etagsAreDigests {
                let bytes = ["aaaa", "bbbb", "aaaa", "cccc"].map { Data($0.utf8) }
                probe.etagRecipe = WebDAVTagRecipe.found(
                    in: zip(bytes, tags).compactMap { bytes, tag in tag.map { (bytes, $0) } })
            }
            _ = try send("PUT", file, body: Data("bbbb".utf8))

            let wrongMatch = try send(
                "PUT", file, headers: ["If-Match": "\"documentsync-no-such-etag\""], body: Data("cccc".utf8))
            let afterWrongMatch = try contents(file)
            // And on a file that is not there (one another client deleted): refused, nothing
            // made. wsgidav takes it as no condition and makes the file.
            let missing = scratch.appending("missing.txt")
            let missingMatch = try send(
                "PUT", missing, headers: ["If-Match": "\"documentsync-no-such-etag\""],
                body: Data("cccc".utf8))
            let afterMissingMatch = try properties(missing)
            probe.honoursIfMatch =
                wrongMatch.status == 412 && afterWrongMatch == Data("bbbb".utf8) && missingMatch.status == 412
                && afterMissingMatch == nil
            let noneMatch = try send("PUT", file, headers: ["If-None-Match": "*"], body: Data("dddd".utf8))
            let afterNoneMatch = try contents(file)
            probe.honoursIfNoneMatch = noneMatch.status == 412 && afterNoneMatch == Data("bbbb".utf8)

            let wrongLock = try refusable {
                try remote.lock(
                    file, matching: RemoteTag("\"documentsync-no-such-etag\""), .write, seconds: 30)
            }
            if let wrongLock { remote.unlock(file, wrongLock) }
            probe.lockConditionsHold = wrongLock == nil
            if let current = try etag(file),
                let token = try refusable({
                    try remote.lock(file, matching: WebDAVRemote.tag(current), .write, seconds: 30)
                })
            {
                let intruder = try send("PUT", file, body: Data("eeee".utf8))
                let afterIntruder = try contents(file)
                probe.locksAreReal = intruder.status == 423 && afterIntruder == Data("bbbb".utf8)
                remote.unlock(file, token)
            } else {
                probe.lockConditionsHold = false
            }

            let folder = scratch.appending("sub")
            let deep = folder.appending("b.txt")
            _ = try send("MKCOL", folder, folder: true)
            _ = try send("PUT", deep, body: Data("1".utf8))
            let before = try etag(scratch, folder: true)
            _ = try send("PUT", deep, body: Data("2".utf8))
            let after = try etag(scratch, folder: true)
            probe.folderETagsPropagate =
                before != nil && after != nil && before.map(WebDAVRemote.tag) != after.map(WebDAVRemote.tag)
            return probe
        }
    }
}
