import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two `ste`s, each a device with its own container, settings and versions, on one remote:
/// the real editors under tmux, each syncing through the agent it started (`docs sync
/// --watch`), as a user who ran `docs remote add` and then `ste` on two computers.
@Suite("ste: sync between two devices", .serialized)
struct SteSyncTests {
    let remoteRoot: URL

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("ste-sync-remote-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    /// Stops the agents syncing `container`: the processes whose command line names it.
    static func stopAgents(of container: URL) {
        let marker = Array("--container\0\(container.path)\0".utf8)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name),
                let command = FileManager.default.contents(atPath: "/proc/\(name)/cmdline"),
                command.count >= marker.count,
                (0...(command.count - marker.count)).contains(where: {
                    command[$0..<$0 + marker.count].elementsEqual(marker)
                })
            else { continue }
            kill(pid, SIGTERM)
        }
    }

    /// A device: an `ste` session whose container syncs with `remote` through its agent.
    func device(remote: String) throws -> SteSession {
        let session = try SteSession()
        let added = try session.docs(["remote", "add", "home", remote, "--interval", "1"])
        #expect(added.status == 0, "\(added.error)")
        return session
    }

    @Test func aTypedEditAndATypedConflictReachTheOtherScreenAndAreResolvedFromEither() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try device(remote: "file://" + remoteRoot.path)
        let b = try device(remote: "file://" + remoteRoot.path)
        defer {
            for session in [a, b] { Self.stopAgents(of: session.container) }
        }
        a.start()
        b.start()
        // Each ste started its container's agent; the status line says how sync goes.
        #expect(await a.waitForScreen(containing: "sync: up to date"))
        #expect(await b.waitForScreen(containing: "sync: up to date"))
        let listed = try a.docs(["remote", "list", "--json"])
        #expect(listed.output.contains("\"agentRunning\":true"), "\(listed.output)")

        // A new document typed on A (its agent uploads it at once, stamping the file while
        // the typing goes on) is autosaved, appears on B's screen, and opens there.
        a.keys("C-n")
        #expect(await a.waitForScreen(containing: "New document name:"))
        a.type("Plan")
        a.keys("Enter")
        #expect(await a.waitForScreen(containing: "Created “Plan”"))
        a.type("hello from A")
        #expect(
            await a.wait(timeout: .seconds(20)) { a.text(of: "Plan.txt") == "hello from A" }, "\(a.screen)")
        #expect(await b.waitForScreen(containing: "Plan", timeout: .seconds(30)))
        b.keys("Enter")
        #expect(await b.waitForScreen(containing: "│ hello from A", timeout: .seconds(20)))
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(20)))

        // Both type into the same line before either hears of the other's (their agents are
        // stopped, as on two computers offline): the conflict shows on both.
        for session in [a, b] { Self.stopAgents(of: session.container) }
        #expect(await a.wait { !UbiquityAgentProbe.isRunning(a) && !UbiquityAgentProbe.isRunning(b) })
        a.keys("Home")
        a.type("A: ")
        #expect(
            await a.wait(timeout: .seconds(20)) { a.text(of: "Plan.txt") == "A: hello from A" }, "\(a.screen)"
        )
        b.type("B: ")
        #expect(
            await b.wait(timeout: .seconds(20)) { b.text(of: "Plan.txt") == "B: hello from A" }, "\(b.screen)"
        )
        // F5 starts the agents again and syncs now: A's edit reaches the remote first. (The
        // status line still says what the stopped agent last wrote, so the remote's file is
        // what tells that A's pass is done.)
        a.keys("F5")
        let remoteFile = remoteRoot.appendingPathComponent("Plan.txt")
        let remoteText = { try? String(contentsOf: remoteFile, encoding: .utf8) }
        #expect(await a.wait(timeout: .seconds(60)) { remoteText() == "A: hello from A" }, "\(a.screen)")
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)))
        b.keys("F5")
        #expect(await b.waitForScreen(containing: "in conflict", timeout: .seconds(30)), "\(b.screen)")
        #expect(await a.waitForScreen(containing: "in conflict", timeout: .seconds(30)), "\(a.screen)")
        // Neither typing is lost: A's at the path, B's a conflict version on both devices.
        #expect(await b.wait(timeout: .seconds(20)) { b.text(of: "Plan.txt") == "A: hello from A" })
        #expect(b.conflictTexts(of: "Plan.txt") == ["B: hello from A"])
        #expect(
            await a.wait(timeout: .seconds(20)) { a.conflictTexts(of: "Plan.txt") == ["B: hello from A"] })

        // Resolved on A, the device that did not see it arise, keeping the file as it is (A's
        // own typing, "mine" there: B's is "theirs" though both computers have one host name):
        // the conflict is gone on B too.
        if !a.screen.contains("Keep mine") { a.keys("C-t") }
        #expect(await a.waitForScreen(containing: "Keep mine"))
        #expect(a.screen.contains("Theirs: from "), "\(a.screen)")
        a.keys("m")
        // B's conflict screen closes: the conflict it showed is gone. The message stays four
        // seconds, so it is watched for first, and the conflict versions' files after it.
        #expect(
            await b.waitForScreen(containing: "The conflict was resolved elsewhere", timeout: .seconds(30)),
            "\(b.screen)")
        #expect(!b.screen.contains("Keep theirs"), "\(b.screen)")
        #expect(
            await b.wait(timeout: .seconds(30)) {
                !b.screen.contains("in conflict") && b.conflictTexts(of: "Plan.txt").isEmpty
            }, "\(b.screen)")
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)))
        #expect(b.text(of: "Plan.txt") == "A: hello from A")

        // And back, typed on B: A's screen reloads it.
        b.keys("Home")
        b.type("and ")
        #expect(
            await a.waitForScreen(containing: "│ and A: hello from A", timeout: .seconds(30)),
            "\(a.screen)\n\(b.screen)\n\(b.text(of: "Plan.txt") ?? "-")")
        a.keys("C-q")
        b.keys("C-q")
        #expect(await a.wait { a.exitStatus != nil && b.exitStatus != nil })
    }

    /// The status line says what the agent does only while it runs: stopped (or dead), it
    /// says so, not the last thing the agent wrote; F5 starts it again; and an agent that
    /// does not start is said to have failed, with the last line of its log.
    @Test func theStatusLineSaysWhenTheAgentStoppedAndWhenItCannotStart() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try device(remote: "file://" + remoteRoot.path)
        defer { Self.stopAgents(of: a.container) }
        a.start()
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(a.screen)")
        Self.stopAgents(of: a.container)
        #expect(await a.waitForScreen(containing: "sync: stopped (F5 starts it)", timeout: .seconds(10)))
        #expect(!a.screen.contains("up to date"), "\(a.screen)")
        a.keys("F5")
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(a.screen)")

        // An agent that refuses to run: the one recorded is made a program that says why and
        // exits, as a misconfigured one would.
        Self.stopAgents(of: a.container)
        #expect(await a.waitForScreen(containing: "sync: stopped (F5 starts it)", timeout: .seconds(10)))
        let refusing = a.root.appendingPathComponent("refusing-agent")
        try Data("#!/bin/sh\necho \"sync refused: the test says no\"\nexit 1\n".utf8).write(to: refusing)
        chmod(refusing.path, 0o755)
        let settings = a.configHome.appendingPathComponent("DocumentKit/ubiquity.json")
        var configuration = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: settings)) as? [String: Any])
        configuration["agent"] = refusing.path
        try JSONSerialization.data(withJSONObject: configuration).write(to: settings)
        a.keys("F5")
        #expect(
            await a.waitForScreen(
                containing: "The sync agent did not start: sync refused: the test says no",
                timeout: .seconds(20)),
            "\(a.screen)")
        a.keys("C-q")
        #expect(await a.wait { a.exitStatus != nil })
    }

    @Test func aDocumentOnTheServerOnlyShowsAsSuchAndOpensAfterItsDownload() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try device(remote: "file://" + remoteRoot.path)
        let b = try SteSession()
        let added = try b.docs([
            "remote", "add", "home", "file://" + remoteRoot.path, "--interval", "1", "--on-demand",
        ])
        #expect(added.status == 0, "\(added.error)")
        defer {
            for session in [a, b] { Self.stopAgents(of: session.container) }
        }
        try Data("kept on the server\n".utf8).write(to: a.file("Far.txt"))
        #expect(try a.docs(["sync"]).status == 0)

        // B downloads on demand: Far is listed, on the server only, with its size.
        b.start()
        #expect(await b.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(b.screen)")
        #expect(await b.waitForScreen(containing: "☁", timeout: .seconds(20)), "\(b.screen)")
        #expect(b.screen.contains("Far"))
        #expect(b.text(of: "Far.txt") == nil)
        // Opened: downloaded first, then shown.
        b.keys("Enter")
        #expect(
            await b.waitForScreen(containing: "│ kept on the server", timeout: .seconds(30)), "\(b.screen)")
        #expect(b.text(of: "Far.txt") == "kept on the server\n")
        #expect(await b.wait(timeout: .seconds(20)) { !b.screen.contains("☁") }, "\(b.screen)")
        b.keys("C-q")
        #expect(await b.wait { b.exitStatus != nil })
    }

    /// The servers scripts/test runs (`DOCUMENTSYNC_WEBDAV_*`).
    private func webDAV(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw DocsSyncSetupError(description: "\(name) is not set: run the tests with scripts/test")
        }
        return value
    }

    @Test func anUnreachableRemoteIsSaidInWordsAndSyncRecoversWhenItComesBack() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try webDAV("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try webDAV("DOCUMENTSYNC_WEBDAV_USER")
        let server = try #require(
            URL(
                string: try makeCollection(
                    in: try webDAV("DOCUMENTSYNC_WEBDAV_DEFAULT"), user: user, password: password)))
        // The server through a relay on a port of its own, which the test takes away and
        // brings back, as a network goes and comes.
        let port = Relay.freePort()
        let relay = Relay(port: port, to: server.port ?? 80)
        try relay.start()
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(port)\(server.path)/"
        let a = try SteSession()
        try Data("machine 127.0.0.1\n  login \(user)\n  password \(password)\n".utf8)
            .write(to: a.root.appendingPathComponent(".netrc"))
        let added = try a.docs(["remote", "add", "dav", url, "--user", user, "--interval", "1"])
        #expect(added.status == 0, "\(added.error)")
        defer { Self.stopAgents(of: a.container) }
        a.start()
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(60)))

        relay.stop()
        #expect(await a.waitForScreen(containing: "sync: offline since", timeout: .seconds(60)))
        // Typing goes on; it goes up when the server is back.
        a.keys("C-n")
        a.type("Offline")
        a.keys("Enter")
        #expect(await a.waitForScreen(containing: "Created “Offline”"))
        a.type("written offline")
        #expect(await a.wait(timeout: .seconds(20)) { a.text(of: "Offline.txt") == "written offline" })
        try relay.start()
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(90)))
        #expect(!a.screen.contains(password))
        // On the server: what was typed offline (the pass that said "up to date" may have
        // looked at the folder before the autosave; the next one uploads it).
        var fetched = ""
        #expect(
            await a.wait(timeout: .seconds(60)) {
                fetched = (try? runCurl(url + "Offline.txt", user: user, password: password)) ?? ""
                return fetched == "written offline"
            }, "the server has \(fetched)")
        a.keys("C-q")
    }
}

