import DocumentKit
import Foundation
import Testing

@MainActor
@Suite("Document lifecycle")
struct DocumentLifecycleTests {
    @Test func portedUIDocumentSubclassCreatesEditsUndoesAndReopens() async throws {
        let tree = try TemporaryTree()
        let url = tree.file("Notes.txt")
        let document = PortedTextDocument(fileURL: url)
        // Not about autosave: on a loaded machine its two seconds can pass before the checks.
        document.autosaveConfiguration.isEnabled = false
        #expect(await document.save(to: url, for: .forCreating))
        document.text = "hello"
        #expect(document.undoManager.undoMenuItemTitle == "Undo Text Change")
        await endOfTurn()
        #expect(document.hasUnsavedChanges)
        document.undoManager.undo()
        #expect(document.text == "")
        document.text = "hello again"
        document.updateChangeCount(.done)
        #expect(await document.close())
        #expect(fileText(url) == "hello again")

        let reopened = PortedTextDocument(fileURL: url)
        #expect(await reopened.open())
        #expect(reopened.text == "hello again")
        #expect(await reopened.close())
    }

    @Test func savingForCreatingWritesTheFileAndOpensTheDocument() async throws {
        let tree = try TemporaryTree()
        let url = tree.file("new.txt")
        let document = TextDocument(fileURL: url)
        #expect(document.documentState == .closed)
        document.text = "first words"
        #expect(await document.save(to: url, for: .forCreating))
        #expect(fileText(url) == "first words")
        #expect(document.documentState == .normal)
        #expect(!document.hasUnsavedChanges)
        #expect(document.fileModificationDate != nil)
        #expect(DocumentController.shared.documents.contains { $0 === document })
        #expect(await document.close())
        #expect(!DocumentController.shared.documents.contains { $0 === document })
    }

    @Test func openingLoadsTheFileAsDataOnTheMainActorAndReturnsTrue() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("on disk", to: "existing.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        #expect(document.log.events == ["load Data public.plain-text"])
        #expect(document.text == "on disk")
        #expect(document.documentState == .normal)
        let onDisk = try #require(FileManager.default.modificationDate(url))
        let recorded = try #require(document.fileModificationDate)
        #expect(abs(recorded.timeIntervalSince(onDisk)) < 0.001)
        #expect(await document.open(), "opening an open document succeeds and reads nothing")
        #expect(document.log.count("load") == 1)
        _ = await document.close()
    }

