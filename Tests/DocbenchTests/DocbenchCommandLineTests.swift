import Foundation
import Testing

/// docbench's command line: what `--help` promises, that nothing it does not know runs the
/// suite, and that a stopped run leaves no process and no scratch folder behind.
@Suite struct DocbenchCommandLineTests {
    @Test func helpListsTheFlagsAndEveryRow() throws {
        let run = try DocbenchRun(["--help"])
        let result = try run.wait(upTo: .seconds(60))
        #expect(result.status == 0 && !result.timedOut)
        for flag in ["--filter NAME", "--quick", "--json", "--list", "--help", "DOCBENCH_DIR"] {
            #expect(result.output.contains(flag), "--help does not name \(flag)")
        }
        // The rows issue 27 measures the engine by, and one of each other kind.
        for row in [
            "sync.first.1000x4KiB", "sync.first.10000x4KiB", "sync.nochange.10000", "sync.onechange.10000",
            "sync.memory.1GiB", "versions.save.1MiB.100x.time", "presenter.save.latency.p99",
            "query.gather.10000",
        ] {
            #expect(result.output.contains(row), "--help does not list \(row)")
        }
        #expect(try run.scratchEntries().isEmpty)
    }

    @Test func listNamesTheRowsAFilterSelects() throws {
        let result = try DocbenchRun(["--list", "--filter", "sync.passes", "--filter", "sync.first.1000x"])
            .wait(upTo: .seconds(60))
        #expect(result.status == 0)
        #expect(result.output == "sync.first.1000x4KiB\nsync.nochange.10000\nsync.onechange.10000\n")
    }

    /// Each refused before anything runs: a mistyped flag once ran the whole suite.
    @Test(arguments: [
        ["--bogus"], ["--quick", "--jsno"], ["--filter"], ["--filter", "--quick"],
        ["--filter", "no.such.row"],
        ["sync.first.1000x4KiB"], ["-q"],
    ])
    func refusesWhatItDoesNotKnow(_ arguments: [String]) throws {
        let run = try DocbenchRun(arguments)
        let result = try run.wait(upTo: .seconds(60))
        #expect(!result.timedOut, "docbench \(arguments) ran instead of refusing")
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.error.hasPrefix("docbench: ") && result.error.contains("--help"))
        #expect(try run.scratchEntries().isEmpty)
    }

    /// Stopped while a child process syncs a 256 MiB file: docbench ends by the signal soon,
    /// its child ends with it, and its scratch folder (the documents, both trees, the version
    /// store) is gone.
    @Test func stopsOnSIGTERMWithItsChildrenAndScratchFolders() throws {
        let run = try DocbenchRun(["--quick", "--filter", "sync.memory"])
        defer { run.kill() }
        let child = try run.waitForChild(containing: "/large/container", upTo: .seconds(240))
        #expect(!(try run.scratchEntries().isEmpty))
        kill(run.process.processIdentifier, SIGTERM)
        let result = try run.wait(upTo: .seconds(20))
        #expect(!result.timedOut, "docbench still ran 20 s after SIGTERM")
        #expect(result.signal == SIGTERM, "docbench ended with status \(result.status), not by SIGTERM")
        let deadline = ContinuousClock.now + .seconds(5)
        while processRuns(child, "--sync-child") && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(!processRuns(child, "--sync-child"), "docbench's child \(child) outlived it")
        #expect(try run.scratchEntries() == [])
    }
}

/// One run of the real `docbench` (built beside the test bundle), with its scratch folders
/// and its output in a temporary folder of its own.
private final class DocbenchRun {
    struct Result {
        var status: Int32
        /// The signal that ended it, if one did.
        var signal: Int32?
        var timedOut: Bool
        var output: String
        var error: String
    }

    let process = Process()
    let root: URL
    private var scratch: URL { root.appendingPathComponent("scratch", isDirectory: true) }
    private var outputURL: URL { root.appendingPathComponent("stdout") }
    private var errorURL: URL { root.appendingPathComponent("stderr") }

    init(_ arguments: [String]) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("docbench-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["DOCBENCH_DIR"] = scratch.path
        for name in ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"] {
            environment[name] = root.appendingPathComponent(name).path
        }
        process.executableURL = Self.binary
        process.arguments = arguments
        process.environment = environment
        for url in [outputURL, errorURL] { try Data().write(to: url) }
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: root)
    }

    static let binary: URL = {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if folder.pathExtension == "xctest" { folder.deleteLastPathComponent() }
        for candidate in [folder, folder.deletingLastPathComponent()] {
            let binary = candidate.appendingPathComponent("docbench")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return folder.appendingPathComponent("docbench")
    }()

    /// Waits for the run to end; one still going after `limit` is killed (`SIGKILL`).
    func wait(upTo limit: Duration) throws -> Result {
        let deadline = ContinuousClock.now + limit
        while !hasExited && ContinuousClock.now < deadline { usleep(10_000) }
        let timedOut = !hasExited
        kill()
        let signaled = process.terminationReason == .uncaughtSignal
        return Result(
            status: process.terminationStatus, signal: signaled ? process.terminationStatus : nil,
            timedOut: timedOut, output: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
            error: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }

    /// Whether the run has ended: its process is gone, or a zombie that Foundation has not
    /// reaped yet. On a loaded machine Foundation notices an exit tens of seconds late (a CI
    /// run saw `--help`, 20 ms alone, still "running" after 60 s), so the limit is held to the
    /// process, not to that bookkeeping.
    private var hasExited: Bool {
        guard process.isRunning,
            let stat = try? String(
                contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let name = stat.lastIndex(of: ")")
        else { return true }
        // "PID (NAME) STATE ...": the state follows the name's closing parenthesis and a space.
        return stat[stat.index(after: name)...].dropFirst().first == "Z"
    }

    /// Ends the run now if it still runs.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// What is left in the run's `DOCBENCH_DIR`.
    func scratchEntries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
    }

    /// The identifier of a child of the run whose command line contains `text`, waiting for
    /// one to appear.
    func waitForChild(containing text: String, upTo limit: Duration) throws -> pid_t {
        let parent = process.processIdentifier
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw Failure("docbench ended (\(process.terminationStatus)) before it started a child")
            }
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let child = pid_t(entry), processParent(child) == parent,
                    let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(child)/cmdline"))
                else { continue }
                if String(decoding: line, as: UTF8.self).contains(text) { return child }
            }
            usleep(20_000)
        }
        throw Failure("docbench started no child with \(text) in \(limit)")
    }
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The fields of `/proc/PID/stat` after the command name: state, parent, ...
private func processFields(_ identifier: pid_t) -> [Substring]? {
    guard let stat = try? String(contentsOfFile: "/proc/\(identifier)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(after: close)...].split(separator: " ")
}

private func processParent(_ identifier: pid_t) -> pid_t? {
    processFields(identifier).flatMap { $0.count > 1 ? pid_t($0[1]) : nil }
}

/// Whether the process exists, has not ended (a zombie waiting to be reaped has) and is still
/// the one whose command line contains `text` (not another that reused its identifier).
private func processRuns(_ identifier: pid_t, _ text: String) -> Bool {
    guard let state = processFields(identifier)?.first, state != "Z", state != "X",
        let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(identifier)/cmdline"))
    else { return false }
    return String(decoding: line, as: UTF8.self).contains(text)
}
