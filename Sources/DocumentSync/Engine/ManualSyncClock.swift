import Foundation
import Synchronization

/// A ``SyncClock`` that moves only when told to, or when the engine waits on it: the
/// simulation's, so that a run does not depend on how fast the machine is, and time the
/// engine waits for (files settling, an upload's late-write window) passes at once.
///
/// Waiting moves the clock by the time waited and returns at once; a signal already given is
/// taken first.
///
/// For example:
///
/// ```swift
/// let clock = ManualSyncClock(start: Date(timeIntervalSince1970: 1_700_000_000))
/// var settings = SyncConfiguration()
/// settings.clock = clock
/// clock.advance(by: .seconds(601))   // an unanswered upload is now past its window
/// ```
package final class ManualSyncClock: SyncClock {
    private let state: Mutex<(start: Date, elapsed: Duration)>

    /// A clock reading `start` until it is moved.
    package init(start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Mutex((start, .zero))
    }

    package var now: Date {
        state.withLock { $0.start.addingTimeInterval($0.elapsed.seconds) }
    }

    package var elapsed: Duration { state.withLock { $0.elapsed } }

    /// Moves the clock forward by `duration`.
    package func advance(by duration: Duration) {
        state.withLock { $0.elapsed += max(duration, .zero) }
    }

    package func sleep(for duration: Duration) { advance(by: duration) }

    package func wait(for signal: DispatchSemaphore, upTo duration: Duration) -> Bool {
        if signal.wait(timeout: .now()) == .success { return true }
        advance(by: duration)
        return false
    }
}
