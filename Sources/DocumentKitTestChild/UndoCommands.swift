import Dispatch
import DocumentKit
import Foundation

/// Runs an UndoManager child command; returns false if `name` is not one.
///
/// - `undo-dispatch-main`: grouping by event under `dispatchMain()`, turns scheduled on the main queue.
/// - `undo-runloop`: grouping by event under `RunLoop.main.run()`, turns scheduled with timers.
/// - `undo-misuse KIND`: commits one programmer error; it should stop the process with a message.
///
/// The event-loop commands print `key=value` lines and exit by themselves.
func runUndoCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "undo-dispatch-main":
        startWatchdog()
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                EventGroupingProbe(nextTurn: { turn in
                    DispatchQueue.main.async { MainActor.assumeIsolated { turn() } }
                }).start()
            }
        }
        dispatchMain()
    case "undo-runloop":
        startWatchdog()
        // Timers fire in later run-loop iterations, after the main queue has been drained.
        _ = Timer.scheduledTimer(withTimeInterval: 0.01, repeats: false) { _ in
            MainActor.assumeIsolated {
                EventGroupingProbe(nextTurn: { turn in
                    _ = Timer.scheduledTimer(withTimeInterval: 0.05, repeats: false) { _ in
                        MainActor.assumeIsolated { turn() }
                    }
                }).start()
            }
        }
        RunLoop.main.run()
        print("error=run loop returned")
        exit(1)
    case "undo-misuse":
        MainActor.assumeIsolated { commitMisuse(arguments.first ?? "") }
        // Reaching here means the misuse was not caught; the test sees the line and status 0.
        print("misuse=not stopped")
        return true
    default:
        return false
    }
}

private func startWatchdog() {
    DispatchQueue.global().asyncAfter(deadline: .now() + 20) {
        print("error=timed out; the event group never closed or a turn never ran")
        exit(3)
    }
}

@MainActor
private final class ChildNote {
    let undoManager = UndoManager()
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }
}

/// Edits a note over three turns of the event loop and reports how the undo manager grouped them.
@MainActor
private final class EventGroupingProbe {
    typealias Turn = @MainActor () -> Void
    let nextTurn: @MainActor (@escaping Turn) -> Void
    let note = ChildNote()

    init(nextTurn: @escaping @MainActor (@escaping Turn) -> Void) {
        self.nextTurn = nextTurn
    }

    func report(_ key: String, _ value: Any) {
        print("\(key)=\(value)")
        fflush(nil)
    }

    func start() {
        note.text = "a"
        note.text = "ab"
        report("turn1.groupingLevel", note.undoManager.groupingLevel)
        nextTurn { self.second() }
    }

    func second() {
        report("turn2.groupingLevel", note.undoManager.groupingLevel)
        report("turn2.canUndo", note.undoManager.canUndo)
        note.text = "abc"
        report("turn2.groupingLevelAfterEdit", note.undoManager.groupingLevel)
        nextTurn { self.third() }
    }

    func third() {
        report("turn3.groupingLevel", note.undoManager.groupingLevel)
        note.undoManager.undo()
        report("afterFirstUndo.text", note.text)
        note.undoManager.undo()
        report("afterSecondUndo.text", note.text)
        report("afterSecondUndo.canUndo", note.undoManager.canUndo)
        note.undoManager.redo()
        report("afterRedo.text", note.text)
        exit(0)
    }
}

@MainActor
private func commitMisuse(_ kind: String) {
    let manager = UndoManager()
    let note = ChildNote()
    switch kind {
    case "register-without-group":
        manager.groupsByEvent = false
        manager.registerUndo(withTarget: note) { $0.text = "" }
    case "end-without-begin":
        manager.endUndoGrouping()
    case "undo-with-nested-group-open":
        manager.beginUndoGrouping()
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: note) { $0.text = "" }
        manager.undo()
    case "enable-without-disable":
        manager.enableUndoRegistration()
    default:
        print("error=unknown misuse \(kind)")
    }
}
