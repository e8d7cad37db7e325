import Foundation
import Testing

@testable import DocumentSync

/// The simulated remote holding a vault, synced through the encrypted remote: the simulation's
/// faults strike the vault's files (a step of a folder made, a chunked upload, a move), and the
/// run looks at the plain tree through a remote of its own.
///
/// Racing writers are left out: the simulated remote's racing writer writes plain bytes over a
/// vault file, which is tampering (refused on every read), not another client's write; the
/// other client of the run writes through the vault instead.
final class EncryptedTarget: SimulationTarget {
    let inner: SimulatedRemote
    let encrypted: EncryptedRemote
    let faultDescription: String

    init(random: inout SeededGenerator) throws {
        var faults = SyncSimulation.withHostileNames(SyncSimulation.drawFaults(&random))
        faults.racingWriter = 0
        inner = SimulatedRemote(displayName: "simulated remote", faults: .none, generator: random.split())
        encrypted = try EncryptedRemote.create(
            over: inner, passphrase: VaultPassphrase("simulation"), cost: EncryptedRemoteTests.cheap)
        inner.faults = faults
        faultDescription = "encrypted, " + SyncSimulation.describe(faults)
    }

    var remote: any Remote { encrypted }

    /// `body` with no fault striking, through a remote that keeps nothing of the devices'.
    private func quietly<T>(_ body: (EncryptedRemote) throws -> T) throws -> T {
        let faults = inner.faults
        inner.faults = .none
        defer { inner.faults = faults }
        return try body(EncryptedRemote(over: inner, vault: encrypted.vault))
    }

    func snapshot() throws -> SimulatedRemote.Snapshot {
        try quietly { remote in
            var snapshot = SimulatedRemote.Snapshot()
            func walk(_ folder: RemotePath) throws {
                for entry in try remote.list(folder).entries {
                    let path = folder.appending(entry.name)
                    if entry.kind == .folder {
                        snapshot.folders.insert(path)
                        try walk(path)
                    } else {
                        var data = Data()
                        _ = try remote.read(path) { data.append($0) }
                        snapshot.files[path] = data
                    }
                }
            }
            try walk(.root)
            return snapshot
        }
    }

    func writeAsAnotherClient(_ path: RemotePath, _ bytes: Data) throws {
        try quietly { remote in
            var folder = RemotePath.root
            for name in path.parent.components {
                folder = folder.appending(name)
                if try remote.entry(at: folder) == nil { try remote.makeFolder(folder) }
            }
            let condition = try remote.entry(at: path)?.tag.map { WriteCondition.matches($0) } ?? .absent
            try remote.write(path, from: UploadSource(bytes), condition: condition)
        }
    }

    func stopFaults() { inner.stopFaults() }

    var bytesReplacedByRacingWriters: [Data] { [] }
}

/// The simulation's four properties over an encrypted simulated remote, 1,000 seeds.
///
/// The seeds are split in ``shards`` test cases, one at a time, each run on a thread of its own
/// rather than on one of the test runner's cooperative threads (two on two cores): the run is
/// synchronous and busy for minutes, and beside the blocking suites (``BlockingSyncTests``) it
/// takes a core no asynchronous test waits on.
///
/// `ENCRYPTED_SIMULATION_SEEDS=N` runs N seeds (1,000 by default) from
/// `ENCRYPTED_SIMULATION_FIRST_SEED`; `ENCRYPTED_SIMULATION_SEED=S` runs seed S alone and prints
/// its steps. `scripts/sync-soak --encrypted` runs them alone, with a count and a first seed.
@Suite struct EncryptedSimulationTests {
    /// How many test cases the seeds are split in: each names its seeds that broke.
    static let shards = 0..<8

    @Test(.serialized, arguments: shards)
    func everySeedKeepsEveryPropertyOverAVault(shard: Int) async throws {
        let (seeds, single) = SyncSimulation.seeds(prefix: "ENCRYPTED", count: 1000)
        let mine =
            single
            ? (shard == 0 ? seeds : [])
            : seeds.enumerated().filter { $0.offset % Self.shards.count == shard }.map(\.element)
        let (reports, broken) = try await Self.onAThreadOfItsOwn { try Self.run(mine, printingSteps: single) }
        for report in reports { Issue.record(Comment(rawValue: report)) }
        if !single {
            print(
                "encrypted simulation: shard \(shard) of \(Self.shards.count), \(mine.count) seeds, broken: \(broken)"
            )
        }
    }

    /// Runs `seeds`: the reports of those that broke a property, and their seeds.
    static func run(_ seeds: [UInt64], printingSteps: Bool) throws -> (reports: [String], broken: [UInt64]) {
        var (reports, broken) = ([String](), [UInt64]())
        for seed in seeds {
            let simulation = try SyncSimulation(seed: seed, deviceCounts: 2...4) { random in
                try EncryptedTarget(random: &random)
            }
            let violations = simulation.run()
            if printingSteps { print(simulation.trace.joined(separator: "\n") + "\n" + simulation.dump()) }
            guard !violations.isEmpty else { continue }
            broken.append(seed)
            reports.append(
                "encrypted: "
                    + simulation.report(
                        violations,
                        replayedBy:
                            "ENCRYPTED_SIMULATION_SEED=\(seed) swift test --filter EncryptedSimulation"))
        }
        return (reports, broken)
    }

    /// `body`'s outcome, run on a thread of its own while the caller's task waits.
    static func onAThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}
