import DocumentKit
import Foundation
import Testing

@MainActor
@Suite("Document change tracking: undo, redo and change tokens")
struct DocumentChangeTrackingTests {
    @Test func undoAndRedoMarkTheDocumentDirtyAndAutosaveWritesEachText() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("a", to: "undo.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        #expect(await document.open())

        document.text = "ab"
        await endOfTurn()
        #expect(document.hasUnsavedChanges, "a closed undo group is a change")
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(fileText(url) == "ab")
        #expect(!document.hasUnsavedChanges)

        document.undoManager.undo()
        #expect(document.text == "a")
        #expect(document.hasUnsavedChanges, "undoing past the saved state is unsaved")
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(fileText(url) == "a", "autosave writes the undone text")
        #expect(!document.hasUnsavedChanges)

        document.undoManager.redo()
        #expect(document.text == "ab")
        #expect(document.hasUnsavedChanges)
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(fileText(url) == "ab", "autosave writes the redone text")
        #expect(!document.hasUnsavedChanges)
        #expect(document.undoManager.undoActionName == "Text Change")
        _ = await document.close()
    }

    @Test func undoingBackToTheSavedTextMakesTheDocumentClean() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("saved", to: "roundtrip.txt")
        let document = TextDocument(fileURL: url)
        // On a loaded machine the real two-second autosave could save between the steps.
        document.autosaveConfiguration.isEnabled = false
        #expect(await document.open())
        document.text = "changed"
        await endOfTurn()
        #expect(document.hasUnsavedChanges)
        document.undoManager.undo()
        #expect(!document.hasUnsavedChanges)
        document.undoManager.redo()
        #expect(document.hasUnsavedChanges)
        _ = await document.close()
    }

    @Test func updateChangeCountKindsSetUnsavedChanges() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "counts.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.updateChangeCount(.done)
        #expect(document.hasUnsavedChanges)
        document.updateChangeCount(.clear)
        #expect(!document.hasUnsavedChanges)
        document.updateChangeCount(.undone)
        #expect(document.hasUnsavedChanges)
        document.updateChangeCount(.redone)
        #expect(!document.hasUnsavedChanges)
        document.updateChangeCount(.redone)
        #expect(document.hasUnsavedChanges)
        #expect(await document.close())
        #expect(document.log.count("contents") == 1, "the dirty document was saved on close")
    }

    @Test func discardableUndoGroupsDoNotDirtyTheDocument() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "discardable.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.undoManager.registerUndo(withTarget: document) { _ in }
        document.undoManager.setActionIsDiscardable(true)
        await endOfTurn()
        #expect(document.undoManager.canUndo)
        #expect(!document.hasUnsavedChanges)
        _ = await document.close()
    }

    @Test func anEditMadeWhileASaveWritesStaysUnsavedAndIsSavedNext() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("zero", to: "inflight.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        #expect(await document.open())
        document.text = "one"
        await endOfTurn()

        document.writeGate.close()
        let save = Task { await document.save(to: url, for: .forOverwriting) }
        #expect(await eventually { document.writeGate.waiting == 1 }, "the save reached its write")
        document.text = "two"
        await endOfTurn()
        document.writeGate.open()
        #expect(await save.value)

        #expect(fileText(url) == "one", "the save wrote the snapshot taken when it started")
        #expect(document.text == "two")
        #expect(document.hasUnsavedChanges, "the edit made during the save is still unsaved")

        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(fileText(url) == "two", "autosave saves the edit made during the save")
        #expect(!document.hasUnsavedChanges)
        _ = await document.close()
    }

    @Test func changeCountTokenMarksOnlyTheChangesItCounted() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "tokens.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.updateChangeCount(.done)
        let token = document.changeCountToken(for: .forOverwriting)
        document.updateChangeCount(.done)
        document.updateChangeCount(withToken: token, for: .forOverwriting)
        #expect(document.hasUnsavedChanges)
        let second = document.changeCountToken(for: .forOverwriting)
        document.updateChangeCount(withToken: second, for: .forOverwriting)
        #expect(!document.hasUnsavedChanges)
        _ = await document.close()
    }
}
