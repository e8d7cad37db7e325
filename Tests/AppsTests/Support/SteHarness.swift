import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The real `ste` binary running in a detached tmux session on a private socket, with its
/// own temporary container and data folders; the test drives it with `send-keys` and reads
/// the screen with `capture-pane`.
final class SteSession {
    let root: URL
    let container: URL
    let dataHome: URL
    let exitStatusFile: URL
    private let socket: String
    /// The width of the document list, as ste lays it out for the terminal's width.
    private(set) var listWidth = 33

    /// The folder the test bundle was built into, where `ste` is too.
    static let binary: URL = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        for _ in 0..<6 {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("ste")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: ".build/debug/ste")
    }()

    /// Makes the folders; `prepare` may put documents into the container before `ste` starts.
    init(prepare: (URL) throws -> Void = { _ in }) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("ste-test-\(UUID().uuidString.prefix(8))", isDirectory: true)
        container = root.appendingPathComponent("Container", isDirectory: true)
        dataHome = root.appendingPathComponent("data", isDirectory: true)
        exitStatusFile = root.appendingPathComponent("exit-status")
        socket = "ste-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dataHome, withIntermediateDirectories: true)
        try prepare(container)
    }

    /// A second session on `other`'s container and data folders: two `ste`s on the same
    /// documents and version store, as in two terminals. Its own folder holds only its exit
    /// status and home; `other` removes the shared folders.
    init(sharingFoldersOf other: SteSession) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("ste-test-\(UUID().uuidString.prefix(8))", isDirectory: true)
        container = other.container
        dataHome = other.dataHome
        exitStatusFile = root.appendingPathComponent("exit-status")
        socket = "ste-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit {
        _ = tmux(["kill-server"])
        let socketFolder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(socketFolder)/tmux-\(getuid())/\(socket)")
        try? FileManager.default.removeItem(at: root)
    }

    /// Starts `ste` in a `width` × `height` terminal. With `reportingExit`, a shell around
    /// it writes its exit status to ``exitStatusFile``; without, the pane's process is `ste`.
    ///
    /// With `unprivileged`, a run as root runs `ste` as `nobody` (through `setpriv`, with a
    /// runtime folder of its own), so that permissions mean something when tests run as root.
    ///
    /// `environment` adds `NAME=value` settings to the ones every session has.
    func start(
        arguments: [String] = [], width: Int = 100, height: Int = 24, reportingExit: Bool = true,
        unprivileged: Bool = false, environment extra: [String] = []
    ) {
        listWidth = min(36, max(18, width / 3))
        var environment =
            [
                "STE_CONTAINER=\(container.path)", "XDG_DATA_HOME=\(dataHome.path)", "HOME=\(root.path)",
                // The session's own settings and sync state, never the test process's.
                "XDG_CONFIG_HOME=\(configHome.path)", "XDG_STATE_HOME=\(stateHome.path)",
                "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
            ] + extra
        var command = ["/usr/bin/env"]
        if unprivileged && getuid() == 0 {
            let runtime = root.appendingPathComponent("runtime-nobody", isDirectory: true)
            try? FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            for folder in [runtime, dataHome, container] { chown(folder.path, 65534, 65534) }
            environment.append("XDG_RUNTIME_DIR=\(runtime.path)")
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        command += environment + [Self.binary.path] + arguments
        if reportingExit {
            command = ["/bin/sh", "-c", "\"$@\"; echo $? > '\(exitStatusFile.path)'", "sh"] + command
        }
        _ = tmux(["-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y", "\(height)"] + command)
    }

    @discardableResult
    func tmux(_ arguments: [String]) -> (status: Int32, output: String) {
        // Output goes through a file, and the process is spawned without Foundation's
        // Process: the tmux server that new-session forks inherits the descriptors, and
        // Process waits for its child's descriptors to close, which a server never does.
        let outputFile = root.appendingPathComponent("tmux-output-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        environment["LC_ALL"] = "C.UTF-8"
        environment.removeValue(forKey: "TMUX")
        let status = spawnAndWait(
            ["/usr/bin/tmux", "-L", socket] + arguments, environment: environment,
            standardOutput: arguments.contains("new-session") ? "/dev/null" : outputFile.path)
        let data = (try? Data(contentsOf: outputFile)) ?? Data()
        return (status, String(decoding: data, as: UTF8.self))
    }

    /// Sends keys by tmux name (`C-n`, `Enter`, `Down`).
    func keys(_ names: String...) {
        tmux(["send-keys"] + names)
    }

    /// Types `text` literally.
    func type(_ text: String) {
        tmux(["send-keys", "-l", text])
    }

    var screen: String { tmux(["capture-pane", "-p"]).output }

    /// The screen with its attributes as escape sequences (reverse video is "\u{1B}[7m").
    var styledScreen: String { tmux(["capture-pane", "-p", "-e"]).output }

    /// The process id of the pane's process: `ste` itself when started without `reportingExit`.
    var panePID: pid_t? {
        pid_t(
            tmux(["display-message", "-p", "#{pane_pid}"]).output.trimmingCharacters(
                in: .whitespacesAndNewlines))
    }

    /// The exit status the shell around `ste` recorded, once it has exited.
    var exitStatus: Int32? {
        (try? String(contentsOf: exitStatusFile, encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    func resize(width: Int, height: Int) {
        tmux(["resize-window", "-x", "\(width)", "-y", "\(height)"])
    }

    func file(_ name: String) -> URL { container.appendingPathComponent(name) }

    /// The session's `$XDG_CONFIG_HOME` and `$XDG_STATE_HOME`, shared by its `ste` and `docs`.
    var configHome: URL { root.appendingPathComponent("config", isDirectory: true) }
    var stateHome: URL { root.appendingPathComponent("state", isDirectory: true) }

    /// The document list's rows on screen, top to bottom: each the mark, the name, the size
    /// and the age, as drawn.
    func listRows() -> [String] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().map {
            String($0.prefix(listWidth))
        }
        .filter { $0.wholeMatch(of: /.+ +[0-9.]+[BKMG] +(now|[0-9]+[mhd])/) != nil }
    }

    /// The names in the document list, top to bottom.
    func listNames() -> [String] {
        listRows().map(name(inRow:))
    }

    /// The list row of the document called `name`.
    func listRow(_ name: String) -> String? {
        listRows().first { self.name(inRow: $0) == name }
    }

    /// A row is a mark, the name padded to its width, and " SIZE AGE" in 11 cells.
    private func name(inRow row: String) -> String {
        String(row.dropFirst().prefix(listWidth - 12)).trimmingCharacters(in: .whitespaces)
    }

    /// Runs a shell command in the container folder, as another program would, and returns
    /// its exit status.
    @discardableResult
    func shell(_ command: String) -> Int32 {
        spawnAndWait(
            ["/bin/sh", "-c", "cd \"$0\" && \(command)", container.path],
            environment: ProcessInfo.processInfo.environment, standardOutput: "/dev/null")
    }

    func text(of name: String) -> String? {
        (try? Data(contentsOf: file(name))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` passes (long by default: a
    /// bound on a failure, not a wait a test relies on, and a loaded run is slow).
    func wait(timeout: Duration = .seconds(30), until condition: () -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    /// Waits until the screen contains `text`.
    func waitForScreen(containing text: String, timeout: Duration = .seconds(10)) async -> Bool {
        if await wait(timeout: timeout, until: { screen.contains(text) }) { return true }
        print("SteSession: “\(text)” did not appear within \(timeout); the screen:\n\(screen)")
        return false
    }
}

/// Runs `ste` without a terminal and returns its exit status and output.
func runSte(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (
    status: Int32, output: String, error: String
) {
    let process = Process()
    process.executableURL = SteSession.binary
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)
    )
}

/// Runs `arguments` with stdout to the file at `standardOutput` and stderr to /dev/null,
/// and returns its exit status.
func spawnAndWait(_ arguments: [String], environment: [String: String], standardOutput: String) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    // The test runs on a thread that blocks every signal, and the test process may ignore
    // some: the server and ste get default dispositions and an empty mask, or kill-server's
    // hangups would never end them.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
}
