import Dispatch
import DocumentKit
import Foundation
import Testing

/// The call site of DESIGN.md's porting contract, as an iOS developer writes it.
@MainActor
final class PortedTextModel {
    let undoManager = UndoManager()
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.setActionName("Text Change")
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }
}

/// Waits until the main queue has run everything queued on it before this call.
private func nextMainQueueTurn() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async { continuation.resume() }
    }
}

@MainActor
@Suite("UndoManager grouping by event")
struct UndoManagerEventGroupingTests {
    @Test func groupsByEventIsOnByDefaultWithTheDefaultRunLoopMode() {
        let manager = UndoManager()
        #expect(manager.groupsByEvent)
        #expect(manager.runLoopModes == [.default])
    }

    @Test func portedCallSiteCompilesAndUndoes() async {
        let model = PortedTextModel()
        model.text = "hello"
        #expect(model.undoManager.undoMenuItemTitle == "Undo Text Change")
        model.undoManager.undo()
        #expect(model.text == "")
        #expect(model.undoManager.redoMenuItemTitle == "Redo Text Change")
        model.undoManager.redo()
        #expect(model.text == "hello")
    }

    @Test func registrationsInOneTurnCloseAsOneGroupAfterTheTurn() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        note.text = "a"
        note.text = "ab"
        #expect(manager.groupingLevel == 1)
        await nextMainQueueTurn()
        #expect(manager.groupingLevel == 0)
        #expect(manager.canUndo)
        manager.undo()
        #expect(note.text == "")
        #expect(!manager.canUndo)
    }

    @Test func theEventGroupClosesByTheNextTaskYield() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        note.text = "a"
        await Task.yield()
        #expect(manager.groupingLevel == 0)
    }

    @Test func eachTurnMakesItsOwnGroup() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        note.text = "a"
        note.text = "ab"
        await nextMainQueueTurn()
        note.text = "abc"
        note.text = "abcd"
        await nextMainQueueTurn()
        manager.undo()
        #expect(note.text == "ab")
        manager.undo()
        #expect(note.text == "")
    }

    @Test func eventGroupClosedByTheAppLeavesTheAppsNextGroupOpen() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        let log = UndoNotificationLog(manager)
        note.text = "a"
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        note.text = "ab"
        await nextMainQueueTurn()
        #expect(manager.groupingLevel == 1)
        manager.endUndoGrouping()
        #expect(log.recorded.filter { $0 == "DidCloseUndoGroup" }.count == 2)
        manager.undo()
        #expect(note.text == "a")
    }

    @Test func aNestedGroupLeftOpenKeepsTheEventGroupOpenUntilItCloses() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        note.text = "a"
        manager.beginUndoGrouping()
        note.text = "ab"
        await nextMainQueueTurn()
        #expect(manager.groupingLevel == 2)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        await nextMainQueueTurn()
        #expect(manager.groupingLevel == 0)
        manager.undo()
        #expect(note.text == "")
    }

    @Test func actionNameGivenBeforeTheFirstRegistrationNamesTheTurnsGroup() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        manager.setActionName("Typing")
        note.text = "a"
        await nextMainQueueTurn()
        #expect(manager.undoActionName == "Typing")
    }

    @Test func actionNameWithoutARegistrationIsForgottenAtTheEndOfTheTurn() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        let log = UndoNotificationLog(manager)
        manager.setActionName("Nothing")
        await nextMainQueueTurn()
        // No empty group was opened and closed for it, so observers counting changes see none.
        #expect(log.recorded.isEmpty)
        note.text = "a"
        await nextMainQueueTurn()
        #expect(manager.undoActionName == "")
    }

    @Test func undoInTheSameTurnClosesTheEventGroupAndTheLateCloseIsHarmless() async {
        let manager = UndoManager()
        let note = UndoNote(manager)
        note.text = "a"
        manager.undo()
        #expect(note.text == "")
        #expect(manager.groupingLevel == 0)
        await nextMainQueueTurn()
        #expect(manager.groupingLevel == 0)
        manager.redo()
        #expect(note.text == "a")
    }

    @Test func anUndoManagerReleasedWithAPendingCloseIsNotKeptAlive() async {
        weak var weakManager: UndoManager?
        do {
            let manager = UndoManager()
            weakManager = manager
            let note = UndoNote(manager)
            note.text = "a"
        }
        #expect(weakManager == nil)
        await nextMainQueueTurn()
    }

    @Test(arguments: ["undo-dispatch-main", "undo-runloop"])
    func eventLoopOfAChildProcessClosesEachTurnsGroup(command: String) throws {
        let outcome = try TestChild.run([command])
        #expect(outcome.reason == .exit, "\(outcome.standardError)")
        #expect(outcome.status == 0, "\(outcome.standardOutput)\(outcome.standardError)")
        let values = keyValues(outcome.standardOutput)
        #expect(values["turn1.groupingLevel"] == "1")
        #expect(values["turn2.groupingLevel"] == "0")
        #expect(values["turn2.canUndo"] == "true")
        #expect(values["turn2.groupingLevelAfterEdit"] == "1")
        #expect(values["turn3.groupingLevel"] == "0")
        // Two turns, two groups: "a" and "ab" were set in one turn and undo together.
        #expect(values["afterFirstUndo.text"] == "ab")
        #expect(values["afterSecondUndo.text"] == "")
        #expect(values["afterSecondUndo.canUndo"] == "false")
        #expect(values["afterRedo.text"] == "ab")
    }

    @Test(arguments: [
        ("register-without-group", "no open undo group while groupsByEvent is false"),
        ("end-without-begin", "endUndoGrouping() called with no open undo group"),
        ("undo-with-nested-group-open", "undo() called with nested undo groups open"),
        ("enable-without-disable", "without a matching disableUndoRegistration()"),
    ])
    func programmerErrorsStopWithAClearMessage(misuse: String, message: String) throws {
        let outcome = try TestChild.run(["undo-misuse", misuse])
        #expect(outcome.reason == .uncaughtSignal, "\(outcome.standardOutput)")
        #expect(outcome.standardError.contains(message), "\(outcome.standardError)")
    }
}
