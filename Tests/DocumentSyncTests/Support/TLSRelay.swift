import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// socat terminating TLS on a loopback port with the HTTPS test server's certificate (signed by
/// the throwaway authority of `scripts/webdav-servers`), each connection relayed as plain TCP
/// to a server: an https endpoint of a private authority in front of a server that speaks
/// http only (SeaweedFS's S3 gateway). The bytes pass unchanged, so an S3 request's signed
/// `Host` is the one the server checks.
final class TLSRelay {
    let port: Int
    private let process: Process

    /// Starts relaying to `target` (an http URL of 127.0.0.1 or localhost), with the
    /// certificate and key kept beside the authority's file `caFile`.
    init(to target: URL, caFile: String) throws {
        let folder = URL(fileURLWithPath: caFile).deletingLastPathComponent()
        // A port the kernel picks, let go for socat to take.
        let (listener, free) = try FaultProxy.listenOnLoopback()
        close(listener)
        port = free
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
        process.arguments = [
            "OPENSSL-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork,verify=0,"
                + "cert=\(folder.appendingPathComponent("server.pem").path),"
                + "key=\(folder.appendingPathComponent("server.key").path)",
            "TCP:127.0.0.1:\(target.port ?? 80)",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<500 where !Self.accepts(port) { usleep(10_000) }
        guard Self.accepts(port) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "socat did not listen"])
        }
    }

    // SIGKILL: socat inherits the test thread's mask, in which SIGTERM is blocked.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The endpoint's URL as clients are given it: the name the certificate is for.
    var url: URL { URL(string: "https://localhost:\(port)")! }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
