import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback HTTP/1.1 proxy between a WebDAV client and a real server (Apache on
/// 127.0.0.1, plain http) that injects the faults a test chooses per request: connections
/// reset before or after the server saw a request, answers cut short or held back, error
/// statuses the server never gave. What a sync client must survive, made to happen when a
/// test says.
///
/// The client talks to the proxy as if it were the server (``url(for:)``). Each client
/// connection gets one thread and one connection to the server, opened on its first
/// forwarded request and reopened when the server closed it, so keep-alive on the client's
/// side stays what it would be without the proxy. Bodies go through in pieces of at most
/// 64 KiB, never whole, whatever their size.
///
/// It understands just enough HTTP for that: heads up to their blank line, bodies by
/// `Content-Length` or `Transfer-Encoding: chunked`. It rewrites what names the server's
/// address (`Host`, a `Destination` of COPY and MOVE, a `Location` in answers) so that the
/// server and the client each see their own side's address: mod_dav refuses a MOVE whose
/// `Destination` names another port than its own.
final class FaultProxy: Sendable {
    enum Fault: Sendable, Equatable {
        case none
        /// Reset the client's connection (RST: `SO_LINGER` 0) after reading the request
        /// head, before forwarding anything: the server never sees the request.
        case resetBeforeRequest
        /// Forward the whole request (head and body), wait for the server's answer, then
        /// reset the client's connection without giving it the answer: the server applied it.
        case resetAfterRequest
        /// Forward the request, then give the client the answer's head and only part of its
        /// body, then reset. With a `Content-Length` of N, the first N / 2 bytes (at least 1
        /// byte short); a chunked body, the first chunk's size line and half its data (never
        /// the last chunk). An answer without a body (a 204, to a HEAD, a length of 0) is cut
        /// in its head: the client gets half the head.
        case cutResponseBody
        /// Forward the request, wait for the server's answer (so the server applied it), and
        /// hold it for `seconds` before giving it: the client's timeout should fire first.
        /// The hold ends early when the client closes the connection.
        case stall(seconds: Double)
        /// Do not forward: answer the client with this status (a 5xx, say 503) and a short
        /// text body. The request's body is read and dropped, and the connection stays usable.
        case status(Int)
        /// Do not forward: answer with this status, content type and body, as a server that
        /// misbehaves would (an href outside the collection, a body that is not XML, an HTML
        /// page where WebDAV was expected).
        case respond(status: Int, contentType: String, body: Data)
        /// Forward the request without its conditions (`If`, `If-Match`, `If-None-Match`),
        /// and answer `LOCK` and `UNLOCK` with made-up success without forwarding them: a
        /// server that ignores conditional writes and whose locks are fake (nginx's dav
        /// module, `rclone serve webdav`, SabreDAV's fake locks), made of a real Apache.
        case ignoreConditions
    }

    /// A request the proxy saw, for tests' assertions about what the client sent.
    struct Request: Sendable {
        var method: String
        /// The request target as sent (percent-encoded; a byte a character).
        var path: String
        /// The head's fields by lowercased name (repeated fields joined with ", ").
        var headers: [String: String]
        /// What ``FaultProxy/decide`` chose for it.
        var fault: Fault
    }

    /// The port the proxy listens on, on 127.0.0.1.
    let port: Int
    private let core: Core

    /// Starts listening on a free port of 127.0.0.1, forwarding to `target`: an http URL
    /// whose host is an IPv4 address or `localhost` (only its host and port matter).
    ///
    /// - Parameter rewritesHost: Whether the `Host` field is rewritten to the server's address;
    ///   false for S3, whose requests sign it (SeaweedFS checks the signature with the `Host`
    ///   it receives).
    init(target: URL, rewritesHost: Bool = true) throws {
        core = try Core(target: target, rewritesHost: rewritesHost)
        port = core.port
        core.start()
    }

    deinit { core.stop() }

    /// `target` with the proxy's address instead of the server's (the same path): what the
    /// client is given.
    func url(for target: URL) -> URL {
        var components = URLComponents(url: target, resolvingAgainstBaseURL: true)!
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = port
        return components.url!
    }

    /// Chooses the fault for each request from its method and target (percent-encoded, as
    /// sent). Settable at any time from any thread; a request in flight keeps the fault it got.
    var decide: @Sendable (_ method: String, _ path: String) -> Fault {
        get { core.state.withLock { $0.decide } }
        set { core.state.withLock { $0.decide = newValue } }
    }

    /// Makes ``decide`` give `fault` to the first `count` requests `matches` accepts, and
    /// `.none` to every other request.
    func inject(
        _ fault: Fault, count: Int = 1,
        where matches: @escaping @Sendable (_ method: String, _ path: String) -> Bool
    ) {
        let left = Budget(count)
        decide = { method, path in
            matches(method, path) && left.take() ? fault : .none
        }
    }

    /// Every request seen, in the order their heads arrived.
    var requests: [Request] { core.state.withLock { $0.requests } }
    /// How many requests were seen.
    var requestCount: Int { core.state.withLock { $0.requests.count } }
    /// How many requests got a fault other than `.none`.
    var faultCount: Int { core.state.withLock { $0.faultCount } }
    /// How many connections clients opened to the proxy: one for many requests is keep-alive.
    var connectionCount: Int { core.state.withLock { $0.clientConnections } }
    /// How many connections the proxy opened to the server.
    var upstreamConnectionCount: Int { core.state.withLock { $0.upstreamConnections } }
    /// How many sockets the proxy has open now (its listener, until stopped, among them): what
    /// shows that connections a client left are closed.
    var openSocketCount: Int { core.listener.openSockets }

    /// Stops listening, closes every connection and waits (a few seconds at most) for the
    /// connections' threads to end. Also called by deinit; calling it again does nothing.
    func stop() { core.stop() }

    /// A count of faults left to give, shared by the calls of an ``inject(_:count:where:)``.
    private final class Budget: Sendable {
        private let left: Mutex<Int>
        init(_ count: Int) { left = Mutex(count) }

        /// Whether one is left, taking it.
        func take() -> Bool {
            left.withLock { left in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
        }
    }
}

// MARK: - The listener and the state the connections share

extension FaultProxy {
    /// What the threads share; the ``FaultProxy`` the test holds only owns it, so that the
    /// threads (which hold the core) do not keep the proxy alive and its deinit can stop them.
    fileprivate final class Core: Sendable {
        struct State {
            var decide: @Sendable (String, String) -> Fault = { _, _ in .none }
            var requests: [Request] = []
            var faultCount = 0
            var clientConnections = 0
            var upstreamConnections = 0
        }

        let state = Mutex(State())
        let port: Int
        /// The server's IPv4 address and port, in network byte order.
        private let targetAddress: in_addr_t
        private let targetPort: in_port_t
        /// `host:port` of the server and of the proxy, as `Host` and URLs spell them.
        let targetAuthority: String
        let proxyAuthority: String
        let listener: Listener

        /// Whether `Host` is rewritten to ``targetAuthority``.
        let rewritesHost: Bool

        init(target: URL, rewritesHost: Bool) throws {
            self.rewritesHost = rewritesHost
            guard target.scheme?.lowercased() == "http", let host = target.host else {
                throw ProxyError("FaultProxy forwards to plain http URLs only, not \(target)")
            }
            var address = in_addr()
            guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address) == 1 else {
                throw ProxyError("FaultProxy needs an IPv4 address or localhost, not \(host)")
            }
            let targetPort = target.port ?? 80
            self.targetAddress = address.s_addr
            self.targetPort = in_port_t(targetPort).bigEndian
            targetAuthority = "\(host):\(targetPort)"

            listener = try Listener(name: "FaultProxy")
            port = listener.port
            proxyAuthority = "127.0.0.1:\(port)"
        }

        func start() {
            listener.start { [self] client in
                state.withLock { $0.clientConnections += 1 }
                Connection(core: self, client: client).run()
            }
        }

        /// A new connection to the server.
        func connectUpstream() throws -> Socket {
            let fd = try FaultProxy.makeSocket()
            guard listener.register(fd) else {
                Glibc.close(fd)
                throw ProxyError("the proxy is stopped")
            }
            state.withLock { $0.upstreamConnections += 1 }
            let socket = Socket(fd, core: listener)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = targetAddress
            address.sin_port = targetPort
            var result: Int32
            repeat {
                result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            } while result != 0 && errno == EINTR
            guard result == 0 else {
                let error = ProxyError("connect to \(targetAuthority)", errno: errno)
                socket.close()
                throw error
            }
            FaultProxy.noDelay(fd)
            return socket
        }

        /// Records a request and chooses its fault.
        func decide(method: String, path: String, headers: [String: String]) -> Fault {
            // The test's closure runs outside the lock: it may read the proxy's counts.
            let decide = state.withLock { $0.decide }
            let fault = decide(method, path)
            state.withLock { state in
                state.requests.append(Request(method: method, path: path, headers: headers, fault: fault))
                if fault != .none { state.faultCount += 1 }
            }
            return fault
        }

        func stop() { listener.stop() }
    }

    /// A socket listening on a free port of 127.0.0.1, whose connections are each served on a
    /// thread of their own, and every socket open for them: ``stop()`` shuts them all down and
    /// waits for the threads. The proxy's, and ``HostileServer``'s.
    final class Listener: SocketRegistry {
        let port: Int
        private let fd: Int32
        private let name: String
        /// Every socket open now (the listener's too), and whether the listener is stopped.
        private let state = Mutex((sockets: Set<Int32>(), stopped: false))
        /// Entered by each thread (the accept loop's, each connection's) while it runs.
        private let threads = DispatchGroup()

        /// Listens; `name` names its threads.
        init(name: String) throws {
            (fd, port) = try FaultProxy.listenOnLoopback()
            self.name = name
            state.withLock { _ = $0.sockets.insert(fd) }
        }

        /// How many sockets are open now, the listener's among them until it stops.
        var openSockets: Int { state.withLock { $0.sockets.count } }

        /// Accepts connections on a thread of its own, and serves each with `serve` on another.
        func start(_ serve: @escaping @Sendable (Socket) -> Void) {
            threads.enter()
            let thread = Thread { [self] in
                acceptLoop(serve)
                threads.leave()
            }
            thread.name = "\(name) accept :\(port)"
            thread.start()
        }

        private func acceptLoop(_ serve: @escaping @Sendable (Socket) -> Void) {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    let error = errno
                    if error == EINTR || error == ECONNABORTED { continue }
                    // stop() shut the listener down (accept fails with EINVAL), or we are out of
                    // descriptors for a moment: go on unless stopped.
                    if state.withLock({ $0.stopped }) { break }
                    usleep(10_000)
                    continue
                }
                // Close-on-exec (Glibc's module has no accept4): a child forked in the moment
                // between could inherit it, and would hold the connection only until it execs.
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                guard register(client) else {
                    Glibc.close(client)
                    break
                }
                FaultProxy.noDelay(client)
                threads.enter()
                let thread = Thread { [self] in
                    serve(Socket(client, core: self))
                    threads.leave()
                }
                thread.name = "\(name) connection :\(port)"
                thread.start()
            }
            forget(fd)
            Glibc.close(fd)
        }

        /// Records a socket open so that ``stop()`` can shut it down; false when stopped.
        func register(_ fd: Int32) -> Bool {
            state.withLock { state in
                guard !state.stopped else { return false }
                state.sockets.insert(fd)
                return true
            }
        }

        /// Called just before a socket is closed. Under the lock, so that ``stop()`` never
        /// shuts down a descriptor number closed since and reused by someone else.
        func forget(_ fd: Int32) {
            state.withLock { _ = $0.sockets.remove(fd) }
        }

        /// Stops listening, shuts every socket down and waits (a few seconds at most) for the
        /// threads to end; again, does nothing.
        func stop() {
            let first = state.withLock { state in
                guard !state.stopped else { return false }
                state.stopped = true
                // Wakes every thread blocked on a socket (accept, recv, send, poll); each
                // closes its own sockets as it ends.
                for fd in state.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
                return true
            }
            if first { _ = threads.wait(timeout: .now() + 5) }
        }
    }

    /// A TCP socket listening on a free port of 127.0.0.1 (the kernel picks it), and the port.
    static func listenOnLoopback() throws -> (fd: Int32, port: Int) {
        let fd = try makeSocket()
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        local.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 64) == 0,
            withUnsafeMutablePointer(
                to: &local,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                }) == 0
        else {
            let error = ProxyError("could not listen on 127.0.0.1", errno: errno)
            Glibc.close(fd)
            throw error
        }
        return (fd, Int(UInt16(bigEndian: local.sin_port)))
    }

    /// A TCP socket, close-on-exec: the test suite forks children, which must not hold
    /// the proxy's connections open.
    static func makeSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ProxyError("socket", errno: errno) }
        return fd
    }

    /// Heads and small bodies go out at once, not after the peer's delayed ACK (Nagle):
    /// a request on loopback would otherwise take 40 ms.
    static func noDelay(_ fd: Int32) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Who keeps a socket's descriptor for ``stop()``: told just before the socket closes.
    protocol SocketRegistry: AnyObject, Sendable {
        func forget(_ fd: Int32)
    }

    struct ProxyError: Error, CustomStringConvertible {
        var description: String
        init(_ what: String) { description = what }
        init(_ what: String, errno: Int32) { description = "\(what): \(String(cString: strerror(errno)))" }
    }
}

