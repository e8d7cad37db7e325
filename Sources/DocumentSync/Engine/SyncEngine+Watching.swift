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
    /// watcher), an app asks (``UbiquityAgent/wake(forContainerAt:)``), the remote changes, or
    /// `interval` has passed, until `shouldStop` says so or the container's folder is gone.
    ///
    /// How the remote's changes are heard is the remote's (``Remote/watchChanges(_:)``): a
    /// folder remote is watched with inotify, and makes no request while nothing changes; a
    /// network remote's change marker (``Remote/changeMarker()``) is asked every second while
    /// this device or another was active in the last two minutes, then less and less often, up
    /// to `interval` (see ``ChangePolling``), and a pass runs when it changed. A marker that
    /// cannot be asked, or answers oddly, is asked again later; a pass runs at `interval`
    /// whatever it says.
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
        // A remote that cannot be watched (or whose watch fails to start: no inotify watch
        // left) is asked instead.
        let remoteWatch = try? remote.watchChanges { changed.signal() }
        defer { remoteWatch?.cancel() }
        var polling = ChangePolling(interval: interval, now: clock.elapsed, asks: remoteWatch == nil)
        while !shouldStop() {
            guard FileStatus(path: container.path) != nil else { return .containerGone }
            // The marker before the pass: what changes after it is the next pass's.
            let before = polling.asks ? Result { try remote.changeMarker() } : nil
            let outcome = syncAnsweringRequests()
            report(outcome)
            polling.passed(at: clock.elapsed, didWork: (try? outcome.get())?.didWork == true)
            waitForChange(changed, polling: &polling, since: before, until: shouldStop)
        }
        return .stopped
    }

    /// Waits until a pass is due: a change here (or an app's wake, or the remote's watch),
    /// the remote's marker changed from `before` (asked as `polling` says), or
    /// the plain interval up. Waits in short slices, so that a stop is heard at once.
    private func waitForChange(
        _ changed: DispatchSemaphore, polling: inout ChangePolling,
        since before: Result<RemoteTag?, any Error>?,
        until shouldStop: () -> Bool
    ) {
        while !shouldStop() {
            let now = clock.elapsed
            switch polling.next(at: now) {
            case .pass:
                return
            case .ask:
                let marker = Result { try remote.changeMarker() }
                switch (before, marker) {
                case (.success(let old)?, .success(let new)):
                    polling.asked(at: clock.elapsed, changed: old != new)
                    if old != new { return }
                case (_, .success):
                    // Not known before the pass: what changed since cannot be told.
                    polling.asked(at: clock.elapsed, changed: true)
                    return
                case (_, .failure):
                    polling.asked(at: clock.elapsed, changed: nil)
                }
            case .wait(let until):
                if clock.wait(for: changed, upTo: min(until - now, .milliseconds(200))) {
                    polling.active(at: clock.elapsed)
                    // A burst of writes (an editor saving) is one round.
                    clock.sleep(for: .milliseconds(200))
                    while clock.wait(for: changed, upTo: .zero) {}
                    return
                }
            }
        }
    }
}
