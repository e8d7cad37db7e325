import Foundation

/// What the network remotes (WebDAV, S3) check of the address they are given.
enum HTTPEndpoint {
    /// Whether `host` names this computer: plain http to it crosses no network, so a password
    /// or a document sent over it is read by no one on the way.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}

extension HTTPAnswer {
    /// Gives the bytes of a downloaded body's file to `sink` in chunks; a file that cannot be
    /// read back is the error `failure` makes of the reason.
    static func stream(_ file: URL, to sink: (Data) throws -> Void, failure: (String) -> RemoteError) throws {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: file) } catch {
            throw failure("the downloaded bytes could not be read back: \(error)")
        }
        defer { try? handle.close() }
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: RemoteChunk.size / 4) } catch {
                throw failure("the downloaded bytes could not be read back: \(error)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            try sink(chunk)
        }
    }

    static func size(of file: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}
