import Foundation
import Synchronization
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// What the network remotes' HTTP layer promises whatever the server: a file's bytes are
    /// handed on as they arrive (never gathered whole in memory or in a file of the remote's
    /// own), many requests go out at once over one remote, and a failure's kind says what a
    /// caller keeping many requests in flight does about it.
    @Suite struct RemoteTransportTests {
        /// A 3 MiB file whose answer is cut off after 2 MiB: the bytes that came reached the
        /// reader before the answer ended (they were not held back until it was whole), and
        /// the read still fails, so the cut answer is never taken as the file.
        @Test(arguments: HostileStores.names)
        func readGivesTheBytesOnAsTheyArrive(_ name: String) throws {
            let store = try HostileStores.make(name)
            let bytes = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            store.server.intercept { request in
                guard request.method == "GET", request.path.hasSuffix("/big.bin") else { return nil }
                return HostileServer.Answer(
                    status: 200, headers: ["ETag": "\"big\""], body: bytes, delivery: .cut(bytes: 2 << 20))
            }
            let remote = try store.anyRemote(deadline: RequestDeadline())
            var given = Data()
            let error = #expect(throws: RemoteError.self) {
                _ = try remote.read(RemotePath("big.bin"), expectedSize: Int64(bytes.count)) {
                    given.append($0)
                }
            }
            #expect(error?.kind == .connectionLost, "\(String(describing: error))")
            #expect(given.count >= RemoteChunk.size && given.count <= 2 << 20, "\(given.count) bytes given")
            #expect(given == bytes.prefix(given.count))
        }

        /// A whole answer longer than a chunk reaches the reader in pieces, all of it, once.
        @Test(arguments: HostileStores.names)
        func readGivesAWholeLargeFileOnce(_ name: String) throws {
            let store = try HostileStores.make(name)
            let bytes = Data((0..<(5 << 20 + 123)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            store.server.intercept { request in
                guard request.method == "GET", request.path.hasSuffix("/big.bin") else { return nil }
                return .file(bytes, etag: "\"big\"")
            }
            let remote = try store.anyRemote(deadline: RequestDeadline())
            var given = Data()
            var pieces = 0
            let tag = try remote.read(RemotePath("big.bin"), expectedSize: nil) {
                given.append($0)
                pieces += 1
            }
            #expect(tag == RemoteTag("\"big\""))
            #expect(given == bytes)
            #expect(pieces > 1)
        }

        @Test(arguments: HostileStores.names)
        func sixtyFourRequestsAreInFlightAtOnce(_ name: String) throws {
            let store = try HostileStores.make(name)
            let wanted = 64
            let arrived = Mutex(0)
            let together = DispatchSemaphore(value: 0)
            store.server.intercept { request in
                guard request.method == "GET", request.path.contains("/f") else { return nil }
                let count = arrived.withLock {
                    $0 += 1
                    return $0
                }
                if count == wanted {
                    for _ in 0..<wanted { together.signal() }
                }
                // Held until all have arrived; not for ever when they never do.
                guard together.wait(timeout: .now() + 3) == .success else {
                    return HostileServer.Answer(status: 500, body: Data("not all together\n".utf8))
                }
                return .file(Data("x".utf8), etag: "\"x\"")
            }
            let remote = try store.anyRemote(deadline: RequestDeadline())
            let outcomes = Mutex<[String]>([])
            let threads = (0..<wanted).map { index in
                Thread {
                    let outcome: String
                    do {
                        _ = try remote.read(RemotePath("f\(index)")) { _ in }
                        outcome = "read"
                    } catch {
                        outcome = "\(error)"
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            for thread in threads { thread.start() }
            let deadline = Date().addingTimeInterval(30)
            while outcomes.withLock({ $0.count }) < wanted, Date() < deadline { usleep(10_000) }
            let seen = outcomes.withLock { $0 }
            #expect(seen.count == wanted)
            #expect(seen.allSatisfy { $0 == "read" }, "\(Set(seen))")
            #expect(arrived.withLock { $0 } == wanted)
        }

        /// 429, 503 (and S3's SlowDown) say "fewer requests"; an answer that cannot be read is
        /// a bad answer; each kind falls in the category a caller keeping many requests in
        /// flight switches over.
        @Test(arguments: HostileStores.names)
        func failuresSayWhatToDoAboutThem(_ name: String) throws {
            let store = try HostileStores.make(name)
            let status = Mutex(429)
            store.server.intercept { request in
                guard request.method == store.listingMethod else { return nil }
                let code = status.withLock { $0 }
                return name == "S3" && code == 503
                    ? .xml(503, "<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>")
                    : HostileServer.Answer(status: code, body: Data("busy\n".utf8))
            }
            let remote = try store.anyRemote(deadline: RequestDeadline())
            for code in [429, 503] {
                status.withLock { $0 = code }
                let error = #expect(throws: RemoteError.self) { _ = try remote.list(.root) }
                #expect(error?.kind == .throttled(status: code), "\(String(describing: error))")
                #expect(error?.category == .throttled)
                #expect(error?.asksForFewerRequests == true)
                #expect(error?.isTransient == true)
                #expect(error.map { "\($0)" }?.contains("answered \(code): it is busy") == true)
            }
            store.server.intercept { _ in nil }
            store.rewritingListings { _ in ("<?xml version=\"1.0\"?><unclosed>", .whole) }
            let bad = #expect(throws: RemoteError.self) { _ = try remote.list(.root) }
            #expect(bad?.kind == .badAnswer, "\(String(describing: bad))")
            #expect(bad?.category == .badAnswer)
            #expect(bad?.asksForFewerRequests == false)
        }

        /// Every kind falls in one category, and only timeouts, throttles and broken
        /// connections ask for fewer requests.
        @Test func everyKindHasACategory() {
            let kinds: [RemoteError.Kind] = [
                .preconditionFailed, .notFound, .exists, .parentMissing, .notAFolder, .notAFile, .notEmpty,
                .invalidName, .invalidMove, .changedDuringRead, .sourceChanged, .timedOut, .connectionLost,
                .server(status: 500), .throttled(status: 429), .badAnswer, .unavailable, .insecure,
                .permissionDenied, .outOfSpace, .other,
            ]
            let categories = kinds.map {
                RemoteError($0, operation: .read, path: RemotePath("x"), remote: "r").category
            }
            #expect(Set(categories) == Set(RemoteError.Category.allCases))
            let fewer = kinds.filter {
                RemoteError($0, operation: .read, path: RemotePath("x"), remote: "r").asksForFewerRequests
            }
            #expect(fewer == [RemoteError.Kind.timedOut, .connectionLost, .throttled(status: 429)])
            #expect(RemoteError.Kind.status(503) == .throttled(status: 503))
            #expect(RemoteError.Kind.status(502) == .server(status: 502))
        }
    }
}
