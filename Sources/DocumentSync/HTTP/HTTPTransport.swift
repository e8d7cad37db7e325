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
    /// The bytes of the body given to a ``BodySink`` as they came (a large 200 answer's), which
    /// are not in ``body``.
    var streamed: Int64 = 0

    /// The body's length in all: what was kept and what was given to a sink.
    var received: Int64 { streamed + Int64(body.count) }

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
/// `connections` to the server at once; requests may be sent from many threads at once, each
/// waiting for its own answer. An answer's body is kept in memory up to a limit the caller
/// gives, or given as it arrives to the caller's consumer (``send(_:memoryLimit:retries:streamingTo:)``),
/// so that a large download never sits in memory whole and is never copied through a file of
/// the transport's own: the consumer writes it where it goes, once.
///
/// No request waits for ever: besides the session's timeout (seconds without a byte), each has
/// a ``RequestDeadline`` that grows with the bytes it moves, and one past it fails with the
/// method and the URL (``HTTPTransportFailure/tooSlow(_:)``), its task cancelled.
final class HTTPTransport: Sendable {
    /// The session; invalidated when the transport goes.
    private let session: URLSession
    /// The session's delegate, which holds the exchanges in flight.
    private let events = SessionEvents()

    /// How long a request may take in all.
    let deadline: RequestDeadline

    /// The most requests a transport has in flight well: FoundationNetworking's libcurl
    /// driver does not scale past about this many. Measured on loopback Apache (1,000 PUTs
    /// and MOVEs of 4 KiB, 2 cores): 2.7 s at 8 or 16 in flight, 31 s at 24 or 32, 33 s at
    /// 64, with the time spent in libdispatch re-arming the multi handle's socket and timer
    /// sources (eventfd writes to its manager thread: 75% of the CPU, most of it system time)
    /// and Apache serving 64 threads at once either way.
    static let mostRequestsInFlight = 16

