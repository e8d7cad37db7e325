import Foundation

/// Why a request got no answer: what a ``WebDAVRemote`` turns into a ``RemoteError``.
enum HTTPTransportFailure: Error, Sendable {
    /// No answer within the timeout: the request may or may not have been applied.
    case timedOut
    /// The request ran past its ``RequestDeadline``: the server answers too slowly, or holds its
    /// answer back. The request may or may not have been applied. What it says names the method,
    /// the URL and the bytes moved in how long.
    case tooSlow(String)
    /// The connection broke, or the server closed it, mid-request or mid-answer.
    case connectionLost(String)
    /// Nothing answers at the address (refused, no route, unknown host).
    case unreachable(String)
    /// The server's TLS certificate did not verify, or TLS failed.
    case insecure(String)
    /// The answer's body was larger than the caller allows.
    case bodyTooLarge(limit: Int)
    /// Writing the body to its file failed.
    case localFile(String)
}

extension HTTPTransportFailure {
    /// Whether sending the same request again may get an answer.
    var mayPass: Bool {
        switch self {
        case .timedOut, .connectionLost: return true
        // A server too slow for the deadline is slow again at once: the next pass tries again.
        case .tooSlow, .unreachable, .insecure, .bodyTooLarge, .localFile: return false
        }
    }
}

extension Remote {
    /// The error a failure to get an answer means, for `operation` on `path`; `answerer` names
    /// who answers in a message ("server", "store").
    func error(
        _ failure: HTTPTransportFailure, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil, answerer: String
    ) -> RemoteError {
        switch failure {
        case .timedOut:
            return self.failure(.timedOut, operation, path, destination: destination)
        case .tooSlow(let why):
            return self.failure(.timedOut, operation, path, destination: destination, detail: why)
        case .connectionLost(let why):
            return self.failure(.connectionLost, operation, path, destination: destination, detail: why)
        case .unreachable(let why):
            return self.failure(.unavailable, operation, path, destination: destination, detail: why)
        case .insecure(let why):
            return self.failure(.insecure, operation, path, destination: destination, detail: why)
        case .bodyTooLarge(let limit):
            let size = ByteCountFormatter.string(fromByteCount: Int64(limit), countStyle: .binary)
            return self.failure(
                .other, operation, path, destination: destination,
                detail: "the \(answerer)'s answer is larger than \(size)")
        case .localFile(let why):
            return self.failure(.other, operation, path, destination: destination, detail: why)
        }
    }
}
