import CCurl
import DocumentKit
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

/// Blocking HTTP over libcurl's easy interface: the remote's calls are synchronous (see
/// ``Remote``), and each request is performed on the caller's thread, start to end, with an
/// easy handle of the transport's pool (``CurlTransfer``).
///
/// Connections are kept alive by the handles and reused by the next request that takes the
/// handle; requests may be sent from many threads at once, each on a handle of its own. An
/// answer's body is kept in memory up to a limit the caller gives, or given as it arrives to
/// the caller's consumer (``send(_:memoryLimit:retries:streamingTo:)``), so that a large
/// download never sits in memory whole and is never copied through a file of the transport's
/// own: the consumer writes it where it goes, once, on the caller's thread.
///
/// (Not URLSession: FoundationNetworking drives libcurl's multi interface through libdispatch
/// sources, re-armed at every socket state change through the dispatch manager thread. Past
/// about 16 requests in flight that churn took most of the CPU, and a first sync of 1,000
/// documents to Apache went from 2.5 s to 31 s; at 16, a first sync of 10,000 to S3 took
/// 23.3 s and 17.5 s of CPU, against 15.0 s and 8.5 s over libcurl directly.)
///
/// No request waits for ever: besides the timeout (seconds without a byte), each has a
/// ``RequestDeadline`` that grows with the bytes it moves, and one past it fails with the
/// method and the URL (``HTTPTransportFailure/tooSlow(_:)``).
final class HTTPTransport: Sendable {
    /// An easy handle, owned by the pool or by the one request using it.
    private struct Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    /// The handles not in use, with the connections they keep.
    private let idle = Mutex<[Handle]>([])
    /// How long a request may go without a byte.
    private let timeout: TimeInterval
    /// The most handles kept idle: as many connections to the server at once.
    private let connections: Int

    /// How long a request may take in all.
    let deadline: RequestDeadline
    /// The file of the authorities a server's certificate is checked against instead of the
    /// system's (``CertificateAuthorityFile``); nil for the system's.
    let caFile: String?

    /// The most requests a remote keeps in flight over one transport, each on a handle and
    /// connection of its own: more only queue at the server. Measured on loopback, 2 cores
    /// shared with the server: SeaweedFS S3, 10,000 x 1 KiB first sync, 15.0 s at 16 and
    /// 13.4 s at 32; Apache WebDAV (``webDAVRequestsInFlight``) is past its best sooner.
    static let mostRequestsInFlight = 32
    /// Apache WebDAV, 1,000 x 4 KiB first sync (a PUT, a PROPFIND and a MOVE each): 1.47 s at
    /// 8, 1.56 s at 16, 1.72 s at 32, 2.02 s at 64 in flight.
    static let webDAVRequestsInFlight = 16

    /// libcurl's global state, set up once before the first handle (after libcrypto's, whose
    /// exit-time cleanup would run under threads still hashing).
    private static let ready: Bool = {
        LibCrypto.prepare()
        return curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// A transport whose requests give up after `timeout` seconds without a byte, or past
    /// `deadline`, keeping at most `connections` connections to the server alive between
    /// requests, and trusting the authorities in `caFile` (the system's when nil).
    init(
        timeout: TimeInterval, connections: Int, deadline: RequestDeadline = RequestDeadline(),
        caFile: String? = nil
    ) {
        self.deadline = deadline
        self.caFile = caFile
        self.timeout = timeout
        self.connections = max(connections, 1)
    }

    deinit { invalidate() }

    /// Closes the kept connections; a request sent after opens new ones.
    func invalidate() {
        let handles = idle.withLock { idle in
            defer { idle = [] }
            return idle
        }
        for handle in handles { curl_easy_cleanup(handle.pointer) }
    }

    /// Where an answer's body goes.
    enum Destination: Sendable {
        /// Kept in memory, up to `limit` bytes (more fails the request).
        case memory(limit: Int)
        /// A 200 answer's body kept in memory up to `memoryLimit` bytes and, once it is longer,
        /// given to the sink as it arrives (what was kept first), a chunk (``RemoteChunk/size``)
        /// at a time, on the caller's thread. Any
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
    /// `consumer` runs on the caller's thread while the transfer goes on, one piece
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

    /// Sends `request` with `body` and waits for the answer, within `deadline` (the
    /// transport's own when nil).
    ///
    /// - Throws: ``HTTPTransportFailure`` when no complete answer came. An HTTP error status
    ///   is an answer, not a failure.
    func send(
        _ request: URLRequest, body: HTTPBody = .none, into destination: Destination,
        deadline: RequestDeadline? = nil
    ) throws -> HTTPAnswer {
        guard Self.ready else { throw HTTPTransportFailure.connectionLost("libcurl could not be set up") }
        guard let handle = idle.withLock({ $0.popLast() }) ?? curl_easy_init().map(Handle.init) else {
            throw HTTPTransportFailure.connectionLost("libcurl could not make a handle")
        }
        let deadline = deadline ?? self.deadline
        let transfer = CurlTransfer(request, body: body, into: destination, deadline: deadline)
        do {
            let answer = try transfer.perform(request, on: handle.pointer, timeout: timeout, caFile: caFile)
            release(handle)
            return answer
        } catch {
            // Its connection may be in any state: not kept.
            curl_easy_cleanup(handle.pointer)
            throw error
        }
    }

    /// Puts `handle` back with the idle ones, or closes it when enough are kept.
    private func release(_ handle: Handle) {
        let kept = idle.withLock { idle in
            guard idle.count < connections else { return false }
            idle.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle.pointer) }
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
}

/// The caller's consumer of a large answer body (``HTTPTransport/send(_:memoryLimit:retries:streamingTo:)``),
/// called on the caller's thread as the pieces arrive.
///
/// The consumer is a closure of the caller's, used under the lock until ``close()``, which
/// the caller calls once the exchange has ended. No piece reaches it after.
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
