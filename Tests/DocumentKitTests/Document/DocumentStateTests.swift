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

    @Test func everyStateChangePostsANotificationInOrder() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("v1", to: "states.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        let log = StateLog(document)

        #expect(await document.open())
        #expect(log.states == [.normal])

        document.text = "v2"
        await endOfTurn()
        #expect(await document.revert(toContentsOf: url))
        #expect(log.states == [.normal, .editingDisabled, .normal])

        log.clear()
        document.writeGate.failing = true
        document.text = "v3"
        await endOfTurn()
        #expect(await document.autosave() == false)
        #expect(log.states == [.savingError])
        #expect(document.documentState == .savingError)

        document.writeGate.failing = false
        #expect(await document.autosave())
        #expect(log.states == [.savingError, .normal])

        #expect(await document.close())
        #expect(log.states == [.savingError, .normal, .closed])
        #expect(fileText(url) == "v3")
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
        let log = StateLog(document)
        document.disableEditing()
        document.disableEditing()
        document.enableEditing()
        #expect(document.documentState.contains(.editingDisabled))
        document.enableEditing()
        #expect(document.documentState == .normal)
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
