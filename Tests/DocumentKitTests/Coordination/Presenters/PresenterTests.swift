import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct PresenterTests {
    // MARK: In this process

    @Test func presenterSavesBeforeAWriteAndHearsOfItAfter() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let marker = tree.file("saved-marker")
        let presenter = RecordingPresenter(url: file) {
            _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
        }
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        try FileCoordinator().coordinate(writingItemAt: file, options: .forReplacing) { url in
            presenter.log.record(
                FileManager.default.fileExists(atPath: marker.path) ? "write after save" : "write")
            try SafeSave.write(Data("two\n".utf8), to: url)
        }
        #expect(presenter.waitFor("didChange"))
        let events = presenter.log.events
        #expect(Array(events.prefix(3)) == ["save", "relinquish", "write after save"])
        #expect(events.contains("reacquire"))
        // inotify sees the write too; the presenter must hear of it once.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(presenter.log.events.filter { $0 == "didChange" }.count == 1, "\(presenter.log.events)")
    }

    @Test func coordinatorNeverMessagesItsOwnPresenter() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let presenter = RecordingPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        try FileCoordinator(filePresenter: presenter).coordinate(writingItemAt: file) { url in
            try SafeSave.write(Data("two\n".utf8), to: url)
        }
        // Neither the coordinator nor inotify may report the presenter's own write to it.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(presenter.log.events == [])
    }

    @Test func uncoordinatedWriteReachesPresenter() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let presenter = RecordingPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        try shell("echo x > '\(file.path)'")
        #expect(presenter.waitFor("didChange"))
    }

    @Test func folderPresenterHearsOfItemsInside() throws {
        let tree = try TemporaryTree()
        let existing = try tree.write("one\n", to: "Folder/notes.txt")
        let folder = tree.file("Folder")
        let presenter = RecordingPresenter(url: folder)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        let coordinator = FileCoordinator()
        try coordinator.coordinate(writingItemAt: existing) { try SafeSave.write(Data("two\n".utf8), to: $0) }
        try coordinator.coordinate(writingItemAt: folder.appendingPathComponent("new.txt")) {
            try SafeSave.write(Data("new\n".utf8), to: $0)
        }
        #expect(presenter.waitFor("subitemDidChange notes.txt"))
        #expect(presenter.waitFor("subitemDidAppear new.txt"))
    }

    @Test func movedAndDeletedItemsReachTheirPresenters() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let renamed = tree.file("renamed.txt")
        let presenter = RecordingPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        let coordinator = FileCoordinator()
        try coordinator.coordinate(
            writingItemAt: file, options: .forMoving, writingItemAt: renamed, options: .forReplacing
        ) {
            source, destination in
            try FileManager.default.moveItem(at: source, to: destination)
            coordinator.item(at: source, didMoveTo: destination)
        }
        #expect(presenter.waitFor("didMove renamed.txt"))

        // The presenter now presents the new name: a deletion of it must reach it.
        try coordinator.coordinate(writingItemAt: renamed, options: .forDeleting) { url in
            presenter.log.record("deleting")
            try FileManager.default.removeItem(at: url)
        }
        let events = presenter.log.events
        #expect(
            events.firstIndex(of: "delete").map { $0 < events.firstIndex(of: "deleting")! } == true,
            "\(events)")
    }

    @Test func presenterThatNeverAnswersDelaysAWriterByAtMostTheBound() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let presenter = RecordingPresenter(url: file, answersSave: false)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        // The bound is process-wide and other tests run in parallel: use the default, not a small one.
        let bound = FileCoordinator.presenterTimeout
        let started = ContinuousClock.now
        try FileCoordinator().coordinate(writingItemAt: file) {
            try SafeSave.write(Data("two\n".utf8), to: $0)
        }
        let elapsed = ContinuousClock.now - started
        print("PresenterTests: a presenter that never answers held a writer for \(elapsed) (bound \(bound))")
        #expect(presenter.log.events.first == "save")
        #expect(elapsed >= bound / 2)
        #expect(elapsed < bound * 5 + .seconds(5))
    }

    // MARK: In another process

    @Test func presenterInAnotherProcessSavesBeforeAWriteAndHearsOfItAfter() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let marker = tree.file("saved-marker")
        let child = try CoordinationChild(["coord-presenter", file.path, marker.path, "5", "answer"])
        #expect(child.waitForLine("ready") != nil)

        let seenInAccessor = try FileCoordinator().coordinate(writingItemAt: file, options: .forReplacing) {
            url in
            // The child printed "save" before it answered; this process's reader of its
            // output may lag behind, so the line is waited for, not merely looked up.
            let saidSave = child.waitForLine("save") != nil
            let seen = (
                marker: FileManager.default.fileExists(atPath: marker.path), saidSave: saidSave,
                lines: child.lines
            )
            try SafeSave.write(Data("two\n".utf8), to: url)
            return seen
        }
        #expect(seenInAccessor.marker, "the writer ran before the other process's presenter saved")
        #expect(seenInAccessor.saidSave)
        #expect(!seenInAccessor.lines.contains("didChange"))
        #expect(child.waitForLine("didChange") != nil, "\(child.lines)")
        Thread.sleep(forTimeInterval: 0.3)
        let lines = child.lines
        #expect(lines.filter { $0 == "didChange" }.count == 1, "\(lines)")
        #expect(lines.firstIndex(of: "save")! < lines.firstIndex(of: "didChange")!)
        child.kill()
    }

    @Test func presenterInAnotherProcessIsAskedAfterTheIndexWasReadWithoutIt() throws {
        // The index is read once and kept while its generation file is unchanged; a new
        // listing must show, even after the generation file itself was deleted.
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let marker = tree.file("saved-marker")
        try FileCoordinator().coordinate(writingItemAt: file, options: .forReplacing) {
            try SafeSave.write(Data("two\n".utf8), to: $0)
        }
        let runtime = StandardDirectories.current.runtime
        unlink(runtime.appendingPathComponent("documentkit/presented/.generation").path)
        let child = try CoordinationChild(["coord-presenter", file.path, marker.path, "5", "answer"])
        #expect(child.waitForLine("ready") != nil)

        let saved = try FileCoordinator().coordinate(writingItemAt: file, options: .forReplacing) { url in
            defer { try? SafeSave.write(Data("three\n".utf8), to: url) }
            return FileManager.default.fileExists(atPath: marker.path)
        }
        #expect(saved, "the writer did not ask the presenter in the other process: \(child.lines)")
        #expect(child.waitForLine("didChange") != nil, "\(child.lines)")
        child.kill()
    }

    @Test func presenterInAnotherProcessThatNeverAnswersDelaysAWriterByAtMostItsBound() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let child = try CoordinationChild([
            "coord-presenter", file.path, tree.file("marker").path, "0.5", "silent",
        ])
        #expect(child.waitForLine("ready") != nil)

        let started = ContinuousClock.now
        try FileCoordinator().coordinate(writingItemAt: file) {
            try SafeSave.write(Data("two\n".utf8), to: $0)
        }
        let elapsed = ContinuousClock.now - started
        print(
            "PresenterTests: a presenter in another process that never answers held a writer for \(elapsed) (bound 0.5 s)"
        )
        #expect(child.waitForLine("asked to save; not answering") != nil)
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(10))
        #expect(child.waitForLine("didChange") != nil)
        child.kill()
        #expect(
            child.standardError.contains("did not answer savePresentedItemChanges"), "\(child.standardError)")
    }

    @Test func uncoordinatedWriteReachesPresenterInAnotherProcess() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let child = try CoordinationChild([
            "coord-presenter", file.path, tree.file("marker").path, "5", "answer",
        ])
        #expect(child.waitForLine("ready") != nil)
        try shell("echo x > '\(file.path)'")
        #expect(child.waitForLine("didChange") != nil, "\(child.lines)")
        child.kill()
    }

    @Test func moveReachesPresenterInAnotherProcess() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let renamed = tree.file("renamed.txt")
        let child = try CoordinationChild([
            "coord-presenter", file.path, tree.file("marker").path, "5", "answer",
        ])
        #expect(child.waitForLine("ready") != nil)
        let coordinator = FileCoordinator()
        try coordinator.coordinate(
            writingItemAt: file, options: .forMoving, writingItemAt: renamed, options: .forReplacing
        ) {
            source, destination in
            try FileManager.default.moveItem(at: source, to: destination)
            coordinator.item(at: source, didMoveTo: destination)
        }
        let canonical = CoordinationLock.canonicalPath(renamed.path)
        #expect(
            child.waitForLine { $0 == "didMove \(canonical)" || $0 == "didMove \(renamed.path)" } != nil,
            "\(child.lines)")
        child.kill()
    }
}

/// Runs a command line with `/bin/sh`, as a program that knows nothing of coordination.
func shell(_ command: String) throws {
    let process = try Process.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", command])
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(command)")
}
