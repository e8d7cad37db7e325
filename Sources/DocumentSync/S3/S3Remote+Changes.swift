import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension S3Remote {
    /// The ETag of ``RemotePath/changeMarker`` from one `ListObjectsV2` of one key (its own
    /// key as the prefix), sent once, within ``RequestDeadline/changeMarker``: S3 has no
    /// folder tags, and a listing of one key answers whether the object is there or not.
    public func changeMarker() throws -> RemoteTag? {
        let path = RemotePath.changeMarker
        let objectKey = key(path)
        let query = [("list-type", "2"), ("prefix", objectKey), ("encoding-type", "url"), ("max-keys", "1")]
        let answer: HTTPAnswer
        do {
            answer = try transport.send(
                request("GET", key: nil, query: query), into: .memory(limit: 64 << 10),
                deadline: .changeMarker)
        } catch let failure as HTTPTransportFailure {
            throw error(failure, .entry, path, answerer: "store")
        }
        guard answer.status == 200 else { throw error(status: answer, .entry, path) }
        let page = try parsePage(try xml(answer, .entry, path), .entry, path)
        guard let object = page.objects.first(where: { $0.key == objectKey }), !isTombstone(object) else {
            return nil
        }
        return Self.tag(object.etag)
    }
}
