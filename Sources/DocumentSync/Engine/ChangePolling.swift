import Foundation

/// When an engine that keeps syncing asks its remote whether anything changed
/// (``Remote/changeMarker()``) and when it passes anyway: the pure part of
/// ``SyncEngine/keepSyncing(every:until:report:)``, driven by the times it is told.
///
/// While this device or another was active in the last ``activeWindow`` (a change here, a
/// pass that did work, a marker that changed), the marker is asked every ``activeGap``, so
/// that another device's save shows here in a second or two. Once quiet, the gap between two
/// asks doubles up to the plain interval, and a marker that cannot be asked (offline, an odd
/// answer) is asked again after a doubled gap too. A pass runs when the marker changed, when
/// this device's container changed, and at the plain interval whatever the marker says (a
/// program that changes the remote without rewriting the marker is synced that late). An
/// ask that would fall at or after the next pass is left out: the pass comes anyway.
///
/// For example:
///
/// ```swift
/// var polling = ChangePolling(interval: .seconds(30), now: clock.elapsed)
/// polling.passed(at: clock.elapsed, didWork: summary.didWork)
/// switch polling.next(at: clock.elapsed) {
/// case .pass: try engine.sync()
/// case .ask: polling.asked(at: clock.elapsed, changed: marker != baseline)
/// case .wait(let until): clock.sleep(for: until - clock.elapsed)
/// }
/// ```
package struct ChangePolling: Sendable, Equatable {
    /// What to do next.
    package enum Step: Sendable, Equatable {
        /// Pass now: the plain interval is up.
        case pass
        /// Ask the remote's change marker now.
        case ask
        /// Nothing before this time (of ``SyncClock/elapsed``), unless something changes here.
        case wait(until: Duration)
    }

    /// The plain interval: the most time between two passes, and the slowest asking.
    package let interval: Duration
    /// Whether the marker is asked at all: not where the remote tells its changes itself
    /// (``Remote/watchChanges(_:)``).
    package let asks: Bool
    /// The gap between two asks while this device or another is active: 1 second.
    package var activeGap: Duration = .seconds(1)
    /// How long after the last activity the device counts as active: 2 minutes.
    package var activeWindow: Duration = .seconds(120)
    /// When this device or another was last active.
    package private(set) var lastActivity: Duration
    /// When the last pass ended.
    package private(set) var lastPass: Duration
    /// The gap before the next ask.
    package private(set) var gap: Duration
    /// When the next ask is due.
    package private(set) var nextAsk: Duration
    /// Whether the last ask failed: its longer gap then holds across passes.
    package private(set) var failing = false

    /// Polling at `interval`, started at `now` as an active time (an agent starts because
    /// someone uses the container); `asks` false passes at the interval only.
    package init(interval: Duration, now: Duration, asks: Bool = true) {
        self.interval = max(interval, .milliseconds(100))
        self.asks = asks
        lastActivity = now
        lastPass = now
        gap = .seconds(1)
        nextAsk = now + gap
    }

    /// When the next pass is due at the latest.
    package var nextPass: Duration { lastPass + interval }

    /// What to do at `now`.
    package func next(at now: Duration) -> Step {
        if now >= nextPass { return .pass }
        if asks, nextAsk < nextPass {
            return now >= nextAsk ? .ask : .wait(until: nextAsk)
        }
        return .wait(until: nextPass)
    }

    /// Something changed at `now`: the container here, or the remote's marker.
    package mutating func active(at now: Duration) {
        lastActivity = max(lastActivity, now)
    }

    /// A pass ended at `now`; `didWork` when it changed either side.
    package mutating func passed(at now: Duration, didWork: Bool) {
        if didWork { active(at: now) }
        lastPass = now
        if !failing { gap = quietGap(at: now, after: gap) }
        nextAsk = now + gap
    }

    /// The marker was asked at `now`: `changed` when it differs from the one before the
    /// last pass, nil when it could not be asked (the next ask then waits twice as long, passes
    /// or not, until one is answered).
    package mutating func asked(at now: Duration, changed: Bool?) {
        failing = changed == nil
        switch changed {
        case true?:
            active(at: now)
            gap = activeGap
        case false?:
            gap = quietGap(at: now, after: gap)
        case nil:
            gap = min(max(gap * 2, activeGap * 2), interval)
        }
        nextAsk = now + gap
    }

    /// The gap after `previous` at `now`: ``activeGap`` while active, else twice the last,
    /// up to the interval.
    private func quietGap(at now: Duration, after previous: Duration) -> Duration {
        if now - lastActivity < activeWindow { return activeGap }
        return min(max(previous * 2, activeGap), interval)
    }
}
