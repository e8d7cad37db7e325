import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `ste` binary under tmux: what a person at the terminal does, checked on screen
/// and on disk.
///
/// Not here yet: opening a document in conflict and resolving it. The conflict screen is
/// built against `FileVersion`'s API behind `Sources/ste/Versions.swift`, but this branch's
/// `FileVersion` cannot make or list conflict versions, so there is nothing to open.
@Suite("ste end to end", .serialized)
struct SteEndToEndTests {
    @Test func editsAutosavesUndoesReloadsAndSavesOnQuit() async throws {
        let ste = try SteSession()
        ste.start()
        #expect(await ste.waitForScreen(containing: "No documents"))

        ste.keys("C-n")
        #expect(await ste.waitForScreen(containing: "New document name:"))
        ste.type("Journal")
        ste.keys("Enter")
        #expect(await ste.wait { FileManager.default.fileExists(atPath: ste.file("Journal.txt").path) })
        #expect(await ste.waitForScreen(containing: "Created “Journal”"))

        ste.type("Hello 日本語")
        #expect(await ste.waitForScreen(containing: "Hello 日本語"))
        // One burst, then the document's own quiet delay: saved without asking.
        #expect(await ste.wait { ste.text(of: "Journal.txt") == "Hello 日本語" })

        ste.keys("C-z")
        #expect(await ste.wait { ste.text(of: "Journal.txt") == "" })
        #expect(!ste.screen.contains("Hello"))
        ste.keys("C-y")
        #expect(await ste.wait { ste.text(of: "Journal.txt") == "Hello 日本語" })

        // Another program replaces the file: the editor shows the new text.
        try Data("Changed elsewhere\nsecond line\n".utf8).write(to: ste.file("Journal.txt"), options: .atomic)
        #expect(await ste.waitForScreen(containing: "Changed elsewhere"))
        #expect(ste.screen.contains("second line"))

        // The cursor stayed near where it was (line 1, clamped): typing lands on that line.
        ste.keys("End")
        ste.type(" and more")
        #expect(await ste.waitForScreen(containing: "Changed elsewhere and more"))
        // Quit at once, inside the typing burst and long before autosave.
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus != nil })
        #expect(ste.exitStatus == 0)
        #expect(ste.text(of: "Journal.txt") == "Changed elsewhere and more\nsecond line\n")
    }

    @Test func terminationSignalSavesTheTypingInProgress() async throws {
        let ste = try SteSession { container in
            try Data("start".utf8).write(to: container.appendingPathComponent("Draft.txt"))
        }
        ste.start(reportingExit: false)
        #expect(await ste.waitForScreen(containing: "start"))
        ste.keys("Tab", "End")
        ste.type(" typed")
        #expect(await ste.waitForScreen(containing: "start typed"))
        let pid = try #require(ste.panePID)
        kill(pid, SIGTERM)
        #expect(await ste.wait { ste.text(of: "Draft.txt") == "start typed" })
    }

    @Test func typingBurstIsOneUndoStep() async throws {
        let ste = try SteSession { container in
            try Data("".utf8).write(to: container.appendingPathComponent("Burst.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "Burst — saved"))
        ste.keys("Tab")
        ste.type("first")
        #expect(await ste.waitForScreen(containing: "first"))
        try await Task.sleep(for: .milliseconds(1500))  // past the burst pause
        for character in " second" {
            ste.type(String(character))
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await ste.waitForScreen(containing: "first second"))
        ste.keys("C-z")
        #expect(await ste.wait { ste.screen.contains("first") && !ste.screen.contains("second") })
        #expect(await ste.wait { ste.text(of: "Burst.txt") == "first" })
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus != nil })
    }

    @Test func findMovesTheCursorToTheMatch() async throws {
        let ste = try SteSession { container in
            try Data("alpha\nbeta\ngamma delta\n".utf8).write(to: container.appendingPathComponent("Greek.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "gamma delta"))
        ste.keys("Tab", "C-f")
        ste.type("DEL")
        #expect(await ste.waitForScreen(containing: "Ln 3, Col 7"))
        ste.keys("Enter")
        ste.type("X")
        #expect(await ste.waitForScreen(containing: "gamma Xdelta"))
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
        #expect(ste.text(of: "Greek.txt") == "alpha\nbeta\ngamma Xdelta\n")
    }

    @Test func deleteMovesTheFileToTheDeletedFolder() async throws {
        let ste = try SteSession { container in
            try Data("keep me".utf8).write(to: container.appendingPathComponent("Old.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "keep me"))
        ste.keys("C-d")
        #expect(await ste.waitForScreen(containing: "(y/n)"))
        ste.type("y")
        #expect(await ste.waitForScreen(containing: "No documents"))
        let deleted = ste.dataHome.appendingPathComponent("Simple Text Editor/Deleted/Old.txt")
        #expect((try? String(contentsOf: deleted, encoding: .utf8)) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: ste.file("Old.txt").path))
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    @Test func renameKeepsTheText() async throws {
        let ste = try SteSession { container in
            try Data("words".utf8).write(to: container.appendingPathComponent("Before.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "words"))
        ste.keys("C-r")
        #expect(await ste.waitForScreen(containing: "Rename to: Before"))
        for _ in 0..<6 { ste.keys("BSpace") }
        ste.type("After")
        ste.keys("Enter")
        #expect(await ste.wait { ste.text(of: "After.txt") == "words" })
        #expect(!FileManager.default.fileExists(atPath: ste.file("Before.txt").path))
        #expect(await ste.waitForScreen(containing: "After — saved"))
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    // MARK: - Bad input

    @Test func containerThatIsAFileIsRefusedOnStandardError() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ste-file-\(UUID().uuidString)")
        try Data("not a folder".utf8).write(to: root)
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try runSte(["--container", root.path])
        #expect(result.status == 1)
        #expect(result.error.contains(root.path))
        #expect(result.error.contains("is a file, not a folder"))
        #expect((try? String(contentsOf: root, encoding: .utf8)) == "not a folder")
    }

    @Test func helpVersionAndUsageErrors() throws {
        let help = try runSte(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("Usage: ste"))
        let version = try runSte(["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("ste "))
        let unknown = try runSte(["--frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown option --frobnicate"))
    }

    @Test(arguments: [("a/b", "contains a slash"), (".hidden", "starts with a dot")])
    func badDocumentNamesAreRefusedInTheStatusLine(name: String, reason: String) async throws {
        let ste = try SteSession()
        ste.start()
        #expect(await ste.waitForScreen(containing: "No documents"))
        ste.keys("C-n")
        ste.type(name)
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: reason))
        let contents = try FileManager.default.contentsOfDirectory(atPath: ste.container.path)
        #expect(contents.isEmpty)
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    @Test func binaryFileIsNotOpenedForEditingAndStaysUnchanged() async throws {
        let bytes = Data([0xFF, 0xFE, 0x00, 0x01, 0x80, 0x41, 0x0A])
        let ste = try SteSession { container in
            try bytes.write(to: container.appendingPathComponent("Blob.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "not UTF-8"))
        ste.keys("Tab")
        ste.type("typed")
        ste.keys("C-s")
        try await Task.sleep(for: .milliseconds(300))
        #expect(!ste.screen.contains("typed"))
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
        #expect(try Data(contentsOf: ste.file("Blob.txt")) == bytes)
    }

    @Test func resizingRedrawsTheScreen() async throws {
        let ste = try SteSession { container in
            try Data("日本語のテキスト and some longer English words on the line".utf8)
                .write(to: container.appendingPathComponent("Wide.txt"))
        }
        ste.start(width: 100, height: 20)
        #expect(await ste.waitForScreen(containing: "日本語のテキスト"))
        ste.resize(width: 50, height: 12)
        #expect(await ste.wait { ste.screen.split(separator: "\n").count <= 12 && ste.screen.contains("^N New") })
        ste.keys("Tab", "End")
        ste.type("!")
        #expect(await ste.wait { ste.text(of: "Wide.txt")?.hasSuffix("line!") == true })
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }
}
