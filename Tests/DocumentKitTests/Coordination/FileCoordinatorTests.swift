import Foundation
import Synchronization
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FileCoordinatorTests {
    // MARK: Between processes

    @Test func twoProcessesWritingOneFileAThousandTimesEachLoseNothing() throws {
        let tree = try TemporaryTree()
        let file = tree.file("Documents/log.txt")
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let start = tree.file("start")
        // Only the two children coordinate here: a runtime folder of their own.
        let environment = CoordinationChild.environment(runtime: tree.file("run"))
        let writers = try ["A", "B"].map { tag in
            try TestChild.start(
                ["coord-append", file.path, "1000", tag, start.path], environment: environment)
        }
        _ = FileManager.default.createFile(atPath: start.path, contents: nil)
        for writer in writers {
            let outcome = TestChild.finish(writer)
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }

        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 2000)
        var numbers: [Substring: [Int]] = [:]
        for line in lines {
            let parts = line.split(separator: " ")
            guard parts.count == 2, ["A", "B"].contains(parts[0]), let number = Int(parts[1]) else {
                Issue.record("torn or interleaved line: \(line)")
                continue
            }
            numbers[parts[0], default: []].append(number)
        }
        #expect(numbers["A"] == Array(0..<1000))
        #expect(numbers["B"] == Array(0..<1000))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == [
                "log.txt"
            ])
    }

    @Test func readerNeverSeesAHalfWrittenFile() throws {
        let tree = try TemporaryTree()
        let file = tree.file("big.bin")
        let size = 256 * 1024
        let writer = try TestChild.start(
            ["coord-generations", file.path, "60", "\(size)"], environment: CoordinationChild.environment())
        let coordinator = FileCoordinator()
        var reads = 0
        var generations = Set<Int>()
        var bad: [String] = []
        while writer.isRunning || reads == 0 {
            let data: Data? = try coordinator.coordinate(readingItemAt: file) { url in
                try? Data(contentsOf: url)
            }
            guard let data else { continue }  // not written yet
            reads += 1
            guard let generation = generationNumber(of: data),
                data == generationContents(generation, size: size)
            else {
                bad.append(
                    "read \(reads): \(data.count) bytes starting \(String(decoding: data.prefix(20), as: UTF8.self))"
                )
                continue
            }
            generations.insert(generation)
        }
        let outcome = TestChild.finish(writer)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(bad.isEmpty, "\(bad.prefix(5))")
        #expect(generations.contains(60) || reads > 0)
        print("FileCoordinator: \(reads) coordinated reads saw \(generations.count) whole generations")
    }

    @Test func writerKilledWhileHoldingTheLockBlocksNoOne() throws {
        let tree = try TemporaryTree()
        let file = tree.file("notes.txt")
        let child = try CoordinationChild(["coord-hold-write", file.path])
        #expect(child.waitForLine("locked") != nil)
        let wrote = Worker {
            try FileCoordinator().coordinate(writingItemAt: file) { url in
                try SafeSave.write(Data("next\n".utf8), to: url)
            }
        }
        // While the child lives, its lock must hold the writer back; a broken lock lets it through.
        #expect(!wrote.finished(within: .milliseconds(200)))
        child.kill(SIGKILL)
        #expect(wrote.finished(within: .seconds(20)))
        try wrote.join()
        #expect(try String(contentsOf: file, encoding: .utf8) == "next\n")
    }

    @Test func processesSharingA1777RuntimeFolderCoordinateAndLeaveItsMode() throws {
        let tree = try TemporaryTree()
        let shared = tree.file("shared-run")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        chmod(shared.path, 0o1777)
        let file = tree.file("notes.txt")
        _ = FileManager.default.createFile(atPath: tree.file("start").path, contents: nil)

        let holder = try CoordinationChild(["coord-hold-write", file.path], runtime: shared)
        #expect(holder.waitForLine("locked") != nil, "\(holder.standardError)")
        let writer = try TestChild.start(
            ["coord-append", file.path, "1", "B", tree.file("start").path],
            environment: CoordinationChild.environment(runtime: shared))
        // The holder's lock must keep the other process's write back until it dies.
        usleep(300_000)
        #expect(writer.isRunning)
        holder.kill(SIGKILL)
        let outcome = TestChild.finish(writer)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "held\nB 0\n")

        var info = stat()
        #expect(lstat(shared.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o1777)
        let own = shared.appendingPathComponent("documentkit-runtime-\(getuid())")
        #expect(lstat(own.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o700)
        #expect(FileManager.default.fileExists(atPath: own.appendingPathComponent("documentkit/locks").path))
    }

    // MARK: The rules, between threads

    @Test func readersShare() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("shared\n", to: "notes.txt")
        let entered = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let first = Worker {
            try FileCoordinator().coordinate(readingItemAt: file) { _ in
                entered.signal()
                leave.wait()
            }
        }
        entered.wait()
        let second = Worker {
            try FileCoordinator().coordinate(readingItemAt: file) { try Data(contentsOf: $0) }
        }
        // The first reader is still inside its accessor: the second must not need it to leave.
        #expect(second.finished(within: .seconds(20)))
        leave.signal()
        try first.join()
        #expect(try second.join() == Data("shared\n".utf8))
    }

    @Test func writerWaitsForReaderAndReaderForWriter() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let log = CoordinationEventLog()
        let entered = DispatchSemaphore(value: 0)
        let reader = Worker {
            try FileCoordinator().coordinate(readingItemAt: file) { _ in
                entered.signal()
                Thread.sleep(forTimeInterval: 0.15)
                log.record("read ends")
            }
        }
        entered.wait()
        try FileCoordinator().coordinate(writingItemAt: file) { url in
            log.record("write")
            try SafeSave.write(Data("two\n".utf8), to: url)
        }
        try reader.join()
        #expect(log.events == ["read ends", "write"])
    }

    @Test func coordinatorNeverBlocksOnItself() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "Folder/notes.txt")
        let folder = tree.file("Folder")
        let done = Worker {
            let coordinator = FileCoordinator()
            // Reading and writing one item in one call.
            try coordinator.coordinate(readingItemAt: file, writingItemAt: file) { readURL, writeURL in
                try SafeSave.write(try Data(contentsOf: readURL) + Data("two\n".utf8), to: writeURL)
            }
            // Nested accesses to the item held, from inside the accessor.
            try coordinator.coordinate(writingItemAt: file) { url in
                _ = try coordinator.coordinate(readingItemAt: url) { try Data(contentsOf: $0) }
                try coordinator.coordinate(writingItemAt: url, options: .forMerging) { url in
                    try SafeSave.write(try Data(contentsOf: url) + Data("three\n".utf8), to: url)
                }
            }
            // Nested access to an item inside a folder being moved.
            try coordinator.coordinate(writingItemAt: folder, options: .forMoving) { folder in
                _ = try coordinator.coordinate(readingItemAt: folder.appendingPathComponent("notes.txt")) {
                    try Data(contentsOf: $0)
                }
            }
        }
        #expect(
            done.finished(within: .seconds(20)), "a nested coordinated access waited for its own coordinator")
        if done.finished(within: .zero) { try done.join() }
        #expect(try String(contentsOf: file, encoding: .utf8) == "one\ntwo\nthree\n")
    }

    @Test func movingAFolderExcludesReadingAFileInside() throws {
        let tree = try TemporaryTree()
        let folder = tree.file("Project")
        try tree.write("inside\n", to: "Project/a/notes.txt")
        let moved = tree.file("Renamed")
        let log = CoordinationEventLog()
        let entered = DispatchSemaphore(value: 0)
        let mover = Worker {
            let coordinator = FileCoordinator()
            try coordinator.coordinate(
                writingItemAt: folder, options: .forMoving, writingItemAt: moved, options: .forReplacing
            ) { source, destination in
                entered.signal()
                // Time for a broken exclusion to let the reader in; a working one passes regardless.
                Thread.sleep(forTimeInterval: 0.15)
                try FileManager.default.moveItem(at: source, to: destination)
                coordinator.item(at: source, didMoveTo: destination)
                log.record("moved")
            }
        }
        entered.wait()
        let (read, text) = try FileCoordinator().coordinate(readingItemAt: tree.file("Project/a/notes.txt")) {
            url in
            log.record("read")
            return (url, try? String(contentsOf: url, encoding: .utf8))
        }
        try mover.join()
        #expect(log.events == ["moved", "read"])
        // As Apple's coordinator does, the reader that waited is given the item where it went.
        #expect(read.standardizedFileURL.path == tree.file("Renamed/a/notes.txt").standardizedFileURL.path)
        #expect(text == "inside\n")
    }

    @Test func movesCarryAnItemAlongOnlyFromItselfOrAFolderAboveIt() {
        let moves = [
            (from: "/a/b", to: "/a/c"), (from: "/a/c/d.txt", to: "/e/d.txt"), (from: "/x", to: "/y"),
        ]
        #expect(MoveJournal.location(of: "/a/b/d.txt", after: moves) == "/e/d.txt")
        #expect(MoveJournal.location(of: "/a/b/f/g.txt", after: moves) == "/a/c/f/g.txt")
        #expect(MoveJournal.location(of: "/a/bc/d.txt", after: moves) == "/a/bc/d.txt")
        #expect(MoveJournal.location(of: "/a/b", after: moves) == "/a/c")
        #expect(MoveJournal.location(of: "/xy", after: moves) == "/xy")
    }

    @Test func aReaderWaitingWhileAnotherProcessMovesTheFolderIsGivenTheNewLocation() async throws {
        let tree = try TemporaryTree()
        try tree.write("inside\n", to: "Project/notes.txt")
        let child = try CoordinationChild([
            "coord-move", tree.file("Project").path, tree.file("Moved").path, "400",
        ])
        #expect(child.waitForLine("locked") != nil, "\(child.lines)")
        let (read, text) = try FileCoordinator().coordinate(readingItemAt: tree.file("Project/notes.txt")) {
            url in
            (url, try? String(contentsOf: url, encoding: .utf8))
        }
        #expect(child.waitForLine("moved") != nil)
        #expect(read.standardizedFileURL.path == tree.file("Moved/notes.txt").standardizedFileURL.path)
        #expect(text == "inside\n")
        // The intent form: the intent's url follows a move made while the access waited.
        let back = try CoordinationChild([
            "coord-move", tree.file("Moved").path, tree.file("Back").path, "400",
        ])
        #expect(back.waitForLine("locked") != nil, "\(back.lines)")
        let intent = FileAccessIntent.readingIntent(with: tree.file("Moved/notes.txt"))
        let seen = try await FileCoordinator().coordinate(with: [intent]) { intent.url }
        #expect(back.waitForLine("moved") != nil)
        #expect(seen.standardizedFileURL.path == tree.file("Back/notes.txt").standardizedFileURL.path)
        try FileManager.default.moveItem(at: tree.file("Back"), to: tree.file("Moved"))
        // An access that never waited is given the URL it asked for.
        let direct = try FileCoordinator().coordinate(readingItemAt: tree.file("Moved/notes.txt")) { $0 }
        #expect(direct == tree.file("Moved/notes.txt"))
    }

    @Test func cancelledCoordinatorThrowsCancellationError() throws {
        let tree = try TemporaryTree()
        let coordinator = FileCoordinator()
        coordinator.cancel()
        #expect(throws: CancellationError.self) {
            try coordinator.coordinate(writingItemAt: tree.file("notes.txt")) { _ in
                Issue.record("a cancelled coordinator ran its accessor")
            }
        }
    }

    @Test func asyncIntentFormCoordinates() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("one\n", to: "notes.txt")
        let copy = tree.file("copy.txt")
        let coordinator = FileCoordinator()
        let intents = [
            FileAccessIntent.readingIntent(with: file),
            FileAccessIntent.writingIntent(with: copy, options: .forReplacing),
        ]
        try await coordinator.coordinate(with: intents) {
            try FileManager.default.copyItem(at: intents[0].url, to: intents[1].url)
        }
        #expect(try String(contentsOf: copy, encoding: .utf8) == "one\n")
    }

    // MARK: Where state lives

    @Test func coordinationStateLivesInThePrivateRuntimeFolderAndNothingBesideTheFiles() throws {
        let tree = try TemporaryTree()
        let documents = tree.file("Documents")
        let file = try tree.write("one\n", to: "Documents/Project/notes.txt")
        let presenter = RecordingPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        let coordinator = FileCoordinator()
        _ = try coordinator.coordinate(readingItemAt: file) { try Data(contentsOf: $0) }
        try coordinator.coordinate(writingItemAt: file, options: .forReplacing) { url in
            try SafeSave.write(Data("two\n".utf8), to: url)
        }
        _ = try coordinator.coordinate(readingItemAt: file, options: .forUploading) {
            try Data(contentsOf: $0)
        }
        let renamed = tree.file("Documents/Renamed")
        try coordinator.coordinate(
            writingItemAt: tree.file("Documents/Project"), options: .forMoving, writingItemAt: renamed,
            options: .forReplacing
        ) { source, destination in
            try FileManager.default.moveItem(at: source, to: destination)
            coordinator.item(at: source, didMoveTo: destination)
        }
        try coordinator.coordinate(
            writingItemAt: renamed.appendingPathComponent("notes.txt"), options: .forDeleting
        ) {
            try FileManager.default.removeItem(at: $0)
        }

        #expect(try FileManager.default.subpathsOfDirectory(atPath: documents.path).sorted() == ["Renamed"])
        let runtime = StandardDirectories.current.runtime
        let attributes = try FileManager.default.attributesOfItem(atPath: runtime.path)
        #expect((attributes[.posixPermissions] as? Int ?? -1) & 0o777 == 0o700)
        let locks = runtime.appendingPathComponent("documentkit/locks")
        #expect(try !FileManager.default.contentsOfDirectory(atPath: locks.path).isEmpty)
    }
}

