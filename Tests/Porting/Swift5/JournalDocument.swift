// A journal kept as a package (text plus a small metadata file), the way iOS apps wrote their
// UIDocument subclasses in the Swift 5 days: completion handlers, a state observer that
// resolves conflicts by keeping the current version, NSFileVersion and NSFileCoordinator.
// Only the imports differ from the iOS code (`import UIKit` there).
import DocumentKit
import Foundation

public class JournalDocument: UIDocument {
    public var entries: [String] = []
    public var title = "Journal"
    public private(set) var conflictsResolved = 0
    private var stateObserver: NSObjectProtocol?

    public override init(fileURL url: URL) {
        super.init(fileURL: url)
        stateObserver = NotificationCenter.default.addObserver(
            forName: UIDocument.stateChangedNotification, object: self, queue: .main
        ) { [weak self] _ in
            MainActor.assumeIsolated { self?.documentStateChanged() }
        }
    }

    deinit {
        if let stateObserver { NotificationCenter.default.removeObserver(stateObserver) }
    }

    public func add(_ entry: String) {
        let previous = entries
        entries.append(entry)
        undoManager.registerUndo(withTarget: self) { document in
            document.entries = previous
        }
        updateChangeCount(.done)
    }

    public override func contents(forType typeName: String) throws -> Any {
        let text = entries.joined(separator: "\n")
        let metadata = try JSONSerialization.data(withJSONObject: ["title": title, "count": entries.count])
        return FileWrapper(directoryWithFileWrappers: [
            "entries.txt": FileWrapper(regularFileWithContents: Data(text.utf8)),
            "metadata.json": FileWrapper(regularFileWithContents: metadata),
        ])
    }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let package = contents as? FileWrapper, package.isDirectory,
            let text = package.fileWrappers?["entries.txt"]?.regularFileContents
        else {
            throw CocoaError(.fileReadCorruptFile)
        }
        entries = String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
        if let data = package.fileWrappers?["metadata.json"]?.regularFileContents,
            let metadata = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let title = metadata["title"] as? String
        {
            self.title = title
        }
    }

    /// Keeps the current version and marks the others resolved, as many apps do.
    private func documentStateChanged() {
        guard documentState.contains(.inConflict) else { return }
        var error: NSError?
        NSFileCoordinator(filePresenter: nil).coordinate(
            writingItemAt: fileURL, options: [], error: &error
        ) { url in
            for version in NSFileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
                version.isResolved = true
            }
            try? NSFileVersion.removeOtherVersionsOfItem(at: url)
        }
        if error == nil { conflictsResolved += 1 }
    }
}
