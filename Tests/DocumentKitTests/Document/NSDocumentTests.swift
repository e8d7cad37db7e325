import DocumentKit
import Foundation
import Testing

/// A Mac app's text document, as AppKit code writes it: bytes in and out, undo on the text.
final class NotesDocument: NSDocument {
    var text = "" {
        didSet {
            let old = oldValue
            undoManager?.registerUndo(withTarget: self) { $0.text = old }
        }
    }
    var reloads = 0

    override func data(ofType typeName: String) throws -> Data { Data(text.utf8) }

    override func read(from data: Data, ofType typeName: String) throws {
        guard let text = String(data: data, encoding: .utf8) else { throw CocoaError(.fileReadCorruptFile) }
        // Nonisolated, as AppKit's; DocumentKit, as AppKit, calls it on the main thread.
        MainActor.assumeIsolated {
            self.text = text
            reloads += 1
        }
    }
}

@MainActor
@Suite struct NSDocumentTests {
    @Test func opensEditsAutosavesInPlaceAndCloses() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "notes.txt")
        let document = try NotesDocument(contentsOf: url, ofType: "public.plain-text")
        #expect(document.text == "first")
        #expect(!document.isDocumentEdited)
        #expect(document.fileURL?.standardizedFileURL == url.standardizedFileURL)
        #expect(document.displayName == "notes")

        document.text = "second"
        #expect(
            await eventually { document.isDocumentEdited },
            "closing the undo group marked the document edited")
        document.undoManager?.undo()
        #expect(document.text == "first")
        document.undoManager?.redo()
        #expect(document.text == "second")
        #expect(
            await eventually { fileText(url) == "second" && !document.isDocumentEdited }, "autosaved in place"
        )
        #expect(await document.close())
    }

    @Test func anUntitledDocumentIsSavedAsAndThenHasItsFile() async throws {
        let tree = try TemporaryTree()
        let url = tree.file("new.txt")
        let document = NotesDocument()
        #expect(document.fileURL == nil)
        #expect(document.displayName == "Untitled")
        document.text = "made here"
        document.updateChangeCount(.changeDone)
        let error: (any Error)? = await withCheckedContinuation { done in
            document.save(to: url, ofType: "public.plain-text", for: .saveAsOperation) {
                done.resume(returning: $0)
            }
        }
        #expect(error == nil, "\(String(describing: error))")
        #expect(fileText(url) == "made here")
        #expect(document.fileURL?.standardizedFileURL == url.standardizedFileURL)
        #expect(!document.isDocumentEdited)

        // A copy elsewhere leaves the document where it is.
        let copy = tree.file("copy.txt")
        let copied: (any Error)? = await withCheckedContinuation { done in
            document.save(to: copy, ofType: "public.plain-text", for: .saveToOperation) {
                done.resume(returning: $0)
            }
        }
        #expect(copied == nil)
        #expect(fileText(copy) == "made here")
        #expect(document.fileURL?.standardizedFileURL == url.standardizedFileURL)
        #expect(await document.close())
    }

    @Test func revertDropsUnsavedChangesAndReadsTheFile() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("saved", to: "r.txt")
        let document = try NotesDocument(contentsOf: url, ofType: "public.plain-text")
        document.text = "unsaved"
        document.updateChangeCount(.changeDone)
        try document.revert(toContentsOf: url, ofType: "public.plain-text")
        #expect(document.text == "saved")
        #expect(!document.isDocumentEdited)
        #expect(await document.close())
        #expect(fileText(url) == "saved")
    }

    @Test func anotherWritersChangeReloadsThePresentedDocument() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("mine", to: "p.txt")
        let document = try NotesDocument(contentsOf: url, ofType: "public.plain-text")
        let before = document.reloads
        try shell("echo theirs > '\(url.path)'")
        #expect(await waitUntil { document.text == "theirs\n" })
        #expect(document.reloads == before + 1)
        #expect(await document.close())
    }

    @Test func aBadFileIsAnErrorNamingItAndNoDocument() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "bad.txt")
        try Data([0xFF, 0xFE, 0x00, 0xC0]).write(to: url)
        #expect(throws: (any Error).self) { try NotesDocument(contentsOf: url, ofType: "public.plain-text") }
        #expect(throws: DocumentKitError.self) {
            try NotesDocument(contentsOf: tree.file("missing.txt"), ofType: "public.plain-text")
        }
        #expect(try Data(contentsOf: url) == Data([0xFF, 0xFE, 0x00, 0xC0]), "the file is as it was")
    }
}
