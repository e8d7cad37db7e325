import Foundation

/// The time a sync engine reads and waits on: the wall clock for what it records (an intent's
/// age, when the status was written, since when the remote is offline, whether a file is still
/// being written), a monotonic one for how long to wait.
///
/// Every reading of time in the engine goes through one, given in
/// ``SyncConfiguration/clock``: ``SystemSyncClock`` by default, and a manual clock in the
/// simulation, which moves it as it likes (an upload whose outcome was never learnt grows
/// older than the window it is waited for in, without anyone waiting ten minutes).
///
/// The engine's calls block their thread (a pass runs on a thread of its own), so waiting is
/// blocking too.
///
/// For example:
///
/// ```swift
/// var settings = SyncConfiguration()
/// settings.clock = SystemSyncClock()
/// ```
public protocol SyncClock: Sendable {
    /// Now, on the wall clock: what intents and the published status record.
    var now: Date { get }

    /// Time elapsed since a fixed point of this clock's: only differences mean anything.
    var elapsed: Duration { get }

    /// Blocks the calling thread for `duration`.
    func sleep(for duration: Duration)

    /// Blocks the calling thread until `signal` is signalled or `duration` has passed;
    /// returns whether it was signalled (and takes the signal).
    func wait(for signal: DispatchSemaphore, upTo duration: Duration) -> Bool
}

/// The system's clocks: `Date()` and `ContinuousClock`.
public struct SystemSyncClock: SyncClock {
    private let origin = ContinuousClock.now

    /// The system's clocks.
    public init() {}

    public var now: Date { Date() }

    public var elapsed: Duration { origin.duration(to: ContinuousClock.now) }

    public func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        Thread.sleep(forTimeInterval: duration.seconds)
    }

    public func wait(for signal: DispatchSemaphore, upTo duration: Duration) -> Bool {
        let nanoseconds = max(0, Int(duration.seconds * 1e9))
        return signal.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