/// Whether a session's container has a running agent, seen from the session's own state folder.
enum UbiquityAgentProbe {
    static func isRunning(_ session: SteSession) -> Bool {
        (try? session.docs(["remote", "list", "--json"]).output.contains("\"agentRunning\":true")) ?? false
    }
}

/// socat on a loopback port: relaying it to another (a network link the test can cut), or
/// giving each connection to a program (a server that misbehaves as the test says).
final class Relay {
    let port: Int
    /// socat's address of the other side.
    private let far: String
    /// socat's options of the listening side, after its port.
    private let options: String
    private var process: Process?

    init(port: Int, to target: Int) {
        self.port = port
        far = "TCP:127.0.0.1:\(target)"
        options = ""
    }

    /// Each connection given to `program`: the request on its standard input, its standard
    /// output the answer; the connection closed when it ends, with a reset (`SO_LINGER` 0)
    /// when `resets`.
    init(port: Int, program: URL, resets: Bool = false) {
        self.port = port
        far = "EXEC:\(program.path)"
        options = resets ? ",linger=0" : ""
    }

    /// A port of 127.0.0.1 nothing listens on now.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
        process.arguments = ["TCP-LISTEN:\(port),bind=127.0.0.1,fork,reuseaddr" + options, far]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Listening before the caller goes on: up to 20 s, socat's start on a loaded machine.
        for _ in 0..<2000 {
            let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(probe)
            if connected == 0 { return }
            usleep(10_000)
        }
        stop()
        throw CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "socat did not listen on \(port)"])
    }

    /// Stops the relay and every connection it forked, so that open connections break too.
    func stop() {
        guard let process else { return }
        let parent = process.processIdentifier
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name),
                let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "(name) state ppid".
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == parent { kill(pid, SIGKILL) }
        }
        kill(parent, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }
}

