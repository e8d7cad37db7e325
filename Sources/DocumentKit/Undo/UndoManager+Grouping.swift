#if !canImport(ObjectiveC)
    import Dispatch
    import Foundation

    /// One registered undo action: what to call, and on which object.
    ///
    /// The handler lives in a generic subclass, ``TargetedUndoAction``, so that a registration
    /// costs one allocation and performing it needs no dynamic cast of the target.
    @MainActor @usableFromInline
    class UndoAction {
        // Weak so that an undo stack never keeps a document or model alive; an action whose
        // target has gone is skipped rather than called.
        weak var target: AnyObject?
        var isDiscardable = false

        @usableFromInline
        init(target: AnyObject) {
            self.target = target
        }

        /// Calls the handler with the target, if the target is still alive.
        func perform() {}
    }

    @MainActor @usableFromInline
    final class TargetedUndoAction<Target: AnyObject>: UndoAction {
        let handler: @MainActor (Target) -> Void

        @usableFromInline
        init(target: Target, handler: @escaping @MainActor (Target) -> Void) {
            self.handler = handler
            super.init(target: target)
        }

        override func perform() {
            // Only `init` sets `target`, to a `Target`, so the downcast cannot fail.
            if let target { handler(unsafeDowncast(target, to: Target.self)) }
        }
    }

    /// An undo group: actions and closed nested groups, in registration order.
    @MainActor
    final class UndoGroup {
        enum Entry {
            case action(UndoAction)
            case group(UndoGroup)
        }

        // The enclosing open group while this one is open; unused once it is closed.
        let parent: UndoGroup?
        var entries: [Entry] = []
        var actionName = ""

        init(parent: UndoGroup?) {
            self.parent = parent
        }

        var isEmpty: Bool { entries.isEmpty }

        /// True when the group has actions and all of them are discardable.
        var isDiscardable: Bool {
            var sawAction = false
            for entry in entries {
                switch entry {
                case .action(let action):
                    if !action.isDiscardable { return false }
                    sawAction = true
                case .group(let group):
                    if !group.isDiscardable { return false }
                    sawAction = true
                }
            }
            return sawAction
        }

        /// Performs the actions last-registered first, so that a group reverses as a whole.
        func perform() {
            for entry in entries.reversed() {
                switch entry {
                case .action(let action):
                    action.perform()
                case .group(let group):
                    group.perform()
                }
            }
        }

        /// Drops the actions aimed at `target`, and nested groups left empty by that.
        func removeActions(withTarget target: AnyObject) {
            entries = entries.compactMap { entry in
                switch entry {
                case .action(let action):
                    return action.target === target ? nil : entry
                case .group(let group):
                    group.removeActions(withTarget: target)
                    return group.isEmpty ? nil : entry
                }
            }
        }
    }

    extension UndoManager {
        /// Opens a group for a registration made with no group open, and arranges to close it when
        /// the current turn of the main event loop ends.
        ///
        /// The close is queued on the main dispatch queue, which is the main actor's executor on
        /// Linux. That queue is drained by `RunLoop.main.run()`, by `dispatchMain()` and by the main
        /// actor of an `async` main program, so one mechanism serves all three; `runLoopModes` is
        /// kept for source compatibility only. (`RunLoop.current.perform` is not used: under
        /// `dispatchMain()` main-queue blocks run on a worker thread whose run loop never runs.)
        func openEventGroup() {
            beginUndoGrouping()
            eventGroup = openGroup
            scheduleEventGroupClose()
        }

        func scheduleEventGroupClose() {
            guard !isEventGroupCloseScheduled else { return }
            isEventGroupCloseScheduled = true
            DispatchQueue.main.async { [weak self] in
                MainActor.assumeIsolated {
                    self?.closeEventGroup()
                }
            }
        }

        /// Closes the group opened by ``openEventGroup()`` if it is still the open top-level group.
        ///
        /// If the app closed it meanwhile, this does nothing. If the app left a nested group of its
        /// own open inside it, the event group stays open until ``endUndoGrouping()`` brings the
        /// level back to 1, which schedules this again: closing a group the app still relies on
        /// would break its pairing of begin and end.
        func closeEventGroup() {
            isEventGroupCloseScheduled = false
            pendingActionName = nil
            guard let group = eventGroup else { return }
            guard groupingDepth >= 1, topOpenGroup === group else {
                eventGroup = nil
                return
            }
            guard groupingDepth == 1, !isUndoing, !isRedoing else { return }
            eventGroup = nil
            endUndoGrouping()
        }
    }
#endif