// MARK: - One client connection

extension FaultProxy {
    /// A client connection and its connection to the server, served on one thread.
    fileprivate final class Connection {
        private let core: Core
        private let client: Socket
        private var upstream: Socket?

        init(core: Core, client: Socket) {
            self.core = core
            self.client = client
        }

        func run() {
            defer {
                client.close()
                upstream?.close()
            }
            do {
                while try serveOne() {}
            } catch {
                // The client or the server went away, or spoke HTTP we do not follow: this
                // connection ends (the defer closes it), the proxy goes on.
            }
        }

        private static let continueAnswer = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

        /// Serves one request of the connection; false when the connection is to end.
        private func serveOne() throws -> Bool {
            // The client closing between requests is how a keep-alive connection ends.
            guard let bytes = try client.readHead() else { return false }
            var request = try Head(bytes)
            let parts = request.startLine.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 3 else { throw ProxyError("bad request line: \(request.startLine)") }
            let method = String(parts[0])
            let target = String(parts[1])
            let keepAlive = parts[2] == "HTTP/1.1" && !request.has("connection", token: "close")
            let body = try request.requestFraming()
            // The client waits for a 100 before its body. The proxy answers it itself and
            // strips the Expect the server would see: the server then reads the body it is
            // given straight away, and the faults need not care whether a 100 came.
            let expectsContinue = body != .none && request.has("expect", token: "100-continue")
            let fault = core.decide(method: method, path: target, headers: request.fieldsByName)
            request.remove("expect")
            switch fault {
            case .resetBeforeRequest:
                client.reset()
                return false
            case .status(let status):
                if expectsContinue { try client.write(Self.continueAnswer) }
                try client.relayBody(body) { _ in }
                try client.write(Self.answer(status, keepAlive: keepAlive))
                return keepAlive
            case .respond(let status, let contentType, let content):
                if expectsContinue { try client.write(Self.continueAnswer) }
                try client.relayBody(body) { _ in }
                var head = "HTTP/1.1 \(status) Injected\r\nContent-Type: \(contentType)\r\n"
                head += "Content-Length: \(content.count)\r\n"
                if !keepAlive { head += "Connection: close\r\n" }
                try client.write(Array((head + "\r\n").utf8) + Array(content))
                return keepAlive
            case .ignoreConditions where method == "LOCK" || method == "UNLOCK":
                if expectsContinue { try client.write(Self.continueAnswer) }
                try client.relayBody(body) { _ in }
                var head = method == "LOCK" ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 204 No Content\r\n"
                let token = "opaquelocktoken:fake-\(UUID().uuidString)"
                let content =
                    method == "LOCK"
                    ? "<?xml version=\"1.0\"?><D:prop xmlns:D=\"DAV:\"><D:lockdiscovery><D:activelock>"
                        + "<D:locktoken><D:href>\(token)</D:href></D:locktoken></D:activelock></D:lockdiscovery></D:prop>"
                    : ""
                if method == "LOCK" { head += "Lock-Token: <\(token)>\r\nContent-Type: application/xml\r\n" }
                head += "Content-Length: \(content.utf8.count)\r\n"
                if !keepAlive { head += "Connection: close\r\n" }
                try client.write(Array((head + "\r\n" + content).utf8))
                return keepAlive
            case .ignoreConditions:
                request.remove("if")
                request.remove("if-match")
                request.remove("if-none-match")
            case .none, .resetAfterRequest, .cutResponseBody, .stall:
                break
            }

            // Forward the request. A server that stops reading mid-body (it answered early and
            // closed) must not end the exchange: the client's body is still read to its end,
            // to keep the client's connection in step, and the server's answer is then relayed.
            if core.rewritesHost { request.set("host", core.targetAuthority) }
            if let destination = request.field("destination") {
                request.set(
                    "destination",
                    Self.rebase(destination, from: core.proxyAuthority, to: core.targetAuthority))
            }
            let server = try upstreamConnection()
            var serverReads = true
            let toServer: (ArraySlice<UInt8>) -> Void = { piece in
                guard serverReads else { return }
                do { try server.write(piece) } catch { serverReads = false }
            }
            toServer(request.bytes[...])
            if expectsContinue { try client.write(Self.continueAnswer) }
            try client.relayBody(body, to: toServer)

            // The server's answer; interim ones (a 100 it sends anyway, a 102) are dropped:
            // the client got its 100 from the proxy already.
            var answer: Head
            var status: Int
            do {
                repeat {
                    guard let bytes = try server.readHead() else { throw ProxyError("the server closed") }
                    answer = try Head(bytes)
                    status = try answer.status()
                } while (100..<200).contains(status) && status != 101
            } catch {
                // No answer: a connection to the server it closed as we reused it, or the
                // server failed. The client sees its connection reset, as it would from a
                // server that dies.
                client.reset()
                return false
            }
            if let location = answer.field("location") {
                answer.set(
                    "location", Self.rebase(location, from: core.targetAuthority, to: core.proxyAuthority))
            }
            let answerBody = answer.responseFraming(method: method, status: status)
            // The server closes after this answer: it said so, or its body ends with the connection.
            let serverCloses =
                answer.has("connection", token: "close") || answerBody == .untilClose
                || (answer.startLine.hasPrefix("HTTP/1.0") && !answer.has("connection", token: "keep-alive"))

            switch fault {
            case .resetAfterRequest:
                client.reset()
                return false
            case .cutResponseBody:
                if answerBody == .none || answerBody == .length(0) {
                    // No body to cut: the head is cut instead, so that the client still gets
                    // no complete answer.
                    let head = answer.bytes
                    try client.write(head.prefix(head.count / 2))
                } else {
                    try client.write(answer.bytes)
                    try relayPartOfBody(answerBody, from: server)
                }
                // A moment for the client to read what it got before the reset: Linux drops
                // the unread bytes of a connection that is reset.
                usleep(100_000)
                client.reset()
                return false
            case .stall(let seconds):
                guard client.waitWhileOpen(seconds: seconds) else { return false }
            case .none, .resetBeforeRequest, .status, .respond, .ignoreConditions:
                break
            }

            try client.write(answer.bytes)
            try server.relayBody(answerBody) { try client.write($0) }
            if serverCloses {
                // Passed through as it is: the client's connection ends with the server's.
                server.close()
                upstream = nil
                return false
            }
            return keepAlive
        }

        /// The connection to the server: the one of this client connection while the server
        /// keeps it open, else a new one. A connection the server closed (after its
        /// keep-alive timeout, after an error answer) reads as ready with nothing to read.
        private func upstreamConnection() throws -> Socket {
            if let upstream, !upstream.hasInputOrClosed() { return upstream }
            upstream?.close()
            let fresh = try core.connectUpstream()
            upstream = fresh
            return fresh
        }

        /// The proxy's own answer for a `.status` fault.
        private static func answer(_ status: Int, keepAlive: Bool) -> [UInt8] {
            let reasons = [
                500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
                503: "Service Unavailable", 504: "Gateway Timeout", 507: "Insufficient Storage",
            ]
            let body = "FaultProxy: injected \(status)\n"
            var head = "HTTP/1.1 \(status) \(reasons[status] ?? "Injected Fault")\r\n"
            head += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            if !keepAlive { head += "Connection: close\r\n" }
            return Array((head + "\r\n" + body).utf8)
        }

        /// `url` with `authority` replaced by `replacement` when it names it (as
        /// `http://AUTHORITY/...`); any other value unchanged.
        private static func rebase(_ url: String, from authority: String, to replacement: String) -> String {
            let prefix = "http://\(authority)"
            guard url.lowercased().hasPrefix(prefix.lowercased()) else { return url }
            let rest = url.dropFirst(prefix.count)
            guard rest.isEmpty || rest.hasPrefix("/") else { return url }
            return "http://\(replacement)" + rest
        }

        /// Relays part of a body to the client (``Fault/cutResponseBody``), never all of it.
        private func relayPartOfBody(_ framing: Framing, from server: Socket) throws {
            switch framing {
            case .none:
                return
            case .length(let count):
                try server.copy(count / 2) { try client.write($0) }
            case .untilClose:
                let piece = try server.read(max: Socket.pieceSize)
                try client.write(piece.prefix(piece.count / 2))
            case .chunked:
                let line = try server.readLine()
                let size = try Socket.chunkSize(line)
                guard size > 0 else { return }
                try client.write(line + Head.crlf)
                try server.copy(size / 2) { try client.write($0) }
            }
        }

    }
}

