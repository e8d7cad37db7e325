import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why a read or write on a channel socket stopped short.
enum ChannelFailure: Error {
    /// The deadline passed first.
    case timedOut
    /// The peer closed the connection or reset it.
    case closed
    /// A frame announced a payload larger than ``MessageFrame/maximumPayloadLength``.
    case oversized(Int)
    /// Any other system failure.
    case system(Errno)
}

/// A connected or listening socket of the message channel, closed when the value goes away.
///
/// All channel sockets are non-blocking; these methods wait in `poll` with a deadline so
/// that no peer, however slow or stuck, holds the other side longer than it allows.
final class ChannelSocket: Sendable {
    let rawValue: CInt

    init(rawValue: CInt) { self.rawValue = rawValue }

    deinit { Syscall.close(rawValue) }

    /// A new unconnected socket.
    static func make() -> Result<ChannelSocket, Errno> {
        Syscall.unixStreamSocket().map(ChannelSocket.init(rawValue:))
    }

    /// Waits for `events` until `deadline`; false if the deadline passed first.
    func wait(for events: CInt, until deadline: ContinuousClock.Instant) -> Result<Bool, ChannelFailure> {
        var descriptors = [pollfd(fd: rawValue, events: Int16(events), revents: 0)]
        switch Syscall.poll(&descriptors, until: deadline) {
        case .success(let ready): return .success(ready > 0)
        case .failure(let error): return .failure(.system(error))
        }
    }

    /// Sends every byte of `bytes`, waiting for room in the socket buffer as needed.
    func sendAll(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) -> Result<Void, ChannelFailure> {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Syscall.send(rawValue, UnsafeRawBufferPointer(rebasing: raw[offset...]))
            }
            switch sent {
            case .success(let count):
                offset += count
            case .failure(.resourceTemporarilyUnavailable):
                switch wait(for: POLLOUT, until: deadline) {
                case .success(true): continue
                case .success(false): return .failure(.timedOut)
                case .failure(let failure): return .failure(failure)
                }
            case .failure(let error):
                return .failure(Self.isDisconnection(error) ? .closed : .system(error))
            }
        }
        return .success(())
    }

    /// Receives exactly `count` bytes, waiting for them as needed.
    func receive(exactly count: Int, until deadline: ContinuousClock.Instant) -> Result<
        [UInt8], ChannelFailure
    > {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let received = bytes.withUnsafeMutableBytes { raw in
                Syscall.recv(rawValue, UnsafeMutableRawBufferPointer(rebasing: raw[offset...]))
            }
            switch received {
            case .success(0):
                return .failure(.closed)
            case .success(let length):
                offset += length
            case .failure(.resourceTemporarilyUnavailable):
                switch wait(for: POLLIN, until: deadline) {
                case .success(true): continue
                case .success(false): return .failure(.timedOut)
                case .failure(let failure): return .failure(failure)
                }
            case .failure(let error):
                return .failure(Self.isDisconnection(error) ? .closed : .system(error))
            }
        }
        return .success(bytes)
    }

    /// Receives one frame's payload, refusing a length over the limit before reading it.
    func receiveFrame(until deadline: ContinuousClock.Instant) -> Result<[UInt8], ChannelFailure> {
        receive(exactly: MessageFrame.headerLength, until: deadline).flatMap { header in
            let length = MessageFrame.payloadLength(header: header)
            guard length <= MessageFrame.maximumPayloadLength else { return .failure(.oversized(length)) }
            return receive(exactly: length, until: deadline)
        }
    }

    private static func isDisconnection(_ error: Errno) -> Bool {
        error == Errno(rawValue: EPIPE) || error == Errno(rawValue: ECONNRESET)
    }
}
