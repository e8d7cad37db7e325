import DocumentKit
import Foundation

/// An app that saves through the ubiquity API, as an iCloud app does: for the acceptance test
/// of a one-shot `docs sync` beside the agent the API starts.
///
/// - `ubiquity-save NAME TEXT`: writes TEXT to a local file and moves it into the first
///   ubiquity container with `setUbiquitous(_:itemAt:destinationURL:)` as NAME; prints the
///   destination's path.
func runUbiquityCommand(_ command: String, _ arguments: [String]) -> Bool {
    guard command == "ubiquity-save" else { return false }
    guard arguments.count == 2 else { fail("usage: ubiquity-save NAME TEXT") }
    let manager = FileManager.default
    guard let container = manager.url(forUbiquityContainerIdentifier: nil) else {
        fail("no ubiquity container is configured")
    }
    let local = manager.temporaryDirectory.appendingPathComponent("ubiquity-save-\(UUID().uuidString)")
    do {
        try Data(arguments[1].utf8).write(to: local)
        let destination = container.appendingPathComponent(arguments[0])
        try manager.setUbiquitous(true, itemAt: local, destinationURL: destination)
        print(destination.path)
    } catch {
        fail("cannot save \(arguments[0]) through the ubiquity API: \(error)")
    }
    return true
}
