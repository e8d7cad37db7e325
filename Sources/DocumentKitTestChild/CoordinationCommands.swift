import Dispatch
import DocumentKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a file-coordination child command; returns false if `name` is not one.
///
/// Coordination state is found through `StandardDirectories.current`, so a test points the
/// child at its own runtime folder (or at the test process's, to meet its presenters)
/// through `XDG_RUNTIME_DIR`. Every command that waits gives up after two minutes, so a
/// test that dies never leaves a child behind for long.
///
/// - `coord-append PATH COUNT TAG START`: once the file START exists, COUNT times reads PATH
///   and safe-saves it with the line "TAG i" added, under `coordinate(writingItemAt:)`.
/// - `coord-generations PATH COUNT SIZE`: writes generations 1...COUNT of SIZE bytes into
///   PATH in place, in small pieces, each under a coordinated write; prints "done".
/// - `coord-hold-write PATH`: takes a coordinated write of PATH, prints "locked", and waits
///   inside the accessor until killed.
/// - `coord-move FROM TO MILLISECONDS`: takes a coordinated move of FROM to TO, prints
///   "locked", waits, moves it, calls `item(at:didMoveTo:)` and prints "moved".
/// - `coord-write PATH TEXT safe|plain|atomic`: writes TEXT to PATH under one coordinated
///   write, by a safe save, by `Data.write(to:)` in place, or by Foundation's atomic write
///   (a temporary beside PATH renamed over it), and prints "written".
/// - `coord-presenter PATH MARKER TIMEOUT answer|silent`: sets the presenter timeout to
///   TIMEOUT seconds, presents PATH and prints what it is told: "save" once it has written
///   MARKER (asked to save), "relinquish", "reacquire", "didChange", "didMove NEWPATH",
///   "delete", and for a folder "subitemDidChange NAME" and "subitemDidAppear NAME" (NAME
///   being the subitem's last path component). A silent presenter never answers
///   savePresentedItemChanges.
/// - `coord-document PATH TEXT`: opens the text document at PATH with autosave ten minutes
///   away, sets its text to TEXT unless TEXT is "-", prints "ready" once the edit counts,
///   then prints "loaded TEXT" after every load, "url PATH" when its file moves, "closed"
///   when it closes, "saved" after each save, and "error CODE" for each reported error
///   (newlines in TEXT are printed as "\n").
func runCoordinationCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "coord-append":
        guard arguments.count == 4, let count = Int(arguments[1]) else {
            fail("usage: coord-append PATH COUNT TAG START")
        }
        while !FileManager.default.fileExists(atPath: arguments[3]) { usleep(1000) }
        reportingErrors {
            try appendUnderCoordination(
                to: URL(fileURLWithPath: arguments[0]), count: count, tag: arguments[2])
        }
    case "coord-generations":
        guard arguments.count == 3, let count = Int(arguments[1]), let size = Int(arguments[2]) else {
            fail("usage: coord-generations PATH COUNT SIZE")
        }
        reportingErrors {
            try writeGenerationsInPlace(URL(fileURLWithPath: arguments[0]), count: count, size: size)
        }
        printUnbuffered("done")
    case "coord-hold-write":
        guard arguments.count == 1 else { fail("usage: coord-hold-write PATH") }
        startWatchdog()
        reportingErrors {
            try FileCoordinator().coordinate(writingItemAt: URL(fileURLWithPath: arguments[0])) { url in
                try SafeSave.write(Data("held\n".utf8), to: url)
                printUnbuffered("locked")
                while true { pause() }
            }
        }
    case "coord-move":
        // coord-move FROM TO MILLISECONDS: takes a coordinated move of FROM to TO, prints
        // "locked", waits, moves it and says so with item(at:didMoveTo:).
        guard arguments.count == 3, let milliseconds = UInt32(arguments[2]) else {
            fail("usage: coord-move FROM TO MILLISECONDS")
        }
        startWatchdog()
        reportingErrors {
            let coordinator = FileCoordinator()
            try coordinator.coordinate(
                writingItemAt: URL(fileURLWithPath: arguments[0]), options: .forMoving,
                writingItemAt: URL(fileURLWithPath: arguments[1]), options: .forReplacing
            ) { from, to in
                printUnbuffered("locked")
                usleep(milliseconds * 1000)
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
        }
        printUnbuffered("moved")
    case "coord-write":
        guard arguments.count == 3, ["safe", "plain", "atomic"].contains(arguments[2]) else {
            fail("usage: coord-write PATH TEXT safe|plain|atomic")
        }
        reportingErrors {
            try FileCoordinator().coordinate(writingItemAt: URL(fileURLWithPath: arguments[0])) { url in
                let data = Data(arguments[1].utf8)
                switch arguments[2] {
                case "safe": try SafeSave.write(data, to: url)
                case "atomic": try data.write(to: url, options: .atomic)
                default: try data.write(to: url)
                }
            }
        }
        printUnbuffered("written")
    case "coord-presenter":
        guard arguments.count == 4, let seconds = Double(arguments[2]),
            ["answer", "silent"].contains(arguments[3])
        else {
            fail("usage: coord-presenter PATH MARKER TIMEOUT answer|silent")
        }
        startWatchdog()
        FileCoordinator.presenterTimeout = .milliseconds(Int(seconds * 1000))
        let presenter = LoggingPresenter(
            url: URL(fileURLWithPath: arguments[0]), marker: URL(fileURLWithPath: arguments[1]),
            answers: arguments[3] == "answer")
        FileCoordinator.addFilePresenter(presenter)
        printUnbuffered("ready")
        withExtendedLifetime(presenter) {
            while true { pause() }
        }
    case "coord-document":
        guard arguments.count == 2 else { fail("usage: coord-document PATH TEXT") }
        startWatchdog()
        let url = URL(fileURLWithPath: arguments[0])
        let text = arguments[1]
        DispatchQueue.main.async {
            MainActor.assumeIsolated { openObservedDocument(at: url, text: text) }
        }
        dispatchMain()
    default:
        return false
    }
    return true
}

