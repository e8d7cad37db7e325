import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a message-channel child command; returns false if `name` is not one.
func runChannelCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "channel-echo-server":
        // channel-echo-server SOCKET: serves until killed, answering every request with
        // itself as an `ack`; a request of kind "sleep" first sleeps `options` milliseconds.
        channelEchoServer(arguments[0])
    case "channel-send":
        // channel-send SOCKET KIND: one request through MessageChannelClient; prints the reply's kind.
        reportingErrors {
            let reply = try MessageChannelClient.send(
                Message(kind: .init(rawValue: arguments[1])), to: arguments[0])
            print(reply.kind)
        }
    case "channel-send-unchecked":
        // channel-send-unchecked SOCKET: one request without the client's own checks (it
        // refuses servers of other users), so that the server's check of its peer is what
        // the test sees; prints the reply's kind and error.
        sendUnchecked(arguments[0])
    default:
        return false
    }
    return true
}

/// The reply the echo server gives: the request itself, as an `ack` from this process.
func echo(_ request: Message) -> Message {
    var reply = request
    reply.kind = .ack
    reply.senderPID = getpid()
    reply.error = "from \(request.senderPID)"
    return reply
}

private func channelEchoServer(_ socketPath: String) -> Never {
    let server: MessageChannelServer
    do {
        server = try MessageChannelServer(socketPath: socketPath) { request in
            if request.kind.rawValue == "sleep" { usleep(UInt32(request.options) * 1000) }
            return echo(request)
        }
    } catch {
        fail("channel-echo-server: \(error)")
    }
    // Straight to the descriptor: the test waits for this line, and a buffer would hold it.
    _ = "ready\n".withCString { write(1, $0, strlen($0)) }
    while true {
        withExtendedLifetime(server) { _ = pause() }
    }
}

private func sendUnchecked(_ socketPath: String) {
    let fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(socketPath.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard connected == 0 else { fail("channel-send-unchecked: connect: \(String(cString: strerror(errno)))") }
    // The server may refuse and close before the request is written: its reply is still
    // there to read, so a failed write is no reason to stop, let alone to die of SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
    let frame = try! MessageFrame.encode(Message(kind: .willWrite))
    _ = frame.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        received += buffer[0..<count]
    }
    guard received.count > MessageFrame.headerLength,
        let reply = try? MessageFrame.decode(payload: Array(received.dropFirst(MessageFrame.headerLength)))
    else { fail("channel-send-unchecked: no reply (\(received.count) bytes)") }
    print(reply.kind, reply.error ?? "")
}
