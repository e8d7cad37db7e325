import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("docs: edit")
struct DocsEditTests {
    /// An `EDITOR` value: `sh -c SCRIPT sh`, so the script sees the file as `$1`.
    static func editor(_ script: String) -> String {
        "/bin/sh -c '\(script)' sh"
    }

    @Test func editSavesWhatTheEditorWrote() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "hello ")
        let result = try folder.run(
            ["edit", "Notes"], environment: ["EDITOR": Self.editor("printf 日本語 >> \"$1\"")])
        #expect(result.status == 0, "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "hello 日本語")
    }

    @Test func editorThatFailsLeavesTheDocumentUnchanged() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "original")
        let result = try folder.run(
            ["edit", "Notes"], environment: ["EDITOR": Self.editor("printf junk >> \"$1\"; exit 1")])
        #expect(result.status == 1)
        #expect(result.error.contains("cannot edit “Notes”: the editor"))
        #expect(result.error.contains("exited with status 1; the document is unchanged"))
        #expect(try folder.contents("Notes.txt") == "original")
    }

    @Test func editorThatIsMissingLeavesTheDocumentUnchanged() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "original")
        let result = try folder.run(["edit", "Notes"], environment: ["EDITOR": "/nonexistent/editor"])
        #expect(result.status == 1)
        #expect(result.error.contains("was not found (exit status 127)"), "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "original")
    }

    @Test func editThatChangesNothingWritesNothing() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "same")
        let before = try FileManager.default.attributesOfItem(atPath: folder.url("Notes.txt").path)
        let result = try folder.run(["edit", "Notes"], environment: ["EDITOR": "true"])
        #expect(result.status == 0)
        let after = try FileManager.default.attributesOfItem(atPath: folder.url("Notes.txt").path)
        #expect(before[.systemFileNumber] as? Int == after[.systemFileNumber] as? Int)
        #expect(before[.modificationDate] as? Date == after[.modificationDate] as? Date)
    }

    @Test func editedTextThatIsNotUTF8IsKeptAsideAndNotSaved() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "original")
        let result = try folder.run(
            ["edit", "Notes"], environment: ["EDITOR": Self.editor("printf \"\\377\" >> \"$1\"")])
        #expect(result.status == 1)
        #expect(result.error.contains("the edited text is not UTF-8 text"), "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "original")
        let kept = try #require(
            result.error.components(separatedBy: "your text is kept in ").last?.trimmingCharacters(
                in: .newlines))
        #expect(FileManager.default.fileExists(atPath: kept))
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: kept).deletingLastPathComponent())
    }

    @Test func changeMadeElsewhereDuringTheEditIsNotOverwritten() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "original")
        // The "editor" edits its copy while another program rewrites the document itself.
        let script = "printf mine >> \"$1\"; printf theirs > \"$DOCUMENT\""
        let result = try folder.run(
            ["edit", "Notes"],
            environment: ["EDITOR": Self.editor(script), "DOCUMENT": folder.url("Notes.txt").path])
        #expect(result.status == 1)
        #expect(result.error.contains("another program changed it while you were editing"), "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "theirs")
        let kept = try #require(
            result.error.components(separatedBy: "yours is kept in ").last?.trimmingCharacters(in: .newlines))
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "originalmine")
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: kept).deletingLastPathComponent())
    }
}

@Suite("docs: watch")
struct DocsWatchTests {
    /// A running `docs watch` whose output lands in files the test reads as it goes.
    final class Watcher {
        let process = Process()
        let outputURL: URL
        let errorURL: URL

        init(_ folder: DocsFolder, json: Bool) throws {
            outputURL = folder.root.appendingPathComponent("watch.out")
            errorURL = folder.root.appendingPathComponent("watch.err")
            try Data().write(to: outputURL)
            try Data().write(to: errorURL)
            process.executableURL = DocsBinary.url
            process.arguments = json ? ["watch", "--json"] : ["watch"]
            process.environment = folder.environment
            process.standardOutput = try FileHandle(forWritingTo: outputURL)
            process.standardError = try FileHandle(forWritingTo: errorURL)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
        var error: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }
        var lines: [String] { output.split(separator: "\n").map(String.init) }

        func stop(with signal: Int32) -> Int32 {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit {
            if process.isRunning { _ = stop(with: SIGKILL) }
        }
    }

    @Test func watchPrintsChangesMadeByOtherProcesses() async throws {
        let folder = try DocsFolder()
        try folder.write("Existing.txt", "old")
        try folder.write("Going.txt", "bye")
        let watcher = try Watcher(folder, json: false)
        #expect(try await eventually { watcher.error.contains("docs: watching \(folder.container.path)") })

        #expect(try folder.run(["new", "Fresh"]).status == 0)
        #expect(try await eventually { watcher.lines.contains("added Fresh") }, "\(watcher.output)")

        try folder.write("Existing.txt", "changed by another process")
        #expect(try await eventually { watcher.lines.contains("changed Existing") }, "\(watcher.output)")

        #expect(try folder.run(["delete", "Going"]).status == 0)
        #expect(try await eventually { watcher.lines.contains("removed Going") }, "\(watcher.output)")

        try folder.write(".hidden.txt", "not a document")
        try folder.write("notes.md", "not a document")
        try FileManager.default.createDirectory(at: folder.url("sub"), withIntermediateDirectories: true)
        try folder.write("sub/inner.txt", "not in the container itself")
        try await Task.sleep(for: .milliseconds(500))
        #expect(watcher.stop(with: SIGINT) == 0)
        #expect(watcher.lines == ["added Fresh", "changed Existing", "removed Going"])
    }

    @Test func watchJSONLinesParseBackAndSIGTERMEndsIt() async throws {
        let folder = try DocsFolder()
        let watcher = try Watcher(folder, json: true)
        #expect(try await eventually { watcher.error.contains("docs: watching") })
        // Written whole and renamed into place, as editors save: one event with the final
        // size. (A plain write is seen empty first, then changed.)
        try Data("12345".utf8).write(to: folder.url("One.txt"), options: .atomic)
        #expect(try await eventually { watcher.lines.count == 1 })
        try FileManager.default.removeItem(at: folder.url("One.txt"))
        #expect(try await eventually { watcher.lines.count == 2 })
        #expect(watcher.stop(with: SIGTERM) == 0)

        let events = try watcher.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(events[0]["event"] as? String == "added")
        #expect(events[0]["name"] as? String == "One")
        #expect(events[0]["file"] as? String == "One.txt")
        #expect(events[0]["size"] as? Int == 5)
        #expect(events[0]["modified"] is String)
        #expect(events[1]["event"] as? String == "removed")
        #expect(events[1]["size"] is NSNull)
    }
}
