import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a folder presenter hears of the items inside it: Apple's `NSFilePresenter.h` has one
/// `presentedSubitemDidAppear(at:)` for an item added and one `presentedSubitemDidChange(at:)`
/// for an item written to, at any depth, and `presentedItemDidChange()` instead for a file
/// package whose presenter does not implement the subitem method. Writes that do not
/// coordinate reach presenters through inotify with the same calls; a coordinated write
/// that inotify sees too is still one call.
///
/// Counting needs every call already on its way to have arrived. An uncoordinated file
/// created in the folder (``settle(_:in:)``) is reported through inotify after everything
/// the kernel reported before it, and the presenters here share one serial queue, so once
/// its call is logged every earlier one is.
@Suite struct FolderPresenterTests {
    // MARK: Creation

    @Test(arguments: ["safe", "plain", "atomic", "createFile"])
    func coordinatedCreationAppearsOnce(writing: String) throws {
        let tree = try TemporaryTree()
        let folder = tree.file("Folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = PresenterLog()
        let presenter = FolderRecorder(url: folder, log: log)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        // Several creations: whether inotify's report of one comes before or after the
        // coordinator's own is a race, lost only now and then by each.
        let names = (1...6).map { "new\($0).txt" }
        for name in names {
            try FileCoordinator().coordinate(writingItemAt: folder.appendingPathComponent(name)) {
                try write("new\n", to: $0, writing)
            }
        }
        try settle(log, in: folder)
        // One call for each, and none for anything else (a writer's temporary file).
        #expect(unsettled(log.events).sorted() == names.map { "subitemDidAppear \($0)" }, "\(log.events)")
    }

    @Test(arguments: ["safe", "plain", "atomic"])
    func coordinatedCreationInAnotherProcessAppearsOnce(writing: String) throws {
        let tree = try TemporaryTree()
        let folder = tree.file("Folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = PresenterLog()
        let presenter = FolderRecorder(url: folder, log: log)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        let child = try CoordinationChild([
            "coord-write", folder.appendingPathComponent("new.txt").path, "new\n", writing,
        ])
        #expect(child.waitForLine("written") != nil, "\(child.lines) \(child.standardError)")
        try settle(log, in: folder)
        #expect(unsettled(log.events) == ["subitemDidAppear new.txt"], "\(log.events)")
        child.kill()
    }

    @Test(arguments: ["safe", "plain", "atomic"])
    func coordinatedCreationAppearsOnceToFolderPresenterInAnotherProcess(writing: String) throws {
        let tree = try TemporaryTree()
        let folder = tree.file("Folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let child = try CoordinationChild([
            "coord-presenter", folder.path, tree.file("marker").path, "5", "answer",
        ])
        #expect(child.waitForLine("ready") != nil)

        let names = (1...4).map { "new\($0).txt" }
        for name in names {
            try FileCoordinator().coordinate(writingItemAt: folder.appendingPathComponent(name)) {
                try write("new\n", to: $0, writing)
            }
        }
        let marker = try settle(child, in: folder)
        let lines = child.lines
        #expect(
            unsettled(lines).filter { $0 != "ready" }.sorted() == names.map { "subitemDidAppear \($0)" },
            "\(lines)")
        for name in names {
            // Told before the access ended, so before the marker was made.
            #expect(lines.firstIndex(of: "subitemDidAppear \(name)").map { $0 < marker } == true, "\(lines)")
        }
        child.kill()
    }

    // MARK: Change

    @Test(arguments: ["safe", "plain", "atomic"])
    func coordinatedChangeReachesFolderPresenterOnce(writing: String) throws {
        let tree = try TemporaryTree()
        let top = try tree.write("one\n", to: "Folder/top.txt")
        let deep = try tree.write("one\n", to: "Folder/sub/deep.txt")
        let folder = tree.file("Folder")
        let log = PresenterLog()
        let presenter = FolderRecorder(url: folder, log: log)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        for _ in 0..<3 {
            for url in [top, deep] {
                try FileCoordinator().coordinate(writingItemAt: url) { try write("two\n", to: $0, writing) }
            }
        }
        try settle(log, in: folder)
        // Nothing else: no `presentedItemDidChange()` (a plain folder is not a package: an
        // item inside it changed, not it), no call for the subfolder or a temporary file.
        let expected =
            Array(repeating: "subitemDidChange deep.txt", count: 3)
            + Array(repeating: "subitemDidChange top.txt", count: 3)
        #expect(unsettled(log.events).sorted() == expected, "\(log.events)")
    }

