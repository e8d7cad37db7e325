import Foundation

extension S3Remote {
    /// The longest a presigned URL lives: seven days, SigV4's limit.
    static let longestLinkLifetime = 604_800

    /// A presigned `GET` of the file's object, valid for `lifetime` in whole seconds (at least
    /// one, at most seven days), as AWS's own presigned URLs are: the URL carries the access
    /// key's id, the time it was signed, its lifetime and the signature, never the secret. The
    /// store refuses it (403) once it expired. Made only for a file the store holds.
    ///
    /// - Throws: ``RemoteError``: `.notFound` or `.notAFile` when no file is at `path`; what
    ///   looking it up throws.
    public func publishedLink(of path: RemotePath, lifetime: Duration) throws -> PublishedLink {
        try validate(path, .publish)
        switch try entry(at: path)?.kind {
        case .file: break
        case .folder: throw failure(.notAFile, .publish, path)
        case nil: throw failure(.notFound, .publish, path)
        }
        let seconds = min(max(Int(lifetime.components.seconds), 1), Self.longestLinkLifetime)
        let now = Date()
        let objectPath = bucketPath + "/" + S3Signer.encode(key(path), keepingSlashes: true)
        let query = signer.presignedQuery(
            host: host, path: objectPath, lifetime: seconds,
            date: now.addingTimeInterval(configuration.clockOffset))
        guard let url = URL(string: origin + objectPath + "?" + query) else {
            throw failure(.invalidName, .publish, path)
        }
        return PublishedLink(url: url, expires: now.addingTimeInterval(Double(seconds)))
    }
}
