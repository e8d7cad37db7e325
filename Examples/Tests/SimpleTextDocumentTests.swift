import DocumentKit
import Foundation
import SimpleTextEditorDocument
import Testing

/// Records what a ``SimpleTextDocument`` tells its delegate.
@MainActor
final class RecordingTextDelegate: SimpleTextDocumentDelegate {
    var loadedTexts: [String] = []
    var errors: [any Error] = []

    func documentContentsDidChange(_ document: SimpleTextDocument) {
        loadedTexts.append(document.documentText)
    }

    func document(_ document: SimpleTextDocument, didFailWith error: any Error) {
        errors.append(error)
    }
}

@MainActor
@Suite("SimpleTextDocument (seed 000)")
struct SimpleTextDocumentTests {
    @Test func settingTextRegistersAnUndoNamedTextChangeAndMarksTheDocumentChanged() async throws {
        let folder = try TemporaryFolder()
        let document = SimpleTextDocument(fileURL: folder.file("Note.txt"))
        document.documentText = "hello"
        #expect(document.undoManager.undoActionName == "Text Change")
        #expect(document.undoManager.undoMenuItemTitle == "Undo Text Change")
        await nextMainQueueTurn()
        #expect(document.hasUnsavedChanges)

        document.undoManager.undo()
        #expect(document.documentText == "")
        #expect(document.undoManager.redoMenuItemTitle == "Redo Text Change")
        document.undoManager.redo()
        #expect(document.documentText == "hello")
    }

    @Test func settingTheSameTextIsNotAnEdit() async throws {
        let folder = try TemporaryFolder()
        let document = SimpleTextDocument(fileURL: folder.file("Note.txt"))
        document.documentText = ""
        await nextMainQueueTurn()
        #expect(!document.undoManager.canUndo)
        #expect(!document.hasUnsavedChanges)
    }

    @Test func contentsAreTheTextInUTF8() throws {
        let folder = try TemporaryFolder()
        let document = SimpleTextDocument(fileURL: folder.file("Note.txt"))
        document.documentText = "Grüße, 世界 🌍"
        let contents = try document.contents(forType: "public.plain-text")
        #expect(contents as? Data == Data("Grüße, 世界 🌍".utf8))
    }

    @Test func openingLoadsTheTextWithoutUndoAndTellsTheDelegate() async throws {
        let folder = try TemporaryFolder()
        let url = try folder.write(Data("こんにちは\nworld".utf8), to: "Note.txt")
        let document = SimpleTextDocument(fileURL: url)
        let delegate = RecordingTextDelegate()
        document.delegate = delegate

        #expect(await document.open())
        #expect(document.documentText == "こんにちは\nworld")
        #expect(delegate.loadedTexts == ["こんにちは\nworld"])
        #expect(!document.undoManager.canUndo)
        #expect(!document.hasUnsavedChanges)
        #expect(await document.close())
    }

    @Test func anEmptyFileIsAnEmptyText() async throws {
        let folder = try TemporaryFolder()
        let url = try folder.write(Data(), to: "Empty.txt")
        let document = SimpleTextDocument(fileURL: url)
        document.documentText = "not yet loaded"
        #expect(await document.open())
        #expect(document.documentText == "")
        #expect(await document.close())
    }