    @Test(arguments: ["safe", "plain", "atomic"])
    func coordinatedChangeInAnotherProcessReachesFolderPresenterOnce(writing: String) throws {
        let tree = try TemporaryTree()
        let top = try tree.write("one\n", to: "Folder/top.txt")
        let folder = tree.file("Folder")
        let log = PresenterLog()
        let presenter = FolderRecorder(url: folder, log: log)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        let child = try CoordinationChild(["coord-write", top.path, "two\n", writing])
        #expect(child.waitForLine("written") != nil, "\(child.lines) \(child.standardError)")
        try settle(log, in: folder)
        #expect(unsettled(log.events) == ["subitemDidChange top.txt"], "\(log.events)")
        child.kill()
    }

    @Test func uncoordinatedChangesReachFolderPresenterOnceEach() throws {
        let tree = try TemporaryTree()
        let top = try tree.write("one\n", to: "Folder/top.txt")
        let deep = try tree.write("one\n", to: "Folder/sub/deep.txt")
        let folder = tree.file("Folder")
        let log = PresenterLog()
        let presenter = FolderRecorder(url: folder, log: log)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }

        // Programs that know nothing of coordination: a write in place at the top and one
        // level down, a file moved in from outside, and a new file made and written. The
        // writes in place are one write(2) each: `echo >` truncates first, and a shell put
        // off for longer than the watcher waits between the truncation and the write is
        // heard as two changes, truly made.
        try shell("printf two | dd of='\(top.path)' conv=notrunc status=none")
        #expect(log.waitFor("subitemDidChange top.txt"))
        try shell("printf two | dd of='\(deep.path)' conv=notrunc status=none")
        #expect(log.waitFor("subitemDidChange deep.txt"))
        try shell(
            "echo in > '\(tree.url.path)/outside.txt' && mv '\(tree.url.path)/outside.txt' '\(folder.path)/sub/in.txt'"
        )
        #expect(log.waitFor("subitemDidAppear in.txt"))
        try shell("echo new > '\(folder.path)/made.txt'")
        #expect(log.waitFor("subitemDidAppear made.txt"))
        try settle(log, in: folder)
        #expect(log.count("subitemDidChange top.txt") == 1, "\(log.events)")
        #expect(log.count("subitemDidChange deep.txt") == 1, "\(log.events)")
        #expect(log.count("subitemDidAppear in.txt") == 1, "\(log.events)")
        #expect(log.count("subitemDidChange in.txt") == 0, "\(log.events)")
        #expect(log.count("subitemDidAppear made.txt") == 1, "\(log.events)")
        // The kernel may report the shell's creation of the file and its write to it in
        // two reads, as two changes; then the write comes second.
        let made = log.events.filter { $0.hasSuffix(" made.txt") }
        #expect(
            made == ["subitemDidAppear made.txt"]
                || made == ["subitemDidAppear made.txt", "subitemDidChange made.txt"], "\(log.events)")
        #expect(log.count("didChange") == 0, "\(log.events)")
    }

    // MARK: Packages

    @Test func changeInsidePackageIsItemChangeForPresenterWithoutSubitemMethods() throws {
        let tree = try TemporaryTree()
        // `rtfd` is a package type in `FileTypes`. The folder presenter of another folder
        // makes the marker files that settle the calls: inotify reports in one order.
        let inner = try tree.write("one\n", to: "Docs/Note.rtfd/TXT.rtf")
        let package = tree.file("Docs/Note.rtfd")
        let other = tree.file("Other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let log = PresenterLog()
        let itemOnly = ItemRecorder(url: package, log: log, tag: "package")
        let withSubitems = FolderRecorder(url: package, log: log, tag: "package-subitems")
        let settler = FolderRecorder(url: other, log: log)
        for presenter in [itemOnly, withSubitems, settler] as [any FilePresenter] {
            FileCoordinator.addFilePresenter(presenter)
        }
        defer {
            for presenter in [itemOnly, withSubitems, settler] as [any FilePresenter] {
                FileCoordinator.removeFilePresenter(presenter)
            }
        }
        var expected: [String] = []
        func expectCalls(_ calls: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
            try settle(log, in: other)
            expected += calls
            let heard = log.events.filter { $0.hasPrefix("package") }
            #expect(heard.sorted() == expected.sorted(), "\(log.events)", sourceLocation: sourceLocation)
        }

        // A coordinated write inside the package.
        try FileCoordinator().coordinate(writingItemAt: inner) {
            try SafeSave.write(Data("two\n".utf8), to: $0)
        }
        try expectCalls(["package didChange", "package-subitems subitemDidChange TXT.rtf"])

        // Programs that do not coordinate: a write inside, a file moved in.
        try shell("printf three | dd of='\(inner.path)' conv=notrunc status=none")
        try shell(
            "echo new > '\(tree.url.path)/new.txt' && mv '\(tree.url.path)/new.txt' '\(package.path)/added.txt'"
        )
        try expectCalls([
            "package didChange", "package-subitems subitemDidChange TXT.rtf",
            "package didChange", "package-subitems subitemDidAppear added.txt",
        ])

        // The package saved anew as a document saves one, a new folder swapped in for the
        // old: a change of the item itself. inotify watches folders, not names, so the new
        // folder must be watched in its turn for a change inside it to be heard.
        try FileCoordinator().coordinate(writingItemAt: package, options: .forReplacing) { url in
            try SafeSave.writeDirectory(at: url) { staging in
                try Data("four\n".utf8).write(to: staging.appendingPathComponent("TXT.rtf"))
            }
        }
        try expectCalls(["package didChange", "package-subitems didChange"])
        try shell("printf five | dd of='\(inner.path)' conv=notrunc status=none")
        try expectCalls(["package didChange", "package-subitems subitemDidChange TXT.rtf"])
    }

    // MARK: Helpers

    /// The calls logged, but for those about the files ``settle(_:in:)`` made.
    private func unsettled(_ events: [String]) -> [String] {
        events.filter { !$0.contains(" settle-") }
    }

    /// Writes as apps do inside a coordinated write: DocumentKit's safe save, a write in
    /// place, or Foundation's atomic writes, which rename a temporary made beside the file.
    private func write(_ text: String, to url: URL, _ writing: String) throws {
        switch writing {
        case "safe": try SafeSave.write(Data(text.utf8), to: url)
        case "atomic": try Data(text.utf8).write(to: url, options: .atomic)
        case "createFile":
            #expect(FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8)))
        default: try Data(text.utf8).write(to: url)
        }
    }

    /// Makes an empty file in `folder` without coordination and waits until a presenter
    /// logging to `log` (of `folder` or a folder above it) is told of it.
    private func settle(_ log: PresenterLog, in folder: URL) throws {
        let name = try makeMarker(in: folder)
        #expect(log.waitFor("subitemDidAppear \(name)"), "\(log.events)")
    }

    /// The same for a folder presenter in a child process; returns the index of its line.
    private func settle(_ child: CoordinationChild, in folder: URL) throws -> Int {
        let name = try makeMarker(in: folder)
        #expect(child.waitForLine("subitemDidAppear \(name)") != nil, "\(child.lines)")
        return child.lines.firstIndex(of: "subitemDidAppear \(name)") ?? Int.max
    }

    /// Creates the file in place (`FileManager.createFile` would rename a temporary onto it).
    private func makeMarker(in folder: URL) throws -> String {
        let name = "settle-\(UUID().uuidString.prefix(8))"
        let fd = open(
            folder.appendingPathComponent(name).path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        close(fd)
        return name
    }
}

/// One log, in order, for presenters that share one serial queue.
final class PresenterLog: Sendable {
    private let entries = Mutex<[String]>([])
    let queue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()

    var events: [String] { entries.withLock { $0 } }

    func record(_ event: String) { entries.withLock { $0.append(event) } }

    func count(_ event: String) -> Int { events.filter { $0 == event }.count }

    /// Waits, at most a generous bound (a failure bound, not a wait the test relies on),
    /// for an event; true if it came.
    func waitFor(_ event: String, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if events.contains(event) { return true }
            usleep(2000)
        }
        return false
    }
}

