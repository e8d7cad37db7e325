import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("docs: list, new, show, rename, delete, usage")
struct DocsCommandTests {
    // MARK: - Help, version, usage

    @Test func helpListsEveryCommandAndEachCommandHasHelp() throws {
        let folder = try DocsFolder()
        let help = try folder.run(["--help"])
        #expect(help.status == 0)
        for command in [
            "list", "new", "show", "edit", "rename", "delete", "versions", "restore", "resolve", "watch",
        ] {
            #expect(help.output.contains("  \(command)"), "\(command) missing from docs --help")
            let own = try folder.run([command, "--help"])
            #expect(own.status == 0)
            #expect(own.output.hasPrefix("Usage: docs \(command)"))
            #expect(try folder.run(["help", command]).output == own.output)
        }
        #expect(try folder.run(["-h"]).output == help.output)
    }

    /// `docs --help` shows every form of remote and every flag `remote add` takes, as
    /// `docs remote --help` does.
    @Test func helpShowsEveryRemoteFormAndFlag() throws {
        let folder = try DocsFolder()
        let help = try folder.run(["--help"]).output
        let remoteHelp = try folder.run(["remote", "--help"]).output
        for shown in [
            "s3://BUCKET/PREFIX", "--password-file", "--on-demand", "--unsafe-server", "--allow-http",
            "--endpoint", "--region", "--profile", "--interval", "--identifier",
        ] {
            #expect(help.contains(shown), "\(shown) missing from docs --help")
            #expect(remoteHelp.contains(shown), "\(shown) missing from docs remote --help")
        }
    }

    @Test func versionNamesToolAndLibrary() throws {
        let result = try DocsFolder().run(["--version"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("docs "))
        #expect(result.output.contains("DocumentKit"))
    }

    @Test(arguments: [
        [String](), ["frobnicate"], ["list", "--bogus"], ["list", "extra"], ["show"], ["rename", "A"],
        ["new", "A", "B"], ["show", "A", "--json"], ["resolve", "A"], ["resolve", "A", "--keep", "yours"],
        ["list", "--keep", "mine"], ["show", "A", "--from", "x"], ["list", "--container"],
        ["--json=yes", "list"],
    ])
    func badUsageExitsTwo(arguments: [String]) throws {
        let folder = try DocsFolder()
        try folder.write("A.txt", "a")
        let result = try folder.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.error)")
        #expect(result.error.hasPrefix("docs: "))
        #expect(result.error.contains("--help"))
        #expect(result.output.isEmpty)
    }

    @Test(arguments: ["a/b", ".hidden", "", "   ", "tab\there"])
    func nameThatCannotBeADocumentIsAUsageError(name: String) throws {
        let folder = try DocsFolder()
        for arguments in [["new", name], ["show", name], ["rename", "x", name], ["delete", name]] {
            if arguments[0] == "rename" { try folder.write("x.txt", "x") }
            let result = try folder.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.error)")
            #expect(result.error.contains("“\(name)”"), "\(result.error)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.container.path)
        #expect(left == ["x.txt"])
    }

    @Test(arguments: [
        ["show", "Nope"], ["edit", "Nope"], ["rename", "Nope", "Other"], ["delete", "Nope"],
        ["versions", "Nope"], ["restore", "Nope", "1"],
    ])
    func missingDocumentFailsNamingItAndTheContainer(arguments: [String]) throws {
        let folder = try DocsFolder()
        let result = try folder.run(arguments)
        #expect(result.status == 1)
        #expect(result.error.hasPrefix("docs: cannot "))
        #expect(result.error.contains("“Nope”"))
        #expect(result.error.contains("no such document in \(folder.container.path)"), "\(result.error)")
    }

