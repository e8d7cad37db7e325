import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `ste` binary under tmux: what a person at the terminal does, checked on screen
/// and on disk.
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
        // The message first: it stays until the next key.
        #expect(await ste.waitForScreen(containing: "Created “Journal”"))
        #expect(await ste.wait { FileManager.default.fileExists(atPath: ste.file("Journal.txt").path) })

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
        // One send, so the keys arrive well inside the pause however busy the machine is
        // (typed 100 ms apart, a stalled CI machine once spread them past it).
        ste.type(" second")
        #expect(await ste.waitForScreen(containing: "first second"))
        ste.keys("C-z")
        #expect(await ste.wait { ste.screen.contains("first") && !ste.screen.contains("second") })
        #expect(await ste.wait { ste.text(of: "Burst.txt") == "first" })
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus != nil })
    }

    @Test func findMovesTheCursorToTheMatch() async throws {
        let ste = try SteSession { container in
            try Data("alpha\nbeta\ngamma delta\n".utf8).write(
                to: container.appendingPathComponent("Greek.txt"))
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

    @Test func deleteMovesTheFileToTheTrash() async throws {
        let ste = try SteSession { container in
            try Data("keep me".utf8).write(to: container.appendingPathComponent("Old.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "keep me"))
        ste.keys("C-d")
        #expect(await ste.waitForScreen(containing: "(y/n)"))
        ste.type("y")
        // The list empties and the news shows at once; the news goes after four seconds, which a
        // loaded machine may take before it looks again.
        #expect(await ste.waitForScreen(containing: "No documents"))
        #expect(await ste.waitForScreen(containing: "to the trash"))
        let deleted = ste.dataHome.appendingPathComponent("Trash/files/Old.txt")
        #expect((try? String(contentsOf: deleted, encoding: .utf8)) == "keep me")
        let info = ste.dataHome.appendingPathComponent("Trash/info/Old.txt.trashinfo")
        let record = (try? String(contentsOf: info, encoding: .utf8)) ?? ""
        #expect(record.contains("\nPath=\(ste.file("Old.txt").path)\n"), "\(record)")
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

    // MARK: - The live list

    /// While the user types in a document, the list keeps its order: the document typed into
    /// does not climb to the top at each autosave, so the rows do not move under the next Up
    /// or Down. It is sorted again as the user goes back to the list, the selection with it.
    @Test func theListKeepsItsOrderWhileTheUserTypes() async throws {
        let ste = try Self.alphaAndBeta()
        ste.start()
        #expect(await ste.waitForScreen(containing: "beta text"))
        ste.keys("Down")
        #expect(await ste.waitForScreen(containing: "alpha text"))
        ste.keys("Tab")
        ste.type("typed ")
        // Autosaved: its row says so (its size and age) in its place.
        #expect(
            await ste.wait(timeout: .seconds(20)) { ste.listRow("Alpha")?.hasSuffix("16B now") == true },
            "\(ste.screen)")
        #expect(ste.listNames() == ["Beta", "Alpha"], "\(ste.screen)")
        // Back to the list: sorted, newest first, and Alpha still the one selected.
        ste.keys("Escape")
        #expect(await ste.wait { ste.listNames() == ["Alpha", "Beta"] }, "\(ste.screen)")
        ste.keys("Down")
        #expect(await ste.waitForScreen(containing: "beta text"))
    }

    @Test func listFollowsOtherProgramsWithoutAKeyAndKeepsTheSelection() async throws {
        let ste = try Self.alphaAndBeta()
        ste.start()
        #expect(await ste.waitForScreen(containing: "beta text"))
        #expect(ste.listRow("Beta")?.hasSuffix("9B  1h") == true, "\(ste.screen)")
        #expect(ste.listRow("Alpha")?.hasSuffix("10B  2d") == true, "\(ste.screen)")

        // Another process creates a document: it appears, newest first, with no key pressed.
        #expect(ste.shell("printf 'fresh!' > Fresh.txt") == 0)
        #expect(await ste.wait { ste.listRow("Fresh")?.hasSuffix("6B now") == true }, "\(ste.screen)")
        #expect(ste.listNames() == ["Fresh", "Beta", "Alpha"])
        // The selection stayed on Beta although it moved down a row: Down selects Alpha.
        #expect(ste.screen.contains("Beta — saved"))
        ste.keys("Down")
        #expect(await ste.waitForScreen(containing: "alpha text"))

        // Changed elsewhere: new size and age, and it moves to the top.
        #expect(ste.shell("printf ' and more' >> Alpha.txt") == 0)
        #expect(await ste.wait { ste.listRow("Alpha")?.hasSuffix("19B now") == true }, "\(ste.screen)")
        #expect(await ste.wait { ste.listNames().first == "Alpha" }, "\(ste.screen)")

        // Renamed and deleted elsewhere.
        #expect(ste.shell("mv Beta.txt Gamma.txt") == 0)
        #expect(await ste.wait { ste.listNames() == ["Alpha", "Fresh", "Gamma"] }, "\(ste.screen)")
        #expect(ste.shell("rm Fresh.txt") == 0)
        #expect(await ste.wait { ste.listNames() == ["Alpha", "Gamma"] }, "\(ste.screen)")
        // Files that are not documents never join the list; a link to one counts as it, with
        // its size and date.
        #expect(
            ste.shell("mkdir Sub && echo x > Sub/Inner.txt && echo x > .Hidden.txt && echo x > notes.md") == 0
        )
        #expect(
            ste.shell("mkdir Folder.txt && ln -s Nowhere.txt Broken.txt && ln -s Gamma.txt Link.txt") == 0)
        #expect(ste.shell("printf 'last' > Last.txt") == 0)
        #expect(await ste.wait { ste.listNames() == ["Last", "Alpha", "Gamma", "Link"] }, "\(ste.screen)")
        #expect(ste.listRow("Link")?.hasSuffix("9B  1h") == true, "\(ste.screen)")
        #expect(ste.screen.contains("alpha text and more"))

        // The open, selected document renamed elsewhere: the selection follows it, so Down
        // selects the one below it.
        #expect(ste.shell("mv Alpha.txt Delta.txt") == 0)
        #expect(await ste.wait { ste.listNames() == ["Last", "Delta", "Gamma", "Link"] }, "\(ste.screen)")
        #expect(await ste.waitForScreen(containing: "Delta — saved"))
        ste.keys("Down")
        #expect(await ste.waitForScreen(containing: "beta text"))
        #expect(ste.screen.contains("Gamma — saved"))

        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    @Test func agesStayCurrentWithoutAKey() async throws {
        let ste = try SteSession { container in
            try Self.write("aging", to: container.appendingPathComponent("Aging.txt"), age: 56)
        }
        ste.start()
        #expect(await ste.wait { ste.listRow("Aging")?.hasSuffix("5B now") == true }, "\(ste.screen)")
        // A minute old within the next few seconds: the list is redrawn without a key.
        #expect(
            await ste.wait(timeout: .seconds(15)) { ste.listRow("Aging")?.hasSuffix("5B  1m") == true },
            "\(ste.screen)")
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    @Test func ownNewRenameAndDeleteShowInTheList() async throws {
        let ste = try SteSession { container in
            try Self.write("old", to: container.appendingPathComponent("Old.txt"), age: 3600)
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "Old — saved"))
        ste.keys("C-n")
        ste.type("New")
        ste.keys("Enter")
        #expect(await ste.wait { ste.listNames() == ["New", "Old"] }, "\(ste.screen)")
        ste.keys("C-r")
        #expect(await ste.waitForScreen(containing: "Rename to: New"))
        for _ in 0..<3 { ste.keys("BSpace") }
        ste.type("Renamed")
        ste.keys("Enter")
        #expect(await ste.wait { ste.listNames() == ["Renamed", "Old"] }, "\(ste.screen)")
        #expect(await ste.waitForScreen(containing: "Renamed — saved"))
        ste.keys("C-d")
        #expect(await ste.waitForScreen(containing: "(y/n)"))
        ste.type("y")
        #expect(await ste.wait { ste.listNames() == ["Old"] }, "\(ste.screen)")
        #expect(await ste.waitForScreen(containing: "Old — saved"))
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    // MARK: - Conflicts

    /// One way out of a conflict: the key pressed on the conflict screen and what follows.
    struct Resolution: Sendable, CustomTestStringConvertible {
        var key: String
        var kept: String
        /// The start of the name of the document "keep both" saves theirs as.
        var copy: String?
        /// The list once the resolution is shown, newest first.
        var listAfter: [String]
        /// The key that then selects "Other".
        var toOther: String

        var testDescription: String { "keep \(key)" }
    }

    /// The issue's case: open a document in conflict, resolve it on the conflict screen, and
    /// check the file on disk and the version store afterwards.
    @Test(arguments: [
        Resolution(key: "t", kept: "theirs\n", listAfter: ["Notes", "Other"], toOther: "Down"),
        Resolution(key: "m", kept: "mine\n", listAfter: ["Other", "Notes"], toOther: "Up"),
        Resolution(
            key: "b", kept: "mine\n", copy: "Notes (conflict from laptop ",
            listAfter: ["Notes (conflict", "Other", "Notes"], toOther: "Up"),
    ])
    func resolvingAConflictOnTheConflictScreen(_ resolution: Resolution) async throws {
        let ste = try SteSession { container in
            try Self.write("mine\n", to: container.appendingPathComponent("Notes.txt"), age: 3600)
            try Self.write("other text", to: container.appendingPathComponent("Other.txt"), age: 60)
        }
        // The store ste uses: VersionStore.shared under its XDG_DATA_HOME, never the user's.
        let storeRoot = ste.dataHome.appendingPathComponent("DocumentKit/Versions", isDirectory: true)
        let notes = ste.file("Notes.txt")
        let incoming = ste.root.appendingPathComponent("theirs.txt")
        try Data("theirs\n".utf8).write(to: incoming)
        try VersionStore(root: storeRoot).addConflictOfItem(
            at: notes, withContentsOf: incoming, savingComputer: "laptop", modificationDate: Date())
        #expect(VersionStore(root: storeRoot).unresolvedConflictVersionsOfItem(at: notes).count == 1)

        ste.start()
        #expect(await ste.waitForScreen(containing: "other text"))
        // Not open: the mark is the query's.
        #expect(await ste.wait { ste.listRow("Notes")?.hasPrefix("!") == true }, "\(ste.screen)")
        #expect(ste.listRow("Other")?.hasPrefix(" ") == true)

        ste.keys("Down")
        // A version from another computer is theirs; the file here is mine.
        #expect(await ste.waitForScreen(containing: "Theirs: from laptop"), "\(ste.screen)")
        #expect(ste.screen.contains("Mine: the file here"))
        #expect(ste.screen.contains("t Keep theirs"))
        ste.type(resolution.key)
        #expect(await ste.waitForScreen(containing: "Conflict resolved"), "\(ste.screen)")
        #expect(await ste.wait { ste.text(of: "Notes.txt") == resolution.kept })
        #expect(VersionStore(root: storeRoot).unresolvedConflictVersionsOfItem(at: notes).isEmpty)
        #expect(!VersionStore(root: storeRoot).hasUnresolvedConflicts(itemAt: notes))
        // Nothing was deleted: the side not kept is still in the history.
        let kept = VersionStore(root: storeRoot).otherVersionsOfItem(at: notes).compactMap {
            try? String(contentsOf: $0.url, encoding: .utf8)
        }
        #expect(kept.contains(resolution.kept == "mine\n" ? "theirs\n" : "mine\n"), "\(kept)")
        if let copy = resolution.copy {
            let names = try FileManager.default.contentsOfDirectory(atPath: ste.container.path)
            let copied = try #require(names.first { $0.hasPrefix(copy) }, "\(names)")
            #expect(ste.text(of: copied) == "theirs\n")
        }
        #expect(await ste.wait { !ste.screen.contains("in conflict") }, "\(ste.screen)")
        #expect(ste.screen.contains(resolution.kept.trimmingCharacters(in: .newlines)))
        #expect(
            await ste.wait {
                zip(ste.listNames(), resolution.listAfter).allSatisfy { $0.hasPrefix($1) }
                    && ste.listNames().count == resolution.listAfter.count
            }, "\(ste.screen)")

        // Another document selected: the resolved one has no mark left.
        ste.keys(resolution.toOther)
        #expect(await ste.waitForScreen(containing: "other text"))
        #expect(await ste.wait { ste.listRow("Notes")?.hasPrefix(" ") == true }, "\(ste.screen)")

        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
        #expect(ste.text(of: "Notes.txt") == resolution.kept)
        #expect(VersionStore(root: storeRoot).unresolvedConflictVersionsOfItem(at: notes).isEmpty)
    }

    /// A session on Alpha (two days old) and Beta (an hour old), not started.
    static func alphaAndBeta() throws -> SteSession {
        try SteSession { container in
            try write("alpha text", to: container.appendingPathComponent("Alpha.txt"), age: 2 * 86400)
            try write("beta text", to: container.appendingPathComponent("Beta.txt"), age: 3600)
        }
    }

    /// Writes `text` to `url` and dates it `age` seconds ago.
    static func write(_ text: String, to url: URL, age: TimeInterval) throws {
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: url.path)
    }

    // MARK: - Bad input

    @Test func containerThatIsAFileIsRefusedOnStandardError() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ste-file-\(UUID().uuidString)")
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
        for bad in ["0", "-1", "soon", "nan"] {
            let delay = try runSte(["--autosave-delay", bad])
            #expect(delay.status == 2, "\(bad)")
            #expect(delay.error.contains("--autosave-delay needs a number of seconds"), "\(delay.error)")
        }
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

    /// Root reads any file: as root, `ste` runs as `nobody` here.
    @Test func unreadableDocumentIsReportedInTheStatusLineAndStaysUnchanged() async throws {
        let ste = try SteSession { container in
            try Data("other".utf8).write(to: container.appendingPathComponent("Other.txt"))
            let secret = container.appendingPathComponent("Secret.txt")
            try Data("secret".utf8).write(to: secret)
            chmod(secret.path, 0)
            // The newest document is selected first.
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: secret.path)
        }
        ste.start(unprivileged: true)
        #expect(
            await ste.waitForScreen(containing: "Cannot open “Secret.txt”: permission denied"),
            "\(ste.screen)")
        ste.keys("Tab")
        ste.type("typed")
        ste.keys("C-s")
        try await Task.sleep(for: .milliseconds(300))
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
        chmod(ste.file("Secret.txt").path, 0o600)
        #expect(try String(contentsOf: ste.file("Secret.txt"), encoding: .utf8) == "secret")
        #expect(try String(contentsOf: ste.file("Other.txt"), encoding: .utf8) == "other")
    }

    @Test func resizingRedrawsTheScreen() async throws {
        let ste = try SteSession { container in
            try Data("日本語のテキスト and some longer English words on the line".utf8)
                .write(to: container.appendingPathComponent("Wide.txt"))
        }
        ste.start(width: 100, height: 20)
        #expect(await ste.waitForScreen(containing: "日本語のテキスト"))
        ste.resize(width: 50, height: 12)
        // Drawn again for the new size: the line wraps in the narrower text pane, which only a
        // redraw does (tmux cuts the old screen's lines, and before the redraw they still held
        // the wider bar), and the bar is there.
        #expect(
            await ste.wait(timeout: .seconds(30)) {
                let screen = ste.screen
                return screen.split(separator: "\n").count <= 12
                    && screen.contains("│ er English words on the line")
                    && screen.contains("^G Help")
            }, "\(ste.screen)")
        ste.keys("Tab", "End")
        ste.type("!")
        #expect(await ste.wait { ste.text(of: "Wide.txt")?.hasSuffix("line!") == true })
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }
}