// MARK: - Writers

/// Each write is a read-modify-write: without coordination two writers would read the same
/// contents and one of the two lines would be lost.
private func appendUnderCoordination(to url: URL, count: Int, tag: String) throws {
    let coordinator = FileCoordinator()
    for index in 0..<count {
        try coordinator.coordinate(writingItemAt: url, options: .forMerging) { url in
            var data = (try? Data(contentsOf: url)) ?? Data()
            data.append(Data("\(tag) \(index)\n".utf8))
            try SafeSave.write(data, to: url)
        }
        // Outside the access, so that the other writer gets its turns and the two interleave.
        sched_yield()
    }
}

/// Truncates and rewrites the file in 4 KiB pieces with yields between them: a reader that
/// got in between two pieces would see a short or mixed file.
private func writeGenerationsInPlace(_ url: URL, count: Int, size: Int) throws {
    let coordinator = FileCoordinator()
    for generation in 1...count {
        try coordinator.coordinate(writingItemAt: url) { url in
            let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { fail("open \(url.path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let contents = generationContents(generation, size: size)
            try contents.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let length = min(4096, bytes.count - offset)
                    guard Glibc.write(fd, bytes.baseAddress! + offset, length) == length else {
                        throw DocumentKitError(.ioFailure, operation: "write a generation", url: url)
                    }
                    offset += length
                    sched_yield()
                }
            }
        }
    }
}

// MARK: - A presenter that reports what it is told

private final class LoggingPresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    let marker: URL
    let answers: Bool

    init(url: URL, marker: URL, answers: Bool) {
        presentedItemURL = url
        self.marker = marker
        self.answers = answers
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard answers else {
            printUnbuffered("asked to save; not answering")
            return
        }
        // The marker is the "save": the writer's accessor looks for it to prove the order.
        _ = FileManager.default.createFile(atPath: marker.path, contents: Data("saved\n".utf8))
        printUnbuffered("save")
        completionHandler(nil)
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        printUnbuffered("relinquish")
        writer { printUnbuffered("reacquire") }
    }

    func presentedItemDidChange() { printUnbuffered("didChange") }
    func presentedItemDidMove(to newURL: URL) { printUnbuffered("didMove \(newURL.path)") }
    func presentedSubitemDidChange(at url: URL) {
        printUnbuffered("subitemDidChange \(url.lastPathComponent)")
    }
    func presentedSubitemDidAppear(at url: URL) {
        printUnbuffered("subitemDidAppear \(url.lastPathComponent)")
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        printUnbuffered("delete")
        completionHandler(nil)
    }
}

// MARK: - An observed document

@MainActor
private var observedDocument: ObservedTextDocument?

@MainActor
private func openObservedDocument(at url: URL, text: String) {
    let document = ObservedTextDocument(fileURL: url)
    observedDocument = document
    document.autosaveConfiguration.quietDelay = .seconds(600)
    document.autosaveConfiguration.maximumDelay = .seconds(600)
    Task { @MainActor in
        guard await document.open() else { fail("could not open \(url.path)") }
        if text != "-" { document.text = text }
        // The edit's undo group closes at the end of this turn; report from the next one.
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                if text != "-" && !document.hasUnsavedChanges {
                    fail("the edit did not make the document dirty")
                }
                printUnbuffered("ready")
                watchFileURL(of: document, last: document.fileURL)
            }
        }
    }
    _ = NotificationCenter.default.addObserver(
        forName: Document.stateChangedNotification, object: document, queue: nil
    ) {
        _ in
        MainActor.assumeIsolated {
            guard let document = observedDocument, document.documentState.contains(.closed),
                !document.reportedClosed
            else { return }
            document.reportedClosed = true
            printUnbuffered("closed")
        }
    }
}

/// `fileURL` has no observer hook, so it is polled: a move shows within a few milliseconds.
@MainActor
private func watchFileURL(of document: ObservedTextDocument, last: URL) {
    var last = last
    if document.fileURL != last {
        last = document.fileURL
        printUnbuffered("url \(last.path)")
    }
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.01) { [last] in
        MainActor.assumeIsolated { watchFileURL(of: document, last: last) }
    }
}

private final class ObservedTextDocument: Document {
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.setActionName("Text Change")
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }
    var reportedClosed = false

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
        printUnbuffered("loaded \(text.replacingOccurrences(of: "\n", with: "\\n"))")
    }

    override func updateChangeCount(withToken token: Any, for saveOperation: SaveOperation) {
        super.updateChangeCount(withToken: token, for: saveOperation)
        printUnbuffered("saved")
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        let code = (error as? DocumentKitError)?.code.rawValue ?? "\(type(of: error))"
        printUnbuffered("error \(code)")
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }
}
