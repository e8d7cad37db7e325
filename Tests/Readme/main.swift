import DocumentKit
import Foundation

final class TextDocument: UIDocument {
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

let url = FileManager.default.temporaryDirectory.appendingPathComponent("note.txt")
let document = TextDocument(fileURL: url)
let observer = NotificationCenter.default.addObserver(
    forName: UIDocument.stateChangedNotification, object: document, queue: .main
) { _ in print("state changed") }
let created: Bool = await document.save(to: url, for: .forCreating)  // as in UIKit
document.text = "hello"  // undoable; autosaved two seconds later, and at close, quit or SIGTERM
document.text = "hello, world"
document.undoManager.undo()  // "hello" again
let saved: Bool = await document.autosave()  // now; the previous contents stay as an NSFileVersion

// Another program writes the file while this document has unsaved typing: the typing is kept.
document.text = "hello, typed here"
try Data("hello from elsewhere".utf8).write(to: url)
while !document.documentState.contains(.inConflict) { try await Task.sleep(for: .milliseconds(10)) }
print(document.text)  // "hello from elsewhere": the file as it is now
for version in NSFileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
    print(try String(contentsOf: version.url, encoding: .utf8))  // "hello, typed here"
    version.isResolved = true
}

// Coordinated access, file packages and history, with Apple's names.
let coordinator = NSFileCoordinator(filePresenter: nil)
try coordinator.coordinate(readingItemAt: url, options: []) { readURL in
    print(try String(contentsOf: readURL, encoding: .utf8))
}
let package = FileWrapper(directoryWithFileWrappers: [:])
package.addRegularFile(withContents: Data("# Notes\n".utf8), preferredFilename: "index.md")
try package.write(
    to: url.deletingLastPathComponent().appendingPathComponent("Notes.pkg"), originalContentsURL: nil)
print("earlier versions:", NSFileVersion.otherVersionsOfItem(at: url)?.count ?? 0)
try NSFileVersion.removeOtherVersionsOfItem(at: url)
let closed: Bool = await document.close()
NotificationCenter.default.removeObserver(observer)
