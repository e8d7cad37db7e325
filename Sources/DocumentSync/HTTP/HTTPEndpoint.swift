import Foundation

/// What the network remotes (WebDAV, S3) check of the address they are given.
enum HTTPEndpoint {
    /// Whether `host` names this computer: plain http to it crosses no network, so a password
    /// or a document sent over it is read by no one on the way.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
