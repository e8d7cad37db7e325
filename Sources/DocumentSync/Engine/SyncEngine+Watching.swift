import DocumentKit
import Foundation

/// Why ``SyncEngine/keepSyncing(every:until:report:)`` ended.
public enum SyncingEnd: Sendable, Equatable {
    /// `shouldStop` said so.
    case stopped
    /// The container's folder is gone: nothing is left to sync, and an agent that went on
    /// would only write the status of a folder no one has.
    case containerGone
}

extension SyncEngine {
    /// Syncs now, then again whenever the container changes (inotify, through DocumentKit's
    /// watcher), an app asks (``UbiquityAgent/wake(forContainerAt:)``), or `interval` has
    /// passed (the remote is polled), until `shouldStop` says so or the container's folder is
    /// gone.
    ///
    /// Each round's outcome goes to `report`; a failed round (the remote unreachable, sync
    /// paused) does not end the loop, the next change or poll tries again.
    ///
    /// - Throws: ``DocumentKitError`` when the container cannot be watched.
    @discardableResult
    public func keepSyncing(
        every interval: Duration, until shouldStop: @escaping @Sendable () -> Bool,
        report: (Result<SyncSummary, any Error>) -> Void
    ) throws -> SyncingEnd {
        holdLockAsAgent()
        let changed = DispatchSemaphore(value: 0)
        let watcher = try DirectoryWatcher { events in
            // The engine's own downloads and temporaries are hidden names: not a change to sync.
            if events.contains(where: { !$0.url.lastPathComponent.hasPrefix(".") }) { changed.signal() }
        }
        defer { watcher.cancel() }
        try watcher.watch(container, recursive: true)
        let wake = SyncStateFiles.wake(forContainer: container, stateHome: configuration.stateHome)
        let woken = try DirectoryWatcher { events in
            if events.contains(where: { $0.url.lastPathComponent == wake.lastPathComponent }) {
                changed.signal()
            }
        }
        defer { woken.cancel() }
        try woken.watch(wake.deletingLastPathComponent(), recursive: false)
        while !shouldStop() {
            guard FileStatus(path: container.path) != nil else { return .containerGone }
            report(syncAnsweringRequests())
            // Wait for a change or the poll, in short slices so that a stop is heard at once.
            let deadline = clock.elapsed + interval
            while !shouldStop(), clock.elapsed < deadline {
                if clock.wait(for: changed, upTo: .milliseconds(200)) {
                    // A burst of writes (an editor saving) is one round.
                    clock.sleep(for: .milliseconds(200))
                    while clock.wait(for: changed, upTo: .zero) {}
                    break
                }
            }
        }
        return .stopped
    }
}
