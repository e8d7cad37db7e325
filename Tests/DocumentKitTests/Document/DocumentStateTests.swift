import DocumentKit
import Foundation
import Testing

@MainActor
@Suite("Document state and its notifications")
struct DocumentStateTests {
    @Test func rawValuesAreUIKits() {
        #expect(DocumentState.normal.rawValue == 0)
        #expect(DocumentState.closed.rawValue == 1)
        #expect(DocumentState.inConflict.rawValue == 2)
        #expect(DocumentState.savingError.rawValue == 4)
        #expect(DocumentState.editingDisabled.rawValue == 8)
        #expect(DocumentState.progressAvailable.rawValue == 16)
        #expect(UIDocument.State.closed == DocumentState.closed)
        #expect(Document.ChangeKind.done.rawValue == 0)
        #expect(Document.ChangeKind.undone.rawValue == 1)
        #expect(Document.ChangeKind.clear.rawValue == 2)
        #expect(Document.ChangeKind.redone.rawValue == 5)
    }

    /// The usual app observer, `queue: .main`, from the main actor under an async main: each
    /// change is one notification, delivered from the main queue after the change, in order.
    @Test func everyStateChangePostsANotificationToMainQueueObservers() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("v1", to: "states.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        let log = StateLog(document, queue: .main)

        #expect(await document.open())
        #expect(await waitUntil { log.states == [.normal] })

        document.text = "v2"
        await endOfTurn()
        #expect(await document.revert(toContentsOf: url))
        // Editing disabled while the revert reads, then enabled: two more notifications.
        #expect(await waitUntil { log.states.count == 3 }, "\(log.states)")
        #expect(log.states.last == .normal)

        log.clear()
        document.writeGate.failing = true
        document.text = "v3"
        await endOfTurn()
        #expect(await document.autosave() == false)
        #expect(document.documentState == .savingError)
        #expect(await waitUntil { log.states == [.savingError] }, "\(log.states)")

        document.writeGate.failing = false
        #expect(await document.autosave())
        #expect(await waitUntil { log.states == [.savingError, .normal] }, "\(log.states)")

        #expect(await document.close())
        #expect(await waitUntil { log.states == [.savingError, .normal, .closed] }, "\(log.states)")
        #expect(fileText(url) == "v3")
    }

    /// Where Foundation can deliver at once (inside a main-queue operation, as on an app's
    /// main thread), each change reaches `.main` and `nil` observers before the setter returns.
    @Test func insideAMainQueueOperationEachChangeIsPostedAtOnce() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "at-once.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        await onMainOperationQueue {}  // the open's news, delivered before the logs begin
        let onMain = StateLog(document, queue: .main)
        let inline = StateLog(document)
        var seen: [[DocumentState]] = []
        await onMainOperationQueue {
            document.disableEditing()
            seen += [onMain.states, inline.states]
            document.enableEditing()
            seen += [onMain.states, inline.states]
        }
        #expect(
            seen == [
                [.editingDisabled], [.editingDisabled], [.editingDisabled, .normal],
                [.editingDisabled, .normal],
            ])
        _ = await document.close()
    }

    @Test func editingIsDisabledWhileARevertReads() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("on disk", to: "reverting.txt")
        let document = ObservingLoadDocument(fileURL: url)
        #expect(await document.open())
        #expect(document.statesSeenByLoad == [.closed])
        #expect(await document.revert(toContentsOf: url))
        #expect(document.statesSeenByLoad.last == .editingDisabled)
        #expect(document.documentState == .normal)
        _ = await document.close()
    }

    @Test func disableAndEnableEditingNest() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "nest.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        await onMainOperationQueue {}  // the open's news, delivered before the log begins
        let log = StateLog(document)
        await onMainOperationQueue {
            document.disableEditing()
            document.disableEditing()
            document.enableEditing()
            #expect(document.documentState.contains(.editingDisabled))
            document.enableEditing()
            #expect(document.documentState == .normal)
        }
        #expect(log.states == [.editingDisabled, .normal], "no notification when nothing changed")
        _ = await document.close()
    }
}

/// Records the document's state each time it loads.
final class ObservingLoadDocument: Document {
    var statesSeenByLoad: [DocumentState] = []

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        statesSeenByLoad.append(documentState)
    }
    override func contents(forType typeName: String) throws -> Any { Data() }
}