// MARK: - HTTP heads

extension FaultProxy {
    /// How a message's body is delimited.
    enum Framing: Equatable {
        case none
        case length(Int64)
        case chunked
        /// An answer with neither length nor chunks: its body ends when the server closes.
        case untilClose
    }

    /// A request's or an answer's head: its start line and its fields, in order.
    struct Head {
        static let crlf: [UInt8] = [13, 10]

        var startLine: String
        var fields: [(name: String, value: String)]

        /// Parses a head as ``Socket/readHead()`` gives it (ending with CRLF CRLF).
        ///
        /// A byte is a character (ISO 8859-1), as HTTP has it: a head goes on as it came,
        /// whatever bytes it holds, not with what UTF-8 decoding would have replaced.
        init(_ bytes: [UInt8]) throws {
            var text = ""
            text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            var lines = text.components(separatedBy: "\r\n")
            while lines.last == "" { lines.removeLast() }
            guard !lines.isEmpty else { throw ProxyError("an empty head") }
            startLine = lines.removeFirst()
            fields = try lines.map { line in
                guard let colon = line.firstIndex(of: ":") else {
                    throw ProxyError("bad header line: \(line)")
                }
                return (
                    String(line[..<colon]),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                )
            }
        }

        /// The head as sent.
        var bytes: [UInt8] {
            var text = startLine + "\r\n"
            for field in fields { text += "\(field.name): \(field.value)\r\n" }
            text += "\r\n"
            // Back to one byte a character (the proxy adds only ASCII).
            return text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        }

