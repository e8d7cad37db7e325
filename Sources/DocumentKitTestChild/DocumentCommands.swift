import Dispatch
import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a Document child command; returns false if `name` is not one.
///
/// - `document-wait PATH TEXT`: opens (or creates) the text document at PATH, sets its text to
///   TEXT so it is dirty with autosave ten minutes away, prints "ready" and waits for a signal.
/// - `document-exit PATH TEXT`: the same, then calls `exit(0)` from the main queue.
///
/// With a third argument MARKER, a ``TerminationHook`` handler registered after the document
/// opened writes to MARKER why the process ends and what PATH holds by then.
///
/// Both run the main queue with `dispatchMain()`, as a command-line app does, and never return.
func runDocumentCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "document-wait", "document-exit":
        guard (2...3).contains(arguments.count) else { fail("usage: \(name) PATH TEXT [MARKER]") }
        let url = URL(fileURLWithPath: arguments[0])
        let text = arguments[1]
        let marker = arguments.count == 3 ? URL(fileURLWithPath: arguments[2]) : nil
        let exitsByItself = name == "document-exit"
        startWatchdog()
        Task { @MainActor in
            await editDocument(at: url, text: text, thenExit: exitsByItself, marker: marker)
        }
        dispatchMain()
    default:
        return false
    }
}

@MainActor
private var heldDocument: ChildTextDocument?

@MainActor
private func editDocument(at url: URL, text: String, thenExit: Bool, marker: URL?) async {
    let document = ChildTextDocument(fileURL: url)
    // Held for the life of the process: the controller keeps documents weakly, like an app's windows.
    heldDocument = document
    document.autosaveConfiguration.quietDelay = .seconds(600)
    document.autosaveConfiguration.maximumDelay = .seconds(600)
    let opened =
        FileManager.default.fileExists(atPath: url.path)
        ? await document.open() : await document.save(to: url, for: .forCreating)
    guard opened else { fail("could not open \(url.path)") }
    if let marker {
        TerminationHook.register { reason, _ in
            let held = (try? String(contentsOf: url, encoding: .utf8)) ?? "-"
            try? Data("\(reason) \(held)".utf8).write(to: marker)
        }
    }
    document.text = text
    // The edit's undo group closes at the end of this turn; report from the next one.
    DispatchQueue.main.async {
        MainActor.assumeIsolated {
            guard document.hasUnsavedChanges else { fail("the edit did not make the document dirty") }
            printUnbuffered("ready")
            if thenExit {
                DispatchQueue.main.async { exit(0) }
            }
        }
    }
}

/// The porting contract's text document.
private final class ChildTextDocument: Document {
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
