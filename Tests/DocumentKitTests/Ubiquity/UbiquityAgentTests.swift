import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// How the sync agent is started on demand.
@Suite struct UbiquityAgentTests {
    /// What a stand-in agent printed: `program` written as the agent of a scratch container
    /// and started by ``UbiquityAgent/start(_:for:)`` inside `around` (which sets up what the
    /// start is made from), read from the agent's log once it says "started".
    func output(
        ofStandIn program: String, around: (() throws -> Void) throws -> Void = { try $0() }
    ) throws -> String {
        let tree = try TemporaryTree()
        let agent = tree.url.appendingPathComponent("agent")
        try Data(program.utf8).write(to: agent)
        chmod(agent.path, 0o755)
        let folder = tree.url.appendingPathComponent("Container")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let container = UbiquityContainer(
            name: "Agent", identifier: "iCloud.Agent", folder: folder.path, remote: "file:///nowhere")
        let log = SyncStateFiles.log(forContainer: container.url)
        try? FileManager.default.removeItem(at: log)
        defer { try? FileManager.default.removeItem(at: log) }
        try around { try UbiquityAgent.start(agent.path, for: container) }
        var output = ""
        for _ in 0..<200 where !output.contains("started") {
            Thread.sleep(forTimeInterval: 0.05)
            output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        #expect(output.contains("started"), "the agent wrote nothing to \(log.path)")
        return output
    }

    /// An app that takes SIGTERM on a thread of its own (DocumentController does) blocks it in
    /// its other threads; an agent started from one of them must still stop on SIGTERM, as
    /// `systemctl stop` and the apps' own stop expect. The stand-in agent prints its signal
    /// mask and what it ignores.
    @Test func anAgentStartedFromAThreadThatBlocksSignalsCanBeStopped() throws {
        // Python, not a shell: a shell sets its own signal mask as it starts.
        let program = """
            #!/usr/bin/env python3
            for line in open("/proc/self/status"):
                if line.startswith(("SigBlk:", "SigIgn:")):
                    print(line, end="")
            print("started")

            """
        let output = try output(ofStandIn: program) { start in
            var blocked = sigset_t()
            sigemptyset(&blocked)
            for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&blocked, signal) }
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            let ignoredBefore = signal(SIGHUP, SIG_IGN)
            defer {
                signal(SIGHUP, ignoredBefore)
                pthread_sigmask(SIG_SETMASK, &previous, nil)
            }
            try start()
        }
        func mask(_ name: String) -> UInt64? {
            output.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        }
        #expect(mask("SigBlk") == 0)
        let stopping = [SIGINT, SIGTERM, SIGHUP, SIGQUIT].reduce(UInt64(0)) { $0 | (1 << UInt64($1 - 1)) }
        #expect(mask("SigIgn").map { $0 & stopping } == 0)
    }

    /// The agent gets no descriptor of the app's but its three standard ones: a pipe the app
    /// holds (its output read by a shell pipeline, or the one its parent waits on) would stay
    /// open as long as the agent runs, and the reader would wait for it.
    @Test func anAgentInheritsNoDescriptorOfTheApp() throws {
        // A descriptor the app holds open, as a pipe to a reader.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let output = try output(
            ofStandIn: """
                #!/usr/bin/env python3
                import os
                print("descriptors", sorted(int(n) for n in os.listdir("/proc/self/fd")))
                print("started")

                """)
        // Python's listing opens one descriptor of its own (3): the folder it lists.
        #expect(output.contains("descriptors [0, 1, 2, 3]"), "\(output)")
    }
}
