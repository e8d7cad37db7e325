import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// The simulation's properties (nothing lost, identical trees, bounded passes, nothing deleted
    /// comes back) with the SeaweedFS cluster as the remote: two and three devices, the devices'
    /// requests through a proxy that breaks some of them, and in half the runs a volume server
    /// killed at one step and started again a few steps later.
    ///
    /// `S3_SIMULATION_SEEDS=N` runs N seeds from `S3_SIMULATION_FIRST_SEED` (40 by default);
    /// `S3_SIMULATION_SEED=S` runs seed S alone and prints its steps. A failure names the seed;
    /// the faults and the outage a seed draws replay with it, though a real store's timing does
    /// not.
    @Suite(.serialized) struct S3SimulationTests {
        @Test func everySeedKeepsEveryPropertyOnSeaweedFS() throws {
            let (seeds, single) = SyncSimulation.seeds(prefix: "S3", count: 40)
            var steps = 0
            var outages = 0
            for seed in seeds {
                var target: S3Target?
                let simulation = try SyncSimulation(seed: seed, deviceCounts: 2...3) { random in
                    let made = try S3Target(random: &random, name: "sims3\(seed)", outages: true)
                    target = made
                    return made
                }
                let violations = simulation.run()
                steps += simulation.steps
                if target?.faultDescription.contains("volume server") == true { outages += 1 }
                if single {
                    print(simulation.trace.joined(separator: "\n") + "\n" + simulation.dump())
                }
                if !violations.isEmpty {
                    Issue.record(
                        Comment(
                            rawValue: "SeaweedFS: "
                                + simulation.report(
                                    violations,
                                    replayedBy:
                                        "S3_SIMULATION_SEED=\(seed) scripts/test --filter S3Simulation")))
                }
            }
            if !single {
                #expect(steps >= 400, "only \(steps) steps ran on SeaweedFS")
                #expect(outages >= 8, "only \(outages) runs had a volume server down")
            }
        }
    }
}

extension BlockingSyncTests {
    /// A volume server of the cluster killed, as a crashed machine is, and started again.
    @Suite(.serialized) struct S3OutageTests {
        @Test func writesFailClearlyWhileAVolumeServerIsDownNothingIsLostAndSyncGoesOn() throws {
            let cluster = try S3Servers.Cluster.outages()
            var configuration = try cluster.configuration(prefix: S3Servers.freshPrefix(#function))
            configuration.timeout = 3
            let remote = try S3Remote(configuration)
            let folder = try TemporaryFolder()
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            try Data("kept\n".utf8).write(to: a.url("kept.txt"))
            #expect(try a.sync().uploaded == 1)

            try S3Servers.volumeServer("stop-volume", of: cluster)
            var restarted = false
            defer { if !restarted { try? S3Servers.volumeServer("start-volume", of: cluster) } }
            // Every write goes to both volume servers: with one down, none is taken.
            let refused = #expect(throws: RemoteError.self) {
                try remote.write(
                    RemotePath("new.txt"), from: UploadSource(Data("x".utf8)), condition: .absent)
            }
            #expect(refused?.description.contains("new.txt") == true, "\(String(describing: refused))")
            #expect(refused?.description.contains(remote.displayName) == true)
            // A pass says so, and leaves the edit to go up later.
            try Data("typed while the store was half down\n".utf8).write(to: a.url("draft.txt"))
            let failed = try a.sync()
            #expect(failed.uploaded == 0)
            #expect(failed.failures.contains { $0.contains("draft.txt") }, "\(failed.failures)")
            // What was written before is still read, from the other copy.
            var read = Data()
            _ = try remote.read(RemotePath("kept.txt")) { read.append($0) }
            #expect(read == Data("kept\n".utf8))

            try S3Servers.volumeServer("start-volume", of: cluster)
            restarted = true
            // Back once the master has it again: a pass takes the edit up within 30 s.
            let deadline = Date().addingTimeInterval(30)
            var uploaded = 0
            while uploaded == 0, Date() < deadline {
                uploaded = try a.sync().uploaded
                if uploaded == 0 { Thread.sleep(forTimeInterval: 0.5) }
            }
            #expect(uploaded == 1)
            // A refused write that timed out says it may have been done: under load, SeaweedFS
            // sometimes finishes it after the client gave up, and then the other device gets it too.
            let mayHaveBeenDone = refused?.description.contains("may or may not have been done") == true
            let fetched = try b.sync()
            let present = Set((try? FileManager.default.contentsOfDirectory(atPath: b.url("").path)) ?? [])
            let lateWrite = mayHaveBeenDone && present.contains("new.txt")
            #expect(fetched.downloaded == (lateWrite ? 3 : 2), "\(fetched.failures) \(present)")
            #expect(present.subtracting(["kept.txt", "draft.txt", "new.txt"]).isEmpty, "\(present)")
            if present.contains("new.txt") {
                #expect(mayHaveBeenDone, "a write refused outright was taken: \(String(describing: refused))")
                #expect(try Data(contentsOf: b.url("new.txt")) == Data("x".utf8))
            }
            #expect(
                try String(contentsOf: b.url("draft.txt"), encoding: .utf8)
                    == "typed while the store was half down\n")
            #expect(try String(contentsOf: b.url("kept.txt"), encoding: .utf8) == "kept\n")
        }
    }
}
