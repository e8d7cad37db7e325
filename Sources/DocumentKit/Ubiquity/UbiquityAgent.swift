import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The sync agent of a ubiquity container: the process that keeps it in sync, so that an app
/// that only saves its documents gets them synced.
///
/// The agent is `docs sync --watch` (run by hand, or as a user service: see the README), one
/// per container across processes: a running sync engine holds the container's lock, and a
/// second one stops at once. When none runs, the ubiquity API starts one on demand (from
/// `url(forUbiquityContainerIdentifier:)` and `setUbiquitous`): the program recorded in
/// ``UbiquityConfiguration/agent``, in a session of its own so that the app's Ctrl-C does not
/// stop it, its output appended to a log beside the journal. Set
/// `DOCUMENTKIT_SYNC_AGENT=manual` to never start one.
public enum UbiquityAgent {
    /// Whether a sync engine holds `container`'s lock now, in any process.
    public static func isRunning(for container: URL) -> Bool {
        SyncLockHolder.isHeld(SyncStateFiles.lock(forContainer: container))
    }

    /// The ubiquity container whose root is the folder at `url`, with its agent started if
    /// none runs (as the ubiquity API starts it); nil when the folder is no container.
    ///
    /// An app that shows a container's documents without calling the ubiquity API (the
    /// Simple Text Editor) calls this when it opens the container.
    ///
    /// - Parameter isRequestedByUser: The user asked to sync now (ste's F5): an agent is
    ///   started even if this process started one in the last ten seconds, which would
    ///   otherwise keep a failing agent from being started again on every call.
    @discardableResult
    public static func start(forContainerAt url: URL, isRequestedByUser: Bool = false) -> UbiquityContainer? {
        guard let configuration = try? UbiquityConfiguration.load(),
            let container = configuration.container(at: url)
        else { return nil }
        startIfNeeded(for: container, configuration: configuration, isRequestedByUser: isRequestedByUser)
        return container
    }

    /// Asks the agent of the container at `url` to sync now rather than at its next poll.
    public static func wake(forContainerAt url: URL) {
        wake(forContainerAt: url, stateHome: nil)
    }

    /// ``wake(forContainerAt:)`` for the agent whose state is under `stateHome`.
    package static func wake(forContainerAt url: URL, stateHome: URL?) {
        let file = SyncStateFiles.wake(forContainer: url, stateHome: stateHome)
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try? SafeSave.write(Data("\(Date().timeIntervalSince1970)\n".utf8), to: file, permissions: 0o600)
    }

    /// Whether this process starts agents: not with `DOCUMENTKIT_SYNC_AGENT=manual`.
    public static var startsAgents: Bool {
        ProcessInfo.processInfo.environment["DOCUMENTKIT_SYNC_AGENT"] != "manual"
    }

    /// When each container's agent was last started by this process: a failing agent is not
    /// started again on every call.
    private static let started = Mutex<[String: ContinuousClock.Instant]>([:])

    /// Starts the agent of `container` unless one runs, none is recorded, starting is off,
    /// or (unless the user asked) this process started one in the last ten seconds.
    static func startIfNeeded(
        for container: UbiquityContainer, configuration: UbiquityConfiguration,
        isRequestedByUser: Bool = false
    ) {
        guard startsAgents, let agent = configuration.agent,
            FileManager.default.isExecutableFile(atPath: agent),
            !isRunning(for: container.url)
        else { return }
        let now = ContinuousClock.now
        let due = started.withLock { started -> Bool in
            if !isRequestedByUser, let last = started[container.folder], now - last < .seconds(10) {
                return false
            }
            started[container.folder] = now
            return true
        }
        guard due else { return }
        try? start(agent, for: container)
    }

    /// The environment the agent program runs with: this process's, with the folders this
    /// process resolved (a test or an app may have set them), not only the ones it was started
    /// with.
    static func environment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = UbiquityConfiguration.configurationHome.path
        environment["XDG_DATA_HOME"] = StandardDirectories.current.applicationSupport.path
        environment["XDG_STATE_HOME"] = SyncStateFiles.stateHome().path
        return environment
    }

    /// Starts `agent sync --watch --container FOLDER` in a session of its own.
    static func start(_ agent: String, for container: UbiquityContainer) throws {
        let log = SyncStateFiles.log(forContainer: container.url)
        try FileManager.default.createDirectory(
            at: log.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the app's: a pipe or socket it holds open would stay open as long as
        // the agent runs (a shell pipeline reading the app's output would never end, nor would
        // a parent waiting for the app's end through a descriptor).
        _ = cds_spawn_actions_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The agent starts with no signal blocked and the stopping ones at their defaults,
        // whatever the thread that starts it had: an app that takes SIGTERM on a thread of its
        // own blocks it in the others, and an agent that inherited that could not be stopped.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(
            &attributes, Int16(CDS_POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let environment = environment()
        let arguments = [agent, "sync", "--watch", "--container", container.folder]
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, agent, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw DocumentKitError(
                Errno(rawValue: result), operation: "start the sync agent", url: URL(fileURLWithPath: agent))
        }
        // Reaped by a thread of its own: the agent outlives most of its parent's work.
        let child = pid
        Thread.detachNewThread { _ = waitpid(child, nil, 0) }
    }
}
