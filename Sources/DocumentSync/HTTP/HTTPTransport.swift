import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP answer: the status, the headers by lowercased name, and the body when it was kept.
struct HTTPAnswer: Sendable {
    /// The request's method, for messages.
    var method = ""
    var status: Int
    var headers: [String: String]
    var body: Data
    /// Where the body is when it was too large to keep in memory (a ``HTTPTransport/Destination/spool(memoryLimit:)``):
    /// a temporary file the caller removes.
    var bodyFile: URL?

    /// The header's value, whatever the case of its name.
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// The body of a request.
enum HTTPBody {
    case none
    case data(Data)
    /// Bytes pulled from a source as they are sent.
    case stream(InputStream, size: Int64)
}

/// Blocking HTTP over one `URLSession` (libcurl underneath on Linux): the remote's calls are
/// synchronous (see ``Remote``), so each request waits for its answer on the caller's thread
/// while the session's queue receives it.
///
/// Connections are kept alive and shared by every request of the transport, at most
/// `connections` to the server at once. An answer's body is kept in memory up to a limit the
/// caller gives, or written to a file as it arrives, so that a large download never sits in
/// memory whole.
///
/// No request waits for ever: besides the session's timeout (seconds without a byte), each has
/// a ``RequestDeadline`` that grows with the bytes it moves, and one past it fails with the
/// method and the URL (``HTTPTransportFailure/tooSlow(_:)``), its task cancelled.
final class HTTPTransport: NSObject, Sendable, URLSessionDataDelegate, URLSessionDownloadDelegate {
    /// The session; made once, invalidated when the transport goes.
    private nonisolated(unsafe) var session: URLSession!
    /// The exchanges in flight, by task.
    private let exchanges = Mutex<[Int: Exchange]>([:])

    /// How long a request may take in all.
    let deadline: RequestDeadline

    /// A transport whose requests give up after `timeout` seconds without a byte, or past
    /// `deadline`, with at most `connections` connections to one server.
    init(timeout: TimeInterval, connections: Int, deadline: RequestDeadline = RequestDeadline()) {
        self.deadline = deadline
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = max(connections, 1)
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session once its requests are done.
    func invalidate() { session.finishTasksAndInvalidate() }

    /// Where an answer's body goes.
    enum Destination {
        /// Kept in memory, up to `limit` bytes (more fails the request).
        case memory(limit: Int)
        /// Kept in memory up to `memoryLimit` bytes, and from there on in a temporary file
        /// (``HTTPAnswer/bodyFile``), so that a large body never sits in memory whole.
        case spool(memoryLimit: Int)
        /// Written to a temporary file by the session itself as it arrives (a download task:
        /// the disk paces the network, so a large body never piles up in memory).
        case downloadFile

        /// Where a file's body goes when a listing said its size (nil: unknown): a large one
        /// straight to a temporary file, as fast as the disk takes it; a small one in memory,
        /// spilling to a file past a chunk.
        static func forFile(expectedSize: Int64?) -> Destination {
            (expectedSize ?? 0) > Int64(4 * RemoteChunk.size)
                ? .downloadFile : .spool(memoryLimit: RemoteChunk.size)
        }
    }

    /// Sends `request` with `body` and waits for the answer.
    ///
    /// - Throws: ``HTTPTransportFailure`` when no complete answer came. An HTTP error status
    ///   is an answer, not a failure.
    func send(_ request: URLRequest, body: HTTPBody = .none, into destination: Destination) throws
        -> HTTPAnswer
    {
        var request = request
        var task: URLSessionTask
        switch body {
        case .none: task = session.dataTask(with: request)
        case .data(let data): task = session.uploadTask(with: request, from: data)
        case .stream(let stream, _):
            // Sent chunked: FoundationNetworking chunks a stream whatever the request says, and
            // Apache closes the connection after a request that has both a length and chunks.
            request.httpBodyStream = stream
            task = session.dataTask(with: request)
        }
        if case .downloadFile = destination, case .none = body {
            task = session.downloadTask(with: request)
        }
        var streamsBody = false
        if case .stream = body { streamsBody = true }
        let exchange = Exchange(destination, streamsBody: streamsBody)
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
        let started = DispatchTime.now()
        task.resume()
        wait(for: exchange, of: task, request: request, started: started)
        exchanges.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
        var answer = try exchange.outcome.withLock { $0 }!.get()
        answer.method = request.httpMethod ?? "GET"
        return answer
    }

    /// Waits for the exchange to end, or fails it (and cancels its task) once it has run past
    /// the ``deadline`` its bytes so far allow.
    private func wait(
        for exchange: Exchange, of task: URLSessionTask, request: URLRequest, started: DispatchTime
    ) {
        while true {
            let moved = exchange.moved.withLock { $0 }
            let allowed = deadline.seconds(forMoving: moved)
            if exchange.done.wait(timeout: started + allowed) == .success { return }
            // Bytes that came while waiting move the deadline on.
            let now = exchange.moved.withLock { $0 }
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            guard elapsed >= deadline.seconds(forMoving: now) else { continue }
            let method = request.httpMethod ?? "GET"
            let size = ByteCountFormatter.string(
                fromByteCount: Int64(deadline.leastRate), countStyle: .binary)
            exchange.finish(
                .failure(
                    .tooSlow(
                        "\(method) \(Self.shown(request.url)) moved \(now) bytes in \(Int(elapsed.rounded())) s: "
                            + "slower than \(size)/s after \(Int(deadline.allowance.rounded())) s allowed")))
            task.cancel()
            exchange.done.wait()
            return
        }
    }

    /// A URL as a message shows it: without user, password or query (an S3 query is signed
    /// and long).
    static func shown(_ url: URL?) -> String {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "the request"
        }
        components.user = nil
        components.password = nil
        components.query = nil
        return components.string ?? "the request"
    }

