import Foundation
import Synchronization

// The work behind the members of AppKit's NSDocument that NSDocument.swift declares (it must
// declare them in the class, for apps to override them).

extension NSDocument {
    /// Applies the class's answers to the document machinery: autosaving in place
    /// (``autosavesInPlace`` and a non-nil ``autosavingFileType``) and version keeping
    /// (``preservesVersions``). Called when the document gets its file.
    func applyClassPolicies() {
        backing.autosaveConfiguration.isEnabled = Self.autosavesInPlace && autosavingFileType != nil
        applyVersionPolicy()
    }

    /// A class that does not preserve versions keeps none: see ``preservesVersions``.
    func applyVersionPolicy() {
        if !Self.preservesVersions { backing.versionStore = nil }
    }

    /// Moves the file at `source` to `destination`, replacing what is there, coordinated for
    /// `presenter` (which follows by itself, so it is not told).
    nonisolated static func moveFile(at source: URL, to destination: URL, presenter: Backing) -> Result<
        URL, any Error
    > {
        let coordinator = FileCoordinator(filePresenter: presenter)
        do {
            try coordinator.coordinate(
                writingItemAt: source, options: .forMoving, writingItemAt: destination, options: .forReplacing
            ) { from, to in
                coordinator.item(at: from, willMoveTo: to)
                if from.standardizedFileURL.path != to.standardizedFileURL.path,
                    FileManager.default.fileExists(atPath: to.path)
                {
                    try FileManager.default.removeItem(at: to)
                }
                try SafeSave.moveItem(at: from, to: to, operation: "move the document")
                coordinator.item(at: from, didMoveTo: to)
            }
            return .success(destination.standardizedFileURL)
        } catch {
            return .failure(error)
        }
    }

    /// Locks or unlocks the document's file off the main actor, then records it in
    /// ``isLocked`` and calls `completionHandler` on the main actor.
    func setFileLocked(_ locked: Bool, completionHandler: (((any Error)?) -> Void)?) {
        let operation = locked ? "lock the document" : "unlock the document"
        guard let url = fileURL else {
            completionHandler?(
                DocumentKitError(.invalidArgument, operation: operation, url: nil, detail: "it is untitled"))
            return
        }
        let backing = backing
        Task { @MainActor in
            let error = await Task.detached {
                NSDocument.changeWritePermission(of: url, locking: locked, presenter: backing)
            }.value
            if error == nil { backing.isLocked = locked }
            completionHandler?(error)
        }
    }

    /// Takes write permission away from everyone (locking) or gives it back to the owner, in
    /// a coordinated metadata write; the document records the change as its own.
    nonisolated static func changeWritePermission(of url: URL, locking: Bool, presenter: Backing)
        -> (any Error)?
    {
        do {
            try FileCoordinator(filePresenter: presenter).coordinate(
                writingItemAt: url, options: .contentIndependentMetadataOnly
            ) { url in
                let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
                let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value ?? 0o644
                let changed = locking ? mode & ~0o222 : mode | 0o200
                try FileManager.default.setAttributes(
                    [.posixPermissions: NSNumber(value: changed)], ofItemAtPath: url.path)
            }
            presenter.noteMetadataChange(at: url)
            return nil
        } catch {
            return error
        }
    }
}

/// Work of one NSDocument done one piece at a time, in order: its activities
/// (`performActivity(withSynchronousWaiting:using:)`) or its file accesses
/// (`performSynchronousFileAccess(_:)`, `performAsynchronousFileAccess(_:)`).
///
/// A piece holds the queue until its completion handler is called, from any thread. A thread
/// waiting for its turn blocks; on the main thread the wait runs meanwhile the work handed to
/// ``runOnMainThread(_:)``, as AppKit's `continueAsynchronousWorkOnMainThread(_:)` promises.
/// "The main thread" is the main queue, the main actor's executor, which under Swift Testing
/// or `dispatchMain()` runs on a thread other than the process's first (``isOnMainQueue``).
final class SerialAccessQueue: Sendable {
    typealias Block = (@escaping () -> Void) -> Void

    /// A piece not yet started: a block to call, or a thread waiting for its turn.
    private enum Waiting: @unchecked Sendable {
        // The block is called once, by the thread that takes it from the queue.
        case block(Block, onMainThread: Bool)
        case thread(DispatchSemaphore)
    }

    /// Work for the main thread. Called once, on the main thread.
    private struct MainThreadWork: @unchecked Sendable {
        let run: () -> Void
    }

    private struct State {
        var busy = false
        var waiting: [Waiting] = []
    }

    private let state = Mutex(State())
    /// Work handed to the main thread, in order: run by the next turn of the main queue, or
    /// sooner by a wait of the main thread, whichever comes first.
    private static let mainThreadWork = Mutex<[MainThreadWork]>([])

    /// Calls `block` now when nothing holds the queue, otherwise when the pieces before it
    /// are done: on the main thread if called there, else on the thread that ends the piece
    /// before.
    func enqueue(_ block: @escaping Block) {
        let onMainThread = isOnMainQueue
        let startNow = state.withLock { state in
            if !state.busy {
                state.busy = true
                return true
            }
            state.waiting.append(.block(block, onMainThread: onMainThread))
            return false
        }
        if startNow { block(finisher()) }
    }

    /// Returns when the pieces before have finished and the queue is the caller's, until it
    /// calls a ``finisher()``.
    func waitForTurn() {
        let turn = DispatchSemaphore(value: 0)
        let mine = state.withLock { state in
            if !state.busy {
                state.busy = true
                return true
            }
            state.waiting.append(.thread(turn))
            return false
        }
        if mine { return }
        guard isOnMainQueue else { return turn.wait() }
        repeat {
            Self.runMainThreadWork()
        } while turn.wait(timeout: .now() + .milliseconds(5)) == .timedOut
    }

    /// The handler that ends the current piece; calling it again does nothing.
    func finisher() -> () -> Void {
        let called = Once()
        return { [self] in
            if called.first() { advance() }
        }
    }

    /// Hands the queue to the next piece, or frees it.
    private func advance() {
        let next: Waiting? = state.withLock { state in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        switch next {
        case nil: return
        case .thread(let turn): turn.signal()
        case .block(let block, let onMainThread):
            if onMainThread {
                Self.runOnMainThread { block(self.finisher()) }
            } else {
                block(finisher())
            }
        }
    }

    /// Runs `block` on the main thread, after returning: at the next turn of the main queue,
    /// or inside a wait of the main thread in ``waitForTurn()`` if that comes first.
    static func runOnMainThread(_ block: @escaping () -> Void) {
        mainThreadWork.withLock { $0.append(MainThreadWork(run: block)) }
        DispatchQueue.main.async { runMainThreadWork() }
    }

    private static func runMainThreadWork() {
        while let work = mainThreadWork.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            work.run()
        }
    }

    /// True the first time only.
    private final class Once: Sendable {
        private let done = Mutex(false)

        func first() -> Bool {
            done.withLock { done in
                defer { done = true }
                return !done
            }
        }
    }
}