        /// The field's value (repeated fields joined), whatever the case of its name.
        func field(_ name: String) -> String? {
            let values = fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }

        var fieldsByName: [String: String] {
            var result: [String: String] = [:]
            for field in fields {
                let name = field.name.lowercased()
                result[name] = result[name].map { "\($0), \(field.value)" } ?? field.value
            }
            return result
        }

        /// Whether the field's comma-separated list holds `token` (as `Connection: close`).
        func has(_ name: String, token: String) -> Bool {
            guard let value = field(name) else { return false }
            return value.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(token) == .orderedSame
            }
        }

        mutating func remove(_ name: String) {
            fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }

        /// Replaces the field's value, where it was (or appends it).
        mutating func set(_ name: String, _ value: String) {
            let named = { (field: (name: String, value: String)) in
                field.name.caseInsensitiveCompare(name) == .orderedSame
            }
            if let index = fields.firstIndex(where: named) {
                fields[index].value = value
                // Any repeats of the field go: it has the one value now.
                fields = fields.enumerated().filter { $0.offset == index || !named($0.element) }.map(
                    \.element)
            } else {
                fields.append((name, value))
            }
        }

        /// An answer's status.
        func status() throws -> Int {
            let parts = startLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
                throw ProxyError("bad status line: \(startLine)")
            }
            return status
        }

        /// A request's body: chunked, by length, or none (a request has a body only when it
        /// says so).
        func requestFraming() throws -> Framing {
            if let encoding = field("transfer-encoding") {
                guard has("transfer-encoding", token: "chunked") else {
                    throw ProxyError("unsupported Transfer-Encoding: \(encoding)")
                }
                return .chunked
            }
            return try length() ?? .none
        }

        /// An answer's body: none for HEAD requests (whatever their Content-Length says),
        /// 1xx, 204 and 304; else chunked, by length, or up to the server's close.
        func responseFraming(method: String, status: Int) -> Framing {
            if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 {
                return .none
            }
            if has("transfer-encoding", token: "chunked") { return .chunked }
            return (try? length()) ?? .untilClose
        }

        private func length() throws -> Framing? {
            guard let value = field("content-length") else { return nil }
            // Repeated equal values ("5, 5") are one length.
            let values = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            guard values.count == 1, let length = Int64(values.first!), length >= 0 else {
                throw ProxyError("bad Content-Length: \(value)")
            }
            return .length(length)
        }
    }
}