    /// ``send(_:body:into:)``, sent again up to `retries` times after a failure that may pass
    /// (a timeout, a broken connection, 502–504), with waits doubling from 0.2 s: for requests
    /// that change nothing, or nothing more when repeated.
    func send(_ request: URLRequest, body: HTTPBody = .none, into destination: Destination, retries: Int)
        throws -> HTTPAnswer
    {
        var attempt = 0
        while true {
            do {
                let answer = try send(request, body: body, into: destination)
                if attempt < retries, [502, 503, 504].contains(answer.status) {
                    attempt += 1
                    Self.pause(attempt)
                    continue
                }
                return answer
            } catch let failure as HTTPTransportFailure {
                if attempt < retries, failure.mayPass {
                    attempt += 1
                    Self.pause(attempt)
                    continue
                }
                throw failure
            }
        }
    }

    private static func pause(_ attempt: Int) {
        Thread.sleep(forTimeInterval: 0.2 * Double(1 << (attempt - 1)))
    }

    // MARK: URLSessionDataDelegate (on the session's queue)

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(of: dataTask) else { return }
        if let failure = exchange.receive(data) {
            exchange.finish(.failure(failure))
            dataTask.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchange(of: task)?.moved.withLock { $0 += bytesSent }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        exchange(of: downloadTask)?.moved.withLock { $0 += bytesWritten }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchange(of: task) else { return }
        if let error {
            exchange.finish(.failure(Self.failure(error)))
        } else if let response = task.response as? HTTPURLResponse {
            exchange.finish(.success(exchange.answer(response)))
        } else {
            exchange.finish(.failure(.connectionLost("the server gave no HTTP answer")))
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        // The credentials are in the request's own header; a challenge means the server refused
        // them (or none were given). Left to its default handling, FoundationNetworking on Linux
        // waits forever for credentials it does not have; the answer is the 401 itself.
        if let exchange = exchange(of: task) {
            let response = challenge.failureResponse as? HTTPURLResponse
            exchange.finish(
                .success(
                    HTTPAnswer(
                        status: response?.statusCode ?? 401, headers: [:], body: Data(), bodyFile: nil)))
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        // libcurl sends a request again on a new connection when the one it reused was found
        // closed. A streamed body cannot be read again: left alone, the request would go with
        // whatever is left of it (nothing), and the server would take an empty file for the
        // upload. The request fails instead, and the caller settles it by reading back.
        // A body in memory is not asked again (FoundationNetworking stops the process if given
        // a stream for one): libcurl then sends the head alone and the request times out, which
        // the caller settles the same way.
        guard let exchange = exchange(of: task), exchange.streamsBody else { return completionHandler(nil) }
        exchange.finish(
            .failure(.connectionLost("the connection broke and the upload's body cannot be sent again")))
        // (Called on the session's own queue, inside libcurl: cancelling the task here would
        // wait for that queue. The stream's failure ends the transfer.)
        completionHandler(UnreadableStream())
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // A redirect would carry a write to where the caller did not say; the caller sees it.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        // The session removes its file when this returns: the body is moved to one of ours.
        guard let exchange = exchange(of: downloadTask) else { return }
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent(
            ".documentsync-download-\(UUID().uuidString)")
        do {
            try FileManager.default.moveItem(at: location, to: kept)
            exchange.adopt(kept)
        } catch {
            exchange.finish(.failure(.localFile("could not keep the download: \(error)")))
        }
    }

    private func exchange(of task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    /// The transport's form of a `URLSession` error.
    static func failure(_ error: any Error) -> HTTPTransportFailure {
        guard let error = error as? URLError else {
            return .connectionLost(String(describing: error))
        }
        switch error.code {
        case .timedOut: return .timedOut
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return .unreachable(error.localizedDescription)
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid, .secureConnectionFailed, .clientCertificateRejected,
            .clientCertificateRequired:
            return .insecure(error.localizedDescription)
        default:
            // libcurl's TLS failures reach here as unknown errors with its message.
            let message = error.localizedDescription
            if message.contains("SSL") || message.contains("certificate") { return .insecure(message) }
            return .connectionLost(message)
        }
    }

    /// One request's state between the session's queue and the waiting caller.
    private final class Exchange: Sendable {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<HTTPAnswer, HTTPTransportFailure>?>(nil)
        /// The bytes sent and received so far: what the deadline grows with.
        let moved = Mutex<Int64>(0)
        private let destination: Destination
        private struct Body {
            var data = Data()
            var file: (url: URL, handle: FileHandle?)?
        }
        private let body = Mutex<Body>(Body())

        /// Whether the request's body is a stream, which cannot be read again.
        let streamsBody: Bool

        init(_ destination: Destination, streamsBody: Bool) {
            self.destination = destination
            self.streamsBody = streamsBody
        }

        /// Takes a piece of the body; a failure ends the request.
        func receive(_ data: Data) -> HTTPTransportFailure? {
            moved.withLock { $0 += Int64(data.count) }
            // Past its end (the deadline failed it): nothing more is kept.
            guard outcome.withLock({ $0 == nil }) else { return nil }
            return body.withLock { body in
                switch destination {
                case .downloadFile: return nil
                case .memory(let limit):
                    guard body.data.count + data.count <= limit else { return .bodyTooLarge(limit: limit) }
                    body.data.append(data)
                case .spool(let limit):
                    if body.file == nil, body.data.count + data.count <= limit {
                        body.data.append(data)
                        return nil
                    }
                    do {
                        if body.file == nil {
                            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                                ".documentsync-download-\(UUID().uuidString)")
                            guard FileManager.default.createFile(atPath: url.path, contents: body.data) else {
                                return .localFile("could not make the temporary file \(url.path)")
                            }
                            body.file = (url, try FileHandle(forWritingTo: url))
                            try body.file!.handle!.seekToEnd()
                            body.data = Data()
                        }
                        try body.file!.handle!.write(contentsOf: data)
                    } catch {
                        return .localFile(String(describing: error))
                    }
                }
                return nil
            }
        }

        /// Takes the file a download task wrote as the body.
        func adopt(_ file: URL) { body.withLock { $0.file = (file, nil) } }

        func answer(_ response: HTTPURLResponse) -> HTTPAnswer {
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String {
                    headers[name.lowercased()] = value
                }
            }
            return body.withLock { body in
                try? body.file?.handle?.close()
                return HTTPAnswer(
                    status: response.statusCode, headers: headers, body: body.data, bodyFile: body.file?.url)
            }
        }

        /// Records the outcome once (the first wins: a body too large, then the cancellation)
        /// and wakes the caller. A body spooled for a request that failed is removed.
        func finish(_ result: Result<HTTPAnswer, HTTPTransportFailure>) {
            let first = outcome.withLock { outcome in
                guard outcome == nil else { return false }
                outcome = result
                return true
            }
            if case .failure = result {
                body.withLock { body in
                    if let file = body.file {
                        try? file.handle?.close()
                        try? FileManager.default.removeItem(at: file.url)
                        body.file = nil
                    }
                }
            }
            if first { done.signal() }
        }
    }
}

/// A body that fails at its first read: for a request whose streamed body cannot be sent again.
private final class UnreadableStream: InputStream {
    init() { super.init(data: Data()) }
    override func open() {}
    override func close() {}
    override var streamStatus: Stream.Status { .error }
    override var streamError: (any Error)? { CocoaError(.fileReadUnknown) }
    override var hasBytesAvailable: Bool { true }
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int { -1 }
    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
    ) -> Bool { false }
}
