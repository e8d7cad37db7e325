import DocumentKit
import Foundation
import Testing

@MainActor
@Suite("UndoManager action names")
struct UndoManagerActionNameTests {
    @Test func menuTitlesWithoutActionNamesAreBare() {
        let manager = explicitUndoManager()
        #expect(manager.undoActionName == "")
        #expect(manager.redoActionName == "")
        #expect(manager.undoMenuItemTitle == "Undo")
        #expect(manager.redoMenuItemTitle == "Redo")
    }

    @Test func menuTitleForActionNameAddsTheName() {
        let manager = explicitUndoManager()
        #expect(manager.undoMenuTitle(forUndoActionName: "Typing") == "Undo Typing")
        #expect(manager.redoMenuTitle(forUndoActionName: "Typing") == "Redo Typing")
        #expect(manager.undoMenuTitle(forUndoActionName: "") == "Undo")
        #expect(manager.redoMenuTitle(forUndoActionName: "") == "Redo")
    }

    @Test func setActionNameNamesTheOpenGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "x"
        manager.setActionName("Typing")
        #expect(manager.undoActionName == "Typing")
        manager.endUndoGrouping()
        #expect(manager.undoActionName == "Typing")
        #expect(manager.undoMenuItemTitle == "Undo Typing")
    }

    @Test func setActionNameInANestedGroupNamesTheTopLevelGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "x"
        manager.grouped { manager.setActionName("Paste") }
        manager.endUndoGrouping()
        #expect(manager.undoActionName == "Paste")
    }

    @Test func setActionNameWithNoGroupOpenNamesTheLastGroup() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "one" }
        manager.grouped { note.text = "two" }
        manager.setActionName("Rename")
        #expect(manager.undoActionName == "Rename")
        manager.undo()
        #expect(manager.undoActionName == "")
    }

    @Test func undoingAGroupGivesTheRedoGroupItsName() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped {
            note.text = "one"
            manager.setActionName("First")
        }
        manager.grouped {
            note.text = "two"
            manager.setActionName("Second")
        }
        manager.undo()
        #expect(manager.redoActionName == "Second")
        #expect(manager.redoMenuItemTitle == "Redo Second")
        #expect(manager.undoActionName == "First")
        manager.redo()
        #expect(manager.undoActionName == "Second")
        #expect(manager.redoActionName == "")
    }

    @Test func setActionNameWhileUndoingRenamesTheRedoAction() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped {
            note.text = "x"
            manager.setActionName("Typing")
            manager.registerUndo(withTarget: note) { note in
                note.undoManager.setActionName("Retyping")
            }
        }
        manager.undo()
        #expect(manager.redoActionName == "Retyping")
    }

    @Test func aSubclassCanLocalizeMenuTitles() {
        final class FrenchUndoManager: UndoManager {
            override func undoMenuTitle(forUndoActionName actionName: String) -> String {
                actionName.isEmpty ? "Annuler" : "Annuler \(actionName)"
            }
        }
        let manager = FrenchUndoManager()
        manager.groupsByEvent = false
        let note = UndoNote(manager)
        manager.grouped {
            note.text = "x"
            manager.setActionName("la saisie")
        }
        #expect(manager.undoMenuItemTitle == "Annuler la saisie")
    }
}
