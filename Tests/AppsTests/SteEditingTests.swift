import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The editing keys of issue 17 on the real `ste` under tmux: keys sent, the screen read,
/// the bytes on disk checked.
@Suite("ste editing end to end", .serialized)
struct SteEditingTests {
    /// A session on one document called `name` holding `text`, started, with the text pane
    /// focused once the text shows.
    static func session(
        _ name: String = "Doc", text: String, width: Int = 100, height: Int = 24, showing: String? = nil
    ) async throws -> SteSession {
        let ste = try SteSession { container in
            try Data(text.utf8).write(to: container.appendingPathComponent("\(name).txt"))
        }
        ste.start(width: width, height: height)
        // Wait for the document's own first line in the text pane: a bare word such as "a"
        // is already on the screen in the title, before the document is open, and a Tab
        // that arrives then leaves the focus in the list.
        let first = String(text.prefix { $0 != "\n" }.prefix(20))
        if let showing {
            #expect(await ste.waitForScreen(containing: showing))
        } else if first.isEmpty {
            #expect(await ste.waitForScreen(containing: "\(name) — saved"))
        } else {
            #expect(await ste.wait { ste.textRow(1).hasPrefix(" " + first) }, "\(ste.screen)")
        }
        ste.keys("Tab")
        return ste
    }