// MARK: - Sockets

extension FaultProxy {
    /// A connected socket with a read-ahead buffer, used by one thread only.
    final class Socket {
        /// The most read or written at once: what a body goes through in.
        static let pieceSize = 64 * 1024
        /// A head longer than this is no HTTP we follow.
        private static let headLimit = 64 * 1024

        let fd: Int32
        private let registry: any SocketRegistry
        /// Read ahead: the unread bytes are `buffer[position..<end]`. Of a fixed size, so
        /// that reading is one recv into it, with no allocation.
        private var buffer = [UInt8](repeating: 0, count: 2 * pieceSize)
        private var position = 0
        private var end = 0
        private var closed = false

        init(_ fd: Int32, core registry: any SocketRegistry) {
            self.fd = fd
            self.registry = registry
        }

        deinit { close() }

        private var buffered: Int { end - position }

        /// Reads more into the buffer; false at the end of the stream.
        private func fill() throws -> Bool {
            if position == end {
                position = 0
                end = 0
            } else if end == buffer.count {
                // Full up to the back: the unread bytes move to the front.
                buffer.withUnsafeMutableBytes { raw in
                    _ = memmove(raw.baseAddress!, raw.baseAddress! + position, end - position)
                }
                end -= position
                position = 0
            }
            precondition(end < buffer.count, "FaultProxy reads a head or line of at most 64 KiB")
            var received: Int
            repeat {
                received = buffer.withUnsafeMutableBytes { raw in
                    recv(fd, raw.baseAddress! + end, raw.count - end, 0)
                }
            } while received < 0 && errno == EINTR
            guard received >= 0 else { throw ProxyError("recv", errno: errno) }
            end += received
            return received > 0
        }

