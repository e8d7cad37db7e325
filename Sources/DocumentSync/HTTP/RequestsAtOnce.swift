import Foundation
import Synchronization

/// Requests that do not depend on one another, made several at a time on threads of their
/// own (the remotes' requests block their thread until the answer is in).
enum RequestsAtOnce {
    /// Calls `body` with each of `items`, on up to `width` threads at once, and returns once
    /// every call has returned.
    ///
    /// The first error stops the items not started yet and is thrown once the calls already
    /// made have returned: a caller never goes on while a request of its own still runs.
    static func forEach<Item: Sendable>(
        _ items: [Item], width: Int, name: String, _ body: @escaping @Sendable (Item) throws -> Void
    ) throws {
        let threads = min(max(1, width), items.count)
        if threads <= 1 {
            for item in items { try body(item) }
            return
        }
        let work = SharedWork(items)
        let finished = DispatchGroup()
        for worker in 0..<threads {
            finished.enter()
            let thread = Thread {
                while let item = work.next() {
                    do {
                        try body(item)
                    } catch {
                        work.fail(error)
                    }
                }
                finished.leave()
            }
            thread.name = "\(name) \(worker)"
            thread.start()
        }
        finished.wait()
        if let error = work.failure { throw error }
    }

    /// The items not taken yet, and the first error.
    private final class SharedWork<Item: Sendable>: Sendable {
        private struct State {
            var items: [Item]
            var next = 0
            var failure: (any Error)?
        }
        private let state: Mutex<State>

        init(_ items: [Item]) { state = Mutex(State(items: items)) }

        /// The next item to work on; nil when none is left or a call failed.
        func next() -> Item? {
            state.withLock { state in
                guard state.failure == nil, state.next < state.items.count else { return nil }
                defer { state.next += 1 }
                return state.items[state.next]
            }
        }

        func fail(_ error: any Error) {
            state.withLock { state in
                if state.failure == nil { state.failure = error }
            }
        }

        var failure: (any Error)? { state.withLock { $0.failure } }
    }
}
