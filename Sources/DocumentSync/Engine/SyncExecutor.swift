import Foundation
import Synchronization

/// How many requests a pass keeps in flight: additive increase, multiplicative decrease, as
/// TCP does.
///
/// It starts at ``start`` and stays between ``least`` and its ``ceiling`` (``most`` at most). Every ``width``
/// answers that came back well widen it by one; a request the remote answered with "fewer,
/// please" (a timeout, 429 or 503, a broken connection: ``RemoteError/asksForFewerRequests``)
/// halves it, once for all the requests that were in flight together: a burst of timeouts
/// from one overloaded moment halves it once, not once each.
///
/// For example:
///
/// ```swift
/// var window = RequestWindow()
/// let ticket = window.started()
/// window.congested(ticket)  // width 8 -> 4
/// ```
struct RequestWindow: Sendable, Equatable {
    static let least = 1
    static let start = 8
    static let most = 64

    /// The ceiling: ``most``, or less where the remote serves no more at once well
    /// (``Remote/mostRequestsAtOnce``).
    let ceiling: Int
    /// How many requests may be in flight now.
    private(set) var width: Int
    /// Answers that came back well since the width last changed.
    private var successes = 0
    /// How many requests have started, each one's ticket.
    private var starts = 0
    /// The first ticket of the requests started after the last decrease: congestion reported
    /// by a request started before it was already answered by that decrease.
    private var decreasedAt = 0

    /// A window that starts at ``start`` and grows to `ceiling` at most (1 to ``most``).
    init(ceiling: Int = most) {
        self.ceiling = min(max(ceiling, Self.least), Self.most)
        width = min(Self.start, self.ceiling)
    }

    /// Counts a request as started; returns its ticket for ``congested(_:)``.
    mutating func started() -> Int {
        starts += 1
        return starts
    }

    /// A request came back well (whatever its answer said of the item).
    mutating func succeeded() {
        successes += 1
        guard successes >= width else { return }
        successes = 0
        width = min(ceiling, width + 1)
    }

    /// The request with `ticket` was told to back off.
    mutating func congested(_ ticket: Int) {
        guard ticket > decreasedAt else { return }
        width = max(Self.least, width / 2)
        successes = 0
        decreasedAt = starts
    }
}

/// A ``RequestWindow`` shared by the threads of a batch, and kept by the engine from one
/// pass to the next.
final class SharedRequestWindow: Sendable {
    private let window: Mutex<RequestWindow>

    init(ceiling: Int = RequestWindow.most) {
        window = Mutex(RequestWindow(ceiling: ceiling))
    }

    var width: Int { window.withLock { $0.width } }

    var ceiling: Int { window.withLock { $0.ceiling } }

    func started() -> Int { window.withLock { $0.started() } }

    /// Counts what a request started with `ticket` came to.
    func finished(_ ticket: Int, _ outcome: BatchExecution.Outcome) {
        window.withLock { window in
            switch outcome {
            case .done: window.succeeded()
            case .congested: window.congested(ticket)
            case .interrupted: break
            }
        }
    }
}

/// How a pass runs the actions of a batch.
package enum ExecutionOrder: Sendable, Equatable {
    /// On threads, as many at once as the engine's ``RequestWindow`` allows.
    case concurrent
    /// On `workers` threads that take turns at every checkpoint, in an order drawn from
    /// `seed`: one runs at a time, so a seed replays, and any interleaving of the steps of a
    /// batch's actions, any order of their completions, is a seed away. The simulation's.
    case interleaved(seed: UInt64, workers: Int)
}

/// Runs the actions of one batch (``SyncPlan/batches``): they are safe to run in any order
/// and at once.
///
/// A crash (``SyncInterruption``) in one action stops the others at their next checkpoint,
/// as a killed process stops every thread at once, and the batch throws it.
final class BatchExecution: @unchecked Sendable {
    /// What one action's run came to.
    enum Outcome: Sendable {
        case done
        /// The remote asked for fewer requests.
        case congested
        /// A crash: everything stops.
        case interrupted
    }

    private let actions: [SyncAction]
    private let body: (SyncAction) -> Outcome
    private let condition = NSCondition()
    /// The next action to take, guarded by `condition`.
    private var next = 0
    private var inFlight = 0
    /// Set once a crash stopped the batch; guarded by `condition`.
    private var stopped = false
    /// The threads that take turns, for ``ExecutionOrder/interleaved(seed:workers:)``.
    private let turns: TurnTaking?

    init(_ actions: [SyncAction], order: ExecutionOrder, body: @escaping (SyncAction) -> Outcome) {
        self.actions = actions
        self.body = body
        if case .interleaved(let seed, let workers) = order {
            turns = TurnTaking(seed: seed, workers: max(1, min(workers, actions.count)))
        } else {
            turns = nil
        }
    }

