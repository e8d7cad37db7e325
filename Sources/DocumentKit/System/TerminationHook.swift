import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs what must be flushed before the process ends: when it is told to quit (`SIGINT`,
/// `SIGTERM`, `SIGHUP`) and at a normal `exit`.
///
/// Handlers run once, in the order they were registered, on the thread that noticed the end
/// (a background thread for a signal, the exiting thread for `exit`), each given the deadline
/// by which everything must be done. After a signal the process then ends by that same
/// signal, so its parent sees how it ended. ``DocumentController`` registers the saving of
/// open documents the first time one opens; a sync engine registers the flushing of its
/// journal the same way.
///
/// Only signals the program left at their default are taken over: a program with its own
/// handler (or one that ignores `SIGHUP` under `nohup`) keeps it.
///
/// For example:
///
/// ```swift
/// TerminationHook.register { reason, deadline in
///     journal.flush(before: deadline)
/// }
/// ```
public enum TerminationHook {
    /// Why the process is ending.
    public enum Reason: Sendable, Equatable {
        /// One of ``signals`` arrived.
        case signal(Int32)
        /// `exit` was called, or `main` returned.
        case exit
    }

    /// The signals that end the process after the handlers ran.
    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// How long all handlers together may take before the process ends anyway.
    public static var timeout: Duration {
        get { state.withLock { $0.timeout } }
        set { state.withLock { $0.timeout = newValue } }
    }

    /// Adds `handler` to what runs at termination, installing the hook if it is not yet.
    ///
    /// - Parameter handler: Called once with why the process ends and the deadline by which
    ///   it must return; it must not wait for a queue the ending thread may be blocking (see
    ///   ``isEndingOnMainQueue``).
    public static func register(_ handler: @escaping @Sendable (Reason, DispatchTime) -> Void) {
        state.withLock { $0.handlers.append(handler) }
        install()
    }

    /// Whether the process is ending on the main queue (`exit` called there), where a
    /// handler must do its main-queue work directly rather than wait for the main queue.
    public static var isEndingOnMainQueue: Bool { isOnMainQueue }

    /// Installs the hook now rather than at the first registration; calling it again does
    /// nothing.
    public static func install() {
        let first = state.withLock { state in
            defer { state.installed = true }
            return !state.installed
        }
        guard first else { return }
        atexit { TerminationHook.run(.exit) }
        // A handler that writes to a pipe, read by a dispatch source: installed synchronously
        // (no signal lost while it registers), and reset to the default in any program this
        // process runs, where SIG_IGN would be inherited and make a child editor unkillable.
        var ends: [CInt] = [0, 0]
        guard pipe(&ends) == 0 else {
            DocumentLog.write("cannot flush on signals: no pipe (\(Errno.current))")
            return
        }
        for signalNumber in signals {
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
            var blocked = sigset_t()
            sigemptyset(&blocked)
            for signalNumber in signals { sigaddset(&blocked, signalNumber) }
            pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
        }
        unblock()
        if !Thread.isMainThread { DispatchQueue.main.async(execute: unblock) }
        let reader = ends[0]
        let source = DispatchSource.makeReadSource(fileDescriptor: reader, queue: .global())
        source.setEventHandler {
            var byte: UInt8 = 0
            guard read(reader, &byte, 1) == 1 else { return }
            TerminationHook.end(bySignal: Int32(byte))
        }
        source.resume()
        state.withLock { $0.source = source }
    }

    // MARK: - Internals

    private struct State: @unchecked Sendable {
        // The source is only kept alive here; it is never touched again.
        var installed = false
        var timeout: Duration = .seconds(10)
        var handlers: [@Sendable (Reason, DispatchTime) -> Void] = []
        var source: (any DispatchSourceRead)?
    }
    private static let state = Mutex(State())
    private static let ending = Atomic<Bool>(false)

    /// Runs every handler once, whichever way the process ends first.
    private static func run(_ reason: Reason) {
        guard !ending.exchange(true, ordering: .relaxed) else { return }
        let (handlers, timeout) = state.withLock { ($0.handlers, $0.timeout) }
        let deadline = DispatchTime.now() + .nanoseconds(Int(timeout.nanoseconds))
        for handler in handlers { handler(reason, deadline) }
    }

    private static func end(bySignal signalNumber: Int32) {
        run(.signal(signalNumber))
        signal(signalNumber, SIG_DFL)
        // Dispatch's threads block every signal; unblocked, the raise ends the process by it.
        var raised = sigset_t()
        sigemptyset(&raised)
        sigaddset(&raised, signalNumber)
        pthread_sigmask(SIG_UNBLOCK, &raised, nil)
        raise(signalNumber)
        _exit(128 + signalNumber)
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