    /// A transport whose requests give up after `timeout` seconds without a byte, or past
    /// `deadline`, with at most `connections` connections to one server (libcurl's own
    /// default is 6; a caller keeping many requests in flight gives as many).
    init(timeout: TimeInterval, connections: Int, deadline: RequestDeadline = RequestDeadline()) {
        self.deadline = deadline
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = max(connections, 1)
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = PacedQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: events, delegateQueue: queue)
    }

    /// Ends the session once its requests are done.
    func invalidate() { session.finishTasksAndInvalidate() }

    /// Where an answer's body goes.
    enum Destination: Sendable {
        /// Kept in memory, up to `limit` bytes (more fails the request).
        case memory(limit: Int)
        /// A 200 answer's body kept in memory up to `memoryLimit` bytes and, once it is longer,
        /// given to the sink as it arrives (what was kept first), a chunk (``RemoteChunk/size``)
        /// at a time, on the session's queue. Any
        /// other answer's body is kept up to `memoryLimit` bytes and the rest dropped: an error
        /// answer is read for its first words only.
        case sink(BodySink, memoryLimit: Int)
    }

    /// ``send(_:body:into:retries:)`` of a request whose answer may be large (a file's bytes):
    /// a 200 answer's body longer than `memoryLimit` is given to `consumer` as it arrives, a
    /// chunk (``RemoteChunk/size``) at a time, and what was given is not in the answer's
    /// ``HTTPAnswer/body``, which holds the rest (``HTTPAnswer/streamed`` counts what was given). A shorter body, or another status's, is in the
    /// answer, and `consumer` is not called: the caller checks the answer before it takes it.
    ///
    /// `consumer` runs on the session's queue while this call waits for the answer, one piece
    /// at a time, never after this call returns. A request is sent again (`retries`) only when
    /// nothing of its answer reached `consumer`.
    ///
    /// - Throws: what `consumer` throws (the request is then cancelled), else
    ///   ``HTTPTransportFailure`` when no complete answer came.
    func send(
        _ request: URLRequest, memoryLimit: Int, retries: Int = 0, streamingTo consumer: (Data) throws -> Void
    ) throws -> HTTPAnswer {
        try withoutActuallyEscaping(consumer) { consumer in
            let sink = BodySink(consumer)
            // The consumer is let go before it goes out of scope, once no piece can reach it.
            defer { sink.close() }
            do {
                let answer = try send(request, into: .sink(sink, memoryLimit: memoryLimit), retries: retries)
                if let failure = sink.failure { throw failure }
                return answer
            } catch {
                throw sink.failure ?? error
            }
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
        var streamsBody = false
        if case .stream = body { streamsBody = true }
        let exchange = Exchange(destination, streamsBody: streamsBody)
        events.exchanges.withLock { $0[task.taskIdentifier] = exchange }
        let started = DispatchTime.now()
        task.resume()
        wait(for: exchange, of: task, request: request, started: started)
        events.exchanges.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
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
            // Bytes a consumer was given cannot be taken back: such a request is not sent again.
            var mayRepeat: Bool {
                guard attempt < retries else { return false }
                if case .sink(let sink, _) = destination { return !sink.hasGiven }
                return true
            }
            do {
                let answer = try send(request, body: body, into: destination)
                if mayRepeat, [502, 503, 504].contains(answer.status) {
                    attempt += 1
                    Self.pause(attempt)
                    continue
                }
                return answer
            } catch let failure as HTTPTransportFailure {
                if mayRepeat, failure.mayPass {
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
    fileprivate final class Exchange: Sendable {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<HTTPAnswer, HTTPTransportFailure>?>(nil)
        /// The bytes sent and received so far: what the deadline grows with.
        let moved = Mutex<Int64>(0)
        private let destination: Destination
        private struct Body {
            var data = Data()
            /// Bytes given to the sink.
            var streamed: Int64 = 0
        }
        private let body = Mutex<Body>(Body())

        /// Whether the request's body is a stream, which cannot be read again.
        let streamsBody: Bool

        init(_ destination: Destination, streamsBody: Bool) {
            self.destination = destination
            self.streamsBody = streamsBody
        }

        /// Takes a piece of the body of an answer of `status`; a failure ends the request.
        func receive(_ data: Data, status: Int?) -> HTTPTransportFailure? {
            moved.withLock { $0 += Int64(data.count) }
            // Past its end (the deadline failed it): nothing more is kept.
            guard outcome.withLock({ $0 == nil }) else { return nil }
            return body.withLock { body in
                switch destination {
                case .memory(let limit):
                    guard body.data.count + data.count <= limit else { return .bodyTooLarge(limit: limit) }
                    body.data.append(data)
                case .sink(let sink, let limit):
                    guard status == 200 else {
                        // An error answer's first words are enough to say what it is.
                        body.data.append(data.prefix(max(limit - body.data.count, 0)))
                        return nil
                    }
                    body.data.append(data)
                    // Kept while the body may still be a small one, then given on in pieces of
                    // a chunk: the consumer's work a call (a write, its bookkeeping) is paid
                    // once a MiB, not once every 16 KiB libcurl delivers.
                    if body.streamed == 0, body.data.count <= limit { return nil }
                    while body.data.count >= RemoteChunk.size {
                        guard sink.give(body.data.prefix(RemoteChunk.size)) else {
                            return .localFile("the download's bytes were not taken")
                        }
                        body.streamed += Int64(RemoteChunk.size)
                        // The rest in storage of its own, room made for the next chunk at once:
                        // `removeFirst` would keep the given bytes' storage (appending to it
                        // grew with the file), and growing by doubling leaves the heap in holes.
                        var rest = Data(capacity: RemoteChunk.size + (64 << 10))
                        rest.append(body.data.dropFirst(RemoteChunk.size))
                        body.data = rest
                    }
                }
                return nil
            }
        }

        func answer(_ response: HTTPURLResponse) -> HTTPAnswer {
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String {
                    headers[name.lowercased()] = value
                }
            }
            return body.withLock { body in
                HTTPAnswer(
                    status: response.statusCode, headers: headers, body: body.data, streamed: body.streamed)
            }
        }

        /// Records the outcome once (the first wins: a body too large, then the cancellation)
        /// and wakes the caller.
        func finish(_ result: Result<HTTPAnswer, HTTPTransportFailure>) {
            let first = outcome.withLock { outcome in
                guard outcome == nil else { return false }
                outcome = result
                return true
            }
            if first { done.signal() }
        }
    }
}

/// The session's delegate: hands what the session reports, on its queue, to the exchange of
/// the task it concerns.
private final class SessionEvents: NSObject, Sendable, URLSessionDataDelegate {
    /// The exchanges in flight, by task.
    let exchanges = Mutex<[Int: HTTPTransport.Exchange]>([:])

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(of: dataTask) else { return }
        let status = (dataTask.response as? HTTPURLResponse)?.statusCode
        if let failure = exchange.receive(data, status: status) {
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

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchange(of: task) else { return }
        if let error {
            exchange.finish(.failure(HTTPTransport.failure(error)))
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
                    HTTPAnswer(status: response?.statusCode ?? 401, headers: [:], body: Data())))
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

    private func exchange(of task: URLSessionTask) -> HTTPTransport.Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }
}

/// The session's delegate queue, which paces the network to its delegate: FoundationNetworking
/// hands each piece of a body (16 KiB at most, libcurl's) to the delegate queue as an
/// operation and reads on without waiting, so a consumer slower than the network (a disk, the
/// hash) would see the pieces pile up in memory without end. Here the thread that adds an
/// operation waits while ``mostPending`` are waiting to run: libcurl then stops reading the
/// socket, and the server's sending waits on TCP's window. Memory stays under `mostPending`
/// pieces (2 MiB) whatever the file's size.
///
/// An operation added from the queue's own thread never waits (it would wait for itself);
/// nothing the delegate does waits for libcurl's thread (a task is cancelled asynchronously).
final class PacedQueue: OperationQueue, @unchecked Sendable {
    /// How many operations may wait to run before the adding thread waits.
    static let mostPending = 128
    private let slots = DispatchSemaphore(value: PacedQueue.mostPending)

    override func addOperation(_ block: @Sendable @escaping () -> Void) {
        guard OperationQueue.current !== self else { return super.addOperation(block) }
        slots.wait()
        super.addOperation { [slots] in
            block()
            slots.signal()
        }
    }
}

/// The caller's consumer of a large answer body (``HTTPTransport/send(_:memoryLimit:retries:streamingTo:)``),
/// called on the session's queue while the caller waits.
///
/// The consumer is a closure of the waiting caller's, used by one thread at a time: the
/// session's, under the lock, until ``close()``, which the caller calls once the exchange has
/// ended, and which waits for a piece being given. No piece reaches it after.
final class BodySink: Sendable {
    private struct State {
        var open = true
        var given = false
        var failure: (any Error)?
    }
    private let state = Mutex(State())
    /// The caller's closure, until ``close()``: read, called and let go only under `state`'s
    /// lock, which keeps its calls one at a time and none after the caller is told the
    /// exchange ended.
    private nonisolated(unsafe) var consumer: ((Data) throws -> Void)?

    init(_ consumer: @escaping (Data) throws -> Void) {
        self.consumer = consumer
    }

    /// Whether any piece reached the consumer.
    var hasGiven: Bool { state.withLock { $0.given } }

    /// What the consumer threw.
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// Gives `data` to the consumer; false when it threw (now or before) or was closed.
    func give(_ data: Data) -> Bool {
        state.withLock { state in
            guard state.open, state.failure == nil, let consumer else { return false }
            state.given = true
            do { try consumer(data) } catch {
                state.failure = error
                return false
            }
            return true
        }
    }

    /// Lets the consumer go: it is called no more.
    func close() {
        state.withLock { state in
            state.open = false
            consumer = nil
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
