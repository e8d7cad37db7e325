import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the process's open documents, the way `NSDocumentController` does, and saves every
/// dirty one when the process is told to quit.
///
/// A document registers itself when it opens or is created, and leaves at ``Document/close()``.
/// The first registration installs the termination hook: on `SIGINT`, `SIGTERM` or `SIGHUP`
/// the open documents are saved on the main actor within ``terminationTimeout`` and the
/// process then ends by the same signal; on a normal `exit` they are saved before the
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

    private nonisolated static let hookInstalled = Mutex(false)
    // Written once, by the one caller that wins `hookInstalled`; kept only to stay alive.
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceRead] = []
    /// The signals that end the process after saving.
    public nonisolated static let terminationSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Installs the hook now rather than at the first document; calling it again does nothing.
    public nonisolated static func installTerminationHook() {
        let first = hookInstalled.withLock { installed in
            defer { installed = true }
            return !installed
        }
        guard first else { return }
        atexit { DocumentController.saveAtExit() }
        // A handler that writes to a pipe, read by a dispatch source: installed synchronously
        // (no signal lost while it registers), and reset to the default in any program this
        // process runs, where SIG_IGN would be inherited and make a child editor unkillable.
        var ends: [CInt] = [0, 0]
        guard pipe(&ends) == 0 else {
            DocumentLog.write("cannot save documents on signals: no pipe")
            return
        }
        for signalNumber in terminationSignals {
            // Only take over signals the program left at their default: a program with its own
            // handler (or one that ignores SIGHUP under nohup) keeps it.
            var current = sigaction()
            sigaction(signalNumber, nil, &current)
            guard current.__sigaction_handler.sa_handler == nil else { continue }
            cds_install_signal_pipe(signalNumber, ends[1])
        }
        for end in ends {
            _ = cds_fcntl_int(end, F_SETFD, FD_CLOEXEC)
            _ = cds_fcntl_int(end, F_SETFL, O_NONBLOCK)
        }
        // A process started by a thread that blocks signals (as dispatch's threads do) inherits
        // that mask: unblock ours here and on the main thread, or no thread would take them.
        let unblock: @Sendable () -> Void = {
            var signals = sigset_t()
            sigemptyset(&signals)
            for signalNumber in terminationSignals { sigaddset(&signals, signalNumber) }
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        }
        unblock()
        if !Thread.isMainThread { DispatchQueue.main.async(execute: unblock) }
        let reader = ends[0]
        let source = DispatchSource.makeReadSource(fileDescriptor: reader, queue: .global())
        source.setEventHandler {
            var byte: UInt8 = 0
            guard read(reader, &byte, 1) == 1 else { return }
            DocumentController.terminate(bySignal: Int32(byte))
        }
        source.resume()
        signalSources.append(source)
    }

    private nonisolated static let terminating = Atomic<Bool>(false)

    private nonisolated static func terminate(bySignal signalNumber: Int32) {
        guard !terminating.exchange(true, ordering: .relaxed) else { return }
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            MainActor.assumeIsolated { _ = DocumentController.shared.saveAllDocuments() }
            finished.signal()
        }
        // Bounded: a blocked main thread must not keep the process alive forever.
        _ = finished.wait(timeout: .now() + .seconds(10))
        signal(signalNumber, SIG_DFL)
        // Dispatch's threads block every signal; unblocked, the raise ends the process by it.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        raise(signalNumber)
        _exit(128 + signalNumber)
    }

    private nonisolated static func saveAtExit() {
        guard !terminating.exchange(true, ordering: .relaxed) else { return }
        // exit() called on the main queue: waiting for the main queue would deadlock.
        if isOnMainQueue {
            MainActor.assumeIsolated { _ = DocumentController.shared.saveAllDocuments() }
            return
        }
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            MainActor.assumeIsolated { _ = DocumentController.shared.saveAllDocuments() }
            finished.signal()
        }
        _ = finished.wait(timeout: .now() + .seconds(10))
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
