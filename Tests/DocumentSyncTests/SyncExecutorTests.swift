import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// The executor of a pass's batches: the request window that adapts how many requests are in
/// flight, the concurrent threads it bounds, and the interleaved turns the simulation replays.
@Suite struct SyncExecutorTests {
    private func uploads(_ count: Int) -> [SyncAction] {
        (0..<count).map { .upload(RemotePath("f\($0).txt"), condition: .absent, note: nil) }
    }

    // MARK: - The request window

    @Test func theWindowWidensByOneForEachWidthOfAnswersAndStaysUnderTheMost() {
        var window = RequestWindow()
        #expect(window.width == 8)
        for _ in 0..<8 { window.succeeded() }
        #expect(window.width == 9)
        for _ in 0..<8 { window.succeeded() }
        #expect(window.width == 9, "nine answers are needed at nine")
        window.succeeded()
        #expect(window.width == 10)
        for _ in 0..<10_000 { window.succeeded() }
        #expect(window.width == RequestWindow.most)
    }

    @Test func aBurstOfTimeoutsHalvesTheWindowOnceAndLaterOnesHalveItAgain() {
        var window = RequestWindow()
        for _ in 0..<(8 + 9 + 10 + 11 + 12 + 13 + 14 + 15) { window.succeeded() }
        #expect(window.width == 16)
        // Sixteen in flight together, all timed out: one halving.
        let tickets = (0..<16).map { _ in window.started() }
        for ticket in tickets { window.congested(ticket) }
        #expect(window.width == 8)
        // A request started after the decrease that times out halves it again.
        let later = window.started()
        window.congested(later)
        #expect(window.width == 4)
        for _ in 0..<10 { window.congested(window.started()) }
        #expect(window.width == RequestWindow.least)
    }

    @Test func aRemotesCeilingBoundsTheWindowAndItsStart() {
        var window = RequestWindow(ceiling: 4)
        #expect(window.width == 4)
        for _ in 0..<100 { window.succeeded() }
        #expect(window.width == 4)
        #expect(RequestWindow(ceiling: 1000).ceiling == RequestWindow.most)
        #expect(RequestWindow(ceiling: 0).width == RequestWindow.least)
    }

    @Test func aConcurrentBatchKeepsNoMoreInFlightThanTheRemotesCeiling() throws {
        let state = Mutex((running: 0, most: 0))
        try BatchExecution(uploads(100), order: .concurrent) { _ in
            state.withLock {
                $0.running += 1
                $0.most = max($0.most, $0.running)
            }
            usleep(1_000)
            state.withLock { $0.running -= 1 }
            return .done
        }.run(window: SharedRequestWindow(ceiling: 3))
        #expect(state.withLock { $0.most } == 3)
    }

    // MARK: - Concurrent batches

    @Test func aConcurrentBatchRunsEveryActionOnceWithManyInFlightButNoMoreThanTheWindow() throws {
        let actions = uploads(200)
        let state = Mutex((running: 0, most: 0, ran: [RemotePath]()))
        let window = SharedRequestWindow()
        try BatchExecution(actions, order: .concurrent) { action in
            state.withLock {
                $0.running += 1
                $0.most = max($0.most, $0.running)
            }
            usleep(2_000)
            state.withLock {
                $0.running -= 1
                $0.ran.append(action.path)
            }
            return .done
        }.run(window: window)
        let (_, most, ran) = state.withLock { $0 }
        #expect(ran.sorted() == actions.map(\.path).sorted())
        #expect(most > 1, "one at a time")
        #expect(most <= RequestWindow.most)
        #expect(window.width > RequestWindow.start, "200 answers came back well")
    }