    /// Whether a crash stopped the batch.
    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// Runs every action, at most `window`'s width at a time (concurrently) or taking turns
    /// (interleaved), and returns once all are done.
    ///
    /// - Throws: ``SyncInterruption`` when an action crashed.
    func run(window: SharedRequestWindow) throws {
        guard !actions.isEmpty else { return }
        let workers = turns?.workers ?? min(window.ceiling, actions.count)
        if workers == 1 && turns == nil {
            // One action, or nothing to gain from a thread.
            for action in actions where body(action) == .interrupted { throw SyncInterruption() }
            return
        }
        let finished = DispatchGroup()
        for worker in 0..<workers {
            finished.enter()
            let thread = Thread { [self] in
                if let turns {
                    taking(turns, as: worker)
                } else {
                    working(window: window)
                }
                finished.leave()
            }
            thread.name = "DocumentSync action \(worker)"
            thread.stackSize = 8 << 20
            thread.start()
        }
        finished.wait()
        if isStopped { throw SyncInterruption() }
    }

    /// A checkpoint inside an action: the interleaved threads change turns here, and an action
    /// of a batch another crashed stops here.
    ///
    /// - Throws: ``SyncInterruption`` when another action of the batch crashed.
    func checkpoint() throws {
        if let turns { try turns.pass(stopped: { self.isStopped }) }
        if isStopped { throw SyncInterruption() }
    }

    /// A thread of a concurrent batch: takes actions while the window has room.
    private func working(window: SharedRequestWindow) {
        while let action = takeNext(within: window) {
            let ticket = window.started()
            let outcome = body(action)
            window.finished(ticket, outcome)
            done(outcome)
        }
    }

    /// A thread of an interleaved batch: takes actions in its turns.
    private func taking(_ turns: TurnTaking, as worker: Int) {
        turns.begin(worker)
        defer { turns.finish() }
        while let action = takeNext(within: nil) {
            let outcome = body(action)
            done(outcome)
            if outcome == .interrupted { return }
            // Between two actions too: another may complete first.
            guard (try? turns.pass(stopped: { self.isStopped })) != nil else { return }
        }
    }

    /// The next action to run, counted in flight; nil once every action is taken or a crash
    /// stopped the batch. With a `window`, waits while as many as it allows are in flight.
    private func takeNext(within window: SharedRequestWindow?) -> SyncAction? {
        condition.lock()
        defer { condition.unlock() }
        while let window, !stopped && next < actions.count && inFlight >= window.width {
            condition.wait()
        }
        guard !stopped && next < actions.count else { return nil }
        next += 1
        inFlight += 1
        return actions[next - 1]
    }

    /// Counts a taken action done; a crash stops the batch.
    private func done(_ outcome: Outcome) {
        condition.lock()
        defer { condition.unlock() }
        inFlight -= 1
        if outcome == .interrupted { stopped = true }
        condition.broadcast()
    }
}

/// Threads that run one at a time, handing the turn on in an order drawn from a seed.
///
/// A thread holds the turn from ``begin(_:)`` until it calls ``pass(stopped:)`` (which hands
/// it to a thread drawn among those waiting, perhaps itself, and waits to be drawn again) or
/// ``finish()``. The first turn is drawn once every thread has begun, so that which threads
/// were quicker to start never shows.
final class TurnTaking: @unchecked Sendable {
    let workers: Int
    private let condition = NSCondition()
    private var generator: SeededGenerator
    /// The threads waiting for a turn; guarded by `condition`.
    private var waiting: [Int] = []
    /// The thread whose turn it is.
    private var holder: Int?
    private var begun = 0

    init(seed: UInt64, workers: Int) {
        generator = SeededGenerator(seed: seed)
        self.workers = workers
    }

    /// Waits for the first turn of thread `worker`.
    func begin(_ worker: Int) {
        condition.lock()
        defer { condition.unlock() }
        waiting.append(worker)
        begun += 1
        if begun == workers { draw() }
        while holder != worker { condition.wait() }
    }

    /// Hands the turn on and waits for the next one.
    ///
    /// - Throws: ``SyncInterruption`` when `stopped` says so once the turn is back.
    func pass(stopped: () -> Bool) throws {
        condition.lock()
        guard let worker = holder else {
            condition.unlock()
            return
        }
        waiting.append(worker)
        draw()
        while holder != worker { condition.wait() }
        condition.unlock()
        if stopped() { throw SyncInterruption() }
    }

    /// Ends the calling thread's turns.
    func finish() {
        condition.lock()
        defer { condition.unlock() }
        holder = nil
        if !waiting.isEmpty { draw() }
    }

    private func draw() {
        waiting.sort()
        holder = waiting.remove(at: Int.random(in: 0..<waiting.count, using: &generator))
        condition.broadcast()
    }
}
