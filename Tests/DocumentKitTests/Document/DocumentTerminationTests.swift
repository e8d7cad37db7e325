import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real child process holds a dirty document whose autosave is ten minutes away, and is told
/// to quit: the termination hook must save the edit before the process ends.
@Suite("Document termination hook, in a child process")
struct DocumentTerminationTests {
    struct Signal: CustomTestStringConvertible, Sendable {
        var number: Int32
        var name: String
        var testDescription: String { name }
    }

    static let signals = [
        Signal(number: SIGTERM, name: "SIGTERM"), Signal(number: SIGINT, name: "SIGINT"),
        Signal(number: SIGHUP, name: "SIGHUP"),
    ]

    /// Reads the child's output until it says "ready"; false if it ended first.
    func waitForReady(_ process: Process) -> Bool {
        guard let output = (process.standardOutput as? Pipe)?.fileHandleForReading else { return false }
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("ready\n") {
            let chunk = output.availableData
            if chunk.isEmpty { return false }
            seen.append(chunk)
        }
        return true
    }

    @Test(arguments: signals)
    func aSignalSavesTheDirtyDocumentThenEndsTheProcessByThatSignal(_ signal: Signal) throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before the signal", to: "signalled.txt")
        let edit = "typed before \(signal.name) ✓"
        let child = try TestChild.start(["document-wait", url.path, edit])
        let ready = waitForReady(child)
        if ready { kill(child.processIdentifier, signal.number) } else { child.terminate() }
        let outcome = TestChild.finish(child)
        try #require(ready, "the child never got ready: \(outcome.standardError)")
        #expect(fileText(url) == edit)
        #expect(outcome.reason == .uncaughtSignal, "stderr: \(outcome.standardError)")
        #expect(outcome.status == signal.number)
        #expect(saveLeftovers(in: tree.url).isEmpty)
    }

    @Test func theSavedOverContentsAreInTheHistoryWhenTheProcessEnds() throws {
        let tree = try TemporaryTree()
        let url = try tree.write(String(repeating: "before the signal\n", count: 20_000), to: "history.txt")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = tree.file("data").path
        let child = try TestChild.start(["document-wait", url.path, "after"], environment: environment)
        let ready = waitForReady(child)
        if ready { kill(child.processIdentifier, SIGTERM) } else { child.terminate() }
        let outcome = TestChild.finish(child)
        try #require(ready, "the child never got ready: \(outcome.standardError)")
        #expect(fileText(url) == "after")
        // The version the last save captured is stored before the process ends, not lost
        // with the background work a signal cuts short.
        let store = VersionStore(root: tree.file("data/DocumentKit/Versions"))
        let texts = try store.otherVersionsOfItem(at: url).map {
            try String(contentsOf: $0.url, encoding: .utf8)
        }
        #expect(texts == [String(repeating: "before the signal\n", count: 20_000)])
    }

    @Test func aDocumentRenamedJustBeforeTheSignalIsSavedUnderItsNewName() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before", to: "old name.txt")
        let renamed = tree.file("new name.txt")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = tree.file("data").path
        environment["XDG_RUNTIME_DIR"] = StandardDirectories.current.runtime.path
        let child = try TestChild.start(
            ["document-wait", url.path, "typed, then renamed"], environment: environment)
        let ready = waitForReady(child)
        if ready {
            try coordinatedMove(url, to: renamed)
            kill(child.processIdentifier, SIGTERM)
        } else {
            child.terminate()
        }
        let outcome = TestChild.finish(child)
        try #require(ready, "the child never got ready: \(outcome.standardError)")
        #expect(fileText(renamed) == "typed, then renamed", "stderr: \(outcome.standardError)")
        #expect(!FileManager.default.fileExists(atPath: url.path), "the old name came back")
    }

    @Test func aNewDocumentIsSavedOnASignalToo() throws {
        let tree = try TemporaryTree()
        let url = tree.file("created.txt")
        let child = try TestChild.start(["document-wait", url.path, "brand new"])
        let ready = waitForReady(child)
        if ready { kill(child.processIdentifier, SIGTERM) } else { child.terminate() }
        let outcome = TestChild.finish(child)
        try #require(ready, "the child never got ready: \(outcome.standardError)")
        #expect(fileText(url) == "brand new")
        #expect(outcome.reason == .uncaughtSignal)
    }

    @Test func aNormalExitSavesTheDirtyDocument() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before exit", to: "exiting.txt")
        let started = ContinuousClock.now
        let outcome = try TestChild.run(["document-exit", url.path, "typed before exit"])
        #expect(outcome.standardOutput.contains("ready"), "stderr: \(outcome.standardError)")
        #expect(outcome.reason == .exit)
        #expect(outcome.status == 0, "stderr: \(outcome.standardError)")
        #expect(fileText(url) == "typed before exit")
        #expect(ContinuousClock.now - started < .seconds(8), "saving at exit must not wait out a timeout")
    }

    /// Another module (a sync engine flushing its journal) registers with the same hook and
    /// runs after the documents registered before it have saved, at a signal and at exit.
    @Test(arguments: [(SIGTERM, "signal(15)"), (0, "exit")])
    func aRegisteredHandlerRunsAfterTheDocumentsSaved(signalNumber: Int32, reason: String) throws {
        let tree = try TemporaryTree()
        let url = try tree.write("before", to: "flushed.txt")
        let marker = tree.file("marker")
        let command = signalNumber == 0 ? "document-exit" : "document-wait"
        let child = try TestChild.start([command, url.path, "saved first", marker.path])
        let ready = waitForReady(child)
        if ready, signalNumber != 0 { kill(child.processIdentifier, signalNumber) }
        if !ready { child.terminate() }
        let outcome = TestChild.finish(child)
        try #require(ready, "the child never got ready: \(outcome.standardError)")
        #expect(fileText(marker) == "\(reason) saved first", "stderr: \(outcome.standardError)")
        #expect(outcome.status == signalNumber)
    }
}
