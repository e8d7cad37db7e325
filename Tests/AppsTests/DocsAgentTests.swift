import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `docs` beside a running sync agent: a one-shot sync is the agent's pass, `docs status`
/// lists the agents and works with the remote unreachable, and `docs sync --stop` stops one.
@Suite("docs: beside the sync agent", .serialized)
struct DocsAgentTests {
    typealias Device = DocsSyncTests.Device

    let remoteRoot: URL

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-agent-remote-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    var remoteURL: String { "file://" + remoteRoot.path }

    /// `docs sync --watch` on `device`'s container, its standard error in `log`.
    func startAgent(_ device: Device, log: URL, interval: String = "600") throws -> Process {
        try Data().write(to: log)
        let agent = Process()
        agent.executableURL = DocsBinary.url
        agent.arguments = ["sync", "--watch", "--interval", interval]
        agent.environment = device.folder.environment.merging(["XDG_STATE_HOME": device.stateHome.path]) {
            $1
        }
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = try FileHandle(forWritingTo: log)
        try agent.run()
        return agent
    }

    func stop(_ agent: Process) {
        if agent.isRunning { kill(agent.processIdentifier, SIGKILL) }
        agent.waitUntilExit()
    }

    /// What an agent logs once it is in its loop.
    func isListening(_ log: URL) -> Bool {
        String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self).contains("stop with Ctrl-C")
    }

    /// A script that writes a document and runs `docs sync --once` while the agent runs: the
    /// sync is the agent's pass, run after the write, reported as if it were this one's.
    @Test func aOneShotSyncWhileTheAgentRunsIsTheAgentsPassAndSaysWhatItDid() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        try a.folder.write("Plan.txt", "plan\n")
        #expect(try a.docs(["sync", "--remote", remoteURL]).status == 0)
        #expect(try b.docs(["sync", "--remote", remoteURL]).status == 0)
        let log = a.folder.root.appendingPathComponent("agent.log")
        let agent = try startAgent(a, log: log)
        defer { stop(agent) }
        #expect(try await eventually(timeout: .seconds(30)) { isListening(log) })

        // Made on b and synced up: the agent, polling every 10 minutes, would not see it soon.
        try b.folder.write("From b.txt", "written on b\n")
        #expect(try b.docs(["sync"]).status == 0)
        let once = try a.docs(["sync", "--once"])
        #expect(once.status == 0, "\(once.output)\(once.error)")
        #expect(once.output.hasPrefix("sync: "), "\(once.output)")
        #expect(!once.error.contains("another sync"), "\(once.error)")
        #expect(try a.folder.contents("From b.txt") == "written on b\n", "the pass ran before it returned")
        // A write then a sync: up when the sync returns.
        try a.folder.write("Typed.txt", "typed on a\n")
        let json = try a.docs(["sync", "--once", "--json"])
        #expect(json.status == 0, "\(json.error)")
        let summary = try JSONSerialization.jsonObject(with: json.outputData) as? [String: Any]
        #expect(summary?["failures"] as? [String] == [], "\(json.output)")
        #expect(
            FileManager.default.contents(atPath: remoteRoot.appendingPathComponent("Typed.txt").path)
                == Data("typed on a\n".utf8))
        #expect(agent.isRunning, "the agent goes on")
    }

    /// `docs status` names the agent with its container; `docs sync --stop` stops it (with
    /// SIGTERM, heard though the test's threads block it), and the status no longer names it.
    @Test func statusListsTheAgentAndStopStopsIt() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        try a.folder.write("Plan.txt", "plan\n")
        #expect(try a.docs(["sync", "--remote", remoteURL]).status == 0)
        let noAgent = try a.docs(["sync", "--stop"])
        #expect(noAgent.status == 0 && noAgent.output.contains("no sync runs"), "\(noAgent.output)")
        let log = a.folder.root.appendingPathComponent("agent.log")
        let agent = try startAgent(a, log: log)
        defer { stop(agent) }
        #expect(try await eventually(timeout: .seconds(30)) { isListening(log) })
        let line = "agent\tprocess \(agent.processIdentifier)\t\(a.folder.container.path)"
        let status = try a.docs(["status"])
        #expect(status.output.split(separator: "\n").contains(Substring(line)), "\(status.output)")
        let json = try JSONSerialization.jsonObject(with: try a.docs(["status", "--json"]).outputData)
        let syncs = (json as? [String: Any])?["syncs"] as? [[String: Any]]
        #expect(
            syncs?.contains {
                $0["pid"] as? Int == Int(agent.processIdentifier)
                    && $0["container"] as? String == a.folder.container.path && $0["agent"] as? Bool == true
            } == true, "\(String(describing: syncs))")

        let stopped = try a.docs(["sync", "--stop"])
        #expect(stopped.status == 0, "\(stopped.error)")
        #expect(stopped.output.contains("stopped the sync agent"), "\(stopped.output)")
        #expect(!stopped.output.contains("killed"), "SIGTERM was heard: \(stopped.output)")
        agent.waitUntilExit()
        #expect(agent.terminationReason == .exit && agent.terminationStatus == 0)
        #expect(!(try a.docs(["status"]).output.contains("agent\t")))
    }

    /// With the server gone, `docs status` says so, when it was last reached, and what waits
    /// here to upload (it failed with nothing printed).
    @Test func statusWorksWithTheRemoteUnreachable() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try testServerSetting("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try testServerSetting("DOCUMENTSYNC_WEBDAV_USER")
        let server = try #require(
            URL(
                string: try makeCollection(
                    in: try testServerSetting("DOCUMENTSYNC_WEBDAV_DEFAULT"), user: user, password: password))
        )
        let relay = Relay(port: Relay.freePort(), to: server.port ?? 80)
        try relay.start()
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(relay.port)\(server.path)/"
        let a = try Device(remote: remoteRoot)
        let credentials = ["--user", user, "--password-file", passwordFile]
        try a.folder.write("Plan.txt", "plan\n")
        try a.folder.write("Notes.txt", "notes\n")
        let first = try a.docs(["sync", "--remote", url] + credentials)
        #expect(first.status == 0, "\(first.error)")
        relay.stop()
        try a.folder.write("Plan.txt", "plan, edited offline\n")
        let status = try a.docs(["status"])
        #expect(status.status == 0, "\(status.error)")
        let lines = status.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("remote unreachable: ") == true, "\(status.output)")
        #expect(lines.first?.contains("last reached 20") == true, "\(status.output)")
        #expect(lines.contains("to upload\tPlan") && lines.contains("synced\tNotes"), "\(status.output)")
        let json = try JSONSerialization.jsonObject(with: try a.docs(["status", "--json"]).outputData)
        let unreachable = (json as? [String: Any])?["unreachable"] as? [String: Any]
        #expect(unreachable?["lastReached"] is String, "\(String(describing: json))")
    }
}