/// A folder presenter that logs the item and subitem calls it gets.
final class FolderRecorder: FilePresenter {
    let presentedItemURL: URL?
    let log: PresenterLog
    let prefix: String
    var presentedItemOperationQueue: OperationQueue { log.queue }

    init(url: URL, log: PresenterLog, tag: String? = nil) {
        presentedItemURL = url
        self.log = log
        prefix = tag.map { "\($0) " } ?? ""
    }

    func presentedItemDidChange() { log.record("\(prefix)didChange") }
    func presentedSubitemDidChange(at url: URL) {
        log.record("\(prefix)subitemDidChange \(url.lastPathComponent)")
    }
    func presentedSubitemDidAppear(at url: URL) {
        log.record("\(prefix)subitemDidAppear \(url.lastPathComponent)")
    }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {
        log.record("\(prefix)subitemDidMove \(oldURL.lastPathComponent) \(newURL.lastPathComponent)")
    }
}

/// A presenter that implements none of the subitem methods, as many document classes do.
final class ItemRecorder: FilePresenter {
    let presentedItemURL: URL?
    let log: PresenterLog
    let tag: String
    var presentedItemOperationQueue: OperationQueue { log.queue }

    init(url: URL, log: PresenterLog, tag: String) {
        presentedItemURL = url
        self.log = log
        self.tag = tag
    }

    func presentedItemDidChange() { log.record("\(tag) didChange") }
}
