import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// The simulation's properties (nothing lost, identical trees, bounded passes, nothing deleted
    /// comes back) with a real server as the remote (Apache in each of its ETag configurations,
    /// wsgidav, SabreDAV with fake and real locks), the devices' requests through a proxy that
    /// breaks some of them.
    ///
    /// `WEBDAV_SIMULATION_SEEDS=N` runs N seeds per server from `WEBDAV_SIMULATION_FIRST_SEED`
    /// (20 by default on Apache, over 300 steps on each; 10 on the others, 6 over TLS);
    /// `WEBDAV_SIMULATION_SEED=S` runs seed S alone and prints its steps. A failure names the
    /// seed; the faults a seed draws replay with it, though a real server's timing does not.
    @Suite(.serialized) struct WebDAVSimulationTests {
        /// Every server but stock wsgidav, whose ETags stay the same for two writes of one size
        /// within a second: no client can see such a write by another (the probe refuses the
        /// server for it), and the simulation's random edits make many. wsgidav with ETags of
        /// the nanosecond time stands for it.
        static let servers = WebDAVServers.Server.allCases.filter { $0 != .wsgidav }

        @Test(.serialized, arguments: servers)
        func everySeedKeepsEveryPropertyOnEachServer(_ server: WebDAVServers.Server) throws {
            // TLS changes the transport, not the server: fewer seeds prove it carries the same.
            // The servers that are not Apache get fewer too, to keep the whole run's time: their
            // differences (how ETags are quoted and compared, fake locks, locks kept after a
            // delete) show in most seeds.
            let (seeds, single) = SyncSimulation.seeds(
                prefix: "WEBDAV", count: server == .tls ? 6 : server.isApache ? 20 : 10)
            var steps = 0
            for seed in seeds {
                let simulation = try SyncSimulation(seed: seed, deviceCounts: 2...3) { random in
                    try WebDAVTarget(server, random: &random, name: "sim\(server.rawValue)\(seed)")
                }
                let violations = simulation.run()
                steps += simulation.steps
                if single {
                    print(simulation.trace.joined(separator: "\n") + "\n" + simulation.dump())
                }
                if !violations.isEmpty {
                    Issue.record(
                        Comment(
                            rawValue: "\(server.testDescription): "
                                + simulation.report(
                                    violations,
                                    replayedBy:
                                        "WEBDAV_SIMULATION_SEED=\(seed) scripts/test --filter WebDAVSimulation"
                                )
                        ))
                }
            }
            if !single, server != .tls {
                #expect(steps >= 10 * seeds.count, "only \(steps) steps ran on \(server.testDescription)")
            }
        }
    }
}
