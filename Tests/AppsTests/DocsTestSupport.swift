import Foundation
import Testing

/// The real `docs` executable, built beside the test bundle.
enum DocsBinary {
    static let url: URL = {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if folder.pathExtension == "xctest" { folder.deleteLastPathComponent() }
        for candidate in [folder, folder.deletingLastPathComponent()] {
            let binary = candidate.appendingPathComponent("docs")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return folder.appendingPathComponent("docs")
    }()
}

/// What one run of `docs` did.
struct DocsResult {
    var status: Int32
    var outputData: Data
    var error: String
    /// Whether it was killed for running past the time it was given.
    var timedOut = false

    var output: String { String(decoding: outputData, as: UTF8.self) }
}

/// A temporary container and data folder for one test, removed afterwards; runs `docs`
/// against them.
final class DocsFolder {
    let root: URL
    let container: URL
    let dataHome: URL

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-tests-\(UUID().uuidString)", isDirectory: true)
        container = root.appendingPathComponent("Container", isDirectory: true)
        dataHome = root.appendingPathComponent("data", isDirectory: true)
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dataHome, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    /// The environment every run gets: this container, this data folder, no user editor.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["STE_CONTAINER"] = container.path
        environment["XDG_DATA_HOME"] = dataHome.path
        // Never the user's own settings: `docs remote add` writes there.
        environment["XDG_CONFIG_HOME"] = configHome.path
        environment["EDITOR"] = "false"
        return environment
    }

    /// `$XDG_CONFIG_HOME` of every run: where `docs remote add` keeps the ubiquity containers.
    var configHome: URL { root.appendingPathComponent("config", isDirectory: true) }

    func url(_ fileName: String) -> URL { container.appendingPathComponent(fileName) }

    func write(_ fileName: String, _ text: String) throws {
        try Data(text.utf8).write(to: url(fileName))
    }

    func contents(_ fileName: String) throws -> String {
        String(decoding: try Data(contentsOf: url(fileName)), as: UTF8.self)
    }

    func exists(_ fileName: String) -> Bool {
        FileManager.default.fileExists(atPath: url(fileName).path)
    }

    /// Runs `docs` with `arguments`, feeding it `input`, and waits for it.
    ///
    /// With `unprivileged`, a run as root runs as `nobody` instead (through `setpriv`, with a
    /// runtime folder of its own), so that permissions mean something when tests run as root.
    func run(
        _ arguments: [String], input: Data? = nil, environment extra: [String: String] = [:],
        unprivileged: Bool = false, timeout: Duration? = nil, in directory: URL? = nil
    ) throws -> DocsResult {
        var executable = DocsBinary.url
        var arguments = arguments
        var environment = environment.merging(extra) { $1 }
        if unprivileged && getuid() == 0 {
            let runtime = root.appendingPathComponent("runtime-nobody", isDirectory: true)
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard chown(runtime.path, 65534, 65534) == 0 else { throw CocoaError(.fileWriteNoPermission) }
            executable = URL(fileURLWithPath: "/usr/bin/setpriv")
            arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", DocsBinary.url.path] + arguments
            environment["XDG_RUNTIME_DIR"] = runtime.path
            environment["HOME"] = root.path
        }
        return try runDocs(
            executable, arguments, environment: environment, input: input, scratch: root, timeout: timeout,
            directory: directory)
    }
}

/// Runs `executable` (`docs`, or `setpriv` running it) and waits for it, with its output in
/// files under `scratch`, not pipes: an editor `docs edit` starts could hold a pipe open past
/// its end. Given a `timeout`, a run still going then is killed (``DocsResult/timedOut``).
/// It runs in `directory` when given (relative paths in its arguments are of that folder).
func runDocs(
    _ executable: URL, _ arguments: [String], environment: [String: String], input: Data?, scratch: URL,
    timeout: Duration? = nil, directory: URL? = nil
) throws -> DocsResult {
    let process = Process()
    process.executableURL = executable
    if let directory { process.currentDirectoryURL = directory }
    process.arguments = arguments
    process.environment = environment
    let name = UUID().uuidString
    let outputURL = scratch.appendingPathComponent("stdout-\(name)")
    let errorURL = scratch.appendingPathComponent("stderr-\(name)")
    let inputURL = scratch.appendingPathComponent("stdin-\(name)")
    try Data().write(to: outputURL)
    try Data().write(to: errorURL)
    try (input ?? Data()).write(to: inputURL)
    let output = try FileHandle(forWritingTo: outputURL)
    let error = try FileHandle(forWritingTo: errorURL)
    let inputHandle = try FileHandle(forReadingFrom: inputURL)
    defer {
        try? output.close()
        try? error.close()
        try? inputHandle.close()
        for url in [outputURL, errorURL, inputURL] { try? FileManager.default.removeItem(at: url) }
    }
    process.standardOutput = output
    process.standardError = error
    process.standardInput = inputHandle
    try process.run()
    var timedOut = false
    if let timeout {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        // SIGKILL: the child inherits the test process's blocked signals.
        if process.isRunning {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
        }
    }
    process.waitUntilExit()
    return DocsResult(
        status: process.terminationStatus, outputData: try Data(contentsOf: outputURL),
        error: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self), timedOut: timedOut)
}

/// A setting of the servers scripts/test starts (`DOCUMENTSYNC_WEBDAV_*`, `DOCUMENTSYNC_S3_*`).
func testServerSetting(_ name: String) throws -> String {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
        throw DocsSyncSetupError(description: "\(name) is not set: run the tests with scripts/test")
    }
    return value
}

/// `docs list --json`, decoded.
struct DocsListing: Decodable {
    struct Document: Decodable {
        var name: String
        var file: String
        var path: String
        var size: Int64
        var modified: String
        var conflicts: Int
    }

    var container: String
    var documents: [Document]
}

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout`.
func eventually(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}

/// A new collection of its own under the WebDAV folder `server`, made with curl's MKCOL as any
/// WebDAV client makes one (the password given to curl on standard input, not in argv).
func makeCollection(in server: String, user: String, password: String, caFile: String? = nil) throws -> String
{
    let url = server + "docs-\(UUID().uuidString.prefix(8))/"
    let made = Process()
    made.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    made.arguments =
        ["-s", "-o", "/dev/null", "--netrc-file", "/dev/stdin", "-X", "MKCOL", url]
        + (caFile.map { ["--cacert", $0] } ?? [])
    let input = Pipe()
    made.standardInput = input
    try made.run()
    let host = URL(string: server)?.host ?? "127.0.0.1"
    input.fileHandleForWriting.write(Data("machine \(host) login \(user) password \(password)\n".utf8))
    try input.fileHandleForWriting.close()
    made.waitUntilExit()
    return url
}
