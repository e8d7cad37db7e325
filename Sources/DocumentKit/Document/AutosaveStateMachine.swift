/// When a dirty document should be saved: after a quiet spell with no edits, but never
/// later than a maximum delay after its first unsaved change, so continuous typing is saved too.
///
/// Times are offsets on the document's ``AutosaveClock``. The machine does no I/O; the
/// document performs the actions it returns.
struct AutosaveStateMachine {
    var quietDelay: Duration
    var maximumDelay: Duration

    /// When the oldest unsaved change was made, if any is unsaved.
    private(set) var firstUnsavedChange: Duration?
    /// When the newest change was made.
    private(set) var lastChange: Duration?
    private(set) var isSaving = false

    enum Action: Equatable {
        /// Nothing to do now.
        case none
        /// Wait until this time, then ask again with ``timerFired(at:)``.
        case waitUntil(Duration)
        /// Save now.
        case save
    }

    init(quietDelay: Duration, maximumDelay: Duration) {
        self.quietDelay = quietDelay
        self.maximumDelay = maximumDelay
    }

    /// The time a save is due, if one is.
    var deadline: Duration? {
        guard let firstUnsavedChange, let lastChange else { return nil }
        return min(lastChange + quietDelay, firstUnsavedChange + maximumDelay)
    }

    /// The document changed and is dirty.
    mutating func changed(at now: Duration) -> Action {
        if firstUnsavedChange == nil { firstUnsavedChange = now }
        lastChange = now
        return isSaving ? .none : deadline.map(Action.waitUntil) ?? .none
    }

    /// The document's changes were all saved or discarded.
    mutating func becameClean() {
        firstUnsavedChange = nil
        lastChange = nil
    }

    /// The wait for ``deadline`` ended (perhaps early, or for a deadline that moved since).
    mutating func timerFired(at now: Duration) -> Action {
        guard !isSaving, let deadline else { return .none }
        if now >= deadline {
            isSaving = true
            return .save
        }
        return .waitUntil(deadline)
    }

    /// A save started by other means (an explicit save, close) is running.
    mutating func saveStarted() { isSaving = true }

    /// A save ended. If it did not leave the document clean (it failed, or edits arrived
    /// meanwhile), the next save is timed from now, counting the edits made during it.
    mutating func saveFinished(at now: Duration, stillDirty: Bool) -> Action {
        isSaving = false
        guard stillDirty else {
            becameClean()
            return .none
        }
        // Time the retry from the end of this save: failing saves must not spin.
        firstUnsavedChange = now
        if lastChange.map({ $0 < now }) ?? true { lastChange = now }
        return deadline.map(Action.waitUntil) ?? .none
    }
}
