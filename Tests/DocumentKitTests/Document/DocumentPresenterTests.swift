import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A text document with a delegate, as seed 000's editor has: told of every reload.
final class PresentedTextDocument: Document {
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.setActionName("Text Change")
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }
    /// The delegate: called with the text after each load once the document is open.
    var didReload: ((String) -> Void)?
    var errorCodes: [DocumentKitError.Code] = []
    /// Every error reported, in words, for a failure message.
    var errorMessages: [String] = []

    /// What the document took and loaded, in order, for a failure message.
    var history: [String] = []

    override func contents(forType typeName: String) throws -> Any {
        history.append("took \(text.debugDescription) dirty=\(hasUnsavedChanges)")
        return Data(text.utf8)
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        history.append(
            "load \(String(decoding: data, as: UTF8.self).debugDescription) over \(text.debugDescription)")
        text = String(decoding: data, as: UTF8.self)
        didReload?(text)
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        if let error = error as? DocumentKitError { errorCodes.append(error.code) }
        errorMessages.append("\(error)")
        history.append("error \(error)")
        finishedHandlingError(error, recovered: false)
    }

    /// Opens the document at `url` with autosave far away, so that only coordination saves it.
    static func opened(at url: URL) async throws -> PresentedTextDocument {
        let document = PresentedTextDocument(fileURL: url)
        document.autosaveConfiguration.quietDelay = .seconds(600)
        document.autosaveConfiguration.maximumDelay = .seconds(600)
        try #require(await document.open())
        return document
    }

    /// Edits the text and waits for the undo group to close at the end of the turn, which
    /// is what marks the document dirty.
    func edit(_ newText: String) async {
        text = newText
        #expect(await waitUntil { self.hasUnsavedChanges })
    }
}

@Suite struct DocumentPresenterTests {
    // MARK: Writers that do not coordinate

    @MainActor
    @Test func uncoordinatedEchoReachesOpenDocumentWhichReloadsAndTellsItsDelegate() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello\n", to: "notes.txt")
        let document = try await PresentedTextDocument.opened(at: file)
        defer { document.didReload = nil }
        var toldAt: ContinuousClock.Instant?
        document.didReload = { text in if text == "x\n" { toldAt = .now } }

