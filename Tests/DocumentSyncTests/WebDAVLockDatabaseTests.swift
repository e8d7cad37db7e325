import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// Requests that write a server's lock database go one at a time (Debian's Apache corrupts
    /// its Berkeley DB `DavLockDB` when two threads write it at once), while the rest of a
    /// batch's requests stay many at once.
    @Suite struct WebDAVLockDatabaseTests {
        /// How many requests of each kind the server was answering at once, at most.
        struct Overlap: Sendable {
            var lockWriters = 0
            var mostLockWriters = 0
            var puts = 0
            var mostPuts = 0
        }

        @Test func locksUnlocksAndDeletesUnderALockGoOneAtATimeWhileWritesOverlap() throws {
            let overlap = Mutex(Overlap())
            let tokens = Atomic(0)
            let server = try HostileServer { request in
                let writesLocks = WebDAVRemote.writesLockDatabase(
                    method: request.method, if: request.headers["if"])
                overlap.withLock {
                    if writesLocks {
                        $0.lockWriters += 1
                        $0.mostLockWriters = max($0.mostLockWriters, $0.lockWriters)
                    } else if request.method == "PUT" {
                        $0.puts += 1
                        $0.mostPuts = max($0.mostPuts, $0.puts)
                    }
                }
                // Long enough that requests sent at once are answered at once; a write longer
                // than a lock, so that other writers take their locks while it goes on.
                Thread.sleep(forTimeInterval: request.method == "PUT" ? 0.1 : 0.01)
                overlap.withLock {
                    if writesLocks { $0.lockWriters -= 1 } else if request.method == "PUT" { $0.puts -= 1 }
                }
                switch request.method {
                case "LOCK":
                    let token = tokens.add(1, ordering: .relaxed).newValue
                    return .init(status: 200, headers: ["Lock-Token": "<opaquelocktoken:\(token)>"])
                case "PUT": return .init(status: 204, headers: ["ETag": "\"new-\(request.path)\""])
                case "PROPFIND":
                    return .xml(207, HostileServer.multistatus([.init(request.path, etag: "old")]))
                default: return .init(status: 204)
                }
            }
            var configuration = WebDAVRemote.Configuration(
                url: server.url("/dav/C/"), writeProtocol: .locking)
            configuration.timeout = 10
            configuration.hasFileIDs = false
            let remote = try WebDAVRemote(configuration)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 24) { index in
                do {
                    if index % 3 == 2 {
                        try remote.delete(
                            RemotePath("d\(index).txt"), condition: .matches(RemoteTag("\"old\"")))
                    } else {
                        try remote.write(
                            RemotePath("f\(index).txt"), from: UploadSource(Data("new \(index)\n".utf8)),
                            condition: .matches(RemoteTag("\"old\"")))
                    }
                } catch {
                    failures.withLock { $0.append("\(index): \(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let seen = overlap.withLock { $0 }
            #expect(seen.mostLockWriters == 1)
            // The writes themselves were sent many at once: the one-at-a-time above is the turn's.
            #expect(seen.mostPuts > 1)
            let methods = server.requests.map(\.method)
            #expect(methods.filter { $0 == "LOCK" }.count == 24)
            #expect(methods.filter { $0 == "UNLOCK" }.count == 24)
            #expect(methods.filter { $0 == "DELETE" }.count == 8)
        }

        /// Apache as Debian ships it: 200 files replaced 16 at once, each under its own lock,
        /// leave its lock database whole (its error log gains no Berkeley DB error) and every
        /// file with the bytes written.
        @Test func manyReplacementsAtOnceLeaveApachesLockDatabaseWhole() throws {
            let remote = try WebDAVServers.collection(on: .default).remote
            let log = URL(fileURLWithPath: try WebDAVServers.value("DOCUMENTSYNC_WEBDAV_DATA"))
                .appendingPathComponent("default/logs/error.log")
            func databaseErrors() throws -> Int {
                try String(decoding: Data(contentsOf: log), as: UTF8.self).components(separatedBy: "BDB")
                    .count - 1
            }
            let count = 200
            let tags = Mutex([RemoteTag?](repeating: nil, count: count))
            DispatchQueue.concurrentPerform(iterations: 16) { lane in
                for index in stride(from: lane, to: count, by: 16) {
                    let tag = try? remote.write(
                        RemotePath("f\(index).txt"), from: UploadSource(Data("old \(index)\n".utf8)),
                        condition: .absent)
                    tags.withLock { $0[index] = tag }
                }
            }
            let before = try databaseErrors()
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 16) { lane in
                for index in stride(from: lane, to: count, by: 16) {
                    do {
                        let old = try #require(tags.withLock { $0[index] })
                        try remote.write(
                            RemotePath("f\(index).txt"), from: UploadSource(Data("new \(index)\n".utf8)),
                            condition: .matches(old))
                    } catch {
                        failures.withLock { $0.append("f\(index).txt: \(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(try databaseErrors() == before)
            for index in [0, count / 2, count - 1] {
                var read = Data()
                _ = try remote.read(RemotePath("f\(index).txt")) { read.append($0) }
                #expect(read == Data("new \(index)\n".utf8))
            }
        }
    }
}
