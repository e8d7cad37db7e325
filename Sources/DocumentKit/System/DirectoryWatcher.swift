import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reports changes that any process makes inside watched folders, through Linux inotify.
///
/// `FilePresenter` uses it to learn of writes by programs that do not coordinate (another
/// editor, `git checkout`, `cp`, `echo > file`), and `DocumentQuery` to keep a live view of
/// a folder tree. Events reach the handler in batches, one batch for each wake-up of the
/// reader, in the order the kernel reported them, on a serial queue.
///
/// What it reports, and why:
///
/// - A write is one ``Kind/modified`` event. inotify reports `IN_MODIFY` for every
///   `write(2)` and `IN_CLOSE_WRITE` when the writer closes; the first `IN_MODIFY` of a
///   file in a batch is reported and the close that ends that write is swallowed, so
///   `echo hi > file` gives one event and `cp a b` gives ``Kind/created`` then
///   ``Kind/modified`` for `b`. A writer that keeps the file open is still heard: its
///   writes are reported once per batch. A close with no write seen before it (a file
///   written through `mmap`) is reported as modified too. The kernel reports a close when
///   the last descriptor of the open file goes: one inherited by a child process (opened
///   without `O_CLOEXEC`, as `Data.write(to:)` does) delays it until the child exits.
/// - A rename inside the watched folders is one ``Kind/moved(from:to:)``, paired by the
///   kernel's cookie. A rename with only its source watched is ``Kind/deleted``, with only
///   its destination watched ``Kind/created``.
/// - DocumentKit's own safe save (a temporary `.NAME.dk-tmp-*` renamed over `NAME`, see
///   ``SafeSave``) is one ``Kind/replaced`` event for `NAME`: items whose name passes
///   ``isDocumentKitTemporaryName(_:)``, and everything inside them, are never reported.
///   A package swapped in by `renameat2(RENAME_EXCHANGE)` is one ``Kind/replaced`` too.
/// - When the kernel's queue overflows, events were lost: each watched root gets one
///   ``Kind/overflow`` and its consumer rescans.
///
/// A rename's two halves, or a write and its close, can straddle two reads. When a batch
/// ends with such a half, it is held back for at most ``holdingWindow`` waiting for the
/// other half, so that each change is still delivered once.
///
/// For example:
///
/// ```swift
/// let watcher = try DirectoryWatcher { events in
///     for event in events where event.kind == .modified { reload(event.url) }
/// }
/// try watcher.watch(documentsFolder, recursive: true)
/// ```
///
/// The watcher stops when ``cancel()`` is called or when it is released.
package final class DirectoryWatcher: Sendable {
    /// How long a batch that ends with half of a change waits for the other half.
    static let holdingWindow: DispatchTimeInterval = .milliseconds(50)

    /// One change to one item.
    package struct Event: Sendable, Equatable, CustomStringConvertible {
        /// What happened to the item.
        package var kind: Kind
        /// The item: the destination of a move, the watched root of an overflow.
        package var url: URL
        /// Whether the item is a folder.
        var isDirectory: Bool
        /// The exact bytes of the item's path.
        ///
        /// Foundation on Linux decodes paths as UTF-8 and replaces bytes that are not
        /// UTF-8 with U+FFFD, so `url` cannot reopen such an item and two such names can
        /// have equal URLs; these bytes name the item exactly.
        var fileSystemPath: [UInt8]
        /// For a move, the exact bytes of the item's previous path.
        var previousFileSystemPath: [UInt8]?

        package var description: String {
            switch kind {
            case .moved(let from, let to): return "moved \(from.path) -> \(to.path)\(isDirectory ? "/" : "")"
            default: return "\(kind) \(url.path)\(isDirectory ? "/" : "")"
            }
        }
    }

    /// What happened to an item.
    package enum Kind: Sendable, Equatable {
        /// The item appeared: created, hard-linked, moved in from an unwatched folder, or
        /// found inside a folder that appeared before the folder could be watched.
        case created
        /// The item's contents were written in place (`IN_MODIFY`, `IN_CLOSE_WRITE`).
        case modified
        /// Another item took this name in one step: a DocumentKit temporary renamed over it
        /// (a safe save) or exchanged with it (a package save). The name may not have
        /// existed before; a consumer that does not know it treats it as created.
        case replaced
        /// The item's mode, owner, times, link count or extended attributes changed (`IN_ATTRIB`).
        case attributesChanged
        /// The item was removed, or moved to a folder that is not watched. A watched root
        /// that is deleted or moved away is reported this way and is no longer watched:
        /// inotify does not say where a folder went.
        case deleted
        /// The item was renamed within the watched folders; `to` is also the event's `url`.
        case moved(from: URL, to: URL)
        /// The kernel dropped events (`IN_Q_OVERFLOW`), or a new subfolder could not be
        /// watched: the consumer rescans the root named by the event's `url`.
        case overflow
    }

    let core: Core

    /// Creates a watcher that watches nothing yet.
    ///
    /// - Parameters:
    ///   - queue: The serial queue the handler runs on; by default a private one.
    ///   - handler: Receives each batch of events, in order, one batch at a time.
    /// - Throws: ``DocumentKitError`` when the process or user has too many inotify
    ///   instances (`fs.inotify.max_user_instances`) or descriptors.
    package init(queue: DispatchQueue? = nil, handler: @escaping @Sendable ([Event]) -> Void) throws {
        let fd: CInt
        switch Syscall.inotifyInit() {
        case .success(let value): fd = value
        case .failure(let error):
            let detail =
                error.rawValue == EMFILE
                ? "too many inotify instances (fs.inotify.max_user_instances) or open files" : nil
            throw DocumentKitError(error, operation: "start watching folders", url: nil, detail: detail)
        }
        let readQueue = DispatchQueue(label: "DocumentKit.DirectoryWatcher.read")
        let core = Core(
            fd: fd, readQueue: readQueue,
            deliveryQueue: queue ?? DispatchQueue(label: "DocumentKit.DirectoryWatcher.deliver"),
            handler: handler)
        self.core = core
        // The source lives in the locked state, made and released there: Dispatch does not
        // mark it `Sendable`. Its handlers hold the core, not the watcher, until it is
        // cancelled, so releasing the watcher cancels it.
        core.state.withLock { state in
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: readQueue)
            source.setEventHandler { core.readAvailableEvents() }
            // The descriptor is closed only here, after the last event handler has returned,
            // so no read can race with the close or hit a reused descriptor number.
            source.setCancelHandler { core.close() }
            source.activate()
            state.source = source
        }
    }

    deinit { cancel() }

    /// Starts reporting changes inside `directory`.
    ///
    /// Watching a folder that is already watched merges the two: it stays watched until
    /// ``unwatch(_:)`` is called for it.
    ///
    /// - Parameters:
    ///   - directory: A folder.
    ///   - recursive: Whether to watch its subfolders too, including those created or
    ///     moved in later. Items inside a new subfolder that appear before its watch is in
    ///     place are reported as created, once.
    /// - Throws: ``DocumentKitError``: ``DocumentKitError/Code/fileNotFound``,
    ///   ``DocumentKitError/Code/wrongFileType`` when it is not a folder,
    ///   ``DocumentKitError/Code/watchLimitReached`` when the user's inotify watches
    ///   (`fs.inotify.max_user_watches`) run out; then nothing of this call stays watched.
    ///   The corresponding C function is `inotify_add_watch(2)`.
    package func watch(_ directory: URL, recursive: Bool) throws {
        try core.watch(Self.fileSystemPath(of: directory), url: directory, recursive: recursive)
    }

    /// Stops reporting changes inside `directory` and, for a recursive watch, its subfolders.
    ///
    /// Events already read are still delivered. The corresponding C function is
    /// `inotify_rm_watch(2)`.
    func unwatch(_ directory: URL) {
        core.unwatch(Self.fileSystemPath(of: directory))
    }

    /// The folders passed to ``watch(_:recursive:)`` and still watched.
    var watchedDirectories: [URL] {
        core.roots.map { Self.url(for: $0, isDirectory: true) }
    }

    /// Stops the watcher: no batch starts after this returns, and the inotify descriptor
    /// is closed once the reader is idle. Calling it again does nothing.
    package func cancel() {
        core.cancel()
    }

    /// Whether `name` is one of DocumentKit's temporary names: `.NAME.dk-tmp-ID` for a
    /// file or package being safely saved, `.NAME.dk-old-ID` for a package moved aside,
    /// where ID is base-36 (the regular expression `^\..*\.dk-(tmp|old)-[0-9a-z]+$`).
    ///
    /// The watcher reports neither these items nor anything inside them; a rename of one
    /// onto a real name is reported as ``Kind/replaced``.
    static func isDocumentKitTemporaryName(_ name: some Collection<UInt8>) -> Bool {
        let bytes = Array(name)
        guard bytes.first == UInt8(ascii: "."), let last = bytes.last, isBase36Digit(last) else {
            return false
        }
        var end = bytes.count - 1
        while end > 0 && isBase36Digit(bytes[end - 1]) { end -= 1 }
        // `end` is the start of the ID. Before it may come "PID-", the process that made the
        // name; before that the 8 bytes ".dk-tmp-" or ".dk-old-", and the leading "." before them.
        if end >= 2, bytes[end - 1] == UInt8(ascii: "-") {
            var start = end - 1
            while start > 0 && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[start - 1]) {
                start -= 1
            }
            if start < end - 1 { end = start }
        }
        guard end >= 9 else { return false }
        let marker = bytes[(end - 8)..<end]
        return marker.elementsEqual(".dk-tmp-".utf8) || marker.elementsEqual(".dk-old-".utf8)
    }

    /// ``isDocumentKitTemporaryName(_:)`` for a name given as a string.
    static func isDocumentKitTemporaryName(_ name: String) -> Bool {
        isDocumentKitTemporaryName(Array(name.utf8))
    }

    private static func isBase36Digit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    /// The exact bytes of a file URL's path, without a trailing slash.
    static func fileSystemPath(of url: URL) -> [UInt8] {
        var bytes = url.withUnsafeFileSystemRepresentation { pointer in
            pointer.map {
                Array(
                    UnsafeBufferPointer(
                        start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0)))
            } ?? []
        }
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        return bytes
    }

    /// The URL for a path given as raw bytes.
    static func url(for path: [UInt8], isDirectory: Bool) -> URL {
        Syscall.withCString(path) {
            URL(fileURLWithFileSystemRepresentation: $0, isDirectory: isDirectory, relativeTo: nil)
        }
    }

    /// The error for a failed `inotify_add_watch(2)` of `url`.
    static func watchError(_ error: Errno, url: URL) -> DocumentKitError {
        switch error {
        case .noSpace:
            // ENOSPC here is not a full disk: it is the per-user watch limit.
            let limit =
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return DocumentKitError(
                .watchLimitReached, operation: "watch", url: url, errno: error,
                detail:
                    "the user's inotify watches are used up (fs.inotify.max_user_watches is \(limit ?? "unknown"))"
            )
        case .notDirectory:
            return DocumentKitError(
                .wrongFileType, operation: "watch", url: url, errno: error, detail: "not a folder")
        default:
            return DocumentKitError(error, operation: "watch", url: url)
        }
    }
}