// MARK: - Support

/// A child process whose standard output lines are collected as they arrive, so a test can
/// wait for one with a bound and see the order of everything the child said.
final class CoordinationChild: @unchecked Sendable {
    // The process is only started here, signalled and waited for; Foundation's Process is
    // thread-safe for that.
    let process: Process
    private let output = Mutex<(lines: [String], partial: String, ended: Bool)>(([], "", false))
    private let errors = Mutex<String>("")
    private let outputEnded = DispatchSemaphore(value: 0)
    private let errorsEnded = DispatchSemaphore(value: 0)

    /// The environment a child needs to share this process's coordination state, or that of
    /// `runtime` if given.
    static func environment(runtime: URL? = nil, dataHome: URL? = nil) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = (runtime ?? StandardDirectories.current.runtime).path
        if let dataHome { environment["XDG_DATA_HOME"] = dataHome.path }
        return environment
    }

    init(_ arguments: [String], runtime: URL? = nil, dataHome: URL? = nil) throws {
        process = try TestChild.start(
            arguments, environment: Self.environment(runtime: runtime, dataHome: dataHome))
        let out = (process.standardOutput as! Pipe).fileHandleForReading
        let err = (process.standardError as! Pipe).fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = out.availableData
                if data.isEmpty { break }
                output.withLock { state in
                    state.partial += String(decoding: data, as: UTF8.self)
                    while let newline = state.partial.firstIndex(of: "\n") {
                        state.lines.append(String(state.partial[..<newline]))
                        state.partial = String(state.partial[state.partial.index(after: newline)...])
                    }
                }
            }
            output.withLock { $0.ended = true }
            outputEnded.signal()
        }
        Thread.detachNewThread { [self] in
            let data = err.readDataToEndOfFile()
            errors.withLock { $0 = String(decoding: data, as: UTF8.self) }
            errorsEnded.signal()
        }
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// Every line the child printed so far.
    var lines: [String] { output.withLock { $0.lines } }

    /// Waits, at most `timeout` (a failure bound, not a wait the test relies on), for a line
    /// for which `matches` holds; returns it, or nil if the child ended or the time ran out.
    func waitForLine(timeout: Duration = .seconds(20), where matches: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (lines, ended) = output.withLock { ($0.lines, $0.ended) }
            if let line = lines.first(where: matches) { return line }
            if ended { return nil }
            usleep(2000)
        }
        return nil
    }

    func waitForLine(_ line: String, timeout: Duration = .seconds(20)) -> String? {
        waitForLine(timeout: timeout) { $0 == line }
    }

    func kill(_ signal: Int32 = SIGKILL) {
        Glibc.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    /// What the child wrote to standard error; waits for it to end.
    var standardError: String {
        errorsEnded.wait()
        errorsEnded.signal()
        return errors.withLock { $0 }
    }
}

