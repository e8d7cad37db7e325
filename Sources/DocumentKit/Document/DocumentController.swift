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
        for document in documents where document.hasUnsavedChanges {
            allSaved = document.saveForTermination(timeout: deadline) && allSaved
        }
        return allSaved
    }

    // MARK: - The termination hook

    private nonisolated static let hookInstalled = Mutex(false)
    // Written once, by the one caller that wins `hookInstalled`; kept only to stay alive.
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
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
        let registered = DispatchSemaphore(value: 0)
        var sourceCount = 0
        for signalNumber in terminationSignals {
            // Only take over signals the program left at their default: a program with its own
            // handler (or one that ignores SIGHUP under nohup) keeps it.
            var current = sigaction()
            sigaction(signalNumber, nil, &current)
            guard current.__sigaction_handler.sa_handler == nil else { continue }
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { DocumentController.terminate(bySignal: signalNumber) }
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            signalSources.append(source)
            sourceCount += 1
        }
        // The source registers asynchronously; until it has, the signal is ignored and lost.
        // A document is reported open only once a quit would save it.
        for _ in 0..<sourceCount {
            _ = registered.wait(timeout: .now() + .seconds(2))
        }
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
