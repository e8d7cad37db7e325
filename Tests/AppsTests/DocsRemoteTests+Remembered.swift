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
        #expect(
            status.status == 0 && status.output.hasPrefix("synced\tPlan\nversions\t"),
            "\(status.output) \(status.error)")

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

    /// wsgidav, which the probe refuses (its ETags stay the same for a second, so a write
    /// within it cannot be told): a server only `--unsafe-server` syncs with.
    @Test func aServerAllowedWithUnsafeServerStaysAllowedForLaterSyncsAndTheAgent() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try testServerSetting("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try testServerSetting("DOCUMENTSYNC_WEBDAV_USER")
        let url = try makeCollection(
            in: try testServerSetting("DOCUMENTSYNC_WEBDAV_WSGIDAV"), user: user, password: password)
        let served = URL(fileURLWithPath: try testServerSetting("DOCUMENTSYNC_WEBDAV_DATA"))
            .appendingPathComponent("wsgidav/data")
            .appendingPathComponent(URL(string: url)!.lastPathComponent)
        let settings = ["--unsafe-server", "--user", user, "--password-file", passwordFile]
        let a = try DocsFolder()

        // Added once: synced as the agent syncs it (`docs sync --container FOLDER`).
        let bareA = try bareEnvironment(a)
        #expect(try docs(a, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let added = try docs(a, ["remote", "add", "dav", url] + settings, environment: bareA)
        #expect(added.status == 0, "\(added.error)")
        let synced = try docs(a, ["sync", "--container", a.container.path], environment: bareA)
        #expect(
            synced.status == 0 && synced.output.contains("1 uploaded"), "\(synced.output) \(synced.error)")
        #expect(text(at: served.appendingPathComponent("Plan.txt")) == "one\n")

        // Given to sync once, then not.
        let b = try DocsFolder()
        let bareB = try bareEnvironment(b)
        let first = try docs(b, ["sync", "--remote", url] + settings, environment: bareB)
        #expect(first.status == 0, "\(first.error)")
        #expect(try b.contents("Plan.txt") == "one\n")
        try b.write("Plan.txt", "one\ntwo\n")
        let again = try docs(b, ["sync"], environment: bareB)
        #expect(again.status == 0 && again.output.contains("1 uploaded"), "\(again.output) \(again.error)")
        #expect(text(at: served.appendingPathComponent("Plan.txt")) == "one\ntwo\n")
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
