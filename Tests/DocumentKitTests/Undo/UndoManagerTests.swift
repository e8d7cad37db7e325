import DocumentKit
import Foundation
import Testing

@MainActor
@Suite("UndoManager stacks")
struct UndoManagerTests {
    @Test func undoRestoresAndRedoReapplies() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "hello" }
        #expect(manager.canUndo)
        #expect(!manager.canRedo)

        manager.undo()
        #expect(note.text == "")
        #expect(!manager.canUndo)
        #expect(manager.canRedo)

        manager.redo()
        #expect(note.text == "hello")
        #expect(manager.canUndo)
        #expect(!manager.canRedo)
    }

    @Test func undoCallsActionsOfAGroupLastRegisteredFirst() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped {
            note.text = "a"
            note.text = "ab"
            note.text = "abc"
        }
        manager.undo()
        // In registration order the last action to run would set "ab".
        #expect(note.text == "")
        manager.redo()
        #expect(note.text == "abc")
    }

    @Test func groupsUndoOneAtATimeNewestFirst() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.grouped { note.text = "two" }
        manager.undo()
        #expect(note.text == "one")
        manager.undo()
        #expect(note.text == "")
        manager.redo()
        #expect(note.text == "one")
        manager.redo()
        #expect(note.text == "two")
    }

    @Test func registrationsDuringUndoGoToTheRedoStackAsOneGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        var isUndoingInHandler = false
        manager.grouped {
            note.text = "x"
            manager.registerUndo(withTarget: note) { _ in isUndoingInHandler = manager.isUndoing }
        }
        manager.undo()
        #expect(isUndoingInHandler)
        #expect(!manager.isUndoing)
        #expect(!manager.canUndo)
        #expect(manager.canRedo)
        manager.redo()
        #expect(note.text == "x")
        // One redo brought the whole group back: nothing left to redo.
        #expect(!manager.canRedo)
    }

    @Test func registrationsDuringRedoGoToTheUndoStackAndKeepTheRestOfRedo() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.grouped { note.text = "two" }
        manager.undo()
        manager.undo()
        var isRedoingInHandler = false
        manager.grouped {
            manager.registerUndo(withTarget: note) { _ in isRedoingInHandler = manager.isRedoing }
        }
        // That registration cleared redo; start again with a handler that observes the redo.
        manager.removeAllActions()
        manager.grouped {
            note.text = "one"
            manager.registerUndo(withTarget: note) { note in
                note.undoManager.registerUndo(withTarget: note) { _ in
                    isRedoingInHandler = manager.isRedoing
                }
            }
        }
        manager.grouped { note.text = "two" }
        manager.undo()
        manager.undo()
        #expect(note.text == "")
        manager.redo()
        #expect(isRedoingInHandler)
        #expect(!manager.isRedoing)
        #expect(note.text == "one")
        #expect(manager.canRedo)
        manager.redo()
        #expect(note.text == "two")
        manager.undo()
        manager.undo()
        #expect(note.text == "")
    }

    @Test func newRegistrationClearsTheRedoStack() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.undo()
        #expect(manager.canRedo)
        manager.grouped { note.text = "other" }
        #expect(!manager.canRedo)
        manager.redo()
        #expect(note.text == "other")
    }

    @Test func undoWithNothingToUndoDoesNothing() {
        let manager = explicitUndoManager()
        manager.undo()
        manager.redo()
        #expect(!manager.canUndo)
        #expect(!manager.canRedo)
    }

    @Test func emptyGroupsAreNotUndoable() {
        let manager = explicitUndoManager()
        manager.grouped {}
        #expect(!manager.canUndo)
        #expect(manager.groupingLevel == 0)
    }

    @Test func undoClosesTheOpenTopLevelGroupFirst() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "a"
        note.text = "ab"
        #expect(manager.groupingLevel == 1)
        manager.undo()
        #expect(manager.groupingLevel == 0)
        #expect(note.text == "")
        manager.redo()
        #expect(note.text == "ab")
    }

    @Test func nestedGroupsUndoWithTheirTopLevelGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "a"
        manager.beginUndoGrouping()
        #expect(manager.groupingLevel == 2)
        note.text = "ab"
        manager.endUndoGrouping()
        note.text = "abc"
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 0)
        manager.undo()
        #expect(note.text == "")
        #expect(!manager.canUndo)
        manager.redo()
        #expect(note.text == "abc")
    }

    @Test func undoNestedGroupUndoesOnlyTheLastNestedGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "a"
        manager.grouped { note.text = "ab" }
        manager.undoNestedGroup()
        #expect(note.text == "a")
        #expect(manager.groupingLevel == 1)
        #expect(manager.canRedo)
        manager.endUndoGrouping()
        // The outer group still holds the first change.
        manager.undo()
        #expect(note.text == "")
    }

    @Test func undoNestedGroupWithNoGroupOpenUndoesTheTopGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.grouped { note.text = "two" }
        manager.undoNestedGroup()
        #expect(note.text == "one")
        #expect(manager.canRedo)
    }

    @Test func groupingLevelCountsTheRedoGroupWhileUndoing() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        var levelInHandler = -1
        manager.grouped {
            manager.registerUndo(withTarget: note) { _ in levelInHandler = manager.groupingLevel }
        }
        manager.undo()
        #expect(levelInHandler == 1)
        #expect(manager.groupingLevel == 0)
    }

    @Test(arguments: [1, 2, 3])
    func levelsOfUndoDropsTheOldestGroups(levels: Int) {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.levelsOfUndo = levels
        for value in ["1", "2", "3", "4", "5"] {
            manager.grouped { note.text = value }
        }
        var undone = 0
        while manager.canUndo {
            manager.undo()
            undone += 1
        }
        #expect(undone == levels)
        #expect(note.text == String(5 - levels))
    }

    @Test func loweringLevelsOfUndoDropsTheOldestGroupsAlreadyRecorded() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        for value in ["1", "2", "3", "4"] {
            manager.grouped { note.text = value }
        }
        manager.levelsOfUndo = 2
        manager.undo()
        manager.undo()
        #expect(note.text == "2")
        #expect(!manager.canUndo)
    }

    @Test func zeroLevelsOfUndoMeansUnlimited() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        #expect(manager.levelsOfUndo == 0)
        for value in 1...200 {
            manager.grouped { note.text = String(value) }
        }
        for _ in 1...200 { manager.undo() }
        #expect(note.text == "")
    }

    @Test func disablingRegistrationNests() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        manager.enableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled)
        manager.grouped { note.text = "ignored" }
        #expect(!manager.canUndo)
        manager.enableUndoRegistration()
        #expect(manager.isUndoRegistrationEnabled)
        manager.grouped { note.text = "recorded" }
        manager.undo()
        #expect(note.text == "ignored")
    }

    @Test func registeringWhileDisabledDoesNotClearRedo() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.undo()
        manager.disableUndoRegistration()
        manager.grouped { note.text = "loaded" }
        manager.enableUndoRegistration()
        #expect(manager.canRedo)
    }

    @Test func removeAllActionsEmptiesBothStacksAndReenablesRegistration() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.grouped { note.text = "two" }
        manager.undo()
        manager.disableUndoRegistration()
        manager.beginUndoGrouping()
        manager.removeAllActions()
        #expect(!manager.canUndo)
        #expect(!manager.canRedo)
        #expect(manager.groupingLevel == 0)
        #expect(manager.isUndoRegistrationEnabled)
    }

    @Test func removeAllActionsWithTargetKeepsOtherTargetsActions() {
        let manager = explicitUndoManager()
        let kept = UndoNote(manager)
        let removed = UndoNote(manager)
        manager.grouped {
            kept.text = "k1"
            removed.text = "r1"
        }
        manager.grouped { removed.text = "r2" }
        manager.grouped { kept.text = "k2" }
        manager.undo()  // kept back to "k1"; its redo is on the redo stack
        manager.removeAllActions(withTarget: removed)
        manager.removeAllActions(withTarget: kept)
        #expect(!manager.canRedo)
        #expect(!manager.canUndo)

        manager.grouped {
            kept.text = "k3"
            removed.text = "r3"
        }
        manager.grouped { removed.text = "r4" }
        manager.removeAllActions(withTarget: removed)
        // The group of only "r4" is gone, so one undo reaches the mixed group.
        manager.undo()
        #expect(kept.text == "k1")
        #expect(removed.text == "r4")
        #expect(!manager.canUndo)
    }

    @Test func removeAllActionsWithTargetReachesNestedAndOpenGroups() {
        let manager = explicitUndoManager()
        let kept = UndoNote(manager)
        let removed = UndoNote(manager)
        manager.beginUndoGrouping()
        kept.text = "k"
        manager.grouped { removed.text = "r" }
        removed.text = "rr"
        manager.removeAllActions(withTarget: removed)
        manager.endUndoGrouping()
        manager.undo()
        #expect(kept.text == "")
        #expect(removed.text == "rr")
    }

    @Test func actionsOfADeallocatedTargetAreSkipped() {
        let manager = explicitUndoManager()
        let survivor = UndoNote(manager)
        var calls = 0
        do {
            let transient = UndoNote(manager)
            manager.grouped {
                survivor.text = "s"
                manager.registerUndo(withTarget: transient) { _ in calls += 1 }
            }
        }
        manager.undo()
        #expect(calls == 0)
        #expect(survivor.text == "")
    }

    @Test func theUndoStackDoesNotKeepTargetsAlive() {
        let manager = explicitUndoManager()
        weak var weakNote: UndoNote?
        do {
            let note = UndoNote(manager)
            weakNote = note
            manager.grouped { note.text = "x" }
        }
        #expect(weakNote == nil)
        manager.undo()
        manager.redo()
    }

    @Test func discardableActionsMakeADiscardableGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped {
            note.text = "selection"
            manager.setActionIsDiscardable(true)
        }
        #expect(manager.undoActionIsDiscardable)
        manager.grouped {
            note.text = "selection 2"
            manager.setActionIsDiscardable(true)
            note.text = "real edit"
        }
        #expect(!manager.undoActionIsDiscardable)
        manager.undo()
        #expect(!manager.redoActionIsDiscardable)
    }
}