extension DocsAgentTests {
    /// A password fixed in `~/.netrc` reaches the running agent, which failed with the wrong
    /// one: it reads its credentials again when their files change (it kept failing with 401
    /// every 30 s until killed by hand).
    @Test func aPasswordFixedInNetrcReachesTheRunningAgent() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try testServerSetting("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try testServerSetting("DOCUMENTSYNC_WEBDAV_USER")
        let url = try makeCollection(
            in: try testServerSetting("DOCUMENTSYNC_WEBDAV_DEFAULT"), user: user, password: password)
        let a = try Device(remote: remoteRoot)
        let netrc = a.folder.root.appendingPathComponent(".netrc")
        func writeNetrc(_ password: String) throws {
            try Data("machine 127.0.0.1\n  login \(user)\n  password \(password)\n".utf8).write(to: netrc)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: netrc.path)
        }
        let home = ["HOME": a.folder.root.path, "DOCS_PASSWORD": "", "XDG_STATE_HOME": a.stateHome.path]
        try writeNetrc(password)
        try a.folder.write("Plan.txt", "plan\n")
        let first = try a.folder.run(["sync", "--remote", url, "--user", user], environment: home)
        #expect(first.status == 0, "\(first.error)")

        try writeNetrc("not the password")
        let log = a.folder.root.appendingPathComponent("agent.log")
        try Data().write(to: log)
        let agent = Process()
        agent.executableURL = DocsBinary.url
        agent.arguments = ["sync", "--watch", "--interval", "1"]
        agent.environment = a.folder.environment.merging(home) { $1 }
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = try FileHandle(forWritingTo: log)
        try agent.run()
        defer { stop(agent) }
        let said = { String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self) }
        try a.folder.write("Later.txt", "written while the password was wrong\n")
        #expect(
            try await eventually(timeout: .seconds(30)) {
                said().contains("401") || said().contains("refused")
            },
            "\(said())")

        try writeNetrc(password)
        let b = try Device(remote: remoteRoot)
        #expect(
            try await eventually(timeout: .seconds(30)) {
                _ = try b.docs(["sync", "--remote", url, "--user", user, "--password-file", passwordFile])
                return b.folder.exists("Later.txt")
            }, "\(said())")
        #expect(agent.isRunning, "the same agent, not one started again")
        #expect(said().contains("changed; syncing with them"), "\(said())")
        #expect(!said().contains(password))
    }
}

extension DocsAgentTests {
    /// The acceptance check of issue 28: a program saves a document through FileManager's
    /// ubiquity API (which starts the container's agent), then a script runs `docs sync
    /// --once` on the same container while the agent runs: it syncs, and a second device
    /// reads the document.
    @Test func aDocumentSavedThroughTheUbiquityAPIThenSyncedOnceBesideItsAgentReachesASecondDevice()
        async throws
    {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let state = ["XDG_STATE_HOME": a.stateHome.path]
        let added = try a.folder.run(
            ["remote", "add", "notes", remoteURL, "--identifier", "iCloud.com.example.Notes"],
            environment: state)
        #expect(added.status == 0, "\(added.error)")
        defer { _ = try? a.docs(["sync", "--stop"]) }

        let saved = try runDocs(
            DocsBinary.url.deletingLastPathComponent().appendingPathComponent("DocumentKitTestChild"),
            ["ubiquity-save", "Saved.txt", "saved through the ubiquity API\n"],
            environment: a.folder.environment.merging(state) { $1 }, input: nil, scratch: a.folder.root,
            timeout: .seconds(60))
        #expect(saved.status == 0, "\(saved.error)")
        #expect(saved.output == a.folder.url("Saved.txt").path + "\n", "\(saved.output)")
        // The API started the agent (it holds the container once it runs).
        #expect(
            try await eventually(timeout: .seconds(30)) {
                try a.docs(["status"]).output.contains("agent\tprocess ")
            })

        let once = try a.docs(["sync", "--once"])
        #expect(once.status == 0, "\(once.output)\(once.error)")
        #expect(!once.error.contains("another sync"), "\(once.error)")
        let b = try Device(remote: remoteRoot)
        let pulled = try b.docs(["sync", "--remote", remoteURL])
        #expect(pulled.status == 0, "\(pulled.error)")
        #expect(try b.folder.contents("Saved.txt") == "saved through the ubiquity API\n")
    }
}
