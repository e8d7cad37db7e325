import DocumentKit
import Foundation
import Locus

// Seed 001 in a terminal: open a Locus document, show where its map was left, pan the map
// (the region setter calls updateChangeCount(.done), the seed's fix), and watch autosave write
// it. Nothing here calls save: the next run shows the region restored.

let usage = """
    usage: locus [--container PATH] [pan DLAT DLON | add NAME LAT LON | show]

    Opens Map.locus in the container folder (created if missing), prints the saved map region
    and stops, then:
      (nothing)            nudges the map east by 0.005 degrees
      pan DLAT DLON        pans the map centre by the given degrees
      add NAME LAT LON     adds a stop to the route
      show                 changes nothing
    and waits for autosave to write the change. Run it again to see the region restored.

    The container is --container PATH, else $LOCUS_DIR, else Locus in your Documents folder.
    """

/// What the user asked for.
enum Action {
    case pan(latitude: Double, longitude: Double)
    case add(LocusStop)
    case show
}

/// Reports a failure and ends the process with a non-zero status.
func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("locus: \(message)\n".utf8))
    exit(status)
}

/// A Locus document that keeps its errors for the terminal instead of logging them.
final class TerminalLocusDocument: LocusDocument {
    var lastError: (any Error)?

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        lastError = error
        finishedHandlingError(error, recovered: false)
    }
}

func parse(_ arguments: [String]) -> (container: URL?, action: Action) {
    var container: URL?
    var rest: [String] = []
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--container":
            guard let path = iterator.next() else { fail("--container needs a folder\n\(usage)", status: 2) }
            container = URL(fileURLWithPath: path, isDirectory: true)
        case "--help", "-h":
            print(usage)
            exit(0)
        default:
            rest.append(argument)
        }
    }
    func number(_ text: String) -> Double {
        guard let value = Double(text), value.isFinite else {
            fail("“\(text)” is not a number\n\(usage)", status: 2)
        }
        return value
    }
    switch rest.first {
    case nil:
        return (container, .pan(latitude: 0, longitude: 0.005))
    case "pan" where rest.count == 3:
        return (container, .pan(latitude: number(rest[1]), longitude: number(rest[2])))
    case "add" where rest.count == 4:
        let stop = LocusStop(name: rest[1], latitude: number(rest[2]), longitude: number(rest[3]))
        return (container, .add(stop))
    case "show" where rest.count == 1:
        return (container, .show)
    default:
        fail("unexpected arguments: \(rest.joined(separator: " "))\n\(usage)", status: 2)
    }
}

let (containerOption, action) = parse(Array(CommandLine.arguments.dropFirst()))
let environment = ProcessInfo.processInfo.environment
let container =
    containerOption
    ?? environment["LOCUS_DIR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
    ?? StandardDirectories.current.documents.appendingPathComponent("Locus", isDirectory: true)

var isFolder: ObjCBool = false
if FileManager.default.fileExists(atPath: container.path, isDirectory: &isFolder) {
    if !isFolder.boolValue { fail("the container “\(container.path)” is a file, not a folder") }
} else {
    do {
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    } catch {
        fail("cannot create the container “\(container.path)”: \(error.localizedDescription)")
    }
}

/// Opens the document, shows it, makes the change and waits for autosave; returns the exit status.
@MainActor
func run(in container: URL, _ action: Action) async -> Int32 {
    let url = container.appendingPathComponent("Map.locus")
    let document = TerminalLocusDocument(fileURL: url)
    if FileManager.default.fileExists(atPath: url.path) {
        guard await document.open() else {
            fail("\(document.lastError.map { "\($0)" } ?? "cannot open “\(url.path)”")")
        }
        print("opened \(url.path)")
    } else {
        guard await document.save(to: url, for: .forCreating) else {
            fail("\(document.lastError.map { "\($0)" } ?? "cannot create “\(url.path)”")")
        }
        print("created \(url.path)")
    }

    print("saved region: \(document.mapRegion)")
    print(
        "route “\(document.model.name)”: \(document.model.stops.count) stop\(document.model.stops.count == 1 ? "" : "s")"
    )
    for stop in document.model.stops {
        print("  \(stop)")
    }

    switch action {
    case .show:
        let closed: Bool = await document.close()
        return closed ? 0 : 1
    case .pan(let latitude, let longitude):
        document.mapRegion = document.mapRegion.panned(latitude: latitude, longitude: longitude)
        print("panned to:    \(document.mapRegion)")
    case .add(let stop):
        document.model = document.model.adding(stop)
        print("added stop:   \(stop)")
    }

    // Wait for autosave rather than saving: showing that the change is saved by itself is the point.
    let clock = ContinuousClock()
    let start = clock.now
    print("unsaved changes: \(document.hasUnsavedChanges); waiting for autosave...")
    fflush(nil)
    while document.hasUnsavedChanges && !document.documentState.contains(.savingError) {
        if start.duration(to: clock.now) > .seconds(30) { fail("autosave did not run within 30 seconds") }
        try? await Task.sleep(for: .milliseconds(50))
    }
    if document.documentState.contains(.savingError) {
        fail("\(document.lastError.map { "\($0)" } ?? "autosave failed")")
    }
    let elapsed = start.duration(to: clock.now)
    print(
        "autosaved after \(String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)) s; run locus again to see the map where you left it"
    )
    // Typed, because an untyped `_ = await document.close()` picks the completion-handler overload.
    let closed: Bool = await document.close()
    if !closed { fail("\(document.lastError.map { "\($0)" } ?? "cannot close “\(url.path)”")") }
    return 0
}

// Like an app: the main thread runs the main run loop and the code runs on it. (Under an async
// main, dispatchMain() moves the main queue off the main thread, and DocumentKit's exit-time
// hook then waits ten seconds at exit; see Examples/README.md.)
Task { @MainActor in
    exit(await run(in: container, action))
}
RunLoop.main.run()
