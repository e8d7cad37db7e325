import Foundation
import Symmetry

// Seed 003's app delegate in a terminal: load the drawing at launch, change it, and let the quit
// save it. There is deliberately no save call: DocumentKit's termination hook saves the open
// document as the process exits, where the seed's applicationWillTerminate: called save.

let usage = """
    usage: symmetry [--wait]

    Opens Symmetry.archive in your Documents folder (created if missing), lists its shapes,
    adds one, and quits; the drawing is saved as the process quits. Run it again to see the
    drawing grow.

      --wait   after adding the shape, wait for SIGTERM, SIGINT or SIGHUP and save then
               (autosave is off in this mode, so only the quit can save the drawing)
    """

/// The seed's `SymmetryAppDelegate`: it owns the one document of the app.
@MainActor
final class SymmetryAppDelegate {
    /// The drawing, held for the life of the app: the termination hook saves only documents
    /// someone still holds, as the seed's `ap_document` instance variable held its document.
    var document: SymmetryDocument?

    func applicationDidFinishLaunching(waitingForSignal waits: Bool) async {
        let drawing: SymmetryDocument
        do {
            drawing = try await SymmetryDocument.launch()
        } catch {
            FileHandle.standardError.write(Data("symmetry: cannot open the drawing: \(error)\n".utf8))
            exit(1)
        }
        document = drawing

        let count = drawing.shapes.count
        print("\(drawing.fileURL.path) holds \(count) shape\(count == 1 ? "" : "s")")
        for (index, shape) in drawing.shapes.enumerated() {
            print("  \(index + 1). \(shape)")
        }

        if waits {
            drawing.autosaveConfiguration.isEnabled = false
        }
        let shape = SymmetryShape.example(number: count)
        drawing.append(shape)
        print("added \(count + 1). \(shape)")

        if waits {
            print("waiting for SIGTERM, SIGINT or SIGHUP; the drawing is saved as the process quits")
            // A test reads this line before it sends the signal.
            fflush(nil)
        } else {
            print("quitting; the drawing is saved as the process quits")
            exit(0)
        }
    }
}

var waits = false
for argument in CommandLine.arguments.dropFirst() {
    switch argument {
    case "--wait": waits = true
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        FileHandle.standardError.write(Data("symmetry: unknown argument “\(argument)”\n\(usage)\n".utf8))
        exit(2)
    }
}

// Like UIApplicationMain: the main thread runs the main run loop and the app's code runs on it.
// (Under an async main, dispatchMain() moves the main queue off the main thread, and then
// DocumentKit's exit-time save cannot run; see Examples/README.md.)
let delegate = SymmetryAppDelegate()
Task { @MainActor [waits] in
    await delegate.applicationDidFinishLaunching(waitingForSignal: waits)
}
RunLoop.main.run()
