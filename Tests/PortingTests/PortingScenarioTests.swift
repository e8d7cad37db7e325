import DocumentKit
import Foundation
import PortingSwift5
import PortingSwift6
import Testing

/// Each ported file, run through a short life: create, edit, save, reopen, conflict, resolve.
@MainActor
@Suite struct PortingScenarioTests {
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "porting-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    @Test func journalPackageWithConflictHandling() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Trip.journal")
        let journal = JournalDocument(fileURL: url)
        #expect(await journal.save(to: url, for: .forCreating))
        journal.add("Day 1")
        journal.add("Day 2")
        #expect(await journal.autosave())
        #expect(await journal.close())

        let reopened = JournalDocument(fileURL: url)
        #expect(await reopened.open())
        #expect(reopened.entries == ["Day 1", "Day 2"])
        // Another device's version arrives as a conflict: the app keeps the current one.
        let incoming = folder.appendingPathComponent("incoming.txt")
        try Data("from the laptop".utf8).write(to: incoming)
        try NSFileVersion.addConflictOfItem(at: url, withContentsOf: incoming, savingComputer: "laptop")
        #expect(await Self.waitUntil { reopened.conflictsResolved == 1 })
        #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty == true)
        #expect(await Self.waitUntil { !reopened.documentState.contains(.inConflict) })
        #expect(await reopened.close())
    }

    /// Issue 29 items 2, 3 and 8 as Swift 5 code writes them: a subclass's own `init()`, a
    /// save in the type `savingFileType` names (not the one the extension names), and undo
    /// registered from a model class not isolated to the main actor.
    @Test func aShaderOfItsOwnInitSavesInItsSavingTypeAndUndoesARenameOfALayer() async throws {
        let shader = ShaderDocument()
        defer { try? FileManager.default.removeItem(at: shader.fileURL) }
        #expect(shader.fileURL.lastPathComponent.hasPrefix("MyShader-"))
        shader.source = "void main() {}"
        #expect(await shader.save(to: shader.fileURL, for: .forCreating))
        #expect(shader.typesWritten == ["public.json"])
        let reopened = ShaderDocument(fileURL: shader.fileURL)
        #expect(await reopened.open())
        #expect(reopened.source == "void main() {}")
        #expect(await reopened.close())

        let layer = shader.addLayer(named: "Base")
        layer.rename("Glow")
        #expect(await Self.waitUntil { shader.undoManager.canUndo && shader.undoManager.groupingLevel == 0 })
        #expect(shader.undoManager.undoMenuItemTitle == "Undo Rename Layer")
        shader.undoManager.undo()
        #expect(layer.name == "Base")
        #expect(await shader.close())
    }

    /// A generic manager makes documents from their class, with the one change
    /// docs/Porting.md gives.
    @Test func aGenericManagerMakesADocumentOfTheClassItIsGiven() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Shopping.txt")
        let note = DocumentManager.shared.document(NoteDocument.self, at: url)
        #expect(DocumentManager.shared.document(NoteDocument.self, at: url) === note)
        note.text = "milk"
        #expect(await note.save(to: url, for: .forCreating))
        DocumentManager.shared.forget(url)
        let again = DocumentManager.shared.document(NoteDocument.self, at: url)
        #expect(again !== note)
        #expect(await again.open())
        #expect(again.text == "milk")
        #expect(await again.close())
    }

    /// `UIDocument()` is an untitled document in the temporary folder: nothing there until a
    /// save, so opening it fails and changes nothing.
    @Test func aBareUIDocumentIsUntitledInTheTemporaryFolder() async throws {
        let untitled = makeUntitledDocument()
        let temporary = FileManager.default.temporaryDirectory.standardizedFileURL.path
        #expect(untitled.fileURL.deletingLastPathComponent().standardizedFileURL.path == temporary)
        #expect(untitled.fileURL.lastPathComponent.hasPrefix("Untitled-"))
        #expect(!FileManager.default.fileExists(atPath: untitled.fileURL.path))
        #expect(await untitled.open() == false)
        #expect(!FileManager.default.fileExists(atPath: untitled.fileURL.path))
    }

    /// The same in Swift 6: a draft of its own `init()` saved as plain text, whatever its
    /// extension, and its typing undone.
    @Test func aDraftOfItsOwnInitSavesAsPlainTextAndUndoes() async throws {
        let draft = UntitledDraft()
        defer { try? FileManager.default.removeItem(at: draft.fileURL) }
        draft.text = "first words"
        #expect(await draft.save(to: draft.fileURL, for: .forCreating))
        #expect(try String(contentsOf: draft.fileURL, encoding: .utf8) == "first words")
        #expect(await Self.waitUntil { draft.undoManager.canUndo && draft.undoManager.groupingLevel == 0 })
        draft.undoManager.undo()
        #expect(draft.text == "")
        #expect(await draft.close())
    }

    @Test func archiveDocumentUsesAppKitsFurtherMembers() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.txt")
        let archive = ArchiveDocument(readsLazily: true)
        #expect(!archive.isEntireFileLoaded)
        #expect(archive.displayName == "New Archive")
        #expect(archive.saveAsTypes == ["public.plain-text"])
        #expect(
            archive.fileNameExtension(forType: "com.example.archive", saveOperation: .saveOperation)
                == "archive")
        let created: (any Error)? = await withCheckedContinuation { done in
            archive.save(to: url, ofType: "public.plain-text", for: .saveAsOperation) {
                done.resume(returning: $0)
            }
        }
        #expect(created == nil)
        archive.add("one")
        archive.add("two")
        #expect(await Self.waitUntil { (try? String(contentsOf: url, encoding: .utf8)) == "one\ntwo" })

        let export = folder.appendingPathComponent("Export.txt")
        try archive.export(to: export)
        #expect((try? String(contentsOf: export, encoding: .utf8)) == "one\ntwo")
        let exportMode =
            (try FileManager.default.attributesOfItem(atPath: export.path)[.posixPermissions] as? NSNumber)?
            .intValue
        #expect(exportMode == 0o640)

        let steps: (Bool, Bool) = await withCheckedContinuation { done in
            archive.lockThenUnlock { done.resume(returning: ($0, $1)) }
        }
        #expect(steps == (true, true))

        let moved = folder.appendingPathComponent("Moved.txt")
        let moveError: (any Error)? = await withCheckedContinuation { done in
            archive.moveArchive(to: moved) { done.resume(returning: $0) }
        }
        #expect(moveError == nil)
        #expect(archive.fileURL?.standardizedFileURL == moved.standardizedFileURL)

        let size: Int = await withCheckedContinuation { done in archive.measure { done.resume(returning: $0) }
        }
        #expect(size == 7)
        var log: [String] = []
        archive.nestedActivities { log.append($0) }
        #expect(await Self.waitUntil { log == ["outer", "inner", "file access"] })
        #expect(await archive.close())
    }

    @Test func ledgerDocumentLocksMovesAndCountsTheSwift5Way() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Ledger.txt")
        try Data("opening balance".utf8).write(to: url)
        let ledger = try LedgerDocument(contentsOf: url, ofType: "public.plain-text")
        ledger.append("coffee")
        #expect(ledger.status == "unsaved")
        let locked: Bool = await withCheckedContinuation { done in
            ledger.toggleLock { done.resume(returning: $0) }
        }
        #expect(locked && ledger.isLocked)
        #expect(ledger.status == "locked", "locking autosaved first")
        let unlocked: Bool = await withCheckedContinuation { done in
            ledger.toggleLock { done.resume(returning: $0) }
        }
        #expect(unlocked && !ledger.isLocked)
        let archiveFolder = folder.appendingPathComponent("2026", isDirectory: true)
        try FileManager.default.createDirectory(at: archiveFolder, withIntermediateDirectories: true)
        let moveError: (any Error)? = await withCheckedContinuation { done in
            ledger.archive(to: archiveFolder) { done.resume(returning: $0) }
        }
        #expect(moveError == nil)
        #expect(
            FileManager.default.fileExists(atPath: archiveFolder.appendingPathComponent("Ledger.txt").path))
        let count: Int = await withCheckedContinuation { done in
            ledger.countLines { done.resume(returning: $0) }
        }
        #expect(count == 2)
        #expect(await ledger.close())
    }

    @Test func folderWatcherHearsAppearancesAndChanges() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let watcher = FolderWatcher(folder: folder)
        defer { watcher.stop() }
        let file = folder.appendingPathComponent("note.txt")
        var error: NSError?
        NSFileCoordinator(filePresenter: nil).coordinate(writingItemAt: file, options: [], error: &error) {
            url in
            try? Data("one".utf8).write(to: url)
        }
        #expect(error == nil)
        #expect(await Self.waitUntil { watcher.events.contains("appeared note.txt") }, "\(watcher.events)")
        try Data("two".utf8).write(to: file)
        #expect(await Self.waitUntil { watcher.events.contains("changed note.txt") }, "\(watcher.events)")
    }

    @Test func coordinatedMoveAndDeleteThroughFileManager() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("a.journal")
        let journal = JournalDocument(fileURL: url)
        #expect(await journal.save(to: url, for: .forCreating))
        let moved = folder.appendingPathComponent("b.journal")
        try FileManager.default.coordinatedMoveItem(at: url, to: moved)
        #expect(await Self.waitUntil { journal.fileURL.lastPathComponent == "b.journal" })
        try FileManager.default.coordinatedRemoveItem(at: moved)
        #expect(!FileManager.default.fileExists(atPath: moved.path))
        #expect(await Self.waitUntil { journal.documentState.contains(.closed) })
        #expect(throws: (any Error).self) { try FileManager.default.coordinatedRemoveItem(at: moved) }
    }

    @Test func packageReaderReadsAndAdds() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let package = folder.appendingPathComponent("Notes.pkg", isDirectory: true)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: package.appendingPathComponent("notes.txt"))
        try PackageReader.add(Data("png".utf8), named: "image.png", toPackageAt: package)
        let summary = try PackageReader.summary(of: package)
        #expect(summary.names == ["image.png", "notes.txt"])
        #expect(summary.totalBytes == 8)
        #expect(summary.notes == "hello")
        #expect(throws: (any Error).self) {
            try PackageReader.summary(of: package.appendingPathComponent("notes.txt"))
        }
    }

    @Test func sketchDocumentWithUndoInItsModel() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Sketch.sketch")
        let sketch = SketchDocument()
        sketch.addShape(named: "circle", at: 1)
        let created: (any Error)? = await withCheckedContinuation { done in
            sketch.save(to: url, ofType: "com.example.sketch", for: .saveAsOperation) {
                done.resume(returning: $0)
            }
        }
        #expect(created == nil)
        sketch.shapes[0].move(to: 5)
        #expect(await Self.waitUntil { sketch.isDocumentEdited })
        sketch.undoManager?.undo()
        #expect(sketch.shapes[0].x == 1)
        sketch.undoManager?.redo()
        #expect(sketch.shapes[0].x == 5)
        #expect(await sketch.close())

        let reopened = try SketchDocument(contentsOf: url, ofType: "com.example.sketch")
        #expect(reopened.shapes.map(\.name) == ["circle"])
        #expect(reopened.shapes.first?.x == 5)
        #expect(await reopened.close())
    }

    @Test func documentBrowserListsSortsAndBadgesConflicts() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["b.note", "a.note", "c.txt"] {
            try Data(name.utf8).write(to: folder.appendingPathComponent(name))
        }
        let browser = DocumentBrowser(folder: folder, fileExtension: "note")
        defer { browser.stop() }
        #expect(browser.start())
        let clean = { (names: [String]) in
            browser.rows.map(\.name) == names && !browser.rows.contains(where: \.inConflict)
        }
        #expect(await Self.waitUntil { clean(["a.note", "b.note"]) }, "\(browser.rows)")

        // A new document written through a coordinator joins the list, in order.
        var error: NSError?
        NSFileCoordinator(filePresenter: nil).coordinate(
            writingItemAt: folder.appendingPathComponent("aa.note"), options: [], error: &error
        ) { url in
            try? Data("new".utf8).write(to: url, options: .atomic)
        }
        #expect(error == nil)
        #expect(await Self.waitUntil { clean(["a.note", "aa.note", "b.note"]) }, "\(browser.rows)")

        // Another device's version of b.note arrives: its row shows the badge until resolved.
        let b = try #require(browser.url(ofDocumentNamed: "b.note"))
        let incoming = folder.appendingPathComponent("incoming.txt")
        try Data("from the laptop".utf8).write(to: incoming)
        let conflict = try NSFileVersion.addConflictOfItem(
            at: b, withContentsOf: incoming, savingComputer: "laptop")
        #expect(
            await Self.waitUntil { browser.rows.first { $0.name == "b.note" }?.inConflict == true },
            "\(browser.rows)")
        conflict.isResolved = true
        #expect(await Self.waitUntil { clean(["a.note", "aa.note", "b.note"]) }, "\(browser.rows)")
        #expect(browser.refreshes >= 4)
    }
}
