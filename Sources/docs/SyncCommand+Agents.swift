import DocumentKit
import DocumentSync
import Foundation
import Synchronization
import TextContainer

#if canImport(Glibc)
    import Glibc
#endif

/// `docs sync` beside the container's agent: a one-shot sync asks the agent for its pass, and
/// `--stop` stops the agent.
extension SyncCommand {
    /// Asks the sync that holds `container` for a pass, waits for it and reports it as if this
    /// process had run it; nil when the container is no longer held (this process syncs it).
    static func passThroughAgent(_ container: TextContainer, json: Bool) throws -> ExitStatus? {
        if isatty(STDERR_FILENO) == 1 {
            Output.error("docs: \(container.url.path) is syncing in another process; it runs this pass")
        }
        let summary: SyncSummary?
        do {
            summary = try SyncEngine.passThroughAgent(
                ofContainer: container.url, configuration: try configuration(for: container))
        } catch let error as SyncError {
            throw DocsFailure.failure(explained(error))
        }
        guard let summary else { return nil }
        try report(summary, json: json)
        return summary.failures.isEmpty ? .success : .failure
    }

    /// How long a stopped agent has to end its pass before it is killed: sync survives a kill
    /// at any instant (the next pass finishes what one began), so waiting longer only keeps
    /// the user waiting.
    static let stopGrace = Duration.seconds(10)

    /// `docs sync --stop`: stops the process syncing the container (its agent), and says so.
    static func stop(_ container: TextContainer) throws {
        let lock = SyncStateFiles.lock(forContainer: container.url)
        guard let holder = SyncLockHolder.of(lock: lock) else {
            try Output.write("no sync runs for \(Output.escaped(container.url.path))\n")
            return
        }
        let who = ProcessIdentity.describe(holder.pid)
        guard kill(holder.pid, SIGTERM) == 0 else {
            throw DocsFailure.failure(
                "cannot stop the sync of \(container.url.path), \(who): \(String(cString: strerror(errno)))")
        }
        var killed = false
        var deadline = ContinuousClock.now + stopGrace
        while let current = SyncLockHolder.of(lock: lock), current.pid == holder.pid {
            if ContinuousClock.now >= deadline {
                guard !killed else {
                    throw DocsFailure.failure(
                        "the sync of \(container.url.path), \(who), did not stop when killed")
                }
                _ = kill(holder.pid, SIGKILL)
                killed = true
                deadline = ContinuousClock.now + stopGrace
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let what = holder.isAgent ? "the sync agent" : "the sync"
        let how =
            killed
            ? "; it was killed in its pass, which the next sync finishes" : ""
        try Output.write(
            "stopped \(what) of \(Output.escaped(container.url.path)), \(who)\(how); an app that uses the container starts its agent again (docs sync --watch runs one here)\n"
        )
    }
}

/// The files an agent's remote settings were read from, as they were then: ``changed`` tells
/// when one of them is another since (written, replaced, made or removed), looked at at most
/// once a second.
final class SettingsStamp: Sendable {
    private let files: [URL]
    private let stamps: [[Int64]?]
    /// When the files were last looked at, and whether one had changed.
    private let looked: Mutex<(at: ContinuousClock.Instant, changed: Bool)>

    init(_ files: [URL]) {
        self.files = files
        stamps = files.map(Self.stamp)
        looked = Mutex((ContinuousClock.now, false))
    }

    var changed: Bool {
        looked.withLock { looked in
            let now = ContinuousClock.now
            guard !looked.changed, now - looked.at >= .seconds(1) else { return looked.changed }
            looked = (now, files.map(Self.stamp) != stamps)
            return looked.changed
        }
    }

    private static func stamp(_ file: URL) -> [Int64]? {
        FileStatus(path: file.path).map {
            [
                Int64(bitPattern: $0.inode), $0.size, $0.modification.seconds,
                Int64($0.modification.nanoseconds),
                $0.statusChange.seconds, Int64($0.statusChange.nanoseconds),
            ]
        }
    }
}
