import Foundation
import Synchronization
import Testing

@testable import DocumentSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

extension BlockingSyncTests {
    /// ``FaultProxy`` between URLSession and the default Apache server: each fault does to the
    /// client what it says, and leaves the server as it says (seen by asking Apache directly,
    /// not through the proxy).
    @Suite struct FaultProxyTests {
        /// A fresh collection on the default server, a proxy in front of it, a client through the
        /// proxy and one straight to Apache.
        final class Fixture {
            let proxy: FaultProxy
            /// The collection on Apache, and the same through the proxy.
            let direct: URL
            let proxied: URL
            /// Through the proxy, giving up after `timeout` seconds without a byte.
            let client: Client
            /// Straight to Apache: how the tests see what the server has.
            let server: Client
            let credentials: WebDAVRemote.Credentials

            init(timeout: TimeInterval = 10, _ name: String = #function) throws {
                direct = try WebDAVServers.collection(on: .default, name).url
                credentials = try WebDAVServers.credentials()
                let authorization =
                    "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
                proxy = try FaultProxy(target: direct)
                proxied = proxy.url(for: direct)
                client = Client(timeout: timeout, authorization: authorization)
                server = Client(timeout: 10, authorization: authorization)
            }

            deinit {
                client.invalidate()
                server.invalidate()
                proxy.stop()
            }

            /// What Apache has at `name` in the collection: its bytes, or nil when it has none (404).
            func onServer(_ name: String) throws -> Data? {
                let outcome = server.send("GET", direct.appendingPathComponent(name))
                if let error = outcome.error { throw error }
                if outcome.status == 404 { return nil }
                try #require(outcome.status == 200, "GET \(name) from Apache: \(outcome)")
                return outcome.body
            }

            func putOnServer(_ name: String, _ data: Data) throws {
                let outcome = server.send("PUT", direct.appendingPathComponent(name), body: .data(data))
                if let error = outcome.error { throw error }
                try #require(
                    outcome.status == 201 || outcome.status == 204, "PUT \(name) to Apache: \(outcome)")
            }
        }

        /// A URLSession (libcurl underneath) whose requests each wait for their outcome: the answer
        /// as far as it came, or the error. One request at a time, all sharing the session's
        /// connection (at most one to the host), so that keep-alive is what the tests see.
        final class Client: NSObject, URLSessionDataDelegate, Sendable {
            struct Outcome: Sendable, CustomStringConvertible {
                var status: Int?
                /// The answer's header fields by lowercased name.
                var headers: [String: String] = [:]
                /// As much of the body as arrived, also when the request failed.
                var body = Data()
                var error: (any Error)?
                /// When the request ended, in seconds after it began.
                var elapsed: Double = 0

                var urlError: URLError? { error as? URLError }

                var description: String {
                    "status \(status.map(String.init) ?? "none"), \(body.count) bytes, "
                        + "error \(error.map { String(describing: $0) } ?? "none")"
                }
            }

            enum Body {
                case none
                /// With its Content-Length.
                case data(Data)
                /// As an `httpBodyStream` of unknown length: libcurl sends it chunked.
                case stream(Data)
            }

            private struct Current {
                var task = -1
                var outcome = Outcome()
                var done: DispatchSemaphore?
            }

            private nonisolated(unsafe) var session: URLSession!
            private let current = Mutex(Current())
            private let authorization: String

            init(timeout: TimeInterval, authorization: String) {
                self.authorization = authorization
                super.init()
                let configuration = URLSessionConfiguration.ephemeral
                configuration.timeoutIntervalForRequest = timeout
                configuration.httpMaximumConnectionsPerHost = 1
                configuration.urlCache = nil
                configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            }

            func invalidate() { session.invalidateAndCancel() }

