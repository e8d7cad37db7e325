import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension WebDAVRemote {
    /// One `PROPFIND` of `Depth: 0`, sent once, within ``RequestDeadline/changeMarker``: of the root
    /// where the server's folder ETags change with anything below them
    /// (``Configuration/folderTagsPropagate``), so that any client's change is seen; of
    /// ``RemotePath/changeMarker`` otherwise (Apache's folder ETags change only with the
    /// folder's own entries). A root that answers without an ETag is asked no more: the
    /// marker file is asked instead.
    public func changeMarker() throws -> RemoteTag? {
        if configuration.folderTagsPropagate, !rootGivesNoTag.load(ordering: .relaxed) {
            let tag = try changeMarker(at: .root)
            if tag != Self.untaggedFolder { return tag }
            rootGivesNoTag.store(true, ordering: .relaxed)
        }
        return try changeMarker(at: .changeMarker)
    }

    /// The tag of `path` from one `PROPFIND` of `Depth: 0`; nil when there is nothing there
    /// (but the root).
    private func changeMarker(at path: RemotePath) throws -> RemoteTag? {
        let headers = ["Depth": "0", "Content-Type": "application/xml; charset=utf-8"]
        let answer: HTTPAnswer
        do {
            answer = try transport.send(
                request("PROPFIND", url(path, folder: path.isRoot), headers: headers),
                body: .data(Multistatus.plainRequest), into: .memory(limit: 64 << 10),
                deadline: .changeMarker)
        } catch let failure as HTTPTransportFailure {
            throw error(failure, .entry, path, answerer: "server")
        }
        switch answer.status {
        case 207: break
        case 404 where !path.isRoot: return nil
        default: throw error(status: answer, .entry, path)
        }
        let responses: [Multistatus.Response]
        do { responses = try Multistatus(parsing: answer.body).responses } catch let malformed
            as Multistatus.Malformed
        {
            throw failure(.badAnswer, .entry, path, detail: "the server's PROPFIND answer is \(malformed)")
        }
        for response in responses where response.hasProperties {
            if try self.path(ofHref: response.href, .entry, path) == path { return Self.tag(of: response) }
        }
        throw failure(.badAnswer, .entry, path, detail: "the server's PROPFIND answer does not describe it")
    }
}