        /// The next head, up to and with its CRLF CRLF; nil when the stream ends before its
        /// first byte (the peer closed between messages).
        func readHead() throws -> [UInt8]? {
            // How many of the unread bytes were searched already, without finding the end.
            var searched = 0
            while true {
                var index = position + max(0, searched - 3)
                while index + 3 < end {
                    if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13,
                        buffer[index + 3] == 10
                    {
                        let head = Array(buffer[position..<index + 4])
                        position = index + 4
                        return head
                    }
                    index += 1
                }
                searched = buffered
                guard buffered < Self.headLimit else { throw ProxyError("a head over 64 KiB") }
                guard try fill() else {
                    if buffered == 0 { return nil }
                    throw ProxyError("the connection closed mid-head")
                }
            }
        }

        /// The next line, without its CRLF (a chunk's size line, a trailer).
        func readLine() throws -> [UInt8] {
            var index = position
            while true {
                while index + 1 < end {
                    if buffer[index] == 13, buffer[index + 1] == 10 {
                        let line = Array(buffer[position..<index])
                        position = index + 2
                        return line
                    }
                    index += 1
                }
                guard buffered < Self.headLimit else { throw ProxyError("a line over 64 KiB") }
                let offset = index - position
                guard try fill() else { throw ProxyError("the connection closed mid-line") }
                index = position + offset
            }
        }

