import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@MainActor
@Suite("Document failures: failed saves and bad input")
struct DocumentFailureTests {
    @Test func aFailedSaveKeepsTheOldFileAndTheChangesAndTheNextAutosaveRetries() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("the old text", to: "failing.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        #expect(await document.open())
        let before = try #require(FileSnapshot(url))

        document.writeGate.failing = true
        document.text = "the new text"
        await endOfTurn()
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(document.log.count("write") == 1, "the autosave ran and its write failed halfway")
        #expect(FileSnapshot(url) == before, "the old file is intact")
        #expect(saveLeftovers(in: tree.url).isEmpty, "the torn staging file was removed")
        #expect(document.documentState.contains(.savingError))
        #expect(document.hasUnsavedChanges)
        #expect(document.text == "the new text")
        let error = try #require(document.errors.first as? DocumentKitError)
        #expect(error.description.contains(url.path))
        #expect(error.description.contains("injected"))

        // Still failing: the retry comes by itself, a quiet delay later, and does not spin.
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(document.log.count("write") == 2)
        #expect(document.errors.count == 2)
        #expect(FileSnapshot(url) == before)

        document.writeGate.failing = false
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(document.log.count("write") == 3)
        #expect(fileText(url) == "the new text")
        #expect(!document.documentState.contains(.savingError), "a successful save clears the error")
        #expect(!document.hasUnsavedChanges)
        #expect(document.errors.count == 2)
        _ = await document.close()
    }

    @Test func aFailedCloseKeepsTheDocumentOpenAndDirty() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("kept", to: "failclose.txt")
        let document = TextDocument(fileURL: url)
        #expect(await document.open())
        document.writeGate.failing = true
        document.text = "unsaved"
        await endOfTurn()
        #expect(await document.close() == false)
        #expect(!document.documentState.contains(.closed))
        #expect(document.documentState.contains(.savingError))
        #expect(document.hasUnsavedChanges)
        #expect(fileText(url) == "kept")
        document.writeGate.failing = false
        #expect(await document.close())
        #expect(fileText(url) == "unsaved")
        #expect(document.documentState == .closed)
    }

    @Test func savingIntoAFolderThatIsAFileFailsNamingTheFile() async throws {
        let tree = try TemporaryTree()
        try tree.write("not a folder", to: "blocker")
        let url = tree.file("blocker/inside.txt")
        let document = TextDocument(fileURL: url)
        document.text = "nowhere to go"
        #expect(await document.save(to: url, for: .forCreating) == false)
        #expect(fileText(tree.file("blocker")) == "not a folder")
        let error = try #require(document.errors.first as? DocumentKitError)
        #expect(error.description.contains(tree.file("blocker").path))
        #expect(document.hasUnsavedChanges)
    }

    @Test func aContentsErrorFailsTheSaveWithoutWriting() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("fine", to: "nocontents.txt")
        // A bare Document has no contents(forType:) to give.
        let bare = Document(fileURL: url)
        bare.updateChangeCount(.done)
        #expect(await bare.save(to: url, for: .forOverwriting) == false)
        #expect(bare.documentState.contains(.savingError))
        #expect(bare.hasUnsavedChanges)
        #expect(fileText(url) == "fine")
        #expect(saveLeftovers(in: tree.url).isEmpty)
    }

    enum BadInput: String, CaseIterable, CustomTestStringConvertible {
        case missingFile, folderWhereAFileBelongs, invalidUTF8, fifo
        var testDescription: String { rawValue }
    }

    @Test(arguments: BadInput.allCases)
    func badInputFailsOpenCleanlyNamingTheFile(_ input: BadInput) async throws {
        let tree = try TemporaryTree()
        let url = tree.file("bad.txt")
        switch input {
        case .missingFile:
            break
        case .folderWhereAFileBelongs:
            try tree.write("inside", to: "bad.txt/inner.txt")
        case .invalidUTF8:
            try Data([0x68, 0x69, 0xFF, 0xFE, 0xC3]).write(to: url)
        case .fifo:
            #expect(mkfifo(url.path, 0o600) == 0)
        }
        let before = FileSnapshot(url)
        let document = TextDocument(fileURL: url)
        let started = ContinuousClock.now
        #expect(await document.open() == false)
        // A FIFO opened for reading without O_NONBLOCK would wait for a writer for ever. The
        // bound tells that from a stall of the whole test process (its few threads all taken
        // by other tests, for over 60 s under load on two cores), not a slow open.
        #expect(ContinuousClock.now - started < .seconds(300), "open must not hang on \(input)")
        #expect(document.documentState == .closed)
        #expect(document.errors.count == 1)
        let error = try #require(document.errors.first as? DocumentKitError)
        #expect(error.description.contains(url.path), "\(error)")
        #expect(FileSnapshot(url) == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: tree.url.path)
                == (input == .missingFile ? [] : ["bad.txt"]))
        #expect(!document.hasUnsavedChanges)
        #expect(!DocumentController.shared.documents.contains { $0 === document })
    }

    @Test func aPortedDocumentThatDecodesLenientlyStillRejectsAFolder() async throws {
        let tree = try TemporaryTree()
        try tree.write("inside", to: "folder.txt/inner.txt")
        let document = PortedTextDocument(fileURL: tree.file("folder.txt"))
        #expect(await document.open() == false)
        #expect(document.documentState == .closed)
    }
}