/// Runs a closure on a thread of its own, for tests where blocking is the point.
final class Worker<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> Value) {
        Thread.detachNewThread { [self] in
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    /// Whether the closure returned within `timeout`.
    func finished(within timeout: Duration) -> Bool {
        if result.withLock({ $0 != nil }) { return true }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.inSeconds * 1e9))) == .success else {
            return false
        }
        done.signal()
        return true
    }

    func join() throws -> Value {
        done.wait()
        done.signal()
        return try result.withLock { $0! }.get()
    }
}

/// Events recorded from several threads, in the order they happened.
final class CoordinationEventLog: Sendable {
    private let storage = Mutex<[String]>([])
    func record(_ event: String) { storage.withLock { $0.append(event) } }
    var events: [String] { storage.withLock { $0 } }
}

/// A presenter that records what it is told, and can be made to never answer a save.
final class RecordingPresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    let log = CoordinationEventLog()
    let answersSave: Bool
    let onSave: @Sendable () -> Void

    init(url: URL, answersSave: Bool = true, onSave: @escaping @Sendable () -> Void = {}) {
        presentedItemURL = url
        self.answersSave = answersSave
        self.onSave = onSave
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        log.record("save")
        guard answersSave else { return }
        onSave()
        completionHandler(nil)
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        log.record("relinquish")
        writer { [log] in log.record("reacquire") }
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        log.record("delete")
        completionHandler(nil)
    }

    func presentedItemDidChange() { log.record("didChange") }
    func presentedItemDidMove(to newURL: URL) { log.record("didMove \(newURL.lastPathComponent)") }
    func presentedSubitemDidChange(at url: URL) { log.record("subitemDidChange \(url.lastPathComponent)") }
    func presentedSubitemDidAppear(at url: URL) { log.record("subitemDidAppear \(url.lastPathComponent)") }

    /// Waits, at most a generous bound, for an event; true if it came.
    func waitFor(_ event: String, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if log.events.contains(event) { return true }
            usleep(2000)
        }
        return false
    }
}

/// A file's contents for generation `n`, as the test child writes them: a header naming the
/// generation, then bytes that depend on it, so a torn or mixed file is recognisable.
func generationContents(_ generation: Int, size: Int) -> Data {
    var data = Data("generation \(generation)\n".utf8)
    let fill = UInt8(truncatingIfNeeded: generation &* 31 &+ 7)
    data.append(Data(repeating: fill, count: max(0, size - data.count - 4)))
    data.append(Data("end\n".utf8))
    return data
}

func generationNumber(of data: Data) -> Int? {
    let line = String(decoding: data.prefix(while: { $0 != 10 }).prefix(40), as: UTF8.self)
    guard line.hasPrefix("generation ") else { return nil }
    return Int(line.dropFirst("generation ".count))
}

extension Duration {
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
