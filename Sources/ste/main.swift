import DocumentKit
import Foundation
import TextContainer

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    Usage: ste [--container PATH] [--autosave-delay SECONDS] [--no-mouse] [FILE]

    The Simple Text Editor: the documents of a folder beside an editor of the selected one.
    Documents are saved by themselves two seconds after the last change, and on quit.

      FILE              edit this one file, without the list
      --container PATH  the folder of documents (default: $STE_CONTAINER, or
                        "Simple Text Editor" in your Documents folder)
      --autosave-delay SECONDS
                        save this long after the last change (default 2; under
                        continuous typing at least every 10 seconds or the delay)
      --no-mouse        leave the mouse to the terminal (for terminals whose mouse
                        reports misbehave; the terminal's own selection works then)
      --help            show this help
      --version         show the version

    Keys (F1 or ^G in ste shows them too; ^ is Ctrl, M- is Alt):
    \(KeyHelp.usage)

    Conventions: where nano and micro agree, ste does the same: ^S save, ^G help, ^K cut
    the line, Shift with the movement keys selects, Ctrl+←/→ moves by words. Where they
    differ, ste takes micro's ^Q quit, ^F find, ^Z undo, ^Y redo, ^C copy, ^X cut, ^V paste
    and ^L go to line (as nano's --modernbindings mostly does), and nano's ^A and ^E (line
    start and end), ^U paste, ^_ go to line, ^\\ replace, and its Alt keys: M-U undo, M-E
    redo, M-W and M-Q next and previous match, M-R replace, M-S soft wrap, M-N line
    numbers, M-\\ and M-/ start and end of the document. Not taken: nano's ^X exit and ^W
    find, and micro's ^A select all (M-A here). ste's own: ^N new, ^R rename, ^D delete,
    ^H history, ^T conflicts, F5 sync, Esc or F6 between the list and the text; Tab
    inserts a tab in the text.

    A container added with `docs remote add` is synced by its agent (`docs sync --watch`),
    which ste starts when none runs. The list marks each document: ↑ to upload, ↓ to
    download, × not synced (F5 says why), ! in conflict; the status line says how sync goes.

    """

func fail(_ text: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("ste: \(text)\n".utf8))
    exit(status)
}

var containerPath: String?
var file: String?
var usesMouse = true
var autosaveDelay: Duration = AutosaveConfiguration().quietDelay
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    case "--version":
        print("ste \(documentKitVersion) (DocumentKit)")
        exit(0)
    case "--no-mouse":
        usesMouse = false
    case "--autosave-delay":
        guard let text = arguments.popFirst(), let seconds = Double(text), seconds.isFinite, seconds > 0,
            seconds <= 86_400
        else {
            fail("--autosave-delay needs a number of seconds between 0 and 86400\n\n\(usage)", status: 2)
        }
        autosaveDelay = .milliseconds(Int((seconds * 1000).rounded()))
    case "--container":
        guard let path = arguments.popFirst() else {
            fail("--container needs a folder\n\n\(usage)", status: 2)
        }
        containerPath = path
    case let option where option.hasPrefix("--container="):
        containerPath = String(option.dropFirst("--container=".count))
    case "--":
        file = arguments.popFirst()
    case let option where option.hasPrefix("-") && option != "-":
        fail("unknown option \(option)\n\n\(usage)", status: 2)
    default:
        guard file == nil else { fail("one file at a time\n\n\(usage)", status: 2) }
        file = argument
    }
}

setlocale(LC_ALL, "")
// A clipboard tool that exits early must not end the editor with SIGPIPE.
signal(SIGPIPE, SIG_IGN)

var container: TextContainer?
var fileURL: URL?
if let file {
    let url = URL(fileURLWithPath: file).standardizedFileURL
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
        fail(
            "“\(url.path)” is a folder; to use it as the container, run ste --container \"\(file)\"",
            status: 1)
    }
    fileURL = url
} else {
    do {
        _ = try TextContainer(path: containerPath, creating: false)
    } catch {
        fail("\(error)", status: 1)
    }
}

// Before anything is made on disk: without a terminal there is nothing to edit with.
guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
    fail("needs a terminal; for scripts, use the docs command", status: 1)
}

if fileURL == nil {
    do {
        container = try TextContainer(path: containerPath)
    } catch {
        fail("\(error)", status: 1)
    }
}

// DocumentKit's warnings (a presenter that did not answer, a version store it had to repair)
// would be written over the curses screen: they go to a log beside ste's other data instead.
let logFolder = StandardDirectories.current.applicationSupport(for: "Simple Text Editor")
try? FileManager.default.createDirectory(
    at: logFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
try? DocumentLog.redirect(to: logFolder.appendingPathComponent("ste.log"))

// Termination signals are caught here rather than by DocumentController's hook: the typing
// burst in the editor's buffer must reach the document before the save.
nonisolated(unsafe) var signalSources: [any DispatchSourceSignal] = []
let terminal = Terminal()
terminal.enableReports(mouse: usesMouse)
let editor = Editor(
    terminal: terminal, container: container, versions: currentVersionSource(), autosaveDelay: autosaveDelay)
for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        MainActor.assumeIsolated { editor.terminate(bySignal: signalNumber) }
    }
    source.resume()
    signalSources.append(source)
}

// Keys are read without blocking when stdin has bytes, on the main queue, so the main
// actor stays free between keys for autosave, reloads and the quit hook.
let input = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: .main)
input.setEventHandler {
    MainActor.assumeIsolated {
        let keys = terminal.readKeys()
        if !keys.isEmpty { editor.handle(keys) }
    }
}
input.resume()

// ncurses reports a resize as a key at the next read; a short timer makes that read happen.
let fastTimer = DispatchSource.makeTimerSource(queue: .main)
fastTimer.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
fastTimer.setEventHandler {
    MainActor.assumeIsolated {
        let keys = terminal.readKeys()
        if !keys.isEmpty { editor.handle(keys) }
        editor.tick()
    }
}
fastTimer.resume()

if let fileURL {
    editor.start(file: fileURL)
} else {
    editor.start()
}
dispatchMain()
