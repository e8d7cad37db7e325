import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Sends a message to another process's ``MessageChannelServer`` and waits, for a bounded
/// time, for the reply.
///
/// One deadline covers the whole exchange (connecting, sending, waiting for the handler,
/// reading the reply), so a presenter that never answers delays the sender by at most the
/// timeout. The caller then skips that presenter with a warning.
///
/// For example:
///
/// ```swift
/// do {
///     let reply = try await MessageChannelClient.send(request, to: socketPath)
/// } catch let error as DocumentKitError where error.code == .presenterGone {
///     registry.removePresenters(ofProcess: pid)
/// } catch let error as DocumentKitError where error.code == .timedOut {
///     log.warning("\(error)")
/// }
/// ```
package enum MessageChannelClient {
    /// How long a writer waits for a presenter before going on without it.
    public static let defaultTimeout: Duration = .seconds(3)

    /// Sends `message` and returns the reply, blocking the calling thread.
    ///
    /// - Parameters:
    ///   - message: The request.
    ///   - socketPath: The server's socket, from ``MessageChannelPaths``.
    ///   - timeout: The bound on the whole exchange.
    /// - Returns: The handler's reply.
    /// - Throws: ``DocumentKitError`` with code
    ///   - `presenterGone` if no process listens at the path (`ENOENT`, `ECONNREFUSED`) or
    ///     it closed the connection without answering: the caller forgets its presenters;
    ///   - `timedOut` if the deadline passed first, naming the socket and the process;
    ///   - `permissionDenied` if the server belongs to another user or refused this one;
    ///   - `corruptFile` if the reply is not a message or the server could not read the request;
    ///   - others from the system calls.
    public static func send(
        _ message: Message, to socketPath: String, timeout: Duration = defaultTimeout
    ) throws -> Message {
        let deadline = ContinuousClock.now + timeout
        let url = URL(fileURLWithPath: socketPath)
        let frame = try MessageFrame.encode(message)
        let socket = try connect(to: socketPath, until: deadline, timeout: timeout)

        // The kernel recorded the server's pid and user when it started listening: the pid
        // is the best name for it in an error, and the user must be ours.
        let peer = try? Syscall.peerCredentials(socket.rawValue).get()
        if let peer, peer.user != geteuid() {
            throw DocumentKitError(
                .permissionDenied, operation: "send to file presenter", url: url,
                detail: "process \(peer.pid) belongs to another user")
        }
        let failure = { (failure: ChannelFailure) -> DocumentKitError in
            error(failure, socketPath: socketPath, pid: peer?.pid, timeout: timeout)
        }

        if case .failure(let reason) = socket.sendAll(frame, until: deadline) { throw failure(reason) }
        let payload: [UInt8]
        switch socket.receiveFrame(until: deadline) {
        case .success(let bytes): payload = bytes
        case .failure(let reason): throw failure(reason)
        }
        let reply: Message
        do {
            reply = try MessageFrame.decode(payload: payload)
        } catch {
            throw DocumentKitError(
                .corruptFile, operation: "read the reply of file presenter", url: url,
                detail: "the reply is not a message", underlying: error)
        }
        switch reply.kind {
        case .rejected:
            throw DocumentKitError(
                .corruptFile, operation: "send to file presenter", url: url,
                detail: "the server could not read the request: \(reply.error ?? "no reason given")")
        case .refused:
            throw DocumentKitError(
                .permissionDenied, operation: "send to file presenter", url: url,
                detail: "the server refused the connection: \(reply.error ?? "no reason given")")
        default:
            return reply
        }
    }

    /// Sends `message` and returns the reply without blocking the cooperative thread pool:
    /// the exchange runs on a Dispatch queue of its own.
    ///
    /// - Parameters: As in the blocking form.
    /// - Returns: The handler's reply.
    /// - Throws: As the blocking form, and `CancellationError` if the task was cancelled
    ///   before it started; once started, the timeout bounds it.
    public static func send(
        _ message: Message, to socketPath: String, timeout: Duration = defaultTimeout
    ) async throws -> Message {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            // A serial queue of its own runs on Dispatch's overcommitting pool, so many
            // presenters can be waited on at once without starving other work.
            DispatchQueue(label: "DocumentKit message channel send").async {
                continuation.resume(with: Result { try send(message, to: socketPath, timeout: timeout) })
            }
        }
    }

    /// Connects to the socket at `path`, waiting at most until `deadline`.
    ///
    /// - Throws: ``DocumentKitError`` with code `presenterGone` if nobody listens there.
    static func connect(
        to path: String, until deadline: ContinuousClock.Instant, timeout: Duration? = nil
    ) throws -> ChannelSocket {
        let url = URL(fileURLWithPath: path)
        let socket = try ChannelSocket.make().get("create a socket", url)
        while true {
            let started = Syscall.withShortSocketPath(path) { Syscall.connect(socket.rawValue, unixPath: $0) }
            switch started {
            case .success:
                return socket
            case .failure(let error) where error == Errno(rawValue: EINPROGRESS):
                switch socket.wait(for: POLLOUT, until: deadline) {
                case .success(true): break
                case .success(false):
                    throw Self.error(
                        .timedOut, socketPath: path, pid: nil, timeout: timeout ?? deadline - .now)
                case .failure(let failure):
                    throw Self.error(failure, socketPath: path, pid: nil, timeout: timeout ?? .zero)
                }
                switch Syscall.socketError(socket.rawValue) {
                case .success(nil): return socket
                case .success(let error?): throw connectionError(error, url: url)
                case .failure(let error): throw connectionError(error, url: url)
                }
            case .failure(.resourceTemporarilyUnavailable):
                // A Unix socket's backlog is full: the kernel offers nothing to wait on, so
                // retry shortly until the deadline.
                guard ContinuousClock.now < deadline else {
                    throw Self.error(.timedOut, socketPath: path, pid: nil, timeout: timeout ?? .zero)
                }
                usleep(1000)
            case .failure(let error):
                throw connectionError(error, url: url)
            }
        }
    }

    private static func connectionError(_ error: Errno, url: URL) -> DocumentKitError {
        if error == .noSuchFileOrDirectory || error == Errno(rawValue: ECONNREFUSED)
            || error == Errno(rawValue: ENOTSOCK)
        {
            let pid = MessageChannelPaths.processIdentifier(ofSocketPath: url.path)
            return DocumentKitError(
                .presenterGone, operation: "connect to file presenter", url: url, errno: error,
                detail: "no process is listening\(pid.map { " (process \($0) has exited)" } ?? "")")
        }
        return DocumentKitError(error, operation: "connect to file presenter", url: url)
    }

    private static func error(
        _ failure: ChannelFailure, socketPath: String, pid: pid_t?, timeout: Duration
    ) -> DocumentKitError {
        let url = URL(fileURLWithPath: socketPath)
        let pid = pid ?? MessageChannelPaths.processIdentifier(ofSocketPath: socketPath)
        let process = pid.map { "process \($0)" } ?? "the process listening there"
        switch failure {
        case .timedOut:
            return DocumentKitError(
                .timedOut, operation: "wait for file presenter", url: url,
                detail: "\(process) did not answer within \(describe(timeout))")
        case .closed:
            return DocumentKitError(
                .presenterGone, operation: "wait for file presenter", url: url,
                detail: "\(process) closed the connection without answering")
        case .oversized(let length):
            return DocumentKitError(
                .corruptFile, operation: "read the reply of file presenter", url: url,
                detail: "the reply announces \(length) bytes, more than the limit of "
                    + "\(MessageFrame.maximumPayloadLength)")
        case .system(let error):
            return DocumentKitError(error, operation: "talk to file presenter", url: url)
        }
    }

    /// "3 s", "250 ms": a timeout as a person reads it.
    static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        return "\(milliseconds) ms"
    }
}
