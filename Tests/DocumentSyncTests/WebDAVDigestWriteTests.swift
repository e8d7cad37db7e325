import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// A new file on a server whose ETags are made of the bytes goes in one `PUT`, in place, and
    /// its tag is the one of the bytes it sent, whatever another client writes after it.
    @Suite struct WebDAVDigestWriteTests {
        /// Apache with `FileETag Digest`: one `PUT` a new file (no hidden name, no `MOVE`, no
        /// read of the tag), the tag the one listed and read, and a second new file at the
        /// same path refused with nothing changed.
        @Test func aNewFileIsOnePutInPlaceWithTheTagOfItsBytes() throws {
            let (remote, url, _) = try WebDAVServers.collection(on: .digest)
            let log = URL(fileURLWithPath: try WebDAVServers.value("DOCUMENTSYNC_WEBDAV_DATA"))
                .appendingPathComponent("digest/logs/access.log")
            /// The methods Apache logged on the folder made below, once it has logged at least
            /// `count`: it logs a request after answering it, so a line may come a moment late.
            func requests(atLeast count: Int) throws -> [String] {
                let folder = url.appendingPathComponent("Notes").path
                let deadline = ContinuousClock.now + .seconds(30)
                while true {
                    let methods = String(decoding: try Data(contentsOf: log), as: UTF8.self)
                        .split(separator: "\n")
                        .compactMap { line -> [Substring]? in
                            line.split(separator: "\"").dropFirst().first?.split(separator: " ")
                        }
                        .filter { $0.count > 1 && $0[1].hasPrefix(folder) }
                        .map { String($0[0]) }
                    if methods.count >= count || ContinuousClock.now > deadline { return methods }
                    usleep(20_000)
                }
            }
            let path = RemotePath("Notes/plan.txt")
            try remote.makeFolder(RemotePath("Notes"))
            #expect(try requests(atLeast: 1) == ["MKCOL"])
            let tag = try #require(
                try remote.write(path, from: UploadSource(Data("mine\n".utf8)), condition: .absent))
            // The file took one request, a PUT: the entry asked for next is the only other one.
            _ = try remote.entry(at: path)
            let written = try requests(atLeast: 3).dropFirst()
            #expect(written.count == 2 && written.filter { $0 == "PUT" }.count == 1, "\(written)")
            // The tag made of the bytes sent is the one the server lists and reads.
            #expect(try remote.entry(at: path)?.tag == tag)
            var read = Data()
            #expect(try remote.read(path) { read.append($0) } == tag)
            #expect(read == Data("mine\n".utf8))
            let refused = #expect(throws: RemoteError.self) {
                try remote.write(path, from: UploadSource(Data("again\n".utf8)), condition: .absent)
            }
            #expect(refused?.kind == .preconditionFailed)
            read = Data()
            _ = try remote.read(path) { read.append($0) }
            #expect(read == Data("mine\n".utf8))
        }

        /// Another client overwrites the file the moment after the `PUT`: the tag kept is the
        /// recipe's of the bytes sent, never the other client's (which the server would list),
        /// whatever the answer says; and nothing more is asked of the server.
        @Test(arguments: [true, false])
        func anotherClientsWriteRightAfterIsNeverTakenForThisOne(answerHasTag: Bool) throws {
            let stored = Mutex<[String: Data]>([:])
            let server = try HostileServer { request in
                switch request.method {
                case "PUT":
                    // Written, then at once replaced by another client's bytes.
                    stored.withLock { $0[request.path] = Data("theirs\n".utf8) }
                    return .init(status: 201, headers: answerHasTag ? ["ETag": "\"theirs\""] : [:])
                case "GET":
                    guard let bytes = stored.withLock({ $0[request.path] }) else { return .notFound }
                    return .file(bytes, etag: "\"theirs\"")
                default:
                    return .notFound
                }
            }
            var configuration = WebDAVRemote.Configuration(
                url: server.url("/dav/C/"), writeProtocol: .locking)
            configuration.timeout = 10
            configuration.hasFileIDs = false
            configuration.tagRecipe = .sha1Base64
            let remote = try WebDAVRemote(configuration)
            let tag = try remote.write(
                RemotePath("plan.txt"), from: UploadSource(Data("mine\n".utf8)), condition: .absent)
            // Python: base64.b64encode(hashlib.sha1(b"mine\n").digest())
            #expect(tag == RemoteTag("\"27M7kd09m0XJKXZeHkDtsry+NHg=\""))
            #expect(server.requests.map(\.method) == ["PUT"])
            #expect(server.requests.first?.headers["if-none-match"] == "*")
        }

        /// Each recipe against a digest made by another tool (Python's hashlib), and the probe's
        /// choice: the recipe that makes every tag, none when one tag is made otherwise.
        @Test func eachRecipeMakesTheTagsOtherToolsMakeAndTheProbeKeepsOnlyOneThatFitsAll() {
            let bytes = Data("mine\n".utf8)
            #expect(WebDAVTagRecipe.sha1Base64.etag(of: bytes) == "27M7kd09m0XJKXZeHkDtsry+NHg=")
            #expect(WebDAVTagRecipe.md5Hex.etag(of: bytes) == "d92bf619dc8282f474be4bfbce48183f")
            #expect(WebDAVTagRecipe.md5Base64.etag(of: bytes) == "2Sv2GdyCgvR0vkv7zkgYPw==")
            #expect(
                WebDAVTagRecipe.sha256Hex.etag(of: bytes)
                    == "fcbc800db3f1867000b852f1ce0044b8f1584f76ade1ed6e65189824f95c3cda")
            let other = Data("yours\n".utf8)
            let made = { (recipe: WebDAVTagRecipe, data: Data) in RemoteTag("\"\(recipe.etag(of: data))\"") }
            #expect(
                WebDAVTagRecipe.found(in: [(bytes, made(.md5Hex, bytes)), (other, made(.md5Hex, other))])
                    == .md5Hex)
            #expect(
                WebDAVTagRecipe.found(in: [(bytes, made(.md5Hex, bytes)), (other, RemoteTag("\"1-2\""))])
                    == nil)
            #expect(WebDAVTagRecipe.found(in: []) == nil)
        }
    }
}
