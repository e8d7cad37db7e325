import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Answers the messages other processes send to this process's file presenters.
///
/// A process runs one server, started the first time it registers a file presenter, at the
/// path ``MessageChannelPaths/socketPath(forProcess:directories:)`` gives. The server listens on a
/// Unix stream socket, accepts connections on a thread of its own and serves each on a
/// Dispatch queue of its own, so a handler may block for seconds (waiting for the main actor
/// to save a document) without holding up other requests. Each connection carries one
/// request and its reply.
///
/// Only processes of the same user get an answer: the kernel's record of the peer
/// (`SO_PEERCRED`) is checked on every connection, besides the socket's mode 0600 and its
/// folder's 0700.
///
/// For example:
///
/// ```swift
/// let server = try MessageChannelServer(socketPath: MessageChannelPaths.socketPath()) { request in
///     request.reply(.ack)
/// }
/// defer { server.stop() }
/// ```
///
/// A socket path longer than `sun_path` allows (107 bytes) still works, on both sides: it is
/// reached through its opened folder as `/proc/self/fd/N/NAME`, so only the file name (a pid
/// and `.sock`) has to be short.
package final class MessageChannelServer: Sendable {
    /// Turns a request into its reply. Called on a connection's own queue, concurrently with
    /// other calls.
    public typealias Handler = @Sendable (Message) -> Message

    /// Settings of a server.
    public struct Configuration: Sendable {
        /// How long a client may take to send its request, and the server to send the reply,
        /// before the connection is dropped: a client that connects and says nothing must not
        /// pin a queue forever.
        public var transferTimeout: Duration = .seconds(10)
        /// How many connections may wait to be accepted.
        public var backlog: CInt = 128

        /// The default settings.
        public init() {}
    }

    /// The path of the socket file.
    public let socketPath: String

    private let configuration: Configuration
    private let handler: Handler
    private let state: Mutex<State>
    private let acceptLoopFinished = DispatchSemaphore(value: 0)

    private struct State {
        var isRunning = true
        /// Written to by `stop()` to wake the accept loop out of `poll`.
        var wakeSender: CInt
        /// The socket file as bound, so that `stop()` never unlinks a file someone else put
        /// at the same path.
        var device: dev_t
        var inode: ino_t
    }

    /// Creates the socket file and starts serving.
    ///
    /// Missing folders of `socketPath` are created with mode 0700. A socket file already at
    /// the path that nobody listens on is left from a dead process with the same pid and is
    /// removed; a live one is not touched.
    ///
    /// - Parameters:
    ///   - socketPath: Where to create the socket, usually from ``MessageChannelPaths``.
    ///   - configuration: Timeouts and backlog.
    ///   - handler: Turns each request into its reply.
    /// - Throws: ``DocumentKitError``: `fileExists` if another server listens at the path or
    ///   a file that is not a socket is in the way; `invalidArgument` if the last component
    ///   is too long for a socket address; others from the system calls.
    public init(
        socketPath: String, configuration: Configuration = Configuration(), handler: @escaping Handler
    ) throws {
        self.socketPath = socketPath
        self.configuration = configuration
        self.handler = handler
        let url = URL(fileURLWithPath: socketPath)

        try Self.makePrivateFolders(url.deletingLastPathComponent())
        try Self.removeStaleSocket(at: socketPath, url: url)

        let listener = try ChannelSocket.make().get("create a socket", url)
        _ = try Syscall.withShortSocketPath(socketPath) { path in
            Syscall.bind(listener.rawValue, unixPath: path).flatMap { _ in
                // Before listen(), so no client can connect while the mode is still the umask's.
                Syscall.chmod(path, 0o600)
            }
        }.get("bind the file presenter socket", url)
        let info: stat
        let wakeReceiver: CInt
        let wakeSender: CInt
        do {
            info = try Syscall.fstatat(AT_FDCWD, socketPath, followLinks: false)
                .get("inspect the file presenter socket", url)
            _ = try Syscall.listen(listener.rawValue, backlog: configuration.backlog)
                .get("listen on the file presenter socket", url)
            (wakeReceiver, wakeSender) = try Syscall.unixStreamSocketPair().get("create a socket pair", url)
        } catch {
            // Nobody will ever listen on it: leave no socket file for clients to find (if that
            // fails too, the next server here removes it as stale).
            _ = Syscall.unlinkat(AT_FDCWD, socketPath)
            throw error
        }

        state = Mutex(State(wakeSender: wakeSender, device: info.st_dev, inode: info.st_ino))
        let loop = AcceptLoop(
            listener: listener, wakeReceiver: ChannelSocket(rawValue: wakeReceiver), handler: handler,
            transferTimeout: configuration.transferTimeout, finished: acceptLoopFinished)
        let thread = Thread { loop.run() }
        thread.name = "DocumentKit message channel"
        thread.start()
    }

    deinit { stop() }

    /// Stops accepting connections and removes the socket file.
    ///
    /// Requests already being handled run to completion and get their replies; new clients
    /// find no socket and learn that the presenter is gone. Calling it again does nothing.
    public func stop() {
        let stopped = state.withLock { state -> State? in
            guard state.isRunning else { return nil }
            state.isRunning = false
            return state
        }
        guard let stopped else { return }

        // Unlink first so that no new client finds the socket between the two steps.
        // Only the socket this server bound: another server may have taken the name since. One
        // that cannot be removed is found stale and removed by the next server here.
        if case .success(let info) = Syscall.fstatat(AT_FDCWD, socketPath, followLinks: false),
            info.st_dev == stopped.device && info.st_ino == stopped.inode
        {
            _ = Syscall.unlinkat(AT_FDCWD, socketPath)
        }
        var byte: UInt8 = 1
        _ = withUnsafeBytes(of: &byte) { Syscall.send(stopped.wakeSender, $0) }
        // Waiting for the loop to close the listener is what lets a caller bind again at once.
        acceptLoopFinished.wait()
        Syscall.close(stopped.wakeSender)
    }

    /// Creates the missing folders of `url` with mode 0700, from the top down.
    private static func makePrivateFolders(_ url: URL) throws {
        var missing: [URL] = []
        var folder = url
        while case .failure(let error) = Syscall.fstatat(AT_FDCWD, folder.path, followLinks: false) {
            guard error == .noSuchFileOrDirectory, folder.path != "/" else {
                throw DocumentKitError(error, operation: "inspect the file presenter folder", url: folder)
            }
            missing.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        for folder in missing.reversed() {
            if case .failure(let error) = Syscall.mkdirat(AT_FDCWD, folder.path, 0o700), error != .fileExists
            {
                throw DocumentKitError(error, operation: "create the file presenter folder", url: folder)
            }
        }
    }

    /// Removes a socket file that nobody listens on; refuses to touch anything else.
    private static func removeStaleSocket(at path: String, url: URL) throws {
        let info: stat
        switch Syscall.fstatat(AT_FDCWD, path, followLinks: false) {
        case .success(let status): info = status
        case .failure(.noSuchFileOrDirectory): return
        case .failure(let error):
            throw DocumentKitError(error, operation: "inspect the file presenter socket", url: url)
        }
        guard info.fileType == S_IFSOCK else {
            throw DocumentKitError(
                .fileExists, operation: "create the file presenter socket", url: url,
                detail: "a file that is not a socket is in the way")
        }
        do {
            _ = try MessageChannelClient.connect(to: path, until: .now + .milliseconds(500))
        } catch let error as DocumentKitError where error.code == .presenterGone {
            if case .failure(let error) = Syscall.unlinkat(AT_FDCWD, path), error != .noSuchFileOrDirectory {
                throw DocumentKitError(error, operation: "remove a stale file presenter socket", url: url)
            }
            return
        }
        throw DocumentKitError(
            .fileExists, operation: "create the file presenter socket", url: url,
            detail: "another server is listening there")
    }
}

/// The accept thread's work, holding only what it needs so that the server can go away.
private struct AcceptLoop: Sendable {
    let listener: ChannelSocket
    let wakeReceiver: ChannelSocket
    let handler: MessageChannelServer.Handler
    let transferTimeout: Duration
    let finished: DispatchSemaphore

    func run() {
        defer { finished.signal() }
        var descriptors = [
            pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReceiver.rawValue, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            guard case .success = Syscall.poll(&descriptors, until: nil) else { return }
            if descriptors[1].revents != 0 { return }
            acceptPending()
        }
    }

    /// Accepts every connection waiting in the backlog.
    private func acceptPending() {
        while true {
            switch Syscall.accept4(listener.rawValue) {
            case .success(let descriptor):
                let connection = ChannelSocket(rawValue: descriptor)
                let handler = handler
                let timeout = transferTimeout
                // A queue per connection: serial queues run on Dispatch's overcommitting pool,
                // which adds threads when handlers block instead of making requests wait in line.
                DispatchQueue(label: "DocumentKit message channel connection").async {
                    serve(connection, handler: handler, transferTimeout: timeout)
                }
            case .failure(.resourceTemporarilyUnavailable):
                return
            case .failure(let error)
            where error == Errno(rawValue: EMFILE) || error == Errno(rawValue: ENFILE):
                // Out of descriptors: the connection stays in the backlog; back off rather
                // than spin on a listener that stays readable.
                usleep(10_000)
                return
            case .failure:
                // ECONNABORTED and the like concern one connection only.
                continue
            }
        }
    }
}

/// Reads one request from a connection, has the handler answer it and sends the reply.
private func serve(
    _ connection: ChannelSocket, handler: MessageChannelServer.Handler, transferTimeout: Duration
) {
    let deadline = ContinuousClock.now + transferTimeout
    guard case .success(let peer) = Syscall.peerCredentials(connection.rawValue) else { return }
    guard peer.user == geteuid() else {
        send(Message(kind: .refused, error: "connections from another user are not accepted"), on: connection)
        return
    }
    var request: Message
    switch connection.receiveFrame(until: deadline) {
    case .success(let payload):
        do {
            request = try MessageFrame.decode(payload: payload)
        } catch {
            send(
                Message(kind: .rejected, error: "the frame does not hold a message: \(error)"), on: connection
            )
            return
        }
    case .failure(.oversized(let length)):
        let limit = MessageFrame.maximumPayloadLength
        send(
            Message(kind: .rejected, error: "a frame of \(length) bytes exceeds the limit of \(limit)"),
            on: connection)
        return
    case .failure:
        return
    }
    request.senderPID = peer.pid
    send(handler(request), on: connection, transferTimeout: transferTimeout)
}

private func send(_ reply: Message, on connection: ChannelSocket, transferTimeout: Duration = .seconds(1)) {
    let frame: [UInt8]
    do {
        frame = try MessageFrame.encode(reply)
    } catch {
        // Without the reply's paths, which are what can make it too large.
        let failure = Message(
            kind: .rejected, requestID: reply.requestID, error: "the reply could not be encoded: \(error)")
        guard let fallback = try? MessageFrame.encode(failure) else { return }
        frame = fallback
    }
    _ = connection.sendAll(frame, until: .now + transferTimeout)
}
