// A Mac document class in today's Swift 6 that uses more of NSDocument than reading and
// writing: it declares its types in code, reads a large archive lazily, writes its own
// attributes, turns autosave off for exported copies, and locks, unlocks and moves its file
// and serializes its file work the AppKit way. Only the imports differ from the AppKit code
// (`import Cocoa` there). It compiles only if each member has Apple's declaration.
import DocumentKit
import Foundation

public final class ArchiveDocument: NSDocument {
    public private(set) var entries: [String] = []
    public private(set) var presentedErrors: [String] = []
    /// Whether the archive is read lazily, and whether it is an exported copy: known at
    /// creation, so the nonisolated members may read them.
    private let readsLazily: Bool
    private let isExportedCopy: Bool

    public init(readsLazily: Bool, isExportedCopy: Bool = false) {
        self.readsLazily = readsLazily
        self.isExportedCopy = isExportedCopy
        super.init()
    }

    public override class var autosavesInPlace: Bool { true }
    public override class var preservesVersions: Bool { false }
    public override class var autosavesDrafts: Bool { false }
    public override class var usesUbiquitousStorage: Bool { false }
    public override class var readableTypes: [String] { ["public.plain-text", "com.example.archive"] }
    public override class var writableTypes: [String] { ["public.plain-text", "public.json"] }
    public override class func isNativeType(_ type: String) -> Bool { type == "public.plain-text" }

    public override var isEntireFileLoaded: Bool { !readsLazily }
    public override var fileNameExtensionWasHiddenInLastRunSavePanel: Bool { true }
    public override var fileTypeFromLastRunSavePanel: String? { "public.plain-text" }
    public override var keepBackupFile: Bool { false }
    public override var autosavingFileType: String? { isExportedCopy ? nil : super.autosavingFileType }

    public override func defaultDraftName() -> String { "New Archive" }

    public override func fileNameExtension(
        forType typeName: String, saveOperation: NSDocument.SaveOperationType
    )
        -> String?
    {
        typeName == "com.example.archive"
            ? "archive" : super.fileNameExtension(forType: typeName, saveOperation: saveOperation)
    }

    public override func canAsynchronouslyWrite(
        to url: URL, ofType typeName: String, for saveOperation: NSDocument.SaveOperationType
    ) -> Bool {
        true
    }

    public override func checkAutosavingSafety() throws {
        try super.checkAutosavingSafety()
        if entries.isEmpty { throw CocoaError(.fileWriteUnknown) }
    }

    public override func fileAttributesToWrite(
        to url: URL, ofType typeName: String, for saveOperation: NSDocument.SaveOperationType,
        originalContentsURL absoluteOriginalContentsURL: URL?
    ) throws -> [String: Any] {
        var attributes = try super.fileAttributesToWrite(
            to: url, ofType: typeName, for: saveOperation, originalContentsURL: absoluteOriginalContentsURL)
        attributes[FileAttributeKey.posixPermissions.rawValue] = 0o640
        return attributes
    }

    public override func write(
        to url: URL, ofType typeName: String, for saveOperation: NSDocument.SaveOperationType,
        originalContentsURL absoluteOriginalContentsURL: URL?
    ) throws {
        unblockUserInteraction()
        try super.write(
            to: url, ofType: typeName, for: saveOperation, originalContentsURL: absoluteOriginalContentsURL)
    }

    public override func willPresentError(_ error: any Error) -> any Error {
        presentedErrors.append("\(error)")
        return super.willPresentError(error)
    }

    public override func data(ofType typeName: String) throws -> Data {
        Data(entries.joined(separator: "\n").utf8)
    }

    // Nonisolated, as AppKit declares it; called on the main thread unless the class reads
    // concurrently (canConcurrentlyReadDocuments), which this one does not.
    public override func read(from data: Data, ofType typeName: String) throws {
        let entries = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        MainActor.assumeIsolated { self.entries = entries }
    }

    public func add(_ entry: String) {
        entries.append(entry)
        updateChangeCount(.changeDone)
        if hasUnautosavedChanges { scheduleAutosaving() }
    }

    /// The types the Save As panel would offer, as an app asks for them.
    public var saveAsTypes: [String] { writableTypes(for: .saveAsOperation) }

    /// Exports a copy through `writeSafely`, as a custom Export command does.
    public func export(to url: URL) throws {
        try writeSafely(to: url, ofType: "public.plain-text", for: .saveToOperation)
    }

    /// Locks the file, then unlocks it, reporting whether each step worked.
    public func lockThenUnlock(_ done: @escaping (_ locked: Bool, _ unlocked: Bool) -> Void) {
        lock { (didLock: Bool) in
            let wasLocked = didLock && self.isLocked
            self.unlock { (error: (any Error)?) in
                done(wasLocked, error == nil && !self.isLocked)
            }
        }
    }

    /// Moves the archive, as a "Move To…" command does after its panel.
    public func moveArchive(to url: URL, _ done: @escaping ((any Error)?) -> Void) {
        move(to: url) { error in done(error) }
    }

    /// Reads the file's size as file work of the document, finishing on another thread and
    /// handing the answer back to the main thread.
    public func measure(_ done: @escaping @MainActor (Int) -> Void) {
        guard let url = fileURL else { return }
        performAsynchronousFileAccess { fileAccessCompletionHandler in
            nonisolated(unsafe) let finished = fileAccessCompletionHandler
            DispatchQueue.global().async {
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? -1
                finished()
                self.continueAsynchronousWorkOnMainThread {
                    MainActor.assumeIsolated { done(size) }
                }
            }
        }
    }

    /// Runs two activities in order, the second begun from inside the first.
    public func nestedActivities(_ log: @escaping @MainActor (String) -> Void) {
        performActivity(withSynchronousWaiting: false) { activityCompletionHandler in
            log("outer")
            self.continueActivity {
                self.performActivity(withSynchronousWaiting: true) { inner in
                    log("inner")
                    inner()
                }
            }
            activityCompletionHandler()
        }
        performSynchronousFileAccess { log("file access") }
    }
}
