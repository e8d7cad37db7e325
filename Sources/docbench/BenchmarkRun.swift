import Dispatch
import Foundation
import Synchronization

/// What one docbench run leaves on the machine while it runs: its scratch folders (all under
/// one folder of the run's own) and its child processes.
///
/// Rules it enforces:
/// - A run stopped by SIGTERM or SIGINT ends by that signal within moments, whatever the
///   benchmark in progress is doing: its children are killed (`SIGKILL`: they only measure,
///   and all they wrote is in the scratch folder), waited for, and its scratch folder removed
///   before the signal's default action ends the process.
/// - A child is started under the same lock the stop takes, so none is started after the
///   stop killed the others, and none escapes by starting while the stop runs.
/// - Once a stop began, the run reports nothing more and exits only by the signal.
/// - Scratch folders live under one folder per run, `DOCBENCH_DIR/docbench-PID` (by default
///   `.build/docbench`), made on first use and removed at the end of the run, so nothing it
///   wrote outlives it even when a benchmark fails halfway.
enum BenchmarkRun {
    private struct State {
        var children: Set<pid_t> = []
        var stopping = false
        var root: URL?
    }

    private static let state = Mutex(State())

    /// The folder under which this run's scratch folders go, made on first use.
    static func scratchRoot() throws -> URL {
        try state.withLock { state in
            if let root = state.root { return root }
            let base =
                ProcessInfo.processInfo.environment["DOCBENCH_DIR"].map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                    ".build/docbench")
            let root = base.appendingPathComponent("docbench-\(getpid())", isDirectory: true)
            try? FileManager.default.removeItem(at: root)
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            state.root = root
            return root
        }
    }

    /// Starts `process` as a child the run stops with it; the caller waits for it with `wait(for:)`.
    static func start(_ process: Process) throws {
        try state.withLock { state in
            // A stop in progress kills what it knows, then ends the process: start nothing.
            guard !state.stopping else { throw CocoaError(.userCancelled) }
            try process.run()
            state.children.insert(process.processIdentifier)
        }
    }

    /// Waits for a child started with `start` to end, and forgets it (its identifier may be
    /// reused).
    static func wait(for process: Process) {
        process.waitUntilExit()
        _ = state.withLock { $0.children.remove(process.processIdentifier) }
        parkIfStopping()
    }

    /// Removes the run's scratch folder at the end of a run that was not stopped.
    static func finish() {
        parkIfStopping()
        let root = state.withLock { state in
            defer { state.root = nil }
            return state.root
        }
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Makes SIGTERM and SIGINT stop the run as this type's rules say, as long as the sources
    /// returned are kept.
    static func stopOnSignals() -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { number in
            // Dispatch hears the signal only while its default action (ending the process at
            // once, leaving children and folders behind) is off.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop(by: number) }
            source.resume()
            return source
        }
    }

    /// Keeps the calling thread from going on while a stop runs: a child the stop killed
    /// looks like a failed benchmark, and the run would report it and exit with its own
    /// status before the stop ends it by the signal.
    private static func parkIfStopping() {
        guard state.withLock({ $0.stopping }) else { return }
        while true { pause() }
    }

    private static func stop(by number: Int32) -> Never {
        let (children, root) = state.withLock { state in
            state.stopping = true
            return (state.children, state.root)
        }
        for child in children { kill(child, SIGKILL) }
        // A killed child may still be finishing a write into the folder about to be removed.
        let deadline = ContinuousClock.now + .seconds(5)
        while children.contains(where: isAlive) && ContinuousClock.now < deadline { usleep(5_000) }
        if let root {
            // The benchmark goes on until the process ends, and may add files while they are
            // removed: remove again until the folder is gone.
            for _ in 0..<20 where FileManager.default.fileExists(atPath: root.path) {
                try? FileManager.default.removeItem(at: root)
            }
        }
        // Dispatch reads signals from a signalfd, with the signal blocked in every thread: end
        // by it here, with its default action, unblocked in this thread alone.
        signal(number, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        // Not reached: the default action of SIGTERM and SIGINT ends the process.
        _exit(128 + number)
    }

    /// Whether a process exists and has not ended (a zombie not yet reaped has).
    private static func isAlive(_ identifier: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(identifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }
}