            func send(
                _ method: String, _ url: URL, body: Body = .none, headers: [String: String] = [:]
            ) -> Outcome {
                var request = URLRequest(url: url)
                request.httpMethod = method
                request.setValue(authorization, forHTTPHeaderField: "Authorization")
                for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
                let task: URLSessionTask
                switch body {
                case .none: task = session.dataTask(with: request)
                case .data(let data): task = session.uploadTask(with: request, from: data)
                case .stream(let data):
                    request.httpBodyStream = InputStream(data: data)
                    task = session.dataTask(with: request)
                }
                let done = DispatchSemaphore(value: 0)
                current.withLock { $0 = Current(task: task.taskIdentifier, done: done) }
                let start = Date()
                task.resume()
                done.wait()
                var outcome = current.withLock { $0.outcome }
                outcome.elapsed = Date().timeIntervalSince(start)
                return outcome
            }

            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                current.withLock { current in
                    if current.task == dataTask.taskIdentifier { current.outcome.body.append(data) }
                }
            }

            func urlSession(
                _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
            ) {
                current.withLock { current in
                    guard current.task == task.taskIdentifier else { return }
                    let response = task.response as? HTTPURLResponse
                    current.outcome.status = response?.statusCode
                    for case (let name as String, let value as String) in response?.allHeaderFields ?? [:] {
                        current.outcome.headers[name.lowercased()] = value
                    }
                    current.outcome.error = error
                    current.done?.signal()
                }
            }

