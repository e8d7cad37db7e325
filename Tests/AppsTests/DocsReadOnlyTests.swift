import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("docs: read-only documents")
struct DocsReadOnlyTests {
    @Test func editRefusesAReadOnlyDocumentBeforeTheEditorRuns() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "keep me\n")
        let path = folder.url("Notes.txt").path
        chmod(path, 0o444)
        var before = stat()
        #expect(stat(path, &before) == 0)
        let marker = folder.root.appendingPathComponent("editor-ran")
        let result = try folder.run(
            ["edit", "Notes"],
            environment: ["EDITOR": DocsEditTests.editor("touch \(marker.path); printf more >> \"$1\"")])

        #expect(result.status == 1)
        #expect(result.error.hasPrefix("docs: cannot edit “Notes”: \(path) is read-only"), "\(result.error)")
        #expect(result.error.contains("mode 444"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the editor ran")
        #expect(try folder.contents("Notes.txt") == "keep me\n")
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_ino == before.st_ino)
        #expect(after.st_mode & 0o7777 == 0o444)
    }

    /// Root may write anything: as root, `docs` runs as `nobody` here, for whom root's 0644
    /// file is read-only.
    @Test func editRefusesADocumentThisUserCannotWrite() throws {
        let folder = try DocsFolder()
        try folder.write("Theirs.txt", "not yours\n")
        chmod(folder.url("Theirs.txt").path, 0o644)
        let result = try folder.run(["edit", "Theirs"], environment: ["EDITOR": "true"], unprivileged: true)
        #expect(result.status == 1)
        #expect(
            result.error.hasPrefix(
                "docs: cannot edit “Theirs”: \(folder.url("Theirs.txt").path) is read-only"),
            "\(result.error)")
        #expect(try folder.contents("Theirs.txt") == "not yours\n")
    }
}
