import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// A plain text document, as an app's `UIDocument` subclass is.
final class NoteDocument: Document {
    var text = ""

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
    }
}

/// Sync and open documents: a download is a coordinated write, so an open document reloads
/// it, and its unsaved typing is never overwritten.
@Suite struct SyncDocumentTests {
    @MainActor
    @Test func anOpenDocumentReloadsTheDownloadAndItsUnsavedTextBecomesAConflictOnEveryDevice() async throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let a = try SyncDevice("a", remote: remote, in: folder)
        let b = try SyncDevice("b", remote: remote, in: folder)
        try a.write("notes.txt", "v1\n")
        _ = try await Task.detached { try a.sync() }.value
        _ = try await Task.detached { try b.sync() }.value

        let document = NoteDocument(fileURL: b.url("notes.txt"))
        document.versionStore = b.store
        document.autosaveConfiguration.isEnabled = false
        #expect(await document.open())
        #expect(document.text == "v1\n")
        document.text = "typed on b, not saved\n"
        document.updateChangeCount(.done)

        try a.write("notes.txt", "v2 from a\n")
        _ = try await Task.detached { try a.sync() }.value
        // Off the main actor: the document answers the sync's coordinated accesses there.
        let summary = try await Task.detached { try b.sync() }.value
        #expect(summary.failures.isEmpty, "\(summary)")
        #expect(
            await waitUntil { document.text == "v2 from a\n" && !document.hasUnsavedChanges },
            "the document shows the other device's text: \(document.text)")
        #expect(b.read("notes.txt") == "v2 from a\n")
        #expect(b.conflicts("notes.txt") == ["typed on b, not saved\n"], "the typing is a conflict version")
        #expect(await waitUntil { document.documentState.contains(.inConflict) })
        // The document keeps its typing as a conflict version on its own turn, which on a busy
        // machine comes after b's passes ended: b's next pass shares it, as its agent's would.
        _ = try await Task.detached { try b.sync() }.value
        _ = try await Task.detached { try a.sync() }.value
        #expect(a.conflicts("notes.txt") == ["typed on b, not saved\n"], "and the other device shows it")
        _ = await document.close()
    }
}

/// Waits on the main actor, letting it run, until `condition` holds or `timeout` passes.
@MainActor
func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