    @Test func invalidUTF8FailsToOpenWithAnErrorNamingTheFileAndLeavesItAsItWas() async throws {
        let folder = try TemporaryFolder()
        let bytes = Data([0x68, 0x69, 0x0A, 0xFF, 0xFE, 0x41])
        let url = try folder.write(bytes, to: "Latin1.txt")
        let document = SimpleTextDocument(fileURL: url)
        let delegate = RecordingTextDelegate()
        document.delegate = delegate

        #expect(await document.open() == false)

        #expect(document.documentState.contains(.closed))
        #expect(delegate.loadedTexts.isEmpty)
        let error = try #require(delegate.errors.first as? DocumentKitError)
        #expect(error.code == .corruptFile)
        #expect(error.url?.standardizedFileURL == url.standardizedFileURL)
        #expect(error.description.contains(url.path))
        #expect(error.description.contains("offset 3"))
        #expect((error.underlying as? InvalidTextError)?.reason == .invalidUTF8(byteOffset: 3))
        #expect(document.lastError != nil)
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test(
        arguments: [
            ([0xFF], 0),
            ([0x61, 0x62, 0xC3], 2),  // cut short in the middle of "é"
            ([0xC3, 0xA9, 0x80], 2),  // a continuation byte on its own
            ([0xC0, 0x80], 0),  // an overlong encoding of NUL
            ([0x61, 0xED, 0xA0, 0x80], 1),  // a UTF-16 surrogate
            ([0xF4, 0x90, 0x80, 0x80], 0),  // beyond U+10FFFF
        ] as [([UInt8], Int)])
    func invalidUTF8IsReportedAtTheFirstBadByte(bytes: [UInt8], offset: Int) {
        #expect(throws: InvalidTextError(reason: .invalidUTF8(byteOffset: offset))) {
            try SimpleTextDocument.decodeUTF8(Data(bytes))
        }
    }

    @Test func autosaveWritesAnEditAndThenTheUndoneText() async throws {
        let folder = try TemporaryFolder()
        let url = try folder.write(Data("zero".utf8), to: "Note.txt")
        let document = SimpleTextDocument(fileURL: url)
        let clock = ManualClock()
        document.autosaveConfiguration.clock = AutosaveClock(clock)
        #expect(await document.open())

        document.documentText = "one"
        await nextMainQueueTurn()
        #expect(document.hasUnsavedChanges)
        await clock.advance(by: .seconds(3))
        #expect(await eventually { !document.hasUnsavedChanges })
        #expect(try String(contentsOf: url, encoding: .utf8) == "one")

        // Undo after a save is a change too: the file must go back to the text before it.
        document.undoManager.undo()
        #expect(document.documentText == "zero")
        #expect(document.hasUnsavedChanges)
        await clock.advance(by: .seconds(3))
        #expect(await eventually { !document.hasUnsavedChanges })
        #expect(try String(contentsOf: url, encoding: .utf8) == "zero")
        #expect(await document.close())
    }

    @Test func revertingToAChangedFileReloadsItAndTellsTheDelegate() async throws {
        let folder = try TemporaryFolder()
        let url = try folder.write(Data("first".utf8), to: "Note.txt")
        let document = SimpleTextDocument(fileURL: url)
        let delegate = RecordingTextDelegate()
        document.delegate = delegate
        #expect(await document.open())
        document.documentText = "unsaved"
        await nextMainQueueTurn()

        try Data("changed elsewhere".utf8).write(to: url)
        #expect(await document.revert(toContentsOf: url))

        #expect(document.documentText == "changed elsewhere")
        // The change is another program's, uncoordinated: the document's watch may see it and
        // load it before the revert does (on a loaded machine it does), which the revert must
        // survive; either way the delegate hears the first text, then only the new one.
        #expect(delegate.loadedTexts.first == "first")
        #expect(delegate.loadedTexts.count >= 2)
        #expect(delegate.loadedTexts.dropFirst().allSatisfy { $0 == "changed elsewhere" })
        #expect(!document.hasUnsavedChanges)
        #expect(!document.undoManager.canUndo)
        #expect(await document.close())
        #expect(try String(contentsOf: url, encoding: .utf8) == "changed elsewhere")
    }

    @Test func theDelegateIsHeldWeakly() throws {
        let folder = try TemporaryFolder()
        let document = SimpleTextDocument(fileURL: folder.file("Note.txt"))
        do {
            let delegate = RecordingTextDelegate()
            document.delegate = delegate
            #expect(document.delegate != nil)
        }
        #expect(document.delegate == nil)
    }
}