/// GET `url` with curl, the password on its standard input.
func runCurl(_ url: String, user: String, password: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "--netrc-file", "/dev/stdin", url]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data("machine 127.0.0.1 login \(user) password \(password)\n".utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

extension SteSyncTests {
    /// A sync that fails for a long reason leads the status line with what failed and the key
    /// to the whole text (at 160 columns it was cut before its point, behind the document's
    /// name and state); F7 shows it all, with what to do.
    @Test func aSyncFailureLeadsTheStatusLineAndF7ShowsItAll() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let user = try webDAV("DOCUMENTSYNC_WEBDAV_USER")
        let password = try String(
            contentsOfFile: try webDAV("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE"), encoding: .utf8)
        let url = try makeCollection(
            in: try webDAV("DOCUMENTSYNC_WEBDAV_DEFAULT"), user: user, password: password)
        let a = try SteSession { container in
            try Data("a note\n".utf8).write(to: container.appendingPathComponent("A long named note.txt"))
        }
        try Data("machine 127.0.0.1\n  login \(user)\n  password \(password)\n".utf8)
            .write(to: a.root.appendingPathComponent(".netrc"))
        let added = try a.docs(["remote", "add", "dav", url, "--user", user, "--interval", "1"])
        #expect(added.status == 0, "\(added.error)")
        defer { Self.stopAgents(of: a.container) }
        // The password changes on the server's side: every pass is refused.
        try Data("machine 127.0.0.1\n  login \(user)\n  password not-it\n".utf8)
            .write(to: a.root.appendingPathComponent(".netrc"))
        a.start(width: 120, height: 24)
        #expect(
            await a.waitForScreen(containing: "sync failed (F7 says all)", timeout: .seconds(30)),
            "\(a.screen)")
        let status = a.screen.split(separator: "\n").first { $0.contains("sync failed") } ?? ""
        #expect(status.hasPrefix(" sync failed (F7 says all): "), "\(status)")
        #expect(status.contains("refused the user name or password"), "the point, in sight: \(status)")
        a.keys("F7")
        #expect(await a.waitForScreen(containing: "Sync — what it says, in full"), "\(a.screen)")
        #expect(a.screen.contains("What to do") && a.screen.contains("F5 syncs now"), "\(a.screen)")
        #expect(a.screen.contains(url), "the whole text names the remote: \(a.screen)")
        #expect(!a.screen.contains(password))
        a.keys("Escape")
        #expect(await a.waitForScreen(containing: "A long named note"))
    }
}
