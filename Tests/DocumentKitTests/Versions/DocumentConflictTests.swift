import DocumentKit
import Foundation
import Testing

@Suite struct DocumentConflictTests {
    @MainActor
    @Test func fileChangedUnderUnsavedEditsBecomesAConflictVersionUntilResolved() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("original", to: "notes.txt")
        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        let states = StateLog(document)
        document.text = "my unsaved words"
        document.updateChangeCount(.done)

        // Another program writes in place, uncoordinated, while the edit is unsaved.
        try "theirs".write(toFile: file.path, atomically: false, encoding: .utf8)
        // Whether the save or inotify's news comes first, theirs stays and ours is a conflict.
        _ = await document.save(to: file, for: .forOverwriting)
        #expect(await waitUntil { document.text == "theirs" && document.documentState.contains(.inConflict) })
        #expect(try String(contentsOf: file, encoding: .utf8) == "theirs")
        #expect(!document.hasUnsavedChanges)
        #expect(
            await waitUntil { states.states.contains { $0.contains(.inConflict) } },
            "the state change was posted")

        let conflicts = store.unresolvedConflictVersionsOfItem(at: file)
        let conflict = try #require(conflicts.first)
        #expect(conflicts.count == 1)
        #expect(contents(of: conflict) == "my unsaved words")
        #expect(conflict.localizedNameOfSavingComputer == ProcessInfo.processInfo.hostName)
        #expect(abs(conflict.modificationDate?.timeIntervalSinceNow ?? 100) < 60)
        #expect(document.preservedUnsavedChanges.contains(conflict.url))
        // Nothing was left beside the user's file.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: tree.url.path).sorted() == [
                "notes.txt", "store",
            ])

        states.clear()
        conflict.isResolved = true
        #expect(await waitUntil { !document.documentState.contains(.inConflict) })
        #expect(
            await waitUntil { states.states.contains { !$0.contains(.inConflict) } },
            "the state change was posted")
        _ = await document.close()
    }

    @MainActor
    @Test func openingADocumentWithUnresolvedConflictsSetsInConflict() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("current", to: "notes.txt")
        let theirs = try tree.write("theirs", to: "theirs.txt")
        let conflict = try store.addConflictOfItem(at: file, withContentsOf: theirs, options: .byMoving)

        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        #expect(document.documentState.contains(.inConflict))

        try store.removeOtherVersionsOfItem(at: file)
        #expect(await waitUntil { !document.documentState.contains(.inConflict) })
        #expect(!conflict.hasLocalContents)
        _ = await document.close()
    }

    @MainActor
    @Test func unsavedEditsAreKeptBesideTheFileWhenTheStoreCannotTakeThem() async throws {
        let tree = try TemporaryTree()
        try tree.write("in the way", to: "blocked")
        let store = VersionStore(root: tree.file("blocked/Versions"))
        let file = try tree.write("original", to: "notes.txt")
        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        document.text = "my unsaved words"
        document.updateChangeCount(.done)
        try "theirs".write(toFile: file.path, atomically: false, encoding: .utf8)
        _ = await document.save(to: file, for: .forOverwriting)
        #expect(await waitUntil { document.text == "theirs" && !document.preservedUnsavedChanges.isEmpty })
        let kept = try #require(document.preservedUnsavedChanges.first)
        #expect(kept.deletingLastPathComponent().standardizedFileURL == tree.url.standardizedFileURL)
        #expect(try String(contentsOf: kept, encoding: .utf8) == "my unsaved words")
        #expect(store.lastError != nil)
        _ = await document.close()
    }
}
