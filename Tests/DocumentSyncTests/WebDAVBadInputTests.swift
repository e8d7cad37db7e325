import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// What a WebDAV server can answer that sync must survive: each gives a clear error naming the
    /// item and the request, changes nothing here, and the next pass goes on.
    @Suite struct WebDAVBadInputTests {
        /// Two devices on a fresh collection, the first one's requests through a proxy.
        struct Setup {
            let folder: TemporaryFolder
            let proxy: FaultProxy
            let a: SyncDevice
            let b: SyncDevice
            let data: URL

            init(_ name: String = #function, configure: (inout WebDAVRemote.Configuration) -> Void = { _ in })
                throws
            {
                folder = try TemporaryFolder(name)
                let collection = try WebDAVServers.collection(on: .default, name)
                proxy = try FaultProxy(target: collection.url)
                var configuration = WebDAVRemote.Configuration(
                    url: proxy.url(for: collection.url), credentials: try WebDAVServers.credentials())
                configuration.timeout = 1
                configure(&configuration)
                a = try SyncDevice("a", remote: try WebDAVRemote(configuration), in: folder)
                b = try SyncDevice("b", remote: collection.remote, in: folder)
                data = collection.folder
            }

            func write(_ text: String, to name: String, on device: SyncDevice) throws {
                let url = device.url(name)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: url)
            }

            func text(_ name: String, on device: SyncDevice) -> String? {
                try? String(contentsOf: device.url(name), encoding: .utf8)
            }
        }

        /// Apache asking for a password when none was found: the error says no password was
        /// sent and where one was looked for, not that the server refused it; a wrong one is
        /// said to be refused.
        @Test func aPasswordNoneWasFoundForIsSaidToBeMissingNotRefused() throws {
            let folder = try TemporaryFolder(#function)
            let collection = try WebDAVServers.collection(on: .default)
            let home = try folder.folder("home")
            var options = RemoteOptions()
            options.credentials = WebDAVCredentialSources(environment: ["HOME": home.path])
            options.stateHome = try folder.folder("state")
            let missing = #expect(throws: (any Error).self) {
                _ = try SyncRemotes.remote(for: collection.url.absoluteString, options: options).list(.root)
            }
            let said = String(describing: missing)
            #expect(said.contains("no password was sent: none was found"), "\(said)")
            #expect(
                said.contains("no --password-file given, DOCS_PASSWORD not set, no \(home.path)/.netrc"),
                "\(said)")
            #expect(!said.contains("refused"), "\(said)")

            var configuration = WebDAVRemote.Configuration(
                url: collection.url,
                credentials: .init(user: try WebDAVServers.credentials().user, password: "not the password"))
            configuration.timeout = 10
            let refused = #expect(throws: RemoteError.self) { try WebDAVRemote(configuration).list(.root) }
            #expect(refused?.description.contains("refused the user name or password") == true)
        }

        @Test func aURLThatIsNotWebDAVIsNamedAsSuch() throws {
            // Apache outside its WebDAV folder: a plain web server's refusal.
            let root = try WebDAVServers.url(.default).deletingLastPathComponent().deletingLastPathComponent()
            let state = try TemporaryFolder()
            let options = try WebDAVServers.options(keepingSettingsIn: state)
            let refused = #expect(throws: RemoteSetupError.self) {
                _ = try SyncRemotes.remote(for: root.absoluteString, options: options)
            }
            #expect(refused?.message.contains("PROPFIND answered HTTP 403") == true)
            // A web server that answers a page where a WebDAV listing was asked for.
            let setup = try Setup()
            setup.proxy.decide = { method, _ in
                method == "PROPFIND"
                    ? .respond(status: 200, contentType: "text/html", body: Data("<html>hello</html>".utf8))
                    : .none
            }
            let message = try #require(passFailure { try setup.a.sync() })
            #expect(message.contains("is the URL a WebDAV folder?"))
        }

        @Test func aFolderTheServerForbidsFailsThePassAndDeletesNothing() throws {
            let setup = try Setup()
            try setup.write("kept\n", to: "A/kept.txt", on: setup.a)
            try setup.write("top\n", to: "top.txt", on: setup.a)
            _ = try setup.a.sync()
            setup.proxy.decide = { method, path in
                method == "PROPFIND" && path.hasSuffix("/A/") ? .status(403) : .none
            }
            let message = try #require(passFailure { try setup.a.sync() })
            #expect(message.contains("“A”") && message.contains("403"))
            #expect(setup.text("A/kept.txt", on: setup.a) == "kept\n")
            setup.proxy.decide = { _, _ in .none }
            try setup.write("later\n", to: "A/later.txt", on: setup.a)
            #expect(try setup.a.sync().uploaded == 1)
            _ = try setup.b.sync()
            #expect(setup.text("A/later.txt", on: setup.b) == "later\n")
        }

        @Test func aFullServerFailsTheUploadByNameAndTheNextPassUploadsIt() throws {
            let setup = try Setup()
            try setup.write("big plans\n", to: "plan.txt", on: setup.a)
            setup.proxy.decide = { method, _ in method == "PUT" ? .status(507) : .none }
            let message = try #require(passFailure { try setup.a.sync() })
            #expect(message.contains("plan.txt") && message.contains("no space left"))
            #expect(setup.text("plan.txt", on: setup.a) == "big plans\n")
            setup.proxy.decide = { _, _ in .none }
            #expect(try setup.a.sync().uploaded == 1)
            _ = try setup.b.sync()
            #expect(setup.text("plan.txt", on: setup.b) == "big plans\n")
        }

        @Test func anUploadOverTheServersLimitIsNamedAndTheDocumentKept() throws {
            let setup = try Setup()
            try setup.write("a long story\n", to: "story.txt", on: setup.a)
            setup.proxy.decide = { method, _ in method == "PUT" ? .status(413) : .none }
            let message = try #require(passFailure { try setup.a.sync() })
            #expect(message.contains("story.txt") && message.contains("no upload this large"), "\(message)")
            #expect(setup.text("story.txt", on: setup.a) == "a long story\n")
            setup.proxy.decide = { _, _ in .none }
            #expect(try setup.a.sync().uploaded == 1)
        }

        @Test func aServerThatGoesAwayMidSyncLosesNothing() throws {
            let setup = try Setup()
            for index in 0..<12 { try setup.write("note \(index)\n", to: "n\(index).txt", on: setup.a) }
            // After a few requests every connection is reset, as when the server stops.
            let seen = Counter()
            setup.proxy.decide = { _, _ in seen.next() > 8 ? .resetBeforeRequest : .none }
            #expect(passFailure { try setup.a.sync() } != nil)
            for index in 0..<12 { #expect(setup.text("n\(index).txt", on: setup.a) == "note \(index)\n") }
            setup.proxy.decide = { _, _ in .none }
            _ = try setup.a.sync()
            _ = try setup.b.sync()
            for index in 0..<12 { #expect(setup.text("n\(index).txt", on: setup.b) == "note \(index)\n") }
        }

        @Test func anHrefOutsideTheCollectionFailsTheListingAndDeletesNothing() throws {
            let setup = try Setup()
            try setup.write("mine\n", to: "mine.txt", on: setup.a)
            _ = try setup.a.sync()
            let outside = Data(
                """
                <?xml version="1.0"?><D:multistatus xmlns:D="DAV:">
                <D:response><D:href>/elsewhere/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>
                <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
                """.utf8)
            setup.proxy.decide = { method, _ in
                method == "PROPFIND"
                    ? .respond(status: 207, contentType: "application/xml", body: outside) : .none
            }
            let message = try #require(passFailure { try setup.a.sync() })
            #expect(message.contains("outside the remote's folder") && message.contains("/elsewhere/"))
            #expect(setup.text("mine.txt", on: setup.a) == "mine\n")
            setup.proxy.decide = { _, _ in .none }
            #expect(passFailure { try setup.a.sync() } == nil)
        }

        @Test(arguments: ["malformed", "huge"])
        func aMalformedOrHugeListingFailsClearly(_ kind: String) throws {
            let setup = try Setup { $0.mostListingBytes = 64 << 10 }
            try setup.write("mine\n", to: "mine.txt", on: setup.a)
            _ = try setup.a.sync()
            let body =
                kind == "huge"
                ? Data(repeating: UInt8(ascii: " "), count: 200 << 10)
                : Data("<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>".utf8)
            setup.proxy.decide = { method, _ in
                method == "PROPFIND"
                    ? .respond(status: 207, contentType: "application/xml", body: body) : .none
            }
            let message = try #require(passFailure { try setup.a.sync() })
            #expect(message.contains(kind == "huge" ? "larger than" : "not well-formed XML"))
            #expect(setup.text("mine.txt", on: setup.a) == "mine\n")
            setup.proxy.decide = { _, _ in .none }
            #expect(passFailure { try setup.a.sync() } == nil)
        }

        @Test func aCertificateThatDoesNotVerifyIsRefusedBeforeAnythingIsSent() throws {
            let folder = try TemporaryFolder()
            let key = folder.file("key.pem")
            let certificate = folder.file("cert.pem")
            try run(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.path, "-out",
                    certificate.path,
                    "-days", "1", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1",
                ])
            let port = Int.random(in: 32000...39999)
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            server.arguments = [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate.path, "-key", key.path,
                "-www",
                "-quiet",
            ]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            defer { server.terminate() }
            Thread.sleep(forTimeInterval: 0.5)
            var configuration = WebDAVRemote.Configuration(
                url: URL(string: "https://localhost:\(port)/dav/")!,
                credentials: .init(user: "sync", password: "secret"))
            configuration.timeout = 5
            let remote = try WebDAVRemote(configuration)
            let error = #expect(throws: RemoteError.self) { _ = try remote.list(.root) }
            #expect(error?.kind == .insecure)
            #expect(error?.description.contains("certificate") == true)
        }

        private func run(_ tool: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
    }
}

/// A count shared by a proxy's decisions.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