            func urlSession(
                _ session: URLSession, task: URLSessionTask,
                willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
            ) {
                completionHandler(nil)
            }
        }

        private static func bytes(_ count: Int, seed: UInt64) -> Data {
            var generator = SeededGenerator(seed: seed)
            var data = Data(count: count)
            data.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                for index in words.indices { words[index] = generator.next() }
            }
            return data
        }

        private static let propfind = Data(
            #"<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><getetag/></prop></propfind>"#
                .utf8)

        // MARK: No fault

        /// Bodies of megabytes go through both ways, by length and chunked, over one connection
        /// to the proxy; the proxy also rewrites what names the server's address (a MOVE's
        /// Destination), or mod_dav would refuse the MOVE.
        @Test func requestsGoThroughUnchangedOverOneConnection() throws {
            let fixture = try Fixture()
            let first = Self.bytes(3 << 20, seed: 1)
            let second = Self.bytes(3 << 20, seed: 2)
            let third = Self.bytes(3 << 20 + 17, seed: 3)
            let client = fixture.client
            let at = { (name: String) in fixture.proxied.appendingPathComponent(name) }

            var outcome = client.send("PUT", at("a.bin"), body: .data(first))
            #expect(outcome.error == nil && outcome.status == 201, "\(outcome)")
            outcome = client.send("GET", at("a.bin"))
            #expect(outcome.status == 200 && outcome.body == first, "\(outcome)")
            outcome = client.send("PUT", at("a.bin"), body: .data(second))
            #expect(outcome.error == nil && outcome.status == 204, "\(outcome)")
            outcome = client.send("GET", at("a.bin"))
            #expect(outcome.status == 200 && outcome.body == second, "\(outcome)")
            // A streamed body of no known length: libcurl sends it chunked.
            outcome = client.send("PUT", at("b.bin"), body: .stream(third))
            #expect(outcome.error == nil && outcome.status == 201, "\(outcome)")
            // Apache names the new file with its own address; the client sees the proxy's.
            #expect(outcome.headers["location"] == at("b.bin").absoluteString)
            outcome = client.send("HEAD", at("b.bin"))
            #expect(outcome.status == 200 && outcome.body.isEmpty, "\(outcome)")
            // Apache's multistatus answer comes chunked.
            outcome = client.send(
                "PROPFIND", fixture.proxied, body: .data(Self.propfind),
                headers: ["Depth": "1", "Content-Type": "application/xml"])
            #expect(outcome.status == 207, "\(outcome)")
            #expect(String(decoding: outcome.body, as: UTF8.self).contains("b.bin"))
            outcome = client.send("MOVE", at("a.bin"), headers: ["Destination": at("c.bin").absoluteString])
            #expect(outcome.status == 201, "\(outcome)")

            #expect(try fixture.onServer("a.bin") == nil)
            #expect(try fixture.onServer("b.bin") == third)
            #expect(try fixture.onServer("c.bin") == second)
            #expect(fixture.proxy.requestCount == 8)
            #expect(fixture.proxy.faultCount == 0)
            // Keep-alive on both sides: one client connection, one to the server.
            #expect(fixture.proxy.connectionCount == 1)
            #expect(fixture.proxy.upstreamConnectionCount == 1)

            let puts = fixture.proxy.requests.filter { $0.method == "PUT" }
            // What libcurl sent: the 3 MiB bodies with their length, the stream chunked.
            #expect(puts.map { $0.headers["content-length"] } == ["\(3 << 20)", "\(3 << 20)", nil])
            #expect(puts.map { $0.headers["transfer-encoding"] } == [nil, nil, "chunked"])
            // And no Expect: 100-continue, even for the stream (see anExpectedContinueComesAtOnce).
            #expect(puts.allSatisfy { $0.headers["expect"] == nil })
        }

        /// 64 MiB each way: the proxy streams bodies through in pieces.
        @Test func largeBodiesGoThrough() throws {
            let fixture = try Fixture(timeout: 60)
            let data = Self.bytes(64 << 20, seed: 4)
            let url = fixture.proxied.appendingPathComponent("large.bin")
            var outcome = fixture.client.send("PUT", url, body: .data(data))
            #expect(outcome.error == nil && outcome.status == 201, "\(outcome)")
            outcome = fixture.client.send("GET", url)
            #expect(outcome.status == 200 && outcome.body == data, "\(outcome)")
            #expect(try fixture.onServer("large.bin") == data)
        }

        // MARK: Faults

        /// The server never sees the request: nothing is written.
        @Test func aResetBeforeTheRequestLeavesTheServerUntouched() throws {
            let fixture = try Fixture()
            fixture.proxy.inject(.resetBeforeRequest) { method, _ in method == "PUT" }
            let outcome = fixture.client.send(
                "PUT", fixture.proxied.appendingPathComponent("a.bin"),
                body: .data(Self.bytes(1 << 16, seed: 5)))
            #expect(outcome.status == nil)
            #expect(outcome.urlError?.code == .networkConnectionLost, "\(outcome)")
            #expect(try fixture.onServer("a.bin") == nil)
            #expect(fixture.proxy.faultCount == 1)
            #expect(fixture.proxy.requestCount == 1)
        }

        /// The server applied the request, the client cannot know.
        @Test func aResetAfterTheRequestLeavesItApplied() throws {
            let fixture = try Fixture()
            try fixture.putOnServer("a.bin", Data("old".utf8))
            let new = Self.bytes(1 << 20, seed: 6)
            fixture.proxy.inject(.resetAfterRequest) { method, _ in method == "PUT" }
            let outcome = fixture.client.send(
                "PUT", fixture.proxied.appendingPathComponent("a.bin"), body: .data(new))
            #expect(outcome.status == nil)
            #expect(outcome.urlError?.code == .networkConnectionLost, "\(outcome)")
            #expect(try fixture.onServer("a.bin") == new)
            #expect(fixture.proxy.requestCount == 1)
        }

        /// The client gets the head and half the body, then the connection breaks.
        @Test func aCutBodyFailsTheDownload() throws {
            let fixture = try Fixture()
            let data = Self.bytes(1 << 20, seed: 7)
            try fixture.putOnServer("a.bin", data)
            fixture.proxy.inject(.cutResponseBody) { method, _ in method == "GET" }
            let outcome = fixture.client.send("GET", fixture.proxied.appendingPathComponent("a.bin"))
            // URLSession reports the break, after delivering what came.
            #expect(outcome.urlError?.code == .networkConnectionLost, "\(outcome)")
            #expect(outcome.body.count < data.count)
            #expect(outcome.body == data.prefix(outcome.body.count))
            #expect(try fixture.onServer("a.bin") == data)

            // A chunked answer (Apache's multistatus) is cut in its first chunk.
            fixture.proxy.inject(.cutResponseBody) { method, _ in method == "PROPFIND" }
            let multistatus = fixture.client.send(
                "PROPFIND", fixture.proxied, body: .data(Self.propfind), headers: ["Depth": "1"])
            #expect(
                multistatus.status == 207 && multistatus.urlError?.code == .networkConnectionLost,
                "\(multistatus)")
            #expect(!String(decoding: multistatus.body, as: UTF8.self).contains("</D:multistatus>"))
        }

        /// The client gives up before the answer comes; the server applied the request.
        @Test func aStalledAnswerTimesOutAfterTheServerApplied() throws {
            let fixture = try Fixture(timeout: 1)
            let data = Self.bytes(1 << 16, seed: 8)
            fixture.proxy.inject(.stall(seconds: 3)) { method, _ in method == "PUT" }
            let outcome = fixture.client.send(
                "PUT", fixture.proxied.appendingPathComponent("a.bin"), body: .data(data))
            #expect(outcome.urlError?.code == .timedOut, "\(outcome)")
            #expect(outcome.elapsed < 2.5)
            #expect(try fixture.onServer("a.bin") == data)
        }

        /// The client gets the status the proxy made up, and the connection goes on serving.
        @Test func anInjectedStatusKeepsTheConnection() throws {
            let fixture = try Fixture()
            fixture.proxy.inject(.status(503)) { method, _ in method == "PROPFIND" }
            let propfind = { () -> Client.Outcome in
                fixture.client.send(
                    "PROPFIND", fixture.proxied, body: .data(Self.propfind),
                    headers: ["Depth": "1", "Content-Type": "application/xml"])
            }
            var outcome = propfind()
            #expect(outcome.error == nil && outcome.status == 503, "\(outcome)")
            #expect(String(decoding: outcome.body, as: UTF8.self) == "FaultProxy: injected 503\n")
            outcome = propfind()
            #expect(outcome.error == nil && outcome.status == 207, "\(outcome)")
            #expect(fixture.proxy.requestCount == 2)
            #expect(fixture.proxy.faultCount == 1)
            #expect(fixture.proxy.connectionCount == 1)
        }

        // MARK: What the proxy must follow

        /// `Expect: 100-continue`: URLSession never sends it on its own (swift-corelibs-foundation
        /// removes the header libcurl would add), but passes one the request sets; curl sends it
        /// with every upload (`-T`). The proxy answers the 100 itself at once: libcurl would
        /// otherwise wait for it (1 s in URLSession, where it cannot be set; 20 s here for curl)
        /// and send the body anyway.
        @Test func anExpectedContinueComesAtOnce() throws {
            let fixture = try Fixture()
            let data = Self.bytes(1 << 16, seed: 9)
            let at = { (name: String) in fixture.proxied.appendingPathComponent(name) }
            let expect = ["Expect": "100-continue"]

            var outcome = fixture.client.send("PUT", at("a.bin"), body: .data(data), headers: expect)
            #expect(outcome.error == nil && outcome.status == 201, "\(outcome)")
            #expect(outcome.elapsed < 0.9)
            outcome = fixture.client.send("PUT", at("b.bin"), body: .stream(data), headers: expect)
            #expect(outcome.error == nil && outcome.status == 201, "\(outcome)")
            #expect(outcome.elapsed < 0.9)
            // A made-up status after the 100: the body is read and dropped, the connection goes on.
            fixture.proxy.inject(.status(503)) { method, _ in method == "PUT" }
            outcome = fixture.client.send("PUT", at("c.bin"), body: .data(data), headers: expect)
            #expect(outcome.error == nil && outcome.status == 503, "\(outcome)")
            #expect(outcome.elapsed < 0.9)
            outcome = fixture.client.send("GET", at("a.bin"))
            #expect(outcome.status == 200 && outcome.body == data, "\(outcome)")
            #expect(fixture.proxy.connectionCount == 1)
            #expect(
                fixture.proxy.requests.prefix(3).map { $0.headers["expect"] }
                    == Array(repeating: "100-continue", count: 3))

            // curl itself, a file (with its length) and standard input (chunked).
            let folder = try TemporaryFolder()
            let file = try folder.write(data, to: "data.bin")
            // The password in a config file, never in a command line others can see.
            let config = try folder.write(
                Data("user = \"\(fixture.credentials.user):\(fixture.credentials.password)\"\n".utf8),
                to: "curlrc")
            for (name, upload) in [("d.bin", ["-T", file.path]), ("e.bin", ["-T", "-"])] {
                let start = Date()
                let (status, output) = try Self.curl(
                    [
                        "-sS", "-K", config.path, "--expect100-timeout", "20", "-o", "/dev/null", "-w",
                        "%{http_code}",
                    ]
                        + upload
                        + [at(name).absoluteString],
                    input: upload[1] == "-" ? file : nil)
                #expect(status == 0 && output == "201", "curl \(upload): \(status) \(output)")
                #expect(Date().timeIntervalSince(start) < 10)
            }
            let curls = fixture.proxy.requests.suffix(2)
            #expect(curls.map { $0.headers["expect"] } == ["100-continue", "100-continue"])
            #expect(curls.map { $0.headers["transfer-encoding"] } == [nil, "chunked"])
            for name in ["a.bin", "b.bin", "d.bin", "e.bin"] {
                #expect(try fixture.onServer(name) == data, "\(name)")
            }
            #expect(try fixture.onServer("c.bin") == nil)
        }

        /// Runs curl and waits: its exit status and standard output.
        private static func curl(_ arguments: [String], input: URL?) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl"] + arguments
            let output = Pipe()
            process.standardOutput = output
            if let input { process.standardInput = try FileHandle(forReadingFrom: input) }
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }

        /// The server closing its connection: after its keep-alive timeout (5 s in
        /// scripts/webdav-servers) the proxy opens a new one for the client's next request on the
        /// same client connection; an answer with `Connection: close` (here to a request that
        /// asked for it) is passed on, and the client's connection ends with the server's.
        @Test func aServerThatClosesIsFollowed() throws {
            let fixture = try Fixture()
            let url = fixture.proxied.appendingPathComponent("a.bin")
            try fixture.putOnServer("a.bin", Data("old".utf8))
            var outcome = fixture.client.send("GET", url)
            #expect(outcome.status == 200, "\(outcome)")
            Thread.sleep(forTimeInterval: 5.5)
            outcome = fixture.client.send("GET", url)
            #expect(outcome.status == 200 && outcome.body == Data("old".utf8), "\(outcome)")
            #expect(fixture.proxy.connectionCount == 1)
            #expect(fixture.proxy.upstreamConnectionCount == 2)

            outcome = fixture.client.send("GET", url, headers: ["Connection": "close"])
            #expect(outcome.status == 200 && outcome.body == Data("old".utf8), "\(outcome)")
            outcome = fixture.client.send("GET", url)
            #expect(outcome.status == 200 && outcome.body == Data("old".utf8), "\(outcome)")
            #expect(fixture.proxy.connectionCount == 2)
            #expect(fixture.proxy.upstreamConnectionCount == 3)
        }

        // MARK: What libcurl does with a connection it reused

        /// A request whose reused connection breaks before any byte of an answer is sent again
        /// by libcurl on a new connection, unasked (the proxy sees it twice; each gets its own
        /// fault, here none the second time). The first may have been applied: a MOVE then answers
        /// 404 though it moved the file. And swift-corelibs-foundation has no body to send again
        /// (it asks a delegate's `needNewBodyStream`, and rewinds nothing without one): a body of
        /// known length never comes, and the request times out; a streamed one goes as an empty
        /// chunked body, and the server writes an empty file, answering success.
        @Test func libcurlSendsARequestAgainWhenItsReusedConnectionBreaks() throws {
            let fixture = try Fixture(timeout: 2)
            let at = { (name: String) in fixture.proxied.appendingPathComponent(name) }
            let data = Self.bytes(1 << 16, seed: 11)
            try fixture.putOnServer("a.bin", data)
            /// `method` on a connection already used once, reset after the server applied it.
            func again(
                _ method: String, _ name: String, body: Client.Body = .none, headers: [String: String] = [:]
            ) -> Client.Outcome {
                _ = fixture.client.send("HEAD", at(name))
                fixture.proxy.inject(.resetAfterRequest) { candidate, _ in candidate == method }
                let before = fixture.proxy.requestCount
                let outcome = fixture.client.send(method, at(name), body: body, headers: headers)
                #expect(fixture.proxy.requestCount - before == 2, "\(method): sent twice")
                return outcome
            }

            var outcome = again("MOVE", "a.bin", headers: ["Destination": at("b.bin").absoluteString])
            #expect(outcome.error == nil && outcome.status == 404, "\(outcome)")
            #expect(try fixture.onServer("a.bin") == nil)
            #expect(try fixture.onServer("b.bin") == data)

            outcome = again("PUT", "b.bin", body: .data(Self.bytes(1 << 16, seed: 12)))
            #expect(outcome.urlError?.code == .timedOut, "\(outcome)")
            #expect(try fixture.onServer("b.bin") == Self.bytes(1 << 16, seed: 12))

            outcome = again("PUT", "b.bin", body: .stream(Self.bytes(1 << 16, seed: 13)))
            #expect(outcome.error == nil && outcome.status == 204, "\(outcome)")
            #expect(try fixture.onServer("b.bin") == Data())
        }

        // MARK: Clients that go away

        /// Clients that leave mid-head, mid-body and mid-answer (raw sockets: URLSession does not
        /// leave so) cost the proxy nothing: their connections are closed, a write to a client
        /// gone is no SIGPIPE, the proxy goes on serving, and stop() ends what is left.
        @Test func clientsThatLeaveMidRequestDoNotHurtTheProxy() throws {
            let fixture = try Fixture()
            let path = fixture.proxied.path
            let authorization =
                "Authorization: Basic "
                + Data("\(fixture.credentials.user):\(fixture.credentials.password)".utf8)
                .base64EncodedString()
            try fixture.putOnServer("big.bin", Self.bytes(8 << 20, seed: 14))

            // Mid-head.
            var socket = try Self.connect(fixture.proxy.port)
            try Self.send(socket, "PUT \(path)a.bin HTTP/1.1\r\nHost: x\r\nContent-Le")
            close(socket)
            // Mid-body, with a reset: the server has begun the PUT.
            socket = try Self.connect(fixture.proxy.port)
            try Self.send(
                socket,
                "PUT \(path)b.bin HTTP/1.1\r\nHost: x\r\n\(authorization)\r\nContent-Length: 1000000\r\n\r\n"
                    + String(repeating: "x", count: 1000))
            usleep(100_000)
            Self.reset(socket)
            // Mid-answer: 8 MiB the proxy is still writing when the client goes.
            socket = try Self.connect(fixture.proxy.port)
            try Self.send(socket, "GET \(path)big.bin HTTP/1.1\r\nHost: x\r\n\(authorization)\r\n\r\n")
            var byte: UInt8 = 0
            #expect(recv(socket, &byte, 1, 0) == 1)
            close(socket)

            // Only the listener is left (a whole test run's load can slow the proxy's threads).
            let deadline = Date(timeIntervalSinceNow: 30)
            while fixture.proxy.openSocketCount > 1, Date() < deadline { usleep(10_000) }
            #expect(fixture.proxy.openSocketCount == 1)
            #expect(fixture.proxy.requestCount == 2)
            #expect(try fixture.onServer("a.bin") == nil)
            #expect(try fixture.onServer("b.bin") == nil)
            let outcome = fixture.client.send("GET", fixture.proxied.appendingPathComponent("big.bin"))
            #expect(outcome.status == 200 && outcome.body.count == 8 << 20, "\(outcome)")

            // An idle client connection (its thread waits for a request) and one mid-head: stop()
            // ends them and returns.
            let idle = try Self.connect(fixture.proxy.port)
            let halfway = try Self.connect(fixture.proxy.port)
            try Self.send(halfway, "GET \(path) HTTP/1.1\r\n")
            usleep(50_000)
            let start = Date()
            fixture.proxy.stop()
            // It waits for none of them: well under the seconds an answer may take.
            #expect(Date().timeIntervalSince(start) < 10)
            #expect(fixture.proxy.openSocketCount == 0)
            for socket in [idle, halfway] {
                #expect(recv(socket, &byte, 1, 0) <= 0, "the proxy closed it")
                close(socket)
            }
        }

        private struct SocketError: Error {
            var what: String
        }

        /// A TCP connection to 127.0.0.1:`port`.
        private static func connect(_ port: Int) throws -> Int32 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw SocketError(what: "socket") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(port).bigEndian
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else {
                close(socket)
                throw SocketError(what: "connect to \(port): \(String(cString: strerror(errno)))")
            }
            return socket
        }

        private static func send(_ socket: Int32, _ text: String) throws {
            let bytes = Array(text.utf8)
            guard Glibc.send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
                throw SocketError(what: "send")
            }
        }

        /// Closes with a reset (SO_LINGER 0).
        private static func reset(_ socket: Int32) {
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(socket, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            close(socket)
        }
    }
}
