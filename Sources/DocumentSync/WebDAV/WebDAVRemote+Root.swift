import Foundation

extension WebDAVRemote: RemoteRootMaking {
    /// `MKCOL` of the remote's own collection: 409 when its parent is gone too.
    func makeRootFolder() throws {
        let answer = try send(request("MKCOL", url(.root, folder: true)), .makeFolder, .root)
        switch answer.status {
        case 200...299: return
        case 405: throw failure(.exists, .makeFolder, .root, detail: "HTTP 405")
        case 409: throw failure(.parentMissing, .makeFolder, .root, detail: "HTTP 409")
        default: throw error(status: answer, .makeFolder, .root)
        }
    }
}