extension DocumentKitError.Code {
    /// The system's limit on watched folders (Linux `fs.inotify.max_user_watches`) is reached.
    public static let watchLimitReached = DocumentKitError.Code(rawValue: "watchLimitReached")
}

extension DirectoryWatcher {
    /// The watcher's shared state and the work done on it; the read source's handlers hold
    /// this, not the watcher, so that releasing the watcher cancels it.
    final class Core: Sendable {
        let state: Mutex<State>
        let readQueue: DispatchQueue
        let deliveryQueue: DispatchQueue
        let handler: @Sendable ([Event]) -> Void

        init(
            fd: CInt, readQueue: DispatchQueue, deliveryQueue: DispatchQueue,
            handler: @escaping @Sendable ([Event]) -> Void
        ) {
            self.state = Mutex(State(fd: fd))
            self.readQueue = readQueue
            self.deliveryQueue = deliveryQueue
            self.handler = handler
        }

        var roots: [[UInt8]] { state.withLock { $0.rootPaths } }

        func watch(_ path: [UInt8], url: URL, recursive: Bool) throws {
            try state.withLock { state in
                guard !state.isCancelled else {
                    throw DocumentKitError(
                        .invalidArgument, operation: "watch", url: url, detail: "the watcher is cancelled")
                }
                if let error = state.addRoot(path, recursive: recursive) {
                    throw DirectoryWatcher.watchError(error, url: url)
                }
            }
        }

