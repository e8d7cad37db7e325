import DocumentKit
import Foundation
import Testing

/// Issue 9, "Never lose a word": what the real `docs` does to the text it replaces, and
/// what its errors name.
@Suite("docs: never lose a word")
struct DocsConflictSafetyTests {
    @Test func restoreKeepsTheTextItReplaces() throws {
        let folder = try DocsFolder()
        #expect(try folder.run(["new", "Notes", "--from", "-"], input: Data("first".utf8)).status == 0)
        let edit = try folder.run(
            ["edit", "Notes"], environment: ["EDITOR": DocsEditTests.editor("printf \" second\" >> \"$1\"")])
        #expect(edit.status == 0, "\(edit.error)")
        let store = VersionStore(root: folder.dataHome.appendingPathComponent("DocumentKit/Versions"))
        let notes = folder.url("Notes.txt")
        let first = try #require(
            store.otherVersionsOfItem(at: notes).first {
                (try? String(contentsOf: $0.url, encoding: .utf8)) == "first"
            })

        let restored = try folder.run(["restore", "Notes", first.persistentIdentifier])
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try folder.contents("Notes.txt") == "first")
        // What the restore replaced is a version now, listed and restorable.
        let replaced = try #require(
            store.otherVersionsOfItem(at: notes).first {
                (try? String(contentsOf: $0.url, encoding: .utf8)) == "first second"
            })
        #expect(try folder.run(["versions", "Notes"]).output.contains(replaced.persistentIdentifier))
        #expect(try folder.run(["restore", "Notes", replaced.persistentIdentifier]).status == 0)
        #expect(try folder.contents("Notes.txt") == "first second")
    }

    @Test func renameOntoAnExistingNameNamesThatDocument() throws {
        let folder = try DocsFolder()
        try folder.write("A.txt", "a")
        try folder.write("B.txt", "b")
        let result = try folder.run(["rename", "A", "B"])
        #expect(result.status == 1)
        #expect(result.error.contains("a document named “B” already exists"), "\(result.error)")
        #expect(result.error.contains(folder.url("B.txt").path), "\(result.error)")
        #expect(!result.error.contains(folder.url("A.txt").path), "\(result.error)")
        #expect(try folder.contents("A.txt") == "a")
        #expect(try folder.contents("B.txt") == "b")
    }
}
