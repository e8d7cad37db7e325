import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// Another program touching only a file's status (a sync agent's version store stamping its
/// identity attribute, a `chmod` to the same mode) is not another writer: the document's next
/// save writes, with no conflict, whether or not the presenter has heard of the change yet.
@MainActor
@Suite struct DocumentStampedFileTests {
    @Test func saveWritesWhenOnlyTheStatusChangeTimeMovedBeforeThePresenterHeard() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello\n", to: "notes.txt")
        let document = try await PresentedTextDocument.opened(at: file)
        let before = try #require(FileStatus(path: file.path))
        // The same mode: only the status-change time moves.
        #expect(chmod(file.path, 0o644) == 0)
        let after = try #require(FileStatus(path: file.path))
        #expect(after.isSameFileAndContents(as: before))
        // Straight to the write, on this turn: no presenter news can arrive in between.
        let write = try document.coordinatedWrite(
            DocumentContents(value: Data("typed\n".utf8), modificationDate: nil),
            attributes: SendableAttributes(value: [:]), to: file, for: .forOverwriting,
            checksOriginal: true, versionStore: nil)
        guard case .written = write else {
            Issue.record("the save was refused: \(write)")
            return
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "typed\n")
        _ = await document.close()
    }

    @Test func saveRefusesWhenTheBytesChangedBeforeThePresenterHeard() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("hello\n", to: "notes.txt")
        let document = try await PresentedTextDocument.opened(at: file)
        // Another writer in place: same inode, new size.
        try Data("another writer's text\n".utf8).write(to: file)
        let write = try document.coordinatedWrite(
            DocumentContents(value: Data("typed\n".utf8), modificationDate: nil),
            attributes: SendableAttributes(value: [:]), to: file, for: .forOverwriting,
            checksOriginal: true, versionStore: nil)
        guard case .changedElsewhere = write else {
            Issue.record("another writer's change was overwritten: \(write)")
            return
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "another writer's text\n")
        _ = await document.close()
    }

    /// What a sync agent does on its first upload of a new document: another version store
    /// on the same root captures the file, stamping its identity; typing then autosaves.
    @Test(arguments: 1...6)
    func typingAutosavesAfterAnotherVersionStoreStampedTheFile(round: Int) async throws {
        let tree = try TemporaryTree()
        let file = tree.file("new \(round).txt")
        let root = tree.file("store/Versions")
        let document = PresentedTextDocument(fileURL: file)
        document.versionStore = VersionStore(root: root)
        document.autosaveConfiguration.quietDelay = .seconds(600)
        document.autosaveConfiguration.maximumDelay = .seconds(600)
        document.text = "first line\n"
        #expect(await document.save(to: file, for: .forCreating))

        let agentStore = VersionStore(root: root)
        let captured = try #require(agentStore.capture(itemAt: file))
        agentStore.commit(captured, savedAt: file)
        // A few rounds save at once, the others after the presenter's news may have come.
        if round > 3 { try await Task.sleep(for: .milliseconds(20 * round)) }
        await document.edit("first line\nsecond line\n")
        #expect(await document.autosave())
        #expect(try String(contentsOf: file, encoding: .utf8) == "first line\nsecond line\n")
        #expect(!document.documentState.contains(.inConflict), "\(document.history)")
        #expect(document.errorCodes.isEmpty, "\(document.errorMessages)")
        #expect(document.preservedUnsavedChanges.isEmpty)
        agentStore.waitUntilIdle()
        _ = await document.close()
    }
}
