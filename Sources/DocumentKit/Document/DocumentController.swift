import Foundation
import Synchronization

/// Keeps the process's open documents, the way `NSDocumentController` does, and saves every
/// dirty one when the process is told to quit.
///
/// A document registers itself when it opens or is created, and leaves at ``Document/close()``.
/// The first registration registers with ``TerminationHook``: on `SIGINT`, `SIGTERM` or
/// `SIGHUP` the open documents are saved on the main actor within ``terminationTimeout`` and
/// the process then ends by the same signal; on a normal `exit` they are saved before the
/// process ends. So a quit never loses an edit still waiting for its autosave delay.
///
/// The hook needs the main queue (or main actor) to be serviced: an app that blocks the
/// main thread in a read loop must read elsewhere.
///
/// For example:
///
/// ```swift
/// let document = SymmetryDocument(fileURL: archiveURL)
/// _ = await document.open()          // registered; saved at quit from now on
/// DocumentController.shared.terminationTimeout = .seconds(3)
/// ```
@MainActor
public final class DocumentController {
    /// The process's document controller.
    public static let shared = DocumentController()

    /// How long saving at termination may take before the process ends anyway.
    public var terminationTimeout: Duration = .seconds(5)

    private var entries: [ObjectIdentifier: WeakDocument] = [:]

    private struct WeakDocument {
        weak var document: Document?
    }

    /// The open documents.
    public var documents: [Document] {
        entries.values.compactMap(\.document)
    }

    /// The open documents with unsaved changes.
    public var hasEditedDocuments: Bool {
        documents.contains { $0.hasUnsavedChanges }
    }

    func add(_ document: Document) {
        entries[ObjectIdentifier(document)] = WeakDocument(document: document)
        Self.installTerminationHook()
    }

    func remove(_ document: Document) {
        entries.removeValue(forKey: ObjectIdentifier(document))
    }

    /// Saves every open document with unsaved changes, synchronously, within ``terminationTimeout``.
    ///
    /// - Returns: Whether every document is saved.
    @discardableResult
    public func saveAllDocuments() -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(Int(terminationTimeout.nanoseconds))
        var allSaved = true
        // Every document: saveForTermination closes an undo group still open this turn before
        // it asks whether anything is unsaved.
        for document in documents {
            allSaved = document.saveForTermination(timeout: deadline) && allSaved
        }
        // Each save keeps the contents it replaced as a version, stored in the background; the
        // process is about to end, so wait for that too, within the same bound.
        var stores: [ObjectIdentifier: VersionStore] = [:]
        for document in documents {
            if let store = document.versionStore { stores[ObjectIdentifier(store)] = store }
        }
        for store in stores.values where !store.waitUntilIdle(deadline: deadline) {
            DocumentLog.write("the version store at \(store.root.path) was still busy when the process ended")
        }
        return allSaved
    }

    // MARK: - The termination hook

    /// The signals that end the process after saving: ``TerminationHook/signals``.
    public nonisolated static let terminationSignals: [Int32] = TerminationHook.signals
    private nonisolated static let registered = Mutex(false)

    /// Registers the saving of open documents with ``TerminationHook`` now rather than at the
    /// first document; calling it again does nothing.
    public nonisolated static func installTerminationHook() {
        let first = registered.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        TerminationHook.register { _, deadline in DocumentController.saveAtTermination(before: deadline) }
    }

    /// Saves on the main actor and waits for it, within `deadline`: a blocked main thread
    /// must not keep the process alive for ever.
    private nonisolated static func saveAtTermination(before deadline: DispatchTime) {
        // exit() called on the main queue: waiting for the main queue would deadlock.
        if TerminationHook.isEndingOnMainQueue {
            MainActor.assumeIsolated { _ = DocumentController.shared.saveAllDocuments() }
            return
        }
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            MainActor.assumeIsolated { _ = DocumentController.shared.saveAllDocuments() }
            finished.signal()
        }
        _ = finished.wait(timeout: deadline)
    }
}
