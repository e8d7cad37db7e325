import Foundation
import Testing

/// `docs delete` puts documents in the desktop's trash as the freedesktop.org specification
/// lays it out, checked with another implementation: Debian's trash-cli, which scripts/test
/// installs.
@Suite("docs delete: the desktop's trash, read back by trash-cli")
struct DocsTrashTests {
    /// Runs a trash-cli command with the folder's data home (so its home trash), in `directory`.
    static func trashCLI(
        _ command: String, _ arguments: [String], folder: DocsFolder, input: String = "",
        in directory: URL? = nil
    ) throws -> DocsResult {
        try runDocs(
            URL(fileURLWithPath: "/usr/bin/\(command)"), arguments, environment: folder.environment,
            input: Data(input.utf8), scratch: folder.root, directory: directory)
    }

    @Test func trashListShowsTheOriginalPathAndTrashRestorePutsTheDocumentBackByteForByte() throws {
        let folder = try DocsFolder()
        let name = "Café 100% done"
        // Line ends, tabs, a control character and characters of several bytes, compared as bytes.
        let bytes = Data("Œuvre\r\n\tcomplète\u{7F} 😀 100%\n".utf8)
        try bytes.write(to: folder.url(name + ".txt"))
        let edit = try folder.run(
            ["edit", name], environment: ["EDITOR": DocsEditTests.editor("printf \" edited\" >> \"$1\"")])
        #expect(edit.status == 0, "\(edit.error)")
        let edited = bytes + Data(" edited".utf8)
        let versionsBefore = try folder.run(["versions", name, "--json"]).output
        #expect(versionsBefore.contains("\"id\""), "\(versionsBefore)")

        let deleted = try folder.run(["delete", name])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(!folder.exists(name + ".txt"))

        let listed = try Self.trashCLI("trash-list", [], folder: folder)
        #expect(listed.status == 0, "\(listed.error)")
        // Only ours: trash-list also lists the trash of every mounted file system, which other
        // tests may be using.
        let lines = listed.output.split(separator: "\n").filter { $0.contains(folder.container.path) }
        #expect(lines.count == 1, "\(listed.output)")
        // "YYYY-MM-DD hh:mm:ss PATH": the original path, decoded from the info file's Path=.
        #expect(lines.first?.hasSuffix(" " + folder.url(name + ".txt").path) == true, "\(listed.output)")
        #expect(
            lines.first?.prefix(20).wholeMatch(of: #/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /#) != nil,
            "\(listed.output)")

        let restored = try Self.trashCLI(
            "trash-restore", [folder.container.path], folder: folder, input: "0\n", in: folder.container)
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try Data(contentsOf: folder.url(name + ".txt")) == edited)
        #expect(!(try Self.trashCLI("trash-list", [], folder: folder).output.contains(folder.container.path)))
        // The version store was left alone: the versions from before the delete are there,
        // and a restore of one still works.
        #expect(try folder.run(["versions", name, "--json"]).output == versionsBefore)
        let id = try #require(versionsBefore.firstMatch(of: #/"id":\s*"([^"]+)"/#).map { String($0.1) })
        let restore = try folder.run(["restore", name, id])
        #expect(restore.status == 0, "\(restore.error)")
        #expect(try Data(contentsOf: folder.url(name + ".txt")) == bytes)
    }

    @Test func documentsDeletedUnderOneNameAreListedAndRestoredApart() throws {
        let folder = try DocsFolder()
        for round in 1...3 {
            try folder.write("Notes.txt", "round \(round)")
            #expect(try folder.run(["delete", "Notes"]).status == 0)
        }
        let listed = try Self.trashCLI("trash-list", [], folder: folder)
        let path = folder.url("Notes.txt").path
        #expect(
            listed.output.split(separator: "\n").filter { $0.hasSuffix(" " + path) }.count == 3,
            "\(listed.output)")
        let files = folder.dataHome.appendingPathComponent("Trash/files")
        let names = try FileManager.default.contentsOfDirectory(atPath: files.path).sorted()
        #expect(names == ["Notes 2.txt", "Notes 3.txt", "Notes.txt"])
        for (fileName, round) in [("Notes.txt", 1), ("Notes 2.txt", 2), ("Notes 3.txt", 3)] {
            let text = try String(contentsOf: files.appendingPathComponent(fileName), encoding: .utf8)
            #expect(text == "round \(round)")
        }
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs, another file system, needs root (CI runs as root)"))
    func aDocumentOnAnotherFileSystemGoesToItsTrashWhichTrashCLIReadsAndRestores() throws {
        let folder = try DocsFolder()
        // The container on a file system of its own, apart from the data home's trash.
        let mount = try Process.run(
            URL(fileURLWithPath: "/bin/mount"),
            arguments: ["-t", "tmpfs", "-o", "size=4m", "tmpfs", folder.container.path])
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0)
        defer {
            _ = try? Process.run(
                URL(fileURLWithPath: "/bin/umount"), arguments: ["-l", folder.container.path]
            )
            .waitUntilExit()
        }
        let text = "on its own volume\n"
        try folder.write("Volume notes.txt", text)
        let deleted = try folder.run(["delete", "Volume notes"])
        #expect(deleted.status == 0, "\(deleted.error)")
        let trash = folder.container.appendingPathComponent(".Trash-\(getuid())")
        #expect(deleted.output == trash.appendingPathComponent("files/Volume notes.txt").path + "\n")
        let record = try String(
            contentsOf: trash.appendingPathComponent("info/Volume notes.txt.trashinfo"), encoding: .utf8)
        #expect(record.contains("\nPath=Volume%20notes.txt\n"), "\(record)")
        // Nothing in the home trash: the document was not copied across.
        #expect(
            !FileManager.default.fileExists(
                atPath: folder.dataHome.appendingPathComponent("Trash/files").path))

        let listed = try Self.trashCLI("trash-list", [], folder: folder)
        let path = folder.url("Volume notes.txt").path
        #expect(
            listed.output.split(separator: "\n").contains { $0.hasSuffix(" " + path) }, "\(listed.output)")
        let restored = try Self.trashCLI(
            "trash-restore", [folder.container.path], folder: folder, input: "0\n", in: folder.container)
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try folder.contents("Volume notes.txt") == text)
    }

    @Test func aTrashThatIsASymbolicLinkIsRefusedAndTheDocumentStays() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "stay")
        let elsewhere = folder.root.appendingPathComponent("elsewhere", isDirectory: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: folder.dataHome.appendingPathComponent("Trash"), withDestinationURL: elsewhere)
        let result = try folder.run(["delete", "Notes"])
        #expect(result.status == 1)
        #expect(result.error.contains("cannot delete “Notes”"), "\(result.error)")
        #expect(result.error.contains("symbolic link"), "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "stay")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }
}
