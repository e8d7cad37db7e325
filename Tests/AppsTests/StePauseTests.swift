import DocumentKit
import Foundation
import Testing

/// A paused sync in the editor: the real `ste` under tmux, syncing through the agent it
/// started, as a user who deleted most documents on purpose.
@Suite("ste: a paused sync", .serialized)
struct StePauseTests {
    @Test func thePauseIsAnnouncedF5ShowsTheNamesAndAKeyAnswersIt() async throws {
        let remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("ste-pause-remote-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let names = (0..<20).map { "doc \($0 < 10 ? "0" : "")\($0)" }
        let a = try SteSession { container in
            for name in names {
                try Data("text of \(name)\n".utf8).write(to: container.appendingPathComponent(name + ".txt"))
            }
        }
        let added = try a.docs(["remote", "add", "home", "file://" + remoteRoot.path, "--interval", "1"])
        #expect(added.status == 0, "\(added.error)")
        defer { SteSyncTests.stopAgents(of: a.container) }
        a.start(width: 110, height: 30)
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(a.screen)")
        func onRemote() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: remoteRoot.path)) ?? [])
                .filter { !$0.hasPrefix(".") }.sorted()
        }
        func deleteFifteen() async throws {
            SteSyncTests.stopAgents(of: a.container)
            #expect(await a.wait { !UbiquityAgentProbe.isRunning(a) })
            a.shell(names.prefix(15).map { "rm '\($0).txt'" }.joined(separator: " && "))
            a.keys("F5")
        }
        // Up to date may first be said while the new files settle: they go up just after.
        #expect(await a.wait(timeout: .seconds(30)) { onRemote().count == 20 }, "\(onRemote())")
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(a.screen)")

        // Fifteen deleted by another program while the agent is stopped (one that runs may
        // take them a few at a time, each pass under the guard's count): F5 starts it again,
        // it pauses, and the status line says so.
        try await deleteFifteen()
        #expect(
            await a.waitForScreen(
                containing: "Sync is paused: 15 of 20 would be deleted on the remote", timeout: .seconds(30)))
        #expect(onRemote().count == 20)
        // F5 asks, naming them.
        a.keys("F5")
        #expect(await a.waitForScreen(containing: "k  keep them: download 15 documents again"))
        #expect(a.screen.contains("d  delete them: delete 15 documents on the remote"))
        #expect(a.screen.contains("Would be deleted on the remote, 15 of 20:"), "\(a.screen)")
        #expect(a.screen.contains("   doc 00.txt") && a.screen.contains("   doc 14.txt"), "\(a.screen)")
        #expect(!a.screen.contains("   doc 15.txt"))
        // Keep them: the agent brings them back and goes on.
        a.keys("k")
        #expect(
            await a.wait(timeout: .seconds(30)) {
                names.allSatisfy { a.text(of: $0 + ".txt") == "text of \($0)\n" }
            }, "\(a.screen)")
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(a.screen)")
        #expect(onRemote().count == 20)

        // Deleted again, on purpose: this time d deletes them on the remote too.
        try await deleteFifteen()
        #expect(
            await a.waitForScreen(
                containing: "Sync is paused: 15 of 20 would be deleted on the remote", timeout: .seconds(30)),
            "\(a.screen)")
        a.keys("F5")
        #expect(await a.waitForScreen(containing: "d  delete them"))
        a.keys("d")
        #expect(await a.wait(timeout: .seconds(30)) { onRemote().count == 5 }, "\(onRemote())")
        #expect(onRemote() == names.suffix(5).map { $0 + ".txt" })
        #expect(await a.waitForScreen(containing: "sync: up to date", timeout: .seconds(30)), "\(a.screen)")
        a.keys("C-q")
        #expect(await a.wait { a.exitStatus != nil })
    }
}
