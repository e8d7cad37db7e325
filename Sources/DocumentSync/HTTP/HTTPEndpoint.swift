import Foundation

/// What the network remotes (WebDAV, S3) check of the address they are given.
enum HTTPEndpoint {
    /// Whether `host` names this computer: plain http to it crosses no network, so a password
    /// or a document sent over it is read by no one on the way.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Why the certificate authority file `caFile` cannot serve a remote reached with
    /// `scheme`, or nil when it can (or none is given): it is for https only, and must pass
    /// ``CertificateAuthorityFile/check(_:)``.
    static func trustProblem(caFile: String?, scheme: String) -> String? {
        guard let caFile else { return nil }
        guard scheme == "https" else {
            return
                "a certificate authority file (--ca-file) is for https:// servers, and this one is \(scheme)://"
        }
        do { try CertificateAuthorityFile.check(caFile) } catch { return error.description }
        return nil
    }
}