    @Test func closeSavesUnsavedChangesBeforeClosing() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before", to: "close.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.text = "after"
        await endOfTurn()
        #expect(document.hasUnsavedChanges)
        #expect(await document.close())
        #expect(document.documentState == .closed)
        #expect(fileText(url) == "after")
        #expect(document.log.events.contains("contents public.plain-text closed=false text=after"))
        #expect(await document.close(), "closing a closed document succeeds and saves nothing")
        #expect(document.log.count("contents") == 1)
    }

    @Test func closeRightAfterAnEditInTheSameTurnSavesTheEdit() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before", to: "sameturn.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        // The undo group of this edit closes only at the end of the turn; close must not miss it.
        document.text = "typed just before close"
        #expect(await document.close())
        #expect(fileText(url) == "typed just before close")
        await endOfTurn()
        #expect(!document.hasUnsavedChanges)
    }

    @Test func autosaveRightAfterAnEditInTheSameTurnSavesTheEdit() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before", to: "sameturnautosave.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.text = "typed just before autosave"
        #expect(await document.autosave())
        #expect(fileText(url) == "typed just before autosave")
        await endOfTurn()
        #expect(!document.hasUnsavedChanges)
        document.undoManager.undo()
        #expect(document.text == "before", "the edit is still one undoable group")
        _ = await document.close()
    }

    @Test func completionHandlerFormsReportTheSameOutcomesOnTheMainActor() async throws {
        let tree = try TemporaryTree()
        let url = tree.file("handlers.txt")
        let document = TextDocument(fileURL: url)
        document.text = "via handlers"

        // The main actor runs on the main queue, which under dispatchMain() need not be the main thread.
        let mainQueueKey = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
        defer { DispatchQueue.main.setSpecific(key: mainQueueKey, value: nil) }
        func outcome(_ start: (@escaping @Sendable (Bool) -> Void) -> Void) async -> (Bool, Bool) {
            await withCheckedContinuation { continuation in
                start { success in
                    continuation.resume(
                        returning: (success, DispatchQueue.getSpecific(key: mainQueueKey) == true))
                }
            }
        }

        let created = await outcome { document.save(to: url, for: .forCreating, completionHandler: $0) }
        #expect(created == (true, true))
        let createdAgain = await outcome { document.save(to: url, for: .forCreating, completionHandler: $0) }
        #expect(createdAgain == (false, true))
        let autosaved = await outcome { document.autosave(completionHandler: $0) }
        #expect(autosaved == (true, true))
        let closed = await outcome { document.close(completionHandler: $0) }
        #expect(closed == (true, true))
        #expect(document.documentState.contains(.closed))

        let reopened = TextDocument(fileURL: url)
        let opened = await outcome { reopened.open(completionHandler: $0) }
        #expect(opened == (true, true))
        #expect(reopened.text == "via handlers")
        let reverted = await outcome { reopened.revert(toContentsOf: url, completionHandler: $0) }
        #expect(reverted == (true, true))
        let missing = TextDocument(fileURL: tree.file("missing.txt"))
        let failedOpen = await outcome { missing.open(completionHandler: $0) }
        #expect(failedOpen == (false, true))
        _ = await reopened.close()
    }

    @Test func creatingOverAnExistingFileFailsAndLeavesItUntouched() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("precious", to: "taken.txt")
        let before = try #require(FileSnapshot(url))
        let document = TextDocument(fileURL: url)
        document.text = "intruder"
        #expect(await document.save(to: url, for: .forCreating) == false)
        #expect(FileSnapshot(url) == before)
        #expect(saveLeftovers(in: tree.url).isEmpty)
        let error = try #require(document.errors.first as? DocumentKitError)
        #expect(error.code == .fileExists)
        #expect(error.description.contains(url.path))
        #expect(document.documentState.contains(.closed))
        #expect(!DocumentController.shared.documents.contains { $0 === document })
    }

    @Test func savingForOverwritingReplacesTheFileSafely() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "replace.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.text = "new"
        #expect(await document.save(to: url, for: .forOverwriting))
        #expect(fileText(url) == "new")
        #expect(saveLeftovers(in: tree.url).isEmpty)
        #expect(document.log.events.contains("write staging"), "the bytes go to a staging file first")
        _ = await document.close()
    }

    @Test func savingToAnotherURLMovesTheDocumentThere() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("draft", to: "draft.txt")
        let copy = tree.file("final.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        #expect(await document.save(to: copy, for: .forCreating))
        #expect(document.fileURL == copy.standardizedFileURL)
        #expect(document.localizedName == "final")
        #expect(fileText(copy) == "draft")
        _ = await document.close()
    }

    @Test func openingLeavesTheDocumentCleanWithAnEmptyUndoStack() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("loaded text", to: "clean.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        #expect(await document.open())
        #expect(!document.hasUnsavedChanges)
        #expect(!document.undoManager.canUndo)
        #expect(document.undoManager.isUndoRegistrationEnabled)
        await endOfTurn()
        #expect(!document.hasUnsavedChanges, "the load's setter must not leave a group that marks it dirty")
        #expect(!document.undoManager.canUndo)
        await clock.advance(by: .seconds(30))
        await settle(document)
        #expect(document.log.count("write") == 0, "a clean document is not autosaved")
        // Registration works again after the load.
        document.text = "edited"
        await endOfTurn()
        #expect(document.undoManager.canUndo)
        #expect(document.hasUnsavedChanges)
        _ = await document.close()
    }

    @Test func revertDropsUnsavedChangesReloadsAndClearsUndo() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("saved", to: "revert.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.text = "unsaved"
        await endOfTurn()
        #expect(document.hasUnsavedChanges)
        #expect(await document.revert(toContentsOf: url))
        #expect(document.text == "saved")
        #expect(!document.hasUnsavedChanges)
        #expect(!document.undoManager.canUndo)
        #expect(!document.undoManager.canRedo)
        #expect(document.documentState == .normal)
        #expect(document.log.count("load") == 2)
        #expect(await document.close())
        #expect(fileText(url) == "saved", "closing after a revert writes nothing back")
        #expect(document.log.count("contents") == 1, "taken once, to keep the discarded text")
        let history = (document.versionStore?.otherVersionsOfItem(at: url) ?? []).map {
            try? String(contentsOf: $0.url, encoding: .utf8)
        }
        #expect(history.contains("unsaved"), "the text a revert discards stays recoverable: \(history)")
    }

    @Test func readFromCalledOnTheMainActorLoadsInsteadOfDeadlocking() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("read directly", to: "direct.txt")
        let document = TextDocument(fileURL: url)
        // Swift Testing runs the main actor on the main queue but not on the main thread.
        try document.read(from: url)
        #expect(document.text == "read directly")
        #expect(!document.hasUnsavedChanges)
    }

    @Test func fileTypeAndNameComeFromTheExtension() throws {
        let tree = try TemporaryTree()
        let text = TextDocument(fileURL: tree.file("Shopping List.txt"))
        #expect(text.fileType == "public.plain-text")
        #expect(text.savingFileType == "public.plain-text")
        #expect(text.localizedName == "Shopping List")
        #expect(text.fileNameExtension(forType: "public.plain-text", saveOperation: .forCreating) == "txt")
        #expect(TextDocument(fileURL: tree.file("readme.MD")).fileType == "net.daringfireball.markdown")
        #expect(TextDocument(fileURL: tree.file("blob.unknownext")).fileType == "public.data")

        FileTypes.shared.register(
            FileTypes.FileType(identifier: "com.example.doctests-note", filenameExtensions: ["dknote"]))
        let custom = TextDocument(fileURL: tree.file("Idea.dknote"))
        #expect(custom.fileType == "com.example.doctests-note")
        #expect(
            custom.fileNameExtension(forType: "com.example.doctests-note", saveOperation: .forCreating)
                == "dknote")
    }
}

extension FileManager {
    fileprivate func modificationDate(_ url: URL) -> Date? {
        (try? attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
    }
}