    @Test func aRemoteThatAsksForFewerRequestsNarrowsTheWindowAndTheBatchStillFinishes() throws {
        let actions = uploads(120)
        let state = Mutex((ran: 0, narrowest: RequestWindow.most))
        let window = SharedRequestWindow()
        try BatchExecution(actions, order: .concurrent) { _ in
            let width = window.width
            usleep(1_000)
            // The first sixty answers say "fewer, please".
            let throttle = state.withLock { state -> Bool in
                state.ran += 1
                state.narrowest = min(state.narrowest, width)
                return state.ran <= 60
            }
            return throttle ? .congested : .done
        }.run(window: window)
        let (ran, narrowest) = state.withLock { $0 }
        #expect(ran == 120)
        #expect(narrowest < RequestWindow.start, "the window never narrowed")
    }

    @Test func aCrashInOneActionStopsTheOthersAtTheirNextCheckpoint() throws {
        let actions = uploads(64)
        let started = Mutex(0)
        let finished = Mutex(0)
        var execution: BatchExecution!
        execution = BatchExecution(actions, order: .concurrent) { action in
            started.withLock { $0 += 1 }
            if action.path == RemotePath("f3.txt") { return .interrupted }
            usleep(5_000)
            do {
                try execution.checkpoint()
            } catch {
                return .interrupted
            }
            finished.withLock { $0 += 1 }
            return .done
        }
        #expect(throws: SyncInterruption.self) { try execution.run(window: SharedRequestWindow()) }
        #expect(started.withLock { $0 } < 64, "no action starts after the crash")
        #expect(finished.withLock { $0 } < started.withLock { $0 })
    }

    // MARK: - Interleaved batches

    /// The steps of a batch's actions, in the order the interleaved threads took them.
    private func interleaving(seed: UInt64, workers: Int) throws -> [String] {
        let steps = Mutex([String]())
        var execution: BatchExecution!
        execution = BatchExecution(uploads(6), order: .interleaved(seed: seed, workers: workers)) { action in
            for step in 0..<3 {
                steps.withLock { $0.append("\(action.path)#\(step)") }
                do {
                    try execution.checkpoint()
                } catch {
                    return .interrupted
                }
            }
            return .done
        }
        try execution.run(window: SharedRequestWindow())
        return steps.withLock { $0 }
    }

    @Test func anInterleavedBatchReplaysItsSeedAndOtherSeedsInterleaveOtherwise() throws {
        let first = try interleaving(seed: 7, workers: 4)
        #expect(first.count == 18)
        for _ in 0..<5 { #expect(try interleaving(seed: 7, workers: 4) == first) }
        let orders = try Set((0..<20).map { try interleaving(seed: $0, workers: 4) })
        #expect(orders.count > 10, "\(orders.count) orders from 20 seeds")
        // Steps of different actions interleave: not every action runs start to end alone.
        #expect(
            orders.contains { order in
                order.indices.dropFirst().contains {
                    order[$0].prefix(6) != order[$0 - 1].prefix(6) && !order[$0 - 1].hasSuffix("#2")
                }
            })
    }

    @Test func oneWorkerRunsTheActionsInTheirOrderOneAfterAnother() throws {
        let order = try interleaving(seed: 3, workers: 1)
        #expect(order == (0..<6).flatMap { action in (0..<3).map { "f\(action).txt#\($0)" } })
    }

    @Test func aCrashWhileTakingTurnsStopsEveryOtherActionAtItsNextTurn() throws {
        for seed in UInt64(0)..<20 {
            let steps = Mutex([String]())
            var execution: BatchExecution!
            execution = BatchExecution(uploads(6), order: .interleaved(seed: seed, workers: 3)) { action in
                for step in 0..<3 {
                    steps.withLock { $0.append("\(action.path)#\(step)") }
                    if steps.withLock({ $0.count }) == 5 { return .interrupted }
                    do {
                        try execution.checkpoint()
                    } catch {
                        return .interrupted
                    }
                }
                return .done
            }
            #expect(throws: SyncInterruption.self) { try execution.run(window: SharedRequestWindow()) }
            #expect(steps.withLock { $0.count } == 5, "seed \(seed): nothing ran after the crash")
        }
    }
}