        let written = ContinuousClock.now
        try shell("echo x > '\(file.path)'")
        #expect(await waitUntil { toldAt != nil }, "the delegate was never told of the new contents")
        if let toldAt {
            print(
                "DocumentPresenterTests: the delegate heard of an uncoordinated write after \(written.duration(to: toldAt))"
            )
        }
        #expect(document.text == "x\n")
        #expect(!document.hasUnsavedChanges)
        _ = await document.close()
    }

    @MainActor
    @Test func uncoordinatedWriteKeepsTheUnsavedTextAsAConflictVersion() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello\n", to: "notes.txt")
        let store = VersionStore(root: tree.file("store/Versions"))
        let document = PresentedTextDocument(fileURL: file)
        document.versionStore = store
        #expect(await document.open())
        await document.edit("my unsaved words")
        #expect(document.hasUnsavedChanges)

        try shell("echo x > '\(file.path)'")
        #expect(await waitUntil { document.text == "x\n" && !document.hasUnsavedChanges })
        #expect(try String(contentsOf: file, encoding: .utf8) == "x\n")
        // Nothing is written beside the user's file: the unsaved text is a conflict version.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: tree.url.path).sorted() == [
                "notes.txt", "store",
            ])
        let conflict = try #require(store.unresolvedConflictVersionsOfItem(at: file).first)
        #expect(try String(contentsOf: conflict.url, encoding: .utf8) == "my unsaved words")
        #expect(await waitUntil { document.documentState.contains(.inConflict) })
        _ = await document.close()
        #expect(try String(contentsOf: file, encoding: .utf8) == "x\n")
    }

    @MainActor
    @Test func saveAfterAnUncoordinatedWriteNeverOverwritesIt() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello\n", to: "notes.txt")
        let document = try await PresentedTextDocument.opened(at: file)
        await document.edit("my unsaved words")

        try shell("echo x > '\(file.path)'")
        // Whether the save or inotify's news comes first, the other writer's file stays.
        let saved = await document.save(to: file, for: .forOverwriting)
        #expect(await waitUntil { document.text == "x\n" && !document.hasUnsavedChanges })
        if !saved { #expect(document.errorCodes.contains(.editedElsewhere)) }
        #expect(try String(contentsOf: file, encoding: .utf8) == "x\n")
        let keptTexts = try document.preservedUnsavedChanges.map {
            try String(contentsOf: $0, encoding: .utf8)
        }
        #expect(keptTexts.contains("my unsaved words"), "\(document.preservedUnsavedChanges)")
        _ = await document.close()
    }

    // MARK: A document in another process

    @Test func documentInAnotherProcessSavesItsEditBeforeACoordinatedWrite() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("original", to: "notes.txt")
        let child = try CoordinationChild(["coord-document", file.path, "edited in child"])
        #expect(child.waitForLine("ready") != nil, "\(child.lines)")

        let seen = try FileCoordinator().coordinate(writingItemAt: file, options: .forMerging) { url in
            let seen = try String(contentsOf: url, encoding: .utf8)
            try SafeSave.write(Data((seen + " + test").utf8), to: url)
            return seen
        }
        #expect(seen == "edited in child", "the write came before the other process's document saved")
        #expect(child.waitForLine("loaded edited in child + test") != nil, "\(child.lines)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "edited in child + test")
        #expect(!child.lines.contains { $0.hasPrefix("error") }, "\(child.lines)")
        child.kill()
    }

    @Test func documentInAnotherProcessKeepsItsUnsavedTextWhenAnUncoordinatedWriterChangesTheFile() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("original", to: "notes.txt")
        let child = try CoordinationChild(
            ["coord-document", file.path, "edited in child"], dataHome: tree.file("data"))
        #expect(child.waitForLine("ready") != nil, "\(child.lines)")

        try shell("echo x > '\(file.path)'")
        #expect(child.waitForLine("loaded x\\n") != nil, "\(child.lines)")
        child.kill()
        // The child's store is its own (XDG_DATA_HOME in the tree): its unsaved text is a
        // conflict version there, and nothing was written beside the user's file.
        let names = try FileManager.default.contentsOfDirectory(atPath: tree.url.path).sorted()
        #expect(!names.contains { $0.hasPrefix("notes (unsaved changes from ") }, "\(names)")
        let store = VersionStore(root: tree.file("data/DocumentKit/Versions"))
        let conflict = try #require(store.unresolvedConflictVersionsOfItem(at: file).first)
        #expect(try String(contentsOf: conflict.url, encoding: .utf8) == "edited in child")
        #expect(try String(contentsOf: file, encoding: .utf8) == "x\n")
    }

    // MARK: Moves and deletions

    @MainActor
    @Test func coordinatedRenameUpdatesTheFileURLOfAnOpenDocument() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello", to: "notes.txt")
        let renamed = tree.file("renamed.txt")
        let document = try await PresentedTextDocument.opened(at: file)

        try await onBackground { try coordinatedMove(file, to: renamed) }
        #expect(
            await waitUntil { document.fileURL.lastPathComponent == "renamed.txt" }, "\(document.fileURL)")

        await document.edit("after the move")
        #expect(await document.autosave(), "\(document.errorCodes)")
        #expect(try String(contentsOf: renamed, encoding: .utf8) == "after the move")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        _ = await document.close()
    }

    @MainActor
    @Test func saveQueuedBehindARenameFollowsTheFile() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello", to: "notes.txt")
        let renamed = tree.file("renamed.txt")
        let document = try await PresentedTextDocument.opened(at: file)

        // While the rename holds the file, the document is edited and saved: the save takes
        // its snapshot and URL now, and waits for the rename to end.
        try await onBackground {
            let coordinator = FileCoordinator()
            try coordinator.coordinate(
                writingItemAt: file, options: .forMoving, writingItemAt: renamed, options: .forReplacing
            ) { from, to in
                let asked = DispatchSemaphore(value: 0)
                DispatchQueue.main.async {
                    MainActor.assumeIsolated {
                        document.text = "edited during the move"
                        document.save(to: document.fileURL, for: .forOverwriting)
                    }
                    asked.signal()
                }
                // The main queue may be slow to get to it on a loaded machine: the save must
                // be asked for before the move, or it is a save to the old name after it.
                _ = asked.wait(timeout: .now() + 20)
                Thread.sleep(forTimeInterval: 0.3)
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
        }
        #expect(await waitUntil { document.fileURL.lastPathComponent == "renamed.txt" })
        // The queued save may not write the old name back; the edit is saved at the new one.
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(await document.autosave(), "\(document.errorCodes)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try String(contentsOf: renamed, encoding: .utf8) == "edited during the move")
        _ = await document.close()
    }

    @Test func coordinatedRenameUpdatesTheFileURLOfADocumentInAnotherProcess() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello", to: "notes.txt")
        let renamed = tree.file("renamed.txt")
        let child = try CoordinationChild(["coord-document", file.path, "-"])
        #expect(child.waitForLine("ready") != nil, "\(child.lines)")

        try coordinatedMove(file, to: renamed)
        #expect(
            child.waitForLine { $0.hasPrefix("url ") && $0.hasSuffix("/renamed.txt") } != nil,
            "\(child.lines)")
        child.kill()
    }

    @MainActor
    @Test func coordinatedDeletionClosesTheDocumentWithoutWritingTheFileBack() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello", to: "notes.txt")
        let document = try await PresentedTextDocument.opened(at: file)
        await document.edit("unsaved when deleted")

        try await onBackground {
            try FileCoordinator().coordinate(writingItemAt: file, options: .forDeleting) {
                try FileManager.default.removeItem(at: $0)
            }
        }
        #expect(await waitUntil { document.documentState.contains(.closed) })
        try await Task.sleep(for: .milliseconds(500))
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(await document.autosave())
        #expect(await document.close())
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func coordinatedDeletionClosesADocumentInAnotherProcess() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello", to: "notes.txt")
        let child = try CoordinationChild(["coord-document", file.path, "unsaved when deleted"])
        #expect(child.waitForLine("ready") != nil, "\(child.lines)")

        try FileCoordinator().coordinate(writingItemAt: file, options: .forDeleting) {
            try FileManager.default.removeItem(at: $0)
        }
        #expect(child.waitForLine("closed") != nil, "\(child.lines)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        // Asked to quit, the other process saves its open documents: the deleted one is not among them.
        child.kill(SIGTERM)
        #expect(!FileManager.default.fileExists(atPath: file.path), "\(child.lines)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.url.path) == [])
    }

    /// Another program writes the file in place and moves it away at once (the adversarial
    /// writer test lost a word so: its document took no notice of the write and went on
    /// showing, as saved, a text no longer on disk). The change, looked at while the file was
    /// gone from the document's path, is looked at again where the file went: the document
    /// keeps what it showed as history and loads the other program's text.
    @MainActor
    @Test func aWriteFollowedAtOnceByAMoveIsReloaded() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("saved by the document", to: "notes.txt")
        let away = tree.file("away.txt")
        let document = PresentedTextDocument(fileURL: file)
        document.versionStore = VersionStore(root: tree.file("store"))
        try #require(await document.open())

        try shell("printf theirs > '\(file.path)' && mv '\(file.path)' '\(away.path)'")
        #expect(await waitUntil { document.fileURL.lastPathComponent == "away.txt" }, "\(document.fileURL)")
        #expect(await waitUntil(timeout: .seconds(20)) { document.text == "theirs" }, "\(document.text)")
        document.versionStore?.waitUntilIdle()
        let history = document.versionStore?.otherVersionsOfItem(at: away).compactMap(contents(of:)) ?? []
        #expect(history.contains("saved by the document"), "\(history)")
        #expect(await document.close())
    }

    @MainActor
    @Test func uncoordinatedMoveAndRemovalReachAnOpenDocument() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello", to: "notes.txt")
        let renamed = tree.file("renamed.txt")
        let document = try await PresentedTextDocument.opened(at: file)

        try shell("mv '\(file.path)' '\(renamed.path)'")
        #expect(
            await waitUntil { document.fileURL.lastPathComponent == "renamed.txt" }, "\(document.fileURL)")
        await document.edit("after the move")
        #expect(await document.autosave(), "\(document.errorCodes)")
        #expect(try String(contentsOf: renamed, encoding: .utf8) == "after the move")

        try shell("rm '\(renamed.path)'")
        #expect(await waitUntil { document.documentState.contains(.closed) })
        try await Task.sleep(for: .milliseconds(500))
        #expect(await document.close())
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.url.path) == [])
    }
}

/// Renames `source` to `destination` the way a coordinated file manager does.
func coordinatedMove(_ source: URL, to destination: URL) throws {
    let coordinator = FileCoordinator()
    try coordinator.coordinate(
        writingItemAt: source, options: .forMoving, writingItemAt: destination, options: .forReplacing
    ) {
        from, to in
        try FileManager.default.moveItem(at: from, to: to)
        coordinator.item(at: from, didMoveTo: to)
    }
}

/// Runs blocking work on a thread of its own, never on the main actor (whose documents a
/// coordinated write waits for) nor on the cooperative pool.
func onBackground<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Polls `condition` on the main actor until it holds; false after a generous bound, which
/// is a failure, not a wait the test relies on (long: the whole suite shares one main actor).
@MainActor
func waitUntil(timeout: Duration = .seconds(60), _ condition: @MainActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
