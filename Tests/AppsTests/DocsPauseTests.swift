import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A paused sync from the command line: `docs status` names what it would delete, and
/// `docs sync --resume delete|keep` answers it, by itself or through the running agent.
@Suite("docs: a paused sync", .serialized)
struct DocsPauseTests {
    typealias Device = DocsSyncTests.Device

    let remoteRoot: URL

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-pause-remote-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    var remoteURL: String { "file://" + remoteRoot.path }

    /// The names of the documents on the remote, sorted.
    func remoteNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: remoteRoot.path).filter { !$0.hasPrefix(".") }
            .sorted()
    }

    /// Twenty documents made on `a` and synced to every device.
    func twentyDocuments(_ devices: [Device]) throws -> [String] {
        let names = (0..<20).map { "doc \($0 < 10 ? "0" : "")\($0).txt" }
        for name in names { try devices[0].folder.write(name, "text of \(name)") }
        for device in devices {
            let synced = try device.docs(["sync", "--remote", remoteURL])
            #expect(synced.status == 0, "\(synced.error)")
        }
        return names
    }

    /// `docs status --json`'s pause, decoded.
    struct Status: Decodable {
        struct Pause: Decodable {
            var reason: String
            var message: String
            var documents: Int
            var deleteHereCount: Int
            var deleteHere: [String]
            var deleteOnRemoteCount: Int
            var deleteOnRemote: [String]
        }
        var paused: Pause?
    }

    @Test func statusNamesWhatWouldBeDeletedAndResumeKeepBringsItBack() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let names = try twentyDocuments([a])
        let deleted = Array(names.prefix(15))
        for name in deleted { try FileManager.default.removeItem(at: a.folder.url(name)) }

        let paused = try a.docs(["sync"])
        #expect(paused.status == 1)
        #expect(paused.error.contains("15 of 20 documents would be deleted on the remote"), "\(paused.error)")
        #expect(paused.error.contains("docs sync --resume keep"), "\(paused.error)")
        #expect(try remoteNames() == names)

        let status = try a.docs(["status"])
        #expect(status.status == 0, "\(status.error)")
        #expect(
            status.output.contains("would be deleted on the remote: 15 of 20 documents\n"), "\(status.output)"
        )
        for name in deleted { #expect(status.output.contains("\t\(name)\n"), "\(name): \(status.output)") }
        #expect(!status.output.contains("\t\(names[15])\n"))
        #expect(status.output.contains("docs sync --resume keep: download 15 documents again"))
        #expect(status.output.contains("docs sync --resume delete: delete 15 documents on the remote"))
        let json = try JSONDecoder().decode(Status.self, from: try a.docs(["status", "--json"]).outputData)
        let pause = try #require(json.paused)
        #expect(pause.reason == "deletingOnRemote" && pause.documents == 20)
        #expect(pause.deleteOnRemote == deleted && pause.deleteOnRemoteCount == 15)
        #expect(pause.deleteHere.isEmpty && pause.deleteHereCount == 0)
        #expect(paused.error.contains(pause.message), "\(pause.message)")

        #expect(try a.docs(["sync", "--resume", "maybe"]).status == 2)
        #expect(try a.docs(["status", "--resume", "keep"]).status == 2)
        #expect(
            try a.docs(["status"]).output.contains("would be deleted"), "a refused answer changes nothing")

        let kept = try a.docs(["sync", "--resume", "keep"])
        #expect(kept.status == 0, "\(kept.error)")
        #expect(kept.output.contains("sync resumed: download 15 documents again"), "\(kept.output)")
        #expect(kept.output.contains("15 downloaded"), "\(kept.output)")
        for name in names { #expect(try a.folder.contents(name) == "text of \(name)") }
        #expect(try remoteNames() == names)
        let after = try a.docs(["status"])
        #expect(
            !after.output.contains("paused") && after.output.components(separatedBy: "synced\t").count == 21)
        #expect(
            try JSONDecoder().decode(Status.self, from: try a.docs(["status", "--json"]).outputData).paused
                == nil)
    }

    @Test func resumeDeleteDeletesOnlyWhatWasShownAndAsksAgainWhenItChanged() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        let names = try twentyDocuments([a, b])
        for name in names.prefix(15) { try FileManager.default.removeItem(at: a.folder.url(name)) }
        #expect(try a.docs(["sync"]).status == 1)
        // One more deleted after the pause named fifteen: not covered by "delete them".
        try FileManager.default.removeItem(at: a.folder.url(names[15]))
        let changed = try a.docs(["sync", "--resume", "delete"])
        #expect(changed.status == 1)
        #expect(
            changed.error.contains("16 of 20") && changed.error.contains("changed since"), "\(changed.error)")
        #expect(try remoteNames() == names, "nothing deleted")
        #expect(try a.docs(["status"]).output.contains("would be deleted on the remote: 16 of 20 documents"))
        let deleted = try a.docs(["sync", "--resume", "delete"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(deleted.output.contains("16 deleted on the remote"), "\(deleted.output)")
        #expect(try remoteNames() == Array(names.suffix(4)))

        // The other device asks before deleting them here; its Deleted folder keeps them.
        let asked = try b.docs(["sync"])
        #expect(asked.status == 1 && asked.error.contains("would be deleted here"), "\(asked.error)")
        #expect(b.folder.exists(names[0]))
        let done = try b.docs(["sync", "--resume", "delete"])
        #expect(done.status == 0 && done.output.contains("16 deleted here"), "\(done.output)\(done.error)")
        #expect(!b.folder.exists(names[0]))
        // Not paused: nothing to resume, and the sync goes on.
        let nothing = try b.docs(["sync", "--resume", "keep"])
        #expect(nothing.status == 0 && nothing.output.contains("not paused"), "\(nothing.output)")
    }

    @Test func resumeWhileTheAgentRunsIsTakenByTheAgentWhichGoesOnSyncing() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let names = try twentyDocuments([a])
        // Deleted before the agent starts: a running agent may take deletions a few at a
        // time, each pass under the guard's count.
        for name in names.prefix(15) { try FileManager.default.removeItem(at: a.folder.url(name)) }
        let agent = Process()
        agent.executableURL = DocsBinary.url
        agent.arguments = ["sync", "--watch", "--interval", "1"]
        agent.environment = a.folder.environment.merging(["XDG_STATE_HOME": a.stateHome.path]) { $1 }
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = FileHandle.nullDevice
        try agent.run()
        defer {
            // SIGKILL: the test's threads block SIGTERM, and a child started by Process
            // keeps that mask.
            kill(agent.processIdentifier, SIGKILL)
            agent.waitUntilExit()
        }
        #expect(
            try await eventually(timeout: .seconds(30)) {
                try a.docs(["status"]).output.contains("would be deleted on the remote: 15 of 20")
            })
        // A one-shot sync is the agent's pass, which is paused: said as its own would be.
        let once = try a.docs(["sync"])
        #expect(once.status == 1 && once.error.contains("docs sync --resume"), "\(once.error)")
        let kept = try a.docs(["sync", "--resume", "keep"])
        #expect(kept.status == 0, "\(kept.error)")
        #expect(kept.output.contains("resumed by the running sync"), "\(kept.output)")
        #expect(
            try await eventually(timeout: .seconds(30)) {
                names.allSatisfy { a.folder.exists($0) }
            })
        // The agent goes on: a document made now goes up.
        try a.folder.write("later.txt", "after the pause")
        #expect(
            try await eventually(timeout: .seconds(30)) {
                FileManager.default.fileExists(atPath: remoteRoot.appendingPathComponent("later.txt").path)
            })
        #expect(agent.isRunning)
    }

    /// An agent whose container folder is deleted stops, saying why in its log, and writes
    /// no more status for a folder no one has (agents outlived their containers for an hour).
    @Test func anAgentStopsWhenItsContainerIsGone() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        _ = try twentyDocuments([a])
        let log = a.folder.root.appendingPathComponent("agent.log")
        try Data().write(to: log)
        let agent = Process()
        agent.executableURL = DocsBinary.url
        agent.arguments = ["sync", "--watch", "--interval", "1"]
        agent.environment = a.folder.environment.merging(["XDG_STATE_HOME": a.stateHome.path]) { $1 }
        agent.standardOutput = FileHandle.nullDevice
        agent.standardError = try FileHandle(forWritingTo: log)
        try agent.run()
        defer {
            if agent.isRunning { kill(agent.processIdentifier, SIGKILL) }
            agent.waitUntilExit()
        }
        let said = { String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self) }
        #expect(
            try await eventually(timeout: .seconds(30)) { said().contains("stop with Ctrl-C") }, "\(said())")
        // A round, and a document made after it, synced: the agent is in its loop.
        try a.folder.write("later.txt", "made while the agent runs")
        #expect(
            try await eventually(timeout: .seconds(30)) {
                FileManager.default.fileExists(atPath: remoteRoot.appendingPathComponent("later.txt").path)
            })
        try FileManager.default.removeItem(at: a.folder.container)
        #expect(try await eventually(timeout: .seconds(30)) { !agent.isRunning }, "the agent goes on")
        #expect(agent.terminationStatus == 0)
        #expect(said().contains("\(a.folder.container.path) is gone: this sync stops"), "\(said())")
    }
}
