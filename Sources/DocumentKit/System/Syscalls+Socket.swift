import CDocumentSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Syscall {
    /// The largest socket path `sockaddr_un` holds, not counting the terminating zero byte.
    static var unixSocketPathCapacity: Int {
        MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
    }

    /// Creates a Unix stream socket that is non-blocking and closed on `exec`.
    ///
    /// Every socket of the message channel is non-blocking: waits happen in ``poll(_:until:)``
    /// where a deadline bounds them, never inside `connect`, `send` or `recv`.
    ///
    /// The corresponding C function is `socket(2)`.
    static func unixStreamSocket() -> Result<CInt, Errno> {
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        return retrying { Glibc.socket(AF_UNIX, type, 0) }
    }

    /// Creates a connected pair of Unix stream sockets, closed on `exec`.
    ///
    /// The corresponding C function is `socketpair(2)`.
    static func unixStreamSocketPair() -> Result<(CInt, CInt), Errno> {
        var descriptors: [CInt] = [-1, -1]
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        return retrying { Glibc.socketpair(AF_UNIX, type, 0, &descriptors) }.map { _ in
            (descriptors[0], descriptors[1])
        }
    }

    /// Calls `body` with a `sockaddr_un` for `path`, or fails with `ENAMETOOLONG` when the
    /// path does not fit in `sun_path` (107 bytes and a zero), and with `EINVAL` when it
    /// holds a zero byte (which would silently shorten it).
    private static func withUnixAddress<T: BinaryInteger>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T
    ) -> Result<T, Errno> {
        let bytes = Array(path.utf8)
        guard !bytes.contains(0) else { return .failure(.invalidArgument) }
        guard bytes.count <= unixSocketPathCapacity else { return .failure(.fileNameTooLong) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + 1)
        return retrying {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
            }
        }
    }

    /// Binds a Unix socket to a path, creating the socket file.
    ///
    /// The corresponding C function is `bind(2)`.
    static func bind(_ fd: CInt, unixPath path: String) -> Result<CInt, Errno> {
        withUnixAddress(path) { Glibc.bind(fd, $0, $1) }
    }

    /// Starts accepting connections on a bound socket.
    ///
    /// The corresponding C function is `listen(2)`.
    static func listen(_ fd: CInt, backlog: CInt) -> Result<CInt, Errno> {
        retrying { Glibc.listen(fd, backlog) }
    }

    /// Accepts one pending connection as a non-blocking socket closed on `exec`.
    ///
    /// The corresponding C function is `accept4(2)`.
    static func accept4(_ fd: CInt) -> Result<CInt, Errno> {
        let flags = CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        return retrying { cds_accept4(fd, flags) }
    }

    /// Starts connecting a socket to the Unix socket at `path`.
    ///
    /// `EINTR` is not retried: the connection then goes on in the background, exactly as
    /// after `EINPROGRESS`, and calling `connect` again would report `EALREADY`. Callers of a
    /// non-blocking socket poll for writability and read ``socketError(_:)`` in both cases.
    ///
    /// The corresponding C function is `connect(2)`.
    static func connect(_ fd: CInt, unixPath path: String) -> Result<CInt, Errno> {
        // withUnixAddress retries EINTR on its own; stop that by reporting it as in progress.
        withUnixAddress(path) { address, length -> CInt in
            let result = Glibc.connect(fd, address, length)
            if result == -1 && errno == EINTR { errno = EINPROGRESS }
            return result
        }
    }

    /// Waits until one of `descriptors` is ready or `deadline` passes; returns how many are
    /// ready, 0 on timeout. An interrupted wait resumes with the time that is left, so a
    /// signal neither shortens nor stretches it.
    ///
    /// The corresponding C function is `poll(2)`.
    static func poll(_ descriptors: inout [pollfd], until deadline: ContinuousClock.Instant?) -> Result<
        CInt, Errno
    > {
        retrying {
            var milliseconds: CInt = -1
            if let deadline {
                let left = deadline - .now
                // Round up so a wait that has a few microseconds left does not spin at 0 ms.
                let (seconds, attoseconds) = left.components
                let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                milliseconds = CInt(clamping: max(0, total))
            }
            return Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        }
    }

    /// Sends bytes on a connected socket without raising `SIGPIPE` if the peer has gone;
    /// returns how many were sent, which may be fewer than asked on a non-blocking socket.
    ///
    /// The corresponding C function is `send(2)` with `MSG_NOSIGNAL`.
    static func send(_ fd: CInt, _ buffer: UnsafeRawBufferPointer) -> Result<Int, Errno> {
        retrying { Glibc.send(fd, buffer.baseAddress, buffer.count, CInt(MSG_NOSIGNAL)) }
    }

    /// Receives up to `buffer.count` bytes from a connected socket; 0 means the peer closed.
    ///
    /// The corresponding C function is `recv(2)`.
    static func recv(_ fd: CInt, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        retrying { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// The pending error of a socket, which is how a non-blocking `connect` reports its
    /// outcome; `nil` when there is none.
    ///
    /// The corresponding C function is `getsockopt(2)` with `SO_ERROR`.
    static func socketError(_ fd: CInt) -> Result<Errno?, Errno> {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        return retrying { Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) }.map { _ in
            value == 0 ? nil : Errno(rawValue: value)
        }
    }

    /// The process and user at the other end of a connected Unix socket, as the kernel
    /// recorded them when the connection (or, for a client, the listening socket) was made.
    ///
    /// The corresponding C function is `getsockopt(2)` with `SO_PEERCRED`.
    static func peerCredentials(_ fd: CInt) -> Result<(pid: pid_t, user: uid_t), Errno> {
        var pid: pid_t = 0
        var user: uid_t = 0
        var group: gid_t = 0
        return retrying { cds_peer_credentials(fd, &pid, &user, &group) }.map { _ in (pid, user) }
    }

    /// Shuts down both directions of a socket so that a peer blocked on it wakes up.
    ///
    /// The corresponding C function is `shutdown(2)`.
    @discardableResult
    static func shutdown(_ fd: CInt) -> Result<CInt, Errno> {
        retrying { Glibc.shutdown(fd, CInt(SHUT_RDWR)) }
    }
}

extension Syscall {
    /// Calls `body` with a path to the socket file that fits in `sun_path`.
    ///
    /// A path of up to 107 bytes is passed as it is. A longer one is reached through its
    /// folder: the folder is opened and named `/proc/self/fd/N`, which the kernel resolves to
    /// the folder itself, so `/proc/self/fd/N/1234.sock` names the same file in well under
    /// 108 bytes however deep the folder is. Only the last component then has to be short.
    ///
    /// - Returns: `body`'s result, or `ENAMETOOLONG` if even the short form does not fit.
    static func withShortSocketPath<T>(
        _ path: String, _ body: (String) -> Result<T, Errno>
    ) -> Result<T, Errno> {
        if path.utf8.count <= unixSocketPathCapacity { return body(path) }
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        switch openat(AT_FDCWD, folder, O_RDONLY | O_DIRECTORY) {
        case .failure(let error):
            return .failure(error)
        case .success(let descriptor):
            defer { Syscall.close(descriptor) }
            let short = "/proc/self/fd/\(descriptor)/\(name)"
            guard short.utf8.count <= unixSocketPathCapacity else { return .failure(.fileNameTooLong) }
            return body(short)
        }
    }
}
