import Dispatch
import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The porting contract's text document, as DESIGN.md writes it, word for word, on `UIDocument`.
final class PortedTextDocument: UIDocument {
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.setActionName("Text Change")
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }
    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }
    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
    }
}

/// What a test document saw, in order: loads, snapshots taken for saves, writes.
final class DocumentEventLog: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ event: String) { storage.withLock { $0.append(event) } }
    var events: [String] { storage.withLock { $0 } }
    func count(_ prefix: String) -> Int { events.filter { $0.hasPrefix(prefix) }.count }
}

/// The porting contract's text document, strict about UTF-8, that records what happens to it.
///
/// Its `writeContents(_:to:for:originalContentsURL:)` can be held at a gate or made to fail, so
/// tests can put an edit in the middle of a save or break a save halfway through its write.
class TextDocument: Document {
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.setActionName("Text Change")
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }

    /// Autosave runs on a clock that moves only when a test advances it, so the real two
    /// seconds of a loaded machine never slip an autosave between a test's steps.
    override init(fileURL url: URL) {
        super.init(fileURL: url)
        autosaveConfiguration.clock = AutosaveClock(ManualClock())
    }

    nonisolated let log = DocumentEventLog()
    nonisolated let writeGate = WriteGate()
    /// Errors given to `handleError`, in order.
    var errors: [any Error] = []
    /// Saves begun (`contents(forType:)` taken) and ended (succeeded or reported failed).
    var savesStarted = 0
    var savesEnded = 0
    /// Clock time at the end of each successful save, when a manual clock drives autosave.
    var manualClock: ManualClock?
    var saveTimes: [Duration] = []

    override func contents(forType typeName: String) throws -> Any {
        savesStarted += 1
        log.append("contents \(typeName) closed=\(documentState.contains(.closed)) text=\(text)")
        return Data(text.utf8)
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        log.append(
            "load \(contents is Data ? "Data" : String(describing: type(of: contents))) \(typeName ?? "nil")")
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        guard let string = String(validating: data, as: UTF8.self) else {
            throw CocoaError(.fileReadInapplicableStringEncoding)
        }
        text = string
    }

    override func updateChangeCount(withToken token: Any, for saveOperation: SaveOperation) {
        super.updateChangeCount(withToken: token, for: saveOperation)
        savesEnded += 1
        if let manualClock { saveTimes.append(manualClock.now.offset) }
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        errors.append(error)
        if documentState.contains(.savingError) { savesEnded += 1 }
        finishedHandlingError(error, recovered: false)
    }

    nonisolated override func writeContents(
        _ contents: Any, to url: URL, for saveOperation: SaveOperation, originalContentsURL: URL?
    ) throws {
        log.append("write \(url.lastPathComponent.hasPrefix(".") ? "staging" : url.lastPathComponent)")
        writeGate.pass()
        if writeGate.failing {
            // Half the bytes, then failure: the original must survive a write torn halfway.
            let data = (contents as? Data) ?? Data()
            try data.prefix(data.count / 2).write(to: url)
            throw InjectedWriteFailure()
        }
        try super.writeContents(
            contents, to: url, for: saveOperation, originalContentsURL: originalContentsURL)
    }

    /// Drives autosave by `clock` and records the clock time of each save.
    func useManualClock(_ clock: ManualClock) {
        manualClock = clock
        autosaveConfiguration.clock = AutosaveClock(clock)
    }
}

struct InjectedWriteFailure: Error, CustomStringConvertible {
    var description: String { "the disk said no (injected)" }
}

/// Holds the writing thread of a save until the test opens it, and can make writes fail.
final class WriteGate: Sendable {
    private struct State {
        var isClosed = false
        var waiting = 0
        var failing = false
    }
    private let state = Mutex(State())
    private let opened = DispatchSemaphore(value: 0)

    /// Makes the next writers wait in `pass()` until `open()`.
    func close() { state.withLock { $0.isClosed = true } }

    /// Lets every waiting writer (and all later ones) through.
    func open() {
        let waiting = state.withLock { state -> Int in
            state.isClosed = false
            defer { state.waiting = 0 }
            return state.waiting
        }
        for _ in 0..<waiting { opened.signal() }
    }

    /// The number of writers waiting at the gate.
    var waiting: Int { state.withLock { $0.waiting } }

    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    func pass() {
        let mustWait = state.withLock { state -> Bool in
            guard state.isClosed else { return false }
            state.waiting += 1
            return true
        }
        if mustWait { opened.wait() }
    }
}

/// Records, for each `stateChangedNotification` a document posts, its state when the observer
/// ran, in order. `queue` is the observer's queue, `.main` as most apps add it.
@MainActor
final class StateLog {
    private(set) var states: [DocumentState] = []
    private var token: (any NSObjectProtocol)?

    init(_ document: Document, queue: OperationQueue? = nil) {
        token = NotificationCenter.default.addObserver(
            forName: Document.stateChangedNotification, object: document, queue: queue
        ) { [weak self, weak document] _ in
            MainActor.assumeIsolated {
                guard let self, let document else { return }
                self.states.append(document.documentState)
            }
        }
    }

    func clear() { states = [] }

    isolated deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }
}

/// Runs `body` inside an operation of `OperationQueue.main`, where Foundation delivers a
/// notification to `.main` observers at once, as on an app's main thread.
@MainActor
func onMainOperationQueue(_ body: @escaping @MainActor () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        OperationQueue.main.addOperation {
            MainActor.assumeIsolated { body() }
            done.resume()
        }
    }
}

/// Lets the main queue finish its current turns, so undo groups opened by event close.
@MainActor
func endOfTurn() async {
    for _ in 0..<5 { await Task.yield() }
}

/// Yields until `condition` holds; gives up (returning false) after a generous bound, which is
/// a failure, not a wait the test relies on.
@MainActor
func eventually(_ condition: () -> Bool) async -> Bool {
    let start = ContinuousClock.now
    while !condition() {
        if ContinuousClock.now - start > .seconds(20) { return false }
        await Task.yield()
    }
    return true
}

/// Lets the autosave timer's tasks run, then waits for any save they started to end.
@MainActor
func settle(_ document: TextDocument) async {
    for _ in 0..<30 { await Task.yield() }
    #expect(await eventually { document.savesStarted == document.savesEnded })
    for _ in 0..<5 { await Task.yield() }
}

/// A file's bytes, inode and modification time, to prove a file was left exactly as it was.
struct FileSnapshot: Equatable {
    var contents: Data
    var inode: UInt64
    var modificationSeconds: Int
    var modificationNanoseconds: Int

    init?(_ url: URL) {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        modificationSeconds = Int(info.st_mtim.tv_sec)
        modificationNanoseconds = Int(info.st_mtim.tv_nsec)
        contents = (try? Data(contentsOf: url)) ?? Data()
    }
}

/// The text of the file at `url`, or nil if there is none.
func fileText(_ url: URL) -> String? {
    (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
}

/// Hidden temporary or staging items a save left in `folder`.
func saveLeftovers(in folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix(".") }
}
