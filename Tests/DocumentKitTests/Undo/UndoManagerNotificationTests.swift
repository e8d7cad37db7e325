import DocumentKit
import Foundation
import Testing

@MainActor
@Suite("UndoManager notifications")
struct UndoManagerNotificationTests {
    @Test func notificationNamesAreApplesUnderBothSpellings() {
        #expect(UndoManager.checkpointNotification == .NSUndoManagerCheckpoint)
        #expect(UndoManager.didOpenUndoGroupNotification == .NSUndoManagerDidOpenUndoGroup)
        #expect(UndoManager.willCloseUndoGroupNotification == .NSUndoManagerWillCloseUndoGroup)
        #expect(UndoManager.didCloseUndoGroupNotification == .NSUndoManagerDidCloseUndoGroup)
        #expect(UndoManager.willUndoChangeNotification == .NSUndoManagerWillUndoChange)
        #expect(UndoManager.didUndoChangeNotification == .NSUndoManagerDidUndoChange)
        #expect(UndoManager.willRedoChangeNotification == .NSUndoManagerWillRedoChange)
        #expect(UndoManager.didRedoChangeNotification == .NSUndoManagerDidRedoChange)
        #expect(Notification.Name.NSUndoManagerCheckpoint.rawValue == "NSUndoManagerCheckpointNotification")
        #expect(
            Notification.Name.NSUndoManagerDidCloseUndoGroup.rawValue
                == "NSUndoManagerDidCloseUndoGroupNotification")
        #expect(Set(UndoNotificationLog.names.map(\.rawValue)).count == 8)
    }

    @Test func beginUndoGroupingPostsCheckpointThenDidOpen() {
        let manager = explicitUndoManager()
        let log = UndoNotificationLog(manager)
        manager.beginUndoGrouping()
        #expect(log.recorded == ["Checkpoint", "DidOpenUndoGroup"])
    }

    @Test func endUndoGroupingPostsCheckpointWillCloseDidClose() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "x"
        let log = UndoNotificationLog(manager)
        manager.endUndoGrouping()
        #expect(log.recorded == ["Checkpoint", "WillCloseUndoGroup", "DidCloseUndoGroup"])
    }

    @Test func didCloseIsPostedWithTheGroupAlreadyUndoable() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        let canUndoAtDidClose = UndoTestBox<Bool?>(nil)
        let token = NotificationCenter.default.addObserver(
            forName: .NSUndoManagerDidCloseUndoGroup, object: nil, queue: nil
        ) { notification in
            guard notification.object as AnyObject? === manager else { return }
            MainActor.assumeIsolated {
                canUndoAtDidClose.value = manager.canUndo && manager.groupingLevel == 0
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        manager.grouped { note.text = "x" }
        #expect(canUndoAtDidClose.value == true)
    }

    @Test func closeNotificationsSayWhetherTheGroupIsDiscardable() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        let log = UndoNotificationLog(manager)
        manager.grouped {
            note.text = "selection"
            manager.setActionIsDiscardable(true)
        }
        manager.grouped { note.text = "edit" }
        let closes = log.entries.filter { $0.name == "DidCloseUndoGroup" }.map(\.groupIsDiscardable)
        #expect(closes == [true, false])
        let willCloses = log.entries.filter { $0.name == "WillCloseUndoGroup" }.map(\.groupIsDiscardable)
        #expect(willCloses == [true, false])
    }

    @Test func undoPostsCheckpointWillUndoAndDidUndoAroundTheChange() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "x" }
        let log = UndoNotificationLog(manager)
        manager.undo()
        // Apple documents exactly these three for undoNestedGroup(); the redo group the undo
        // records is the manager's own and posts no group notifications.
        #expect(log.recorded == ["Checkpoint", "WillUndoChange", "DidUndoChange"])
        #expect(manager.canRedo)
    }

    @Test func undoWithAnOpenGroupClosesItBeforeWillUndo() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        note.text = "x"
        let log = UndoNotificationLog(manager)
        manager.undo()
        #expect(
            log.recorded == [
                "Checkpoint", "WillCloseUndoGroup", "DidCloseUndoGroup", "Checkpoint", "WillUndoChange",
                "DidUndoChange",
            ])
    }

    @Test func redoPostsCheckpointWillRedoAndDidRedoAroundTheChange() {
        let manager = explicitUndoManager()
        let note = UndoNote(manager)
        manager.grouped { note.text = "x" }
        manager.undo()
        let log = UndoNotificationLog(manager)
        manager.redo()
        #expect(log.recorded == ["Checkpoint", "WillRedoChange", "DidRedoChange"])
        #expect(manager.canUndo)
    }

    @Test func undoAndRedoWithNothingToDoPostOnlyACheckpoint() {
        let manager = explicitUndoManager()
        let log = UndoNotificationLog(manager)
        manager.undo()
        #expect(log.recorded == ["Checkpoint"])
        log.clear()
        manager.redo()
        #expect(log.recorded == ["Checkpoint"])
    }

    @Test func canRedoPostsACheckpoint() {
        let manager = explicitUndoManager()
        let log = UndoNotificationLog(manager)
        _ = manager.canRedo
        #expect(log.recorded == ["Checkpoint"])
    }

    @Test func notificationsComeFromTheirOwnManagerOnly() {
        let manager = explicitUndoManager()
        let other = explicitUndoManager()
        let log = UndoNotificationLog(manager)
        other.beginUndoGrouping()
        #expect(log.recorded.isEmpty)
    }
}

@MainActor @Suite struct UndoManagerHandlerGroupTests {
    @Test func groupsAHandlerOpensDuringUndoPostAndNestInTheRedoGroup() {
        let manager = UndoManager()
        manager.groupsByEvent = false
        let note = UndoNote(manager)
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: note) { target in
            manager.beginUndoGrouping()
            target.text = "inner"
            manager.endUndoGrouping()
        }
        manager.endUndoGrouping()
        let log = UndoNotificationLog(manager)
        manager.undo()
        // The handler's own group posts (no checkpoint on opening: an undo is in progress).
        #expect(
            log.recorded == [
                "Checkpoint", "WillUndoChange", "DidOpenUndoGroup", "Checkpoint",
                "WillCloseUndoGroup", "DidCloseUndoGroup", "DidUndoChange",
            ])
        #expect(note.text == "inner")
        #expect(manager.canRedo)
        manager.redo()
        #expect(note.text == "")
        #expect(!manager.canRedo)
    }
}
