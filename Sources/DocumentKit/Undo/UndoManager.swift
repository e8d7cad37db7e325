#if !canImport(ObjectiveC)
    import Foundation

    /// A general-purpose recorder of operations for undo and redo, with Apple's API and semantics.
    ///
    /// Foundation on Linux has no `UndoManager`; DocumentKit provides it there under Apple's name
    /// (on Apple platforms Foundation's own class is used), so code that registers undo ports
    /// unchanged. You register a closure that reverts a change; `undo()` calls the closures of the
    /// last group, last-registered first, and the registrations they make while undoing become the
    /// redo group.
    ///
    /// Undo groups: by default (``groupsByEvent`` is `true`) a registration made with no group
    /// open opens one, and it closes by itself at the end of the current turn of the main event
    /// loop, so everything registered in one turn is undone together. On Linux the close is queued
    /// on the main dispatch queue, which `RunLoop.main.run()`, `dispatchMain()` and an `async` main
    /// program all drain. You can also group explicitly with ``beginUndoGrouping()`` and
    /// ``endUndoGrouping()``, and nest groups.
    ///
    /// Targets are held weakly: an action whose target has been deallocated is skipped.
    ///
    /// Programmer errors for which Apple raises `NSInternalInconsistencyException` (ending a group
    /// that is not open, calling ``undo()`` with a nested group open, registering with no group open
    /// while ``groupsByEvent`` is `false`, enabling registration more often than it was disabled,
    /// calling ``undo()`` or ``redo()`` from an undo or redo handler) stop the program with
    /// `preconditionFailure` and a message that names the mistake.
    ///
    /// For example:
    ///
    /// ```swift
    /// @MainActor final class Note {
    ///     let undoManager = UndoManager()
    ///     var text = "" {
    ///         didSet {
    ///             let old = oldValue
    ///             undoManager.setActionName("Typing")
    ///             undoManager.registerUndo(withTarget: self) { $0.text = old }
    ///         }
    ///     }
    /// }
    ///
    /// let note = Note()
    /// note.text = "hello"
    /// note.undoManager.undoMenuItemTitle  // "Undo Typing"
    /// note.undoManager.undo()             // note.text == ""
    /// note.undoManager.redo()             // note.text == "hello"
    /// ```
    ///
    /// Isolated to the main actor as Apple's is (`@MainActor class UndoManager`), and, as a class
    /// Swift imports from Objective-C, `@preconcurrency`: code in the Swift 5 language mode may
    /// register undo from a nonisolated model class, as it may against Apple's SDK; Swift 6 mode
    /// checks the isolation as it does there.
    @preconcurrency @MainActor
    open class UndoManager {
        private enum Activity {
            case idle
            case undoing
            case redoing
        }

        private var undoStack: [UndoGroup] = []
        private var redoStack: [UndoGroup] = []
        /// The innermost open group, whose parents are the enclosing open groups.
        var openGroup: UndoGroup?
        private var activity = Activity.idle
        private var registrationDisabledCount = 0
        private var lastRegisteredAction: UndoAction?
        /// The top-level group opened by a registration under ``groupsByEvent``, until it closes.
        var eventGroup: UndoGroup?
        var isEventGroupCloseScheduled = false
        /// A name given with no group open under ``groupsByEvent``, for the group this turn opens.
        var pendingActionName: String?
        /// The number of entries of the last non-empty group closed, capped: the capacity a group
        /// reserves at its first registration.
        private var entryCountHint = 1

        /// Creates an undo manager with empty stacks and no limit on the levels of undo.
        public init() {}

        // MARK: Registering

        /// Records a closure that undoes a change to `target`.
        ///
        /// Outside undo and redo, a registration clears the redo stack and goes to the open group;
        /// with no group open it opens one that closes at the end of the current event-loop turn
        /// (see ``groupsByEvent``). Registrations made while undoing form the redo group;
        /// registrations made while redoing form the next undo group. Nothing is recorded while
        /// registration is disabled.
        ///
        /// The undo manager holds `target` weakly; if `target` has been deallocated when the group is
        /// undone or redone, the action is skipped.
        ///
        /// - Parameters:
        ///   - target: The object the change was made to; it is passed back to `handler`.
        ///   - handler: A closure that reverts the change, typically by setting a property of its
        ///     argument back to an earlier value. Capture the target through the argument, not
        ///     strongly.
        /// - Precondition: A group is open, or ``groupsByEvent`` is `true`.
        @inlinable @preconcurrency
        public final func registerUndo<TargetType: AnyObject>(
            withTarget target: TargetType, handler: @escaping @MainActor (TargetType) -> Void
        ) {
            // Inlinable so that the caller's module specializes it: the action's generic class is
            // then resolved once per call site instead of looked up at run time per registration.
            guard prepareToRegister() else { return }
            append(TargetedUndoAction(target: target, handler: handler))
        }

        /// The part of a registration before the action is made: returns `false` while registration
        /// is disabled; otherwise opens an event group if none is open and clears the redo stack
        /// outside undo and redo.
        @usableFromInline
        func prepareToRegister() -> Bool {
            guard registrationDisabledCount == 0 else { return false }
            if openGroup == nil {
                precondition(
                    groupsByEvent,
                    "UndoManager: registerUndo(withTarget:handler:) called with no open undo group while "
                        + "groupsByEvent is false; call beginUndoGrouping() first")
                openEventGroup()
            }
            if activity == .idle, !redoStack.isEmpty {
                redoStack.removeAll()
            }
            return true
        }

        /// Adds `action` to the open group and makes it the one ``setActionIsDiscardable(_:)`` marks.
        @usableFromInline
        func append(_ action: UndoAction) {
            if let group = openGroup {
                if group.entries.capacity == 0 {
                    // Size the group like the last one closed, rather than growing it 1, 2, 4, 8...
                    group.entries.reserveCapacity(entryCountHint)
                }
                group.entries.append(.action(action))
            }
            lastRegisteredAction = action
        }

        /// Marks the most recently registered action as one that may be discarded.
        ///
        /// A group whose actions are all discardable is reported with
        /// ``NSUndoManagerGroupIsDiscardableKey`` set to `true` when it closes, and by
        /// ``undoActionIsDiscardable``; a document may skip saving for such changes (a change of
        /// selection, for instance).
        open func setActionIsDiscardable(_ discardable: Bool) {
            lastRegisteredAction?.isDiscardable = discardable
        }

        /// Disables the recording of undo operations; calls nest, each needing an enable.
        open func disableUndoRegistration() {
            registrationDisabledCount += 1
        }

        /// Balances one ``disableUndoRegistration()`` call.
        ///
        /// - Precondition: Registration is disabled.
        open func enableUndoRegistration() {
            precondition(
                registrationDisabledCount > 0,
                "UndoManager: enableUndoRegistration() called without a matching disableUndoRegistration()")
            registrationDisabledCount -= 1
        }

        /// Whether registrations are recorded, that is, every disable has been balanced by an enable.
        open var isUndoRegistrationEnabled: Bool { registrationDisabledCount == 0 }

        // MARK: Grouping

        /// Whether a registration made with no group open opens a group that closes by itself at the
        /// end of the current turn of the main event loop. Defaults to `true`.
        ///
        /// When `false`, you must open a group with ``beginUndoGrouping()`` before registering and
        /// close it before calling ``undo()``.
        open var groupsByEvent = true

        /// The run-loop modes in which Apple's undo manager closes event groups.
        ///
        /// Kept for source compatibility. On Linux the end-of-turn close is queued on the main
        /// dispatch queue, which every way of running the main event loop drains, so the modes have
        /// no effect. Defaults to `[.default]`.
        open var runLoopModes: [RunLoop.Mode] = [.default]

        /// The number of nested open groups: the redo group's level while undoing, 0 when none is
        /// open.
        open var groupingLevel: Int { groupingDepth }

        // The storage of `groupingLevel`. The undo manager's own bookkeeping reads this rather than
        // the overridable property, as Apple's reads its instance variable.
        var groupingDepth = 0

        /// Opens an undo group, nested in the open group if there is one.
        ///
        /// Posts `NSUndoManagerCheckpoint` unless an undo or redo is in progress, then
        /// `NSUndoManagerDidOpenUndoGroup`.
        open func beginUndoGrouping() {
            if activity == .idle {
                post(.NSUndoManagerCheckpoint)
            }
            openGroup = UndoGroup(parent: openGroup)
            groupingDepth += 1
            if groupingDepth == 1, activity == .idle, let name = pendingActionName {
                openGroup?.actionName = name
                pendingActionName = nil
            }
            post(.NSUndoManagerDidOpenUndoGroup)
        }

        /// Closes the innermost open undo group.
        ///
        /// A closed nested group becomes one entry of its parent; a closed top-level group goes on
        /// the undo stack (on the redo stack while undoing). Empty groups are dropped. Posts
        /// `NSUndoManagerCheckpoint`, `NSUndoManagerWillCloseUndoGroup` and, once the group is
        /// closed, `NSUndoManagerDidCloseUndoGroup`.
        ///
        /// - Precondition: A group is open.
        open func endUndoGrouping() {
            precondition(
                openGroup != nil,
                "UndoManager: endUndoGrouping() called with no open undo group")
            post(.NSUndoManagerCheckpoint)
            guard let group = openGroup else { return }
            let isDiscardable = group.isDiscardable
            post(.NSUndoManagerWillCloseUndoGroup, groupIsDiscardable: isDiscardable)
            // An observer of the notification may have ended the group itself.
            guard openGroup === group else { return }
            openGroup = group.parent
            groupingDepth -= 1
            if !group.isEmpty { entryCountHint = min(group.entries.count, 64) }
            if let parent = group.parent {
                if !group.isEmpty { parent.entries.append(.group(group)) }
                if parent === eventGroup, parent.parent == nil { scheduleEventGroupClose() }
            } else if !group.isEmpty {
                if activity == .undoing {
                    redoStack.append(group)
                } else {
                    undoStack.append(group)
                }
                trimToLevelsOfUndo()
            }
            post(.NSUndoManagerDidCloseUndoGroup, groupIsDiscardable: isDiscardable)
        }

        /// The maximum number of top-level groups kept on each stack; 0, the default, means no limit.
        ///
        /// When the limit is exceeded the oldest groups are dropped, including when it is lowered.
        open var levelsOfUndo = 0 {
            didSet { trimToLevelsOfUndo() }
        }

        private func trimToLevelsOfUndo() {
            guard levelsOfUndo > 0 else { return }
            if undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
            if redoStack.count > levelsOfUndo { redoStack.removeFirst(redoStack.count - levelsOfUndo) }
        }

        // MARK: Undoing and redoing

        /// Whether there is anything to undo: a group on the undo stack, or actions in the open group.
        open var canUndo: Bool {
            if !undoStack.isEmpty { return true }
            if activity == .idle, let top = topOpenGroup { return !top.isEmpty }
            return false
        }

        /// Whether there is a group on the redo stack.
        ///
        /// Posts `NSUndoManagerCheckpoint` first, as Apple's does, so that observers can register
        /// pending changes, which clear the redo stack.
        open var canRedo: Bool {
            post(.NSUndoManagerCheckpoint)
            return !redoStack.isEmpty
        }

        /// Whether the undo manager is performing an undo.
        open var isUndoing: Bool { activity == .undoing }

        /// Whether the undo manager is performing a redo.
        open var isRedoing: Bool { activity == .redoing }

        /// Closes the open top-level group if there is one, then undoes the last group.
        ///
        /// Equivalent to ``endUndoGrouping()`` when one group is open, followed by
        /// ``undoNestedGroup()``. Does nothing more when there is nothing to undo.
        ///
        /// - Precondition: At most one group is open, and no undo or redo is in progress.
        open func undo() {
            precondition(
                activity == .idle,
                "UndoManager: undo() called while an undo or redo is in progress")
            if groupingDepth == 1 {
                endUndoGrouping()
            }
            precondition(
                groupingDepth == 0,
                "UndoManager: undo() called with nested undo groups open; close them with "
                    + "endUndoGrouping() and use undoNestedGroup() to undo a nested group")
            undoNestedGroup()
        }

        /// Undoes the last group, recording the registrations it makes as one group on the redo stack.
        ///
        /// With a group open, the last group is the nested group most recently closed inside it;
        /// otherwise it is the top group of the undo stack. Posts `NSUndoManagerCheckpoint`, then,
        /// if there is a group to undo, `NSUndoManagerWillUndoChange` before performing it and
        /// `NSUndoManagerDidUndoChange` after. The redo group gets the undone group's action name.
        ///
        /// - Precondition: No undo or redo is in progress, and no action was registered in the open
        ///   group after its last nested group closed.
        open func undoNestedGroup() {
            precondition(
                activity == .idle,
                "UndoManager: undoNestedGroup() called while an undo or redo is in progress")
            post(.NSUndoManagerCheckpoint)
            let group: UndoGroup
            if let open = openGroup {
                guard let last = open.entries.last else { return }
                guard case .group(let nested) = last else {
                    preconditionFailure(
                        "UndoManager: undoNestedGroup() called with actions registered in the open "
                            + "group after its last nested group; close the group before undoing")
                }
                open.entries.removeLast()
                group = nested
            } else {
                guard let top = undoStack.popLast() else { return }
                group = top
            }
            post(.NSUndoManagerWillUndoChange)
            perform(group, as: .undoing)
            post(.NSUndoManagerDidUndoChange)
        }

        /// Performs the top group of the redo stack, recording its registrations as one undo group.
        ///
        /// Closes the open top-level group first, if there is one (a registration in it has already
        /// cleared the redo stack). Posts `NSUndoManagerCheckpoint`, then, if there is a group to
        /// redo, `NSUndoManagerWillRedoChange` before performing it and `NSUndoManagerDidRedoChange`
        /// after. The new undo group gets the redone group's action name; the rest of the redo stack
        /// is kept.
        ///
        /// - Precondition: At most one group is open, and no undo or redo is in progress.
        open func redo() {
            precondition(
                activity == .idle,
                "UndoManager: redo() called while an undo or redo is in progress")
            if groupingDepth == 1 {
                endUndoGrouping()
            }
            precondition(
                groupingDepth == 0,
                "UndoManager: redo() called with nested undo groups open; close them first")
            post(.NSUndoManagerCheckpoint)
            guard let group = redoStack.popLast() else { return }
            post(.NSUndoManagerWillRedoChange)
            perform(group, as: .redoing)
            post(.NSUndoManagerDidRedoChange)
        }

        /// Performs `group` in a top-level recording group of its own, set aside from any group the
        /// app has open, so that the inverse lands on the right stack as one group.
        ///
        /// The recording group is the undo manager's own: opening and closing it posts no group
        /// notifications, as Apple documents for `undoNestedGroup()` and `redo()` (only the
        /// checkpoint and the will/did undo or redo change). Groups a handler opens itself post
        /// as usual.
        private func perform(_ group: UndoGroup, as performing: Activity) {
            let savedOpenGroup = openGroup
            let savedLevel = groupingDepth
            let recording = UndoGroup(parent: nil)
            recording.actionName = group.actionName
            openGroup = recording
            groupingDepth = 1
            activity = performing
            group.perform()
            // A handler may have left groups open; close them so the inverse stays one group.
            while groupingDepth > 1 {
                endUndoGrouping()
            }
            // A handler that ended more groups than it began has already closed the recording group.
            if openGroup === recording, !recording.isEmpty {
                if performing == .undoing {
                    redoStack.append(recording)
                } else {
                    undoStack.append(recording)
                }
                trimToLevelsOfUndo()
            }
            activity = .idle
            openGroup = savedOpenGroup
            groupingDepth = savedLevel
        }

        // MARK: Action names

        /// The outermost open group, which action names and the open-group checks refer to.
        var topOpenGroup: UndoGroup? {
            var group = openGroup
            while let parent = group?.parent { group = parent }
            return group
        }

        /// The group that `undo()` would undo now.
        private var currentUndoGroup: UndoGroup? {
            if activity == .idle, let top = topOpenGroup, !top.isEmpty || !top.actionName.isEmpty {
                return top
            }
            return undoStack.last
        }

        /// Names the action of the open group, or of the last group if none is open.
        ///
        /// With no group open and ``groupsByEvent`` on, the name is kept for the group that the next
        /// registration of the current event-loop turn opens, so that naming before registering
        /// works as on Apple platforms; it is forgotten at the end of the turn. While undoing or
        /// redoing, this names the group being recorded, that is, the redo (or undo) group; it
        /// already carries the performed group's name.
        ///
        /// - Parameter actionName: The name shown after "Undo" or "Redo" in menu titles.
        open func setActionName(_ actionName: String) {
            if let top = topOpenGroup {
                top.actionName = actionName
            } else if groupsByEvent, activity == .idle {
                pendingActionName = actionName
                scheduleEventGroupClose()
            } else {
                undoStack.last?.actionName = actionName
            }
        }

        /// The name of the action that ``undo()`` would undo, or an empty string.
        open var undoActionName: String { currentUndoGroup?.actionName ?? "" }

        /// The name of the action that ``redo()`` would redo, or an empty string.
        open var redoActionName: String { redoStack.last?.actionName ?? "" }

        /// The title of an Undo menu item for the current undo action, for example "Undo Typing".
        open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }

        /// The title of a Redo menu item for the current redo action, for example "Redo Typing".
        open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

        /// The Undo menu title for an action name: "Undo" alone for an empty name.
        ///
        /// Override to localize.
        ///
        /// - Parameter actionName: The action name, as given to ``setActionName(_:)``.
        open func undoMenuTitle(forUndoActionName actionName: String) -> String {
            actionName.isEmpty ? "Undo" : "Undo \(actionName)"
        }

        /// The Redo menu title for an action name: "Redo" alone for an empty name.
        ///
        /// Override to localize.
        ///
        /// - Parameter actionName: The action name, as given to ``setActionName(_:)``.
        open func redoMenuTitle(forUndoActionName actionName: String) -> String {
            actionName.isEmpty ? "Redo" : "Redo \(actionName)"
        }

        /// Whether the group that ``undo()`` would undo has only discardable actions.
        open var undoActionIsDiscardable: Bool { currentUndoGroup?.isDiscardable ?? false }

        /// Whether the group that ``redo()`` would redo has only discardable actions.
        open var redoActionIsDiscardable: Bool { redoStack.last?.isDiscardable ?? false }

        // MARK: Clearing

        /// Empties both stacks, closes open groups without posting, and re-enables registration.
        open func removeAllActions() {
            undoStack.removeAll()
            redoStack.removeAll()
            lastRegisteredAction = nil
            pendingActionName = nil
            registrationDisabledCount = 0
            if activity == .idle {
                openGroup = nil
                groupingDepth = 0
                eventGroup = nil
            } else {
                // The recording group of the undo or redo in progress must stay open for it to end.
                var group = openGroup
                while let open = group {
                    open.entries.removeAll()
                    group = open.parent
                }
            }
        }

        /// Removes the actions aimed at `target` from both stacks and the open groups.
        ///
        /// Groups left empty on the stacks are dropped. Call this when `target` goes away for good,
        /// for example when a document closes.
        ///
        /// - Parameter target: The object whose actions to remove.
        open func removeAllActions(withTarget target: AnyObject) {
            for group in undoStack + redoStack {
                group.removeActions(withTarget: target)
            }
            undoStack.removeAll { $0.isEmpty }
            redoStack.removeAll { $0.isEmpty }
            var group = openGroup
            while let open = group {
                open.removeActions(withTarget: target)
                group = open.parent
            }
            if let last = lastRegisteredAction, last.target === target {
                lastRegisteredAction = nil
            }
        }
    }
#endif