    static func quit(_ ste: SteSession) async {
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    // MARK: - 8. Help

    @Test func helpScreenOpensScrollsAndClosesWithEscF1OrCtrlG() async throws {
        let ste = try await Self.session(text: "the text\n")
        ste.keys("F1")
        #expect(await ste.waitForScreen(containing: "Help — every key of ste"))
        #expect(ste.screen.contains("^S                    save now"))
        #expect(!ste.screen.contains("line numbers on or off"))
        ste.keys("PageDown", "PageDown")
        #expect(await ste.waitForScreen(containing: "line numbers on or off"))
        ste.keys("Escape")
        #expect(
            await ste.wait { !ste.screen.contains("Help — every key") && ste.screen.contains("the text") })
        ste.keys("C-g")
        #expect(await ste.waitForScreen(containing: "Help — every key of ste"))
        ste.keys("C-g")
        #expect(await ste.wait { !ste.screen.contains("Help — every key") })
        ste.keys("F1")
        #expect(await ste.waitForScreen(containing: "Help — every key of ste"))
        ste.keys("F1")
        #expect(await ste.wait { !ste.screen.contains("Help — every key") })
        // Keys pressed on the help screen were never typed.
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "the text\n")
    }

    @Test func helpBarShowsHelpFirstAndCutLineWithinEightyColumns() async throws {
        let ste = try await Self.session(text: "x\n", width: 80)
        // The bar of the text pane, once the document is open there.
        #expect(await ste.waitForScreen(containing: "Esc List"))
        let bar = ste.rows.filter { !$0.isEmpty }.suffix(2).joined(separator: "\n")
        #expect(bar.hasPrefix(" ^G Help"), "\(bar)")
        #expect(bar.contains("^K Cut line"), "\(bar)")
        #expect(bar.contains("Esc List"), "\(bar)")
        await Self.quit(ste)
    }

    /// docs/ste-screenshot.txt is what ste draws (scripts/ste-figures --screenshot makes it the
    /// same way), and the README shows that capture.
    @Test func readmeCaptureMatchesTheRealScreen() async throws {
        let now = Date()
        let ste = try SteSession { container in
            let documents = [
                ("Ideas", "A terminal editor whose documents never lose a word.\n", 3),
                (
                    "Trip to Kyoto",
                    "Day 1: 伏見稲荷大社 at dawn, before the crowds.\nDay 2: Arashiyama bamboo grove.\nDay 3: 金閣寺, then the train back.\n",
                    2
                ),
                ("Shopping list", "milk\neggs\n味噌 (miso)\nbread\n", 1),
            ]
            for (name, text, hours) in documents {
                let url = container.appendingPathComponent(name + ".txt")
                try Data(text.utf8).write(to: url)
                try FileManager.default.setAttributes(
                    [.modificationDate: now.addingTimeInterval(-3600 * Double(hours))], ofItemAtPath: url.path
                )
            }
        }
        ste.start(width: 96, height: 16)
        #expect(await ste.waitForScreen(containing: "milk"))
        ste.keys("Down")
        #expect(await ste.waitForScreen(containing: "Day 2"))
        ste.keys("Tab", "Down", "End")
        #expect(await ste.waitForScreen(containing: "Ln 2, Col 32"))
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
        let capture = try String(
            contentsOf: repository.appendingPathComponent("docs/ste-screenshot.txt"), encoding: .utf8)
        func normalized(_ text: String) -> [String] {
            text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().map {
                String(
                    $0.replacing(/[0-9]{2}:[0-9]{2}:[0-9]{2}/, with: "HH:MM:SS").replacing(/\ +$/, with: ""))
            }
            .filter { !$0.isEmpty }
        }
        #expect(normalized(ste.screen) == normalized(capture), "\(ste.screen)")
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(capture.trimmingCharacters(in: .newlines)))
        await Self.quit(ste)
    }

    // MARK: - 1. Selection and clipboard

    @Test func selectionCutAndPasteMovesText() async throws {
        let ste = try await Self.session(text: "one\ntwo\nthree\n")
        ste.keys("S-Down")
        #expect(await ste.waitForScreen(containing: "1 line selected"))
        ste.keys("C-x")
        #expect(await ste.wait { ste.textRow(1).hasPrefix(" two") })
        ste.keys("Down", "C-v")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "two\none\nthree\n" }, "\(ste.screen)")
        // Shift+End and Shift+Ctrl+Left select within a line; typing replaces the selection.
        ste.keys("C-Home", "S-End")
        #expect(await ste.waitForScreen(containing: "3 characters selected"))
        ste.type("2")
        ste.keys("End", "C-S-Left", "C-c", "C-End", "C-v")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "2\none\nthree\n2" }, "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func cutLineTwiceGathersBothLinesAndPastesThemAboveTheCursorLine() async throws {
        let ste = try await Self.session(text: "a\nb\nc\nd\n")
        ste.keys("C-k", "C-k")
        #expect(await ste.wait { ste.textRow(1).hasPrefix(" c") })
        ste.keys("Down", "End", "C-u")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "c\na\nb\nd\n" }, "\(ste.screen)")
        // Each cut and paste is an undo step of its own.
        ste.keys("C-z")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "c\nd\n" }, "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func copyEmitsOSC52ToTheTerminal() async throws {
        let ste = try await Self.session(text: "copy 日本語 please\n")
        ste.acceptClipboard()
        ste.keys("M-a", "C-c")
        #expect(await ste.waitForScreen(containing: "Copied"))
        #expect(await ste.wait { ste.clipboard == "copy 日本語 please\n" }, "\(ste.clipboard ?? "nil")")
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "copy 日本語 please\n")
    }

    /// With an X display and xclip on the PATH, a copy reaches xclip's clipboard too (a stand-in
    /// xclip here, which records its arguments and input).
    @Test func copyAlsoGoesToXclipWhenThereIsADisplay() async throws {
        let ste = try SteSession { container in
            try Data("to the X clipboard\n".utf8).write(to: container.appendingPathComponent("Doc.txt"))
        }
        let tools = ste.root.appendingPathComponent("bin", isDirectory: true)
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        let record = ste.root.appendingPathComponent("xclip-got")
        let xclip = tools.appendingPathComponent("xclip")
        try Data(
            "#!/bin/sh\necho \"$*\" > '\(record.path).args'\ncat > '\(record.path).tmp'\nmv '\(record.path).tmp' '\(record.path)'\n"
                .utf8
        )
        .write(to: xclip)
        chmod(xclip.path, 0o755)
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        ste.start(environment: ["PATH=\(tools.path):\(path)", "DISPLAY=:99"])
        #expect(await ste.waitForScreen(containing: "to the X clipboard"))
        ste.keys("Tab", "S-End", "C-c")
        #expect(await ste.waitForScreen(containing: "Copied 18 characters"))
        #expect(await ste.wait { (try? String(contentsOf: record, encoding: .utf8)) == "to the X clipboard" })
        let arguments = try String(contentsOf: URL(fileURLWithPath: record.path + ".args"), encoding: .utf8)
        #expect(arguments == "-selection clipboard\n")
        await Self.quit(ste)
    }

    @Test func bracketedPasteOfAThousandLinesIsOneUndoStepAndKeepsItsIndentation() async throws {
        let ste = try await Self.session(text: "start\n")
        ste.keys("End")
        let pasted = (1...1000).map { "    indented \($0)\t{ }" }.joined(separator: "\n")
        try ste.paste("\n" + pasted)
        let expected = "start\n" + pasted + "\n"
        #expect(
            await ste.wait(timeout: .seconds(30)) { ste.text(of: "Doc.txt") == expected }, "\(ste.screen)")
        #expect(ste.screen.contains("Pasted 1000 lines"), "\(ste.screen)")
        ste.keys("C-z")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "start\n" }, "\(ste.screen)")
        // Pasted into find, the first line is what is looked for.
        ste.keys("C-f")
        try ste.paste("start\nnot this")
        #expect(await ste.waitForScreen(containing: "Find: start"), "\(ste.screen)")
        #expect(!ste.screen.contains("not this"))
        ste.keys("Escape")
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "start\n")
    }

    // MARK: - 6. Tab, Alt, messages, resize

    @Test func tabInsertsATabInTheTextAndEscSwitchesToTheList() async throws {
        let ste = try SteSession { container in
            try Data("older".utf8).write(to: container.appendingPathComponent("Older.txt"))
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-60)],
                ofItemAtPath: container.appendingPathComponent("Older.txt").path)
            try Data("words".utf8).write(to: container.appendingPathComponent("Doc.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "words"))
        ste.keys("Tab", "Tab")
        ste.type("x")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "\txwords" }, "\(ste.screen)")
        ste.keys("Escape", "Down")
        #expect(await ste.waitForScreen(containing: "Older — saved"))
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "\txwords")
    }

    @Test func altFMovesByWordAndIsNeverInserted() async throws {
        let ste = try await Self.session(text: "alpha beta\n")
        ste.keys("M-f")
        ste.type("1")
        ste.keys("M-f", "M-x")
        #expect(await ste.waitForScreen(containing: "Alt+X does nothing here"))
        // A key sequence ste does not know (F13 here) types nothing either.
        ste.type("\u{1B}[25~")
        ste.type("2")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "alpha1 beta2\n" }, "\(ste.screen)")
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "alpha1 beta2\n")
    }

    @Test func errorsStayUntilEscWithLnAndColInSightAndMessagesClearOnTheNextKey() async throws {
        let ste = try await Self.session(text: "abc\n")
        ste.keys("C-r")
        #expect(await ste.waitForScreen(containing: "Rename to: Doc"))
        ste.type("/x")
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "contains a slash"))
        ste.keys("Right", "Right")
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 3"))
        #expect(ste.screen.contains("contains a slash"))
        ste.keys("Escape")
        #expect(await ste.wait { !ste.screen.contains("contains a slash") }, "\(ste.screen)")
        // Text pane still focused: Esc only acknowledged.
        ste.type("Z")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "abZc\n" }, "\(ste.screen)")
        ste.keys("M-q")  // no search yet: a message
        #expect(await ste.waitForScreen(containing: "Nothing to find"))
        ste.keys("Left")
        #expect(await ste.wait { !ste.screen.contains("Nothing to find") }, "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func wideningTheWindowResetsSidewaysScrollAndKeepsTheCursorInSight() async throws {
        let long = "start " + String(repeating: "words ", count: 20) + "end"
        let ste = try await Self.session(text: long + "\n", width: 60, height: 12)
        ste.keys("M-s")
        #expect(await ste.waitForScreen(containing: "Soft wrap off"))
        ste.keys("End")
        #expect(
            await ste.wait { ste.screen.contains("end") && !ste.screen.contains("start") }, "\(ste.screen)")
        ste.resize(width: 200, height: 12)
        #expect(
            await ste.wait { ste.screen.contains("start words") && ste.screen.contains("end") },
            "\(ste.screen)")
        ste.type("!")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == long + "!\n" })
        await Self.quit(ste)
    }

    // MARK: - 2. Movement

    @Test func wordMovesOverJapaneseAndEmojiAndLineEnds() async throws {
        let ste = try await Self.session(text: "日本語 テキスト 👍🏽👍 end\n")
        ste.keys("C-Right", "C-Right", "C-Right")
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 21"))
        ste.type("X")
        ste.keys("C-Left", "C-Left")
        ste.type("Y")
        ste.keys("C-a")
        ste.type("<")
        ste.keys("C-e")
        ste.type(">")
        ste.keys("Home", "M-f", "M-f")
        ste.type("|")
        #expect(
            await ste.wait { ste.text(of: "Doc.txt") == "<日本語| テキスト Y👍🏽👍X end>\n" }, "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func goToLineAndColumnAndDocumentEndsInATwentyMebibyteDocument() async throws {
        var text = ""
        text.reserveCapacity(21 << 20)
        var number = 1
        while text.utf8.count < 20 << 20 {
            text += "line \(number) of the big document, with some words after it to fill\n"
            number += 1
        }
        let lineCount = number - 1
        let ste = try await Self.session("Big", text: text, showing: "line 1 of the big")
        ste.keys("C-l")
        #expect(await ste.waitForScreen(containing: "Go to line"))
        ste.type("250000:6")
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "Ln 250000, Col 6"), "\(ste.screen)")
        #expect(ste.screen.contains("line 250000 of the big"))
        ste.type("#")
        ste.keys("C-End")
        #expect(await ste.waitForScreen(containing: "Ln \(lineCount + 1), Col 1"), "\(ste.screen)")
        ste.keys("C-Home")
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 1"), "\(ste.screen)")
        // Find runs off the main actor: a match near the end, and back up to one before it.
        ste.keys("C-f")
        ste.type("line \(lineCount - 1) of")
        #expect(await ste.waitForScreen(containing: "Ln \(lineCount - 1), Col 1"), "\(ste.screen)")
        ste.keys("Escape")
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 1"), "\(ste.screen)")
        await Self.quit(ste)
        let saved = try #require(ste.text(of: "Big.txt"))
        #expect(saved.utf8.count == text.utf8.count + 1)
        #expect(saved.contains("\nline #250000 of the big"))
    }

    @Test func pageDownKeepsTheCursorsScreenRow() async throws {
        let text = (1...200).map { "row \($0)" }.joined(separator: "\n")
        let ste = try await Self.session(text: text, height: 24)
        ste.keys("Down", "Down", "Down")
        #expect(await ste.waitForScreen(containing: "Ln 4, Col 1"))
        let rowBefore = ste.rows.firstIndex { $0.contains("│ row 4") }
        ste.keys("PageDown")
        // 20 rows of text: a page is 19, so line 23 sits where line 4 was.
        #expect(await ste.waitForScreen(containing: "Ln 23, Col 1"), "\(ste.screen)")
        #expect(ste.rows.firstIndex { $0.contains("│ row 23") } == rowBefore, "\(ste.screen)")
        ste.keys("PageUp")
        #expect(await ste.waitForScreen(containing: "Ln 4, Col 1"), "\(ste.screen)")
        #expect(ste.rows.firstIndex { $0.contains("│ row 4") } == rowBefore, "\(ste.screen)")
        // Shift+Page Down selects the page it moves over.
        ste.keys("S-PageDown")
        #expect(await ste.waitForScreen(containing: "19 lines selected  Ln 23, Col 1"), "\(ste.screen)")
        // A smaller window keeps the cursor in sight.
        ste.resize(width: 100, height: 8)
        #expect(await ste.wait { ste.rows.contains { $0.contains("│ row 23") } }, "\(ste.screen)")
        await Self.quit(ste)
    }

    // MARK: - 3. Find and replace

    @Test func findPreviousGoesBackAndWraps() async throws {
        let ste = try await Self.session(text: "a cat\nb cat\nc cat\n")
        ste.keys("C-f")
        ste.type("cat")
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 3"))
        ste.keys("Up")
        #expect(await ste.waitForScreen(containing: "Ln 3, Col 3"), "\(ste.screen)")
        ste.keys("Up")
        #expect(await ste.waitForScreen(containing: "Ln 2, Col 3"), "\(ste.screen)")
        ste.keys("Enter")
        ste.type("X")
        ste.keys("M-w")
        #expect(await ste.waitForScreen(containing: "Ln 3, Col 3"), "\(ste.screen)")
        ste.keys("M-q")
        #expect(await ste.waitForScreen(containing: "Ln 2, Col 4"), "\(ste.screen)")
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "a cat\nb Xcat\nc cat\n")
    }

    @Test func replaceAllWholeWordsSaysHowManyAndIsOneUndoStep() async throws {
        let original = "cat dog cat\nconcatenate Cat\nCAT\n"
        let ste = try await Self.session(text: original)
        ste.keys("C-\\")
        #expect(await ste.waitForScreen(containing: "Replace:"))
        ste.type("cat")
        ste.keys("M-o")
        #expect(await ste.waitForScreen(containing: "Replace (whole words): cat"))
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "Replace “cat” with:"))
        ste.type("bird")
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "Replace this one?"))
        ste.type("a")
        #expect(await ste.waitForScreen(containing: "Replaced 4 matches"), "\(ste.screen)")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "bird dog bird\nconcatenate bird\nbird\n" })
        ste.keys("C-z")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == original }, "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func replaceOneAtATimeAndCaseSensitive() async throws {
        let ste = try await Self.session(text: "Cat cat cat\n")
        ste.keys("C-\\")
        ste.type("cat")
        ste.keys("M-c", "Enter")
        ste.type("dog")
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "Replace this one?"))
        ste.type("n")
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 9"), "\(ste.screen)")
        ste.type("y")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "Cat cat dog\n" }, "\(ste.screen)")
        ste.keys("Escape")
        await Self.quit(ste)
        #expect(ste.text(of: "Doc.txt") == "Cat cat dog\n")
    }

    // MARK: - 7. Undo across rename and restore

    @Test func undoSurvivesARename() async throws {
        let ste = try await Self.session("Before", text: "first")
        ste.keys("End")
        ste.type(" second")
        #expect(await ste.wait { ste.text(of: "Before.txt") == "first second" })
        ste.keys("C-r")
        #expect(await ste.waitForScreen(containing: "Rename to: Before"))
        for _ in 0..<6 { ste.keys("BSpace") }
        ste.type("After")
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "Renamed to “After”"))
        #expect(ste.text(of: "After.txt") == "first second")
        ste.keys("C-z")
        #expect(await ste.wait { ste.text(of: "After.txt") == "first" }, "\(ste.screen)")
        #expect(!FileManager.default.fileExists(atPath: ste.file("Before.txt").path))
        await Self.quit(ste)
    }

    @Test func restoreIsOneUndoableStep() async throws {
        let ste = try await Self.session("Notes", text: "v1")
        ste.keys("End")
        ste.type(" v2")
        #expect(await ste.wait { ste.text(of: "Notes.txt") == "v1 v2" })
        #expect(await ste.wait { ste.storedTexts(of: "Notes.txt").contains("v1") })
        ste.keys("C-h")
        #expect(await ste.waitForScreen(containing: "Versions of “Notes”"))
        ste.type("r")
        #expect(await ste.waitForScreen(containing: "(y/n)"))
        ste.type("y")
        #expect(await ste.wait { ste.text(of: "Notes.txt") == "v1" }, "\(ste.screen)")
        #expect(await ste.waitForScreen(containing: "^Z undoes it"))
        // The text the restore replaced is kept in the history too.
        #expect(await ste.wait { ste.storedTexts(of: "Notes.txt").contains("v1 v2") })
        ste.keys("C-z")
        #expect(await ste.wait { ste.text(of: "Notes.txt") == "v1 v2" }, "\(ste.screen)")
        await Self.quit(ste)
    }

    // MARK: - 4. Soft wrap

    @Test func softWrapsALongJapaneseLineAtFortyColumns() async throws {
        let line = String(repeating: "日本語のテキスト", count: 6) + "終"
        let ste = try SteSession()
        let url = ste.root.appendingPathComponent("wrap.txt")
        try Data((line + "\nnext\n").utf8).write(to: url)
        ste.start(arguments: [url.path], width: 40, height: 12)
        #expect(await ste.waitForScreen(containing: "next"))
        // 39 cells of text: 19 wide characters a row, never one cut in half.
        let characters = Array(line)
        let expected = stride(from: 0, to: characters.count, by: 19).map {
            " " + String(characters[$0..<min($0 + 19, characters.count)])
        }
        #expect(Array(ste.rows[1...3]).map { $0.replacing(/\ +$/, with: "") } == expected, "\(ste.screen)")
        #expect(ste.rows[4].hasPrefix(" next"), "\(ste.screen)")
        // Down moves by screen row, to the same cell.
        ste.keys("Right", "Down")
        #expect(await ste.waitForScreen(containing: "Col 41"), "\(ste.screen)")
        ste.type("X")
        #expect(
            await ste.wait {
                (try? String(contentsOf: url, encoding: .utf8))?.hasPrefix(String(characters[0..<20]) + "X")
                    == true
            })
        // Without soft wrap the line runs off the edge: the next line is on the next row.
        ste.keys("M-s", "Home")
        #expect(await ste.wait { ste.rows[2].hasPrefix(" next") }, "\(ste.screen)")
        #expect(ste.rows[1].hasPrefix(" " + String(characters[0..<19])), "\(ste.screen)")
        await Self.quit(ste)
    }

    // MARK: - 5. Mouse

    @Test func clickPlacesTheCursorDragSelectsAndClickInTheListChooses() async throws {
        let ste = try SteSession { container in
            try Data("other doc".utf8).write(to: container.appendingPathComponent("Other.txt"))
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-60)],
                ofItemAtPath: container.appendingPathComponent("Other.txt").path)
            try Data("hello 日本語 world\nsecond line\n".utf8).write(
                to: container.appendingPathComponent("Doc.txt"))
        }
        ste.start()
        #expect(await ste.waitForScreen(containing: "hello 日本語"))
        // The text starts two cells right of the list's separator (column 33).
        let textX = 35
        ste.click(x: textX + 8, y: 1)  // on 本: the cursor goes before it
        #expect(await ste.waitForScreen(containing: "Ln 1, Col 9"), "\(ste.screen)")
        ste.type("X")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "hello 日X本語 world\nsecond line\n" })
        ste.drag(from: (textX, 2), to: (textX + 7, 2))
        #expect(await ste.waitForScreen(containing: "7 characters selected"), "\(ste.screen)")
        ste.keys("C-x")
        #expect(await ste.wait { ste.text(of: "Doc.txt") == "hello 日X本語 world\nline\n" }, "\(ste.screen)")
        ste.click(x: 3, y: 2)
        #expect(await ste.waitForScreen(containing: "other doc"), "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func wheelScrollsAndTheCursorComesAlongAndLineNumbersShowOnRequest() async throws {
        let text = (1...100).map { "row \($0)" }.joined(separator: "\n")
        let ste = try await Self.session(text: text)
        ste.wheel(down: true, y: 5)
        ste.wheel(down: true, y: 5)
        // Six rows down: the first line shown is row 7, and the cursor, left above, is on it.
        #expect(await ste.wait { ste.textRow(1) == " row 7" }, "\(ste.screen)")
        #expect(await ste.waitForScreen(containing: "Ln 7, Col 1"), "\(ste.screen)")
        ste.wheel(down: false, y: 5)
        #expect(await ste.wait { ste.textRow(1) == " row 4" }, "\(ste.screen)")
        ste.keys("M-n")
        #expect(await ste.wait { ste.textRow(1).hasPrefix("   4 row 4") }, "\(ste.screen)")
        ste.type("X")
        #expect(await ste.wait { ste.text(of: "Doc.txt")?.contains("\nXrow 7\n") == true }, "\(ste.screen)")
        await Self.quit(ste)
    }

    @Test func mouseReportsAreAskedForUnlessNoMouse() async throws {
        for (arguments, asked) in [([String](), "1"), (["--no-mouse"], "0")] {
            let ste = try SteSession { container in
                try Data("abc".utf8).write(to: container.appendingPathComponent("Doc.txt"))
            }
            ste.start(arguments: arguments)
            #expect(await ste.waitForScreen(containing: "abc"))
            let flags = ste.tmux(["display-message", "-p", "#{mouse_button_flag}#{mouse_sgr_flag}"]).output
            #expect(flags.trimmingCharacters(in: .whitespacesAndNewlines) == asked + asked, "\(arguments)")
            await Self.quit(ste)
        }
        let help = try runSte(["--help"])
        #expect(help.output.contains("--no-mouse"))
        #expect(help.output.contains("Conventions:"))
    }
}
