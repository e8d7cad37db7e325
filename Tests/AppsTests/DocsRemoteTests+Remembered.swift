import Foundation
import Testing

/// A remote given once with its settings, to `docs sync --remote` or to `docs remote add`, is
/// the remote of every later command that names none: the same server, reached the same way.
extension DocsRemoteTests {
    /// The environment of a device whose secrets come only from what it was told: no
    /// `~/.netrc`, no `DOCS_PASSWORD`, no AWS variables; a home of its own for `~/.aws`.
    func bareEnvironment(_ device: DocsFolder) throws -> [String: String] {
        let home = device.root.appendingPathComponent("home", isDirectory: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        var environment = ["HOME": home.path, "DOCS_PASSWORD": "", "DOCUMENTKIT_SYNC_AGENT": "manual"]
        for name in [
            "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
            "AWS_SHARED_CREDENTIALS_FILE",
        ] {
            environment[name] = ""
        }
        return environment
    }

    /// Expects that no file of `devices` holds `secret`.
    func expectNoFile(of devices: [DocsFolder], holds secret: String, but allowed: [URL] = []) {
        for device in devices {
            let enumerator = FileManager.default.enumerator(atPath: device.root.path)
            while let name = enumerator?.nextObject() as? String {
                let file = device.root.appendingPathComponent(name)
                guard !allowed.contains(file), let data = FileManager.default.contents(atPath: file.path)
                else {
                    continue
                }
                #expect(!String(decoding: data, as: UTF8.self).contains(secret), "\(file.path)")
            }
        }
    }

    func text(at url: URL) -> String? {
        FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aWebDAVRemoteKeepsItsUserPasswordFileAndPlainHTTPAllowance() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try testServerSetting("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try testServerSetting("DOCUMENTSYNC_WEBDAV_USER")
        let collection = try makeCollection(
            in: try testServerSetting("DOCUMENTSYNC_WEBDAV_DEFAULT"), user: user, password: password)
        // The server's files, to see what arrived where.
        let served = URL(fileURLWithPath: try testServerSetting("DOCUMENTSYNC_WEBDAV_DATA"))
            .appendingPathComponent("default/data")
            .appendingPathComponent(URL(string: collection)!.lastPathComponent)
        // The same server, spelled as another computer would be (0.0.0.0 is this one): plain
        // http to it needs --allow-http.
        let url = collection.replacingOccurrences(of: "127.0.0.1", with: "0.0.0.0")
        let settings = ["--user", user, "--password-file", passwordFile, "--allow-http"]

        // Given to sync once, then named by no later command.
        let a = try DocsFolder()
        let bareA = try bareEnvironment(a)
        #expect(try docs(a, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let first = try docs(a, ["sync", "--remote", url] + settings, environment: bareA)
        #expect(first.status == 0, "\(first.error)")
        try a.write("Plan.txt", "one\ntwo\n")
        let again = try docs(a, ["sync"], environment: bareA)
        #expect(again.status == 0, "\(again.error)")
        #expect(again.output.contains("1 uploaded"), "\(again.output)")
        #expect(text(at: served.appendingPathComponent("Plan.txt")) == "one\ntwo\n")
        let status = try docs(a, ["status"], environment: bareA)
        #expect(status.status == 0 && status.output == "synced\tPlan\n", "\(status.output) \(status.error)")

        // Given to remote add once: sync, status and remote test reach it as given.
        let b = try DocsFolder()
        let bareB = try bareEnvironment(b)
        let added = try docs(b, ["remote", "add", "dav", url] + settings, environment: bareB)
        #expect(added.status == 0, "\(added.error)")
        let down = try docs(b, ["sync"], environment: bareB)
        #expect(down.status == 0, "\(down.error)")
        #expect(try b.contents("Plan.txt") == "one\ntwo\n")
        try b.write("Plan.txt", "one\ntwo\nthree\n")
        let up = try docs(b, ["sync"], environment: bareB)
        #expect(up.status == 0 && up.output.contains("1 uploaded"), "\(up.output) \(up.error)")
        #expect(text(at: served.appendingPathComponent("Plan.txt")) == "one\ntwo\nthree\n")
        let tested = try docs(b, ["remote", "test", "dav"], environment: bareB)
        #expect(tested.status == 0, "\(tested.error)")
        let listed = try docs(b, ["remote", "list", "--json"], environment: bareB).output
        #expect(listed.contains("\"passwordFile\":\"\(passwordFile)\""), "\(listed)")
        // Another URL given for the added container is refused, not silently replaced by it.
        let other = try docs(b, ["sync", "--remote", collection] + settings, environment: bareB)
        #expect(other.status == 2 && other.error.contains("syncs with the remote “dav”"), "\(other.error)")

        for result in [first, again, added, down, up, tested] {
            #expect(!result.output.contains(password) && !result.error.contains(password))
        }
        expectNoFile(of: [a, b], holds: password)
    }

    /// `rclone serve webdav`: a server that honours no write condition and fakes its locks,
    /// which only `--unsafe-server` syncs with. Stopped when the value goes.
    final class UnsafeServer {
        let process = Process()
        let url: String
        let files: URL

        init(in root: URL, user: String, password: String) throws {
            files = root.appendingPathComponent("unsafe-server", isDirectory: true)
            try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
            let users = root.appendingPathComponent("unsafe-server.htpasswd")
            let hash = Process()
            hash.executableURL = URL(fileURLWithPath: "/usr/bin/htpasswd")
            hash.arguments = ["-ciB", users.path, user]
            let input = Pipe()
            hash.standardInput = input
            hash.standardError = FileHandle.nullDevice
            try hash.run()
            try input.fileHandleForWriting.write(contentsOf: Data(password.utf8))
            try input.fileHandleForWriting.close()
            hash.waitUntilExit()
            try #require(hash.terminationStatus == 0, "htpasswd failed")

            let log = root.appendingPathComponent("unsafe-server.log")
            #expect(FileManager.default.createFile(atPath: log.path, contents: nil))
            process.executableURL = URL(fileURLWithPath: "/usr/bin/rclone")
            process.arguments = [
                "serve", "webdav", files.path, "--addr", "127.0.0.1:0", "--htpasswd", users.path,
            ]
            process.environment = ["RCLONE_CONFIG": "/dev/null", "PATH": "/usr/bin:/bin"]
            let output = try FileHandle(forWritingTo: log)
            process.standardOutput = output
            process.standardError = output
            try process.run()
            // It says where it listens: "WebDav Server started on http://127.0.0.1:PORT/".
            let deadline = ContinuousClock.now + .seconds(20)
            var found: String?
            while found == nil && ContinuousClock.now < deadline && process.isRunning {
                let text = String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self)
                found = text.range(of: "started on ").map {
                    String(text[$0.upperBound...].prefix { !$0.isWhitespace })
                }
                if found == nil { usleep(20_000) }
            }
            url = try #require(found, "rclone serve webdav did not start")
        }

        deinit {
            // SIGKILL: it inherits the test process's blocked signals.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    @Test func aServerAllowedWithUnsafeServerStaysAllowedForLaterSyncsAndTheAgent() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try testServerSetting("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = "sync"
        let a = try DocsFolder()
        let server = try UnsafeServer(in: a.root, user: user, password: password)
        let settings = ["--unsafe-server", "--user", user, "--password-file", passwordFile]

        // Added once: synced as the agent syncs it (`docs sync --container FOLDER`).
        let bareA = try bareEnvironment(a)
        #expect(try docs(a, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let added = try docs(a, ["remote", "add", "dav", server.url] + settings, environment: bareA)
        #expect(added.status == 0, "\(added.error)")
        let synced = try docs(a, ["sync", "--container", a.container.path], environment: bareA)
        #expect(
            synced.status == 0 && synced.output.contains("1 uploaded"), "\(synced.output) \(synced.error)")
        #expect(text(at: server.files.appendingPathComponent("Plan.txt")) == "one\n")

        // Given to sync once, then not.
        let b = try DocsFolder()
        let bareB = try bareEnvironment(b)
        let first = try docs(b, ["sync", "--remote", server.url] + settings, environment: bareB)
        #expect(first.status == 0, "\(first.error)")
        #expect(try b.contents("Plan.txt") == "one\n")
        try b.write("Plan.txt", "one\ntwo\n")
        let again = try docs(b, ["sync"], environment: bareB)
        #expect(again.status == 0 && again.output.contains("1 uploaded"), "\(again.output) \(again.error)")
        #expect(text(at: server.files.appendingPathComponent("Plan.txt")) == "one\ntwo\n")
        expectNoFile(of: [a, b], holds: password)
    }

    @Test func anS3RemoteKeepsItsEndpointRegionAndProfile() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let endpoint = try testServerSetting("DOCUMENTSYNC_S3_ENDPOINT")
        let region = try testServerSetting("DOCUMENTSYNC_S3_REGION")
        let bucket = try testServerSetting("DOCUMENTSYNC_S3_BUCKET")
        let keys = URL(fileURLWithPath: try testServerSetting("DOCUMENTSYNC_S3_DIR"))
        let keyID = try String(contentsOf: keys.appendingPathComponent("access-key-id"), encoding: .utf8)
        let secret = try String(contentsOf: keys.appendingPathComponent("secret-access-key"), encoding: .utf8)
        let url = "s3://\(bucket)/docs-\(UUID().uuidString.prefix(8))"
        let settings = ["--endpoint", endpoint, "--region", region, "--profile", "docs-tests"]
        /// A device whose only credentials are its profile's, in its own ~/.aws/credentials.
        func device() throws -> (DocsFolder, [String: String], URL) {
            let device = try DocsFolder()
            let environment = try bareEnvironment(device)
            let credentials = URL(fileURLWithPath: environment["HOME"]!).appendingPathComponent(
                ".aws/credentials")
            try FileManager.default.createDirectory(
                at: credentials.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("[docs-tests]\naws_access_key_id = \(keyID)\naws_secret_access_key = \(secret)\n".utf8)
                .write(to: credentials)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: credentials.path)
            return (device, environment, credentials)
        }

        // Given to sync once, then named by no later command.
        let (a, bareA, credentialsA) = try device()
        #expect(try docs(a, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let first = try docs(a, ["sync", "--remote", url] + settings, environment: bareA)
        #expect(first.status == 0, "\(first.error)")
        try a.write("Plan.txt", "one\ntwo\n")
        let again = try docs(a, ["sync"], environment: bareA)
        #expect(again.status == 0 && again.output.contains("1 uploaded"), "\(again.output) \(again.error)")

        // Given to remote add once: the same store, the same prefix.
        let (b, bareB, credentialsB) = try device()
        let added = try docs(b, ["remote", "add", "store", url] + settings, environment: bareB)
        #expect(added.status == 0, "\(added.error)")
        let down = try docs(b, ["sync"], environment: bareB)
        #expect(down.status == 0, "\(down.error)")
        #expect(try b.contents("Plan.txt") == "one\ntwo\n")
        try b.write("Plan.txt", "one\ntwo\nthree\n")
        #expect(try docs(b, ["sync"], environment: bareB).status == 0)
        let back = try docs(a, ["sync"], environment: bareA)
        #expect(back.status == 0, "\(back.error)")
        #expect(try a.contents("Plan.txt") == "one\ntwo\nthree\n")

        for result in [first, again, added, down, back] {
            #expect(!result.output.contains(secret) && !result.error.contains(secret))
        }
        expectNoFile(of: [a, b], holds: secret, but: [credentialsA, credentialsB])
    }
}