        /// At most `max` bytes, at least one unless the stream ended (then none).
        func read(max: Int) throws -> ArraySlice<UInt8> {
            if buffered == 0 {
                guard try fill() else { return [] }
            }
            let count = min(max, buffered)
            let piece = buffer[position..<position + count]
            position += count
            return piece
        }

        func write(_ bytes: [UInt8]) throws { try write(bytes[...]) }

        func write(_ bytes: ArraySlice<UInt8>) throws {
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    // MSG_NOSIGNAL: a peer that went away is an EPIPE here, not a SIGPIPE that
                    // kills the test process.
                    let sent = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if sent < 0 {
                        if errno == EINTR { continue }
                        throw ProxyError("send", errno: errno)
                    }
                    offset += sent
                }
            }
        }

        /// Whether there is something to read, or the peer closed: on an idle connection to
        /// the server, either means it is not to be reused.
        func hasInputOrClosed() -> Bool {
            if buffered > 0 { return true }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) != 0
        }

        /// Waits `seconds`, or less if the peer closes (or ``Listener/stop()`` shuts the socket
        /// down) first; whether it is still open.
        func waitWhileOpen(seconds: Double) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while true {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { return true }
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, Int32(min(left * 1000, 1000).rounded(.up)))
                if ready > 0 {
                    // Readable: the peer closed, or sent something early (the next request,
                    // kept for later); a peek says which.
                    var byte: UInt8 = 0
                    if recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) <= 0 { return false }
                    // Data waiting: nothing more to watch for; wait out the rest.
                    usleep(useconds_t(max(deadline.timeIntervalSinceNow, 0) * 1_000_000))
                    return true
                }
            }
        }

        // MARK: Bodies

        /// Reads the body framed as `framing` and hands it, as it came (a chunked body with its
        /// framing), in pieces to `sink`.
        func relayBody(_ framing: Framing, to sink: (ArraySlice<UInt8>) throws -> Void) throws {
            switch framing {
            case .none:
                return
            case .length(let count):
                try copy(count, to: sink)
            case .untilClose:
                while true {
                    let piece = try read(max: Socket.pieceSize)
                    if piece.isEmpty { return }
                    try sink(piece)
                }
            case .chunked:
                while true {
                    let line = try readLine()
                    try sink((line + Head.crlf)[...])
                    let size = try Self.chunkSize(line)
                    if size == 0 {
                        // Trailer fields up to the blank line that ends the body.
                        while true {
                            let trailer = try readLine()
                            try sink((trailer + Head.crlf)[...])
                            if trailer.isEmpty { return }
                        }
                    }
                    try copy(size, to: sink)
                    guard try readLine().isEmpty else { throw ProxyError("a chunk without its CRLF") }
                    try sink(Head.crlf[...])
                }
            }
        }

        /// Copies exactly `count` bytes.
        func copy(_ count: Int64, to sink: (ArraySlice<UInt8>) throws -> Void) throws {
            var left = count
            while left > 0 {
                let piece = try read(max: Int(min(left, Int64(Socket.pieceSize))))
                guard !piece.isEmpty else { throw ProxyError("the connection closed mid-body") }
                try sink(piece)
                left -= Int64(piece.count)
            }
        }

        /// The size of a chunk from its size line (hex, maybe followed by `;extensions`).
        static func chunkSize(_ line: [UInt8]) throws -> Int64 {
            let text = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
            guard let size = Int64(text.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                throw ProxyError("bad chunk size line: \(String(decoding: line, as: UTF8.self))")
            }
            return size
        }

        func close() {
            guard !closed else { return }
            closed = true
            registry.forget(fd)
            Glibc.close(fd)
        }

        /// Closes with a reset (RST) instead of the orderly FIN: `SO_LINGER` with a zero
        /// timeout makes close drop what is unsent and abort the connection.
        func reset() {
            guard !closed else { return }
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            close()
        }
    }
}