        func unwatch(_ path: [UInt8]) {
            state.withLock { $0.removeRoot(path) }
        }

        /// Marks the watcher cancelled and cancels its read source, whose cancel handler
        /// closes the descriptor once no event handler runs.
        func cancel() {
            state.withLock { state in
                state.isCancelled = true
                state.source?.cancel()
                state.source = nil
            }
        }

        func close() {
            state.withLock { $0.closeDescriptor() }
        }

        /// Runs on the read queue whenever the descriptor is readable.
        func readAvailableEvents() {
            let outcome = state.withLock { $0.readAndTranslate(now: .now()) }
            handle(outcome)
        }

        /// Runs on the read queue when a held batch's window has passed.
        func holdingWindowEnded(generation: Int) {
            let outcome = state.withLock { $0.endHold(generation: generation) }
            handle(outcome)
        }

        private func handle(_ outcome: State.Outcome) {
            switch outcome {
            case .nothing: break
            case .deliver(let events): deliver(events)
            case .hold(let deadline, let generation):
                readQueue.asyncAfter(deadline: deadline) { [self] in
                    holdingWindowEnded(generation: generation)
                }
            }
        }

        private func deliver(_ events: [Event]) {
            guard !events.isEmpty else { return }
            deliveryQueue.async { [self] in
                // A batch read before `cancel()` but not yet started is dropped.
                guard !state.withLock({ $0.isCancelled }) else { return }
                handler(events)
            }
        }
    }
}
