// A Mac ledger document from the Swift 5 days: it autosaves in place, keeps its own backup
// policy, checks before autosaving, locks and moves its file on request, and serializes file
// work with AppKit's activity and file-access queues. Only the imports differ from the AppKit
// code (`import Cocoa` there). It compiles only if each member has Apple's declaration.
import DocumentKit
import Foundation

public class LedgerDocument: NSDocument {
    public var lines: [String] = []
    public var refusedAutosaves = 0

    override public class var autosavesInPlace: Bool { return true }
    override public class var readableTypes: [String] { return ["public.plain-text"] }
    override public class var writableTypes: [String] { return ["public.plain-text"] }
    override public class var preservesVersions: Bool { return true }

    override public var isEntireFileLoaded: Bool { return true }
    override public var fileNameExtensionWasHiddenInLastRunSavePanel: Bool { return false }
    override public var keepBackupFile: Bool { return true }
    override public var backupFileURL: URL? { return super.backupFileURL }
    override public var autosavingFileType: String? { return super.autosavingFileType }

    override public func checkAutosavingSafety() throws {
        do {
            try super.checkAutosavingSafety()
        } catch {
            refusedAutosaves += 1
            throw error
        }
    }

    override public func data(ofType typeName: String) throws -> Data {
        return lines.joined(separator: "\n").data(using: .utf8)!
    }

    override public func read(from data: Data, ofType typeName: String) throws {
        lines = String(data: data, encoding: .utf8)?.components(separatedBy: "\n") ?? []
    }

    override public func writeSafely(
        to url: URL, ofType typeName: String, for saveOperation: NSDocument.SaveOperationType
    ) throws {
        try super.writeSafely(to: url, ofType: typeName, for: saveOperation)
    }

    public func append(_ line: String) {
        lines.append(line)
        updateChangeCount(.changeDone)
    }

    public var status: String {
        var parts: [String] = []
        if isDraft { parts.append("draft") }
        if isLocked { parts.append("locked") }
        if hasUnautosavedChanges { parts.append("unsaved") }
        if autosavingIsImplicitlyCancellable { parts.append("cancellable") }
        if autosavedContentsFileURL != nil { parts.append("autosaved elsewhere") }
        return parts.joined(separator: ", ")
    }

    public func toggleLock(completion: @escaping (Bool) -> Void) {
        if isLocked {
            unlock(completionHandler: { (didUnlock: Bool) in completion(didUnlock) })
        } else {
            lock(completionHandler: { (didLock: Bool) in completion(didLock) })
        }
    }

    public func archive(to folder: URL, completion: @escaping (Error?) -> Void) {
        guard let name = fileURL?.lastPathComponent else { return completion(nil) }
        move(to: folder.appendingPathComponent(name), completionHandler: completion)
    }

    public func countLines(completion: @escaping (Int) -> Void) {
        performSynchronousFileAccess {
            _ = self.fileURL
        }
        performAsynchronousFileAccess { done in
            let count = self.lines.count
            done()
            self.continueAsynchronousWorkOnMainThread { completion(count) }
        }
        performActivity(withSynchronousWaiting: false) { done in
            self.continueActivity { self.scheduleAutosaving() }
            done()
        }
    }
}