    @Test func containerThatIsAFileFailsNamingIt() throws {
        let folder = try DocsFolder()
        let file = folder.root.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        for result in [
            try folder.run(["--container", file.path, "list"]),
            try folder.run(["list", "--container=\(file.path)"]),
            try folder.run(["list"], environment: ["STE_CONTAINER": file.path]),
        ] {
            #expect(result.status == 1)
            #expect(
                result.error == "docs: cannot use the container “\(file.path)”: it is a file, not a folder\n")
        }
    }

    /// A container named by `--container` or `$STE_CONTAINER` that is not there is refused,
    /// and nothing is made: a typo never becomes a folder a sync fills with the remote.
    @Test func aNamedContainerThatIsNotThereIsRefusedAndNotMade() throws {
        let folder = try DocsFolder()
        let typo = folder.root.appendingPathComponent("Contianer")
        for result in [
            try folder.run(["--container", typo.path, "list"]),
            try folder.run(["sync", "--container", typo.path, "--once"]),
            try folder.run(["list"], environment: ["STE_CONTAINER": typo.path]),
        ] {
            #expect(result.status == 1)
            #expect(
                result.error.hasPrefix(
                    "docs: cannot use the container “\(typo.path)”: there is no such folder"),
                "\(result.error)")
            #expect(!FileManager.default.fileExists(atPath: typo.path))
        }
    }

    // MARK: - new

    @Test func newCreatesAnEmptyDocumentAndPrintsItsPath() throws {
        let folder = try DocsFolder()
        let result = try folder.run(["new", "Shopping list"])
        #expect(result.status == 0)
        #expect(result.output == folder.url("Shopping list.txt").path + "\n")
        #expect(try folder.contents("Shopping list.txt") == "")
    }

    @Test func newTakesTextFromAFileOrStandardInput() throws {
        let folder = try DocsFolder()
        let text = "日本語のテキスト\nsecond line\n"
        let source = folder.root.appendingPathComponent("source.txt")
        try Data(text.utf8).write(to: source)
        #expect(try folder.run(["new", "From file", "--from", source.path]).status == 0)
        #expect(try folder.run(["new", "From stdin.txt", "--from", "-"], input: Data(text.utf8)).status == 0)
        #expect(try folder.contents("From file.txt") == text)
        #expect(try folder.contents("From stdin.txt") == text)
    }

    @Test func newRefusesAnExistingDocumentAndLeavesIt() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "keep me")
        let result = try folder.run(["new", "Notes", "--from", "-"], input: Data("other".utf8))
        #expect(result.status == 1)
        #expect(result.error.contains("cannot create “Notes”"))
        #expect(result.error.contains("exists"))
        #expect(try folder.contents("Notes.txt") == "keep me")
    }

    @Test func newRefusesTextThatIsNotUTF8() throws {
        let folder = try DocsFolder()
        let bytes = Data([0x61, 0x62, 0xFF, 0x63])
        let fromInput = try folder.run(["new", "Bad", "--from", "-"], input: bytes)
        #expect(fromInput.status == 1)
        #expect(
            fromInput.error.contains("standard input is not UTF-8 text (the byte at offset 2"),
            "\(fromInput.error)")
        let source = folder.root.appendingPathComponent("binary.bin")
        try bytes.write(to: source)
        let fromFile = try folder.run(["new", "Bad", "--from", source.path])
        #expect(fromFile.status == 1)
        #expect(fromFile.error.contains("“\(source.path)” is not UTF-8 text"))
        #expect(!folder.exists("Bad.txt"))
        let missing = try folder.run(["new", "Bad", "--from", "/nonexistent/file"])
        #expect(missing.status == 1)
        #expect(missing.error.contains("cannot read “/nonexistent/file”: No such file or directory"))
        #expect(!folder.exists("Bad.txt"))
    }

    // MARK: - list

    @Test func listJSONHasEveryDocumentAndNothingElse() throws {
        let folder = try DocsFolder()
        try folder.write("b.txt", "bee")
        try folder.write("A.txt", "")
        try folder.write("日本.txt", "日本")
        try folder.write("with \"quote\".txt", "q")
        try folder.write(".hidden.txt", "not a document")
        // Not a document, but a file sync carries: listed by its file name (item 9 of issue 28).
        try folder.write("notes.md", "not a document")
        try FileManager.default.createDirectory(
            at: folder.url("folder.txt"), withIntermediateDirectories: false)
        let modified = Date(timeIntervalSince1970: 1_700_000_000.25)
        try FileManager.default.setAttributes(
            [.modificationDate: modified], ofItemAtPath: folder.url("b.txt").path)

        let result = try folder.run(["list", "--json"])
        #expect(result.status == 0)
        let listing = try JSONDecoder().decode(DocsListing.self, from: result.outputData)
        #expect(listing.container == folder.container.path)
        #expect(listing.documents.map(\.name) == ["A", "b", "notes.md", "with \"quote\"", "日本"])
        #expect(
            listing.documents.map(\.file) == ["A.txt", "b.txt", "notes.md", "with \"quote\".txt", "日本.txt"])
        #expect(listing.documents.map(\.size) == [0, 3, 14, 1, 6])
        #expect(listing.documents.map(\.path) == listing.documents.map { folder.url($0.file).path })
        #expect(listing.documents.allSatisfy { $0.conflicts == 0 })
        #expect(listing.documents[1].modified == "2023-11-14T22:13:20.250Z")
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(listing.documents.allSatisfy { parser.date(from: $0.modified) != nil })
    }

    @Test func listOfAnEmptyContainerIsEmpty() throws {
        let folder = try DocsFolder()
        let json = try folder.run(["list", "--json"])
        #expect(try JSONDecoder().decode(DocsListing.self, from: json.outputData).documents.isEmpty)
        let text = try folder.run(["list"])
        #expect(text.status == 0)
        #expect(text.output.isEmpty)
    }

    @Test func listTextShowsSizeDateAndName() throws {
        let folder = try DocsFolder()
        try folder.write("Long one.txt", String(repeating: "x", count: 1234))
        try folder.write("Short.txt", "x")
        let lines = try folder.run(["list"]).output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("1234  20"))
        #expect(lines[0].hasSuffix("  Long one"))
        #expect(lines[1].hasPrefix("   1  20"))
        #expect(lines[1].hasSuffix("  Short"))
    }

    // MARK: - show

    @Test func showPrintsTheTextExactly() throws {
        let folder = try DocsFolder()
        let text = "first\n日本語\n\nno newline at the end"
        try folder.write("Notes.txt", text)
        let result = try folder.run(["show", "Notes"])
        #expect(result.status == 0)
        #expect(result.output == text)
        #expect(try folder.run(["show", "Notes.txt"]).output == text)
    }

    @Test func showRefusesABinaryFile() throws {
        let folder = try DocsFolder()
        try Data([0x00, 0x01, 0xC3, 0x28, 0xFF]).write(to: folder.url("Binary.txt"))
        let result = try folder.run(["show", "Binary"])
        #expect(result.status == 1)
        #expect(result.outputData.isEmpty)
        #expect(
            result.error.contains("cannot show “Binary”: it is not UTF-8 text (the byte at offset 2"),
            "\(result.error)")
    }

    @Test func showRefusesAFolderNamedLikeADocument() throws {
        let folder = try DocsFolder()
        try FileManager.default.createDirectory(
            at: folder.url("Folder.txt"), withIntermediateDirectories: false)
        let result = try folder.run(["show", "Folder"])
        #expect(result.status == 1)
        #expect(result.error.contains("cannot show “Folder”: it is not a regular file"), "\(result.error)")
    }

    /// Root reads any file: as root, `docs` runs as `nobody` here.
    @Test func showReportsAnUnreadableDocument() throws {
        let folder = try DocsFolder()
        try folder.write("Secret.txt", "s")
        chmod(folder.url("Secret.txt").path, 0)
        let result = try folder.run(["show", "Secret"], unprivileged: true)
        #expect(result.status == 1)
        #expect(result.error.contains("cannot show “Secret”: Permission denied"), "\(result.error)")
        // It names the file that cannot be read, not the container it is in.
        #expect(result.error.hasSuffix("(\(folder.url("Secret.txt").path))\n"), "\(result.error)")
        #expect(try folder.contents("Secret.txt") == "s")
    }

    @Test func showPrintsA50MiBDocument() throws {
        let folder = try DocsFolder()
        let line = Data("0123456789abcdef日本語\n".utf8)
        var data = Data(capacity: 50 << 20)
        while data.count + line.count <= 50 << 20 { data.append(line) }
        try data.write(to: folder.url("Big.txt"))
        let result = try folder.run(["show", "Big"])
        #expect(result.status == 0)
        #expect(result.outputData == data)
    }

    // MARK: - rename and delete

    @Test func renameMovesTheDocumentAndNeverReplacesAnother() throws {
        let folder = try DocsFolder()
        try folder.write("Draft.txt", "draft")
        try folder.write("Letter.txt", "letter")
        let refused = try folder.run(["rename", "Draft", "Letter"])
        #expect(refused.status == 1)
        #expect(
            refused.error.contains("cannot rename “Draft”: a document named “Letter” already exists"),
            "\(refused.error)")
        #expect(try folder.contents("Draft.txt") == "draft")
        #expect(try folder.contents("Letter.txt") == "letter")

        let renamed = try folder.run(["rename", "Draft", "Final draft"])
        #expect(renamed.status == 0)
        #expect(renamed.output == folder.url("Final draft.txt").path + "\n")
        #expect(!folder.exists("Draft.txt"))
        #expect(try folder.contents("Final draft.txt") == "draft")
    }

    @Test func deleteMovesTheDocumentToTheTrashAndSaysWhere() throws {
        let folder = try DocsFolder()
        let deleted = folder.dataHome.appendingPathComponent("Trash/files", isDirectory: true)
        try folder.write("Notes.txt", "first")
        let first = try folder.run(["delete", "Notes"])
        #expect(first.status == 0)
        #expect(first.output == deleted.appendingPathComponent("Notes.txt").path + "\n")
        #expect(!folder.exists("Notes.txt"))

        try folder.write("Notes.txt", "second")
        let second = try folder.run(["delete", "Notes.txt"])
        #expect(second.output == deleted.appendingPathComponent("Notes 2.txt").path + "\n")
        #expect(
            try String(contentsOf: deleted.appendingPathComponent("Notes.txt"), encoding: .utf8) == "first")
        #expect(
            try String(contentsOf: deleted.appendingPathComponent("Notes 2.txt"), encoding: .utf8) == "second"
        )
        #expect(try folder.run(["list", "--json"]).output.contains("\"documents\":[\n]"))
        // The trash is private: what is deleted may be as private as it was.
        for folder in [deleted, deleted.deletingLastPathComponent()] {
            let mode =
                try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder.path)")
        }
    }
}
