import Foundation

extension SyncJournal {
    /// Runs `body` in a transaction it may share with the bodies other threads hand in at the
    /// same moment: one commit for all of them, where each alone would have had its own (the
    /// transfers of a pass record their intents and outcomes from many threads at once).
    ///
    /// For the caller it is ``transaction(_:)``: `body`'s changes are committed when this
    /// returns, so what the caller does next comes after them (an intent is recorded before
    /// the remote write it announces), and rolled back when `body` throws, which this throws
    /// too. Each body runs in a savepoint of its own, so one that throws takes back only its
    /// own changes; a commit that fails fails every body it held. `body` may run on another
    /// thread (the one committing), never at the same time as another body: it must only use
    /// the transaction it is given, and take no lock the caller may hold.
    ///
    /// - Parameter recordsOutcome: False for a body that only begins intents: a group of such
    ///   bodies commits without the flush of ``flushBeforeRecording(_:)``.
    /// - Throws: ``SyncJournalError``, or what `body` throws.
    package func transactionTogether<T>(recordsOutcome: Bool = true, _ body: (Transaction) throws -> T) throws
        -> T
    {
        try withoutActuallyEscaping(body) { body in
            var outcome: Result<T, any Error>?
            let work = GroupedWork(recordsOutcome: recordsOutcome) { transaction in
                outcome = Result { try body(transaction) }
                if case .failure = outcome { return false }
                return true
            }
            // The closure runs (on this thread or the committing one) before `perform`
            // returns, and never after: it does not outlive this call.
            grouped.perform(work) { group in commit(group) }
            if let failure = work.failure { throw failure }
            guard let outcome else {
                throw SyncJournalError.invalidRow(url, path: "", detail: "a grouped transaction did not run")
            }
            return try outcome.get()
        }
    }

    /// Runs every one of `bodies` in one transaction, each in a savepoint of its own: one that
    /// throws takes back only its own changes, and its error is its entry of the result (nil
    /// for the ones that went well).
    ///
    /// - Throws: ``SyncJournalError`` when the transaction cannot be committed (then none is),
    ///   or what the flush of ``flushBeforeRecording(_:)`` throws (then none runs).
    package func transaction(each bodies: [(Transaction) throws -> Void]) throws -> [(any Error)?] {
        try transaction { transaction in
            try bodies.map { body in
                try transaction.connection.execute("SAVEPOINT each")
                do {
                    try body(transaction)
                    try transaction.connection.execute("RELEASE each")
                    return nil
                } catch {
                    try transaction.connection.execute("ROLLBACK TO each")
                    try transaction.connection.execute("RELEASE each")
                    return error
                }
            }
        }
    }

    /// Commits the bodies of `group` in one transaction, each in a savepoint; a commit that
    /// fails is every body's failure.
    private func commit(_ group: [GroupedWork]) {
        do {
            try transaction(recordsOutcomes: group.contains { $0.recordsOutcome }) { transaction in
                for work in group {
                    try transaction.connection.execute("SAVEPOINT together")
                    if work.run(transaction) {
                        try transaction.connection.execute("RELEASE together")
                    } else {
                        try transaction.connection.execute("ROLLBACK TO together")
                        try transaction.connection.execute("RELEASE together")
                    }
                }
            }
            groupedCommits.add(1, ordering: .relaxed)
        } catch {
            for work in group { work.failure = error }
        }
    }
}

/// A body handed to ``SyncJournal/transactionTogether(_:)``: run once by whichever thread
/// commits its group, while the thread that handed it in waits.
final class GroupedWork: @unchecked Sendable {
    /// Runs the body; false when it threw (its outcome is kept by the closure).
    let run: (SyncJournal.Transaction) -> Bool
    /// Whether the body may record an outcome (not only begin intents).
    let recordsOutcome: Bool
    /// Set once the group's commit is done (under ``GroupCommit``'s lock).
    var isDone = false
    /// The commit's failure, when the group could not be committed.
    var failure: (any Error)?

    init(recordsOutcome: Bool = true, _ run: @escaping (SyncJournal.Transaction) -> Bool) {
        self.recordsOutcome = recordsOutcome
        self.run = run
    }
}

/// Group commit: the first thread to hand in work while no commit runs commits everything
/// handed in so far; threads that hand in work meanwhile wait, and the next commit (made by
/// one of them) takes all of theirs at once.
final class GroupCommit: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [GroupedWork] = []
    private var isCommitting = false

    /// Returns once `work` is committed (or its commit failed).
    func perform(_ work: GroupedWork, commit: ([GroupedWork]) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        waiting.append(work)
        while !work.isDone {
            if isCommitting {
                condition.wait()
                continue
            }
            isCommitting = true
            let group = waiting
            waiting.removeAll()
            condition.unlock()
            commit(group)
            condition.lock()
            for member in group { member.isDone = true }
            isCommitting = false
            condition.broadcast()
        }
    }
}
