import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A document: the model controller that opens, saves, autosaves and closes one file,
/// with UIKit's `UIDocument` API and semantics.
///
/// Subclass it and override ``contents(forType:)`` and ``load(fromContents:ofType:)``.
/// A flat file arrives as `Data` and a package folder as a ``FileWrapper``. Changes are
/// tracked through the ``undoManager`` or ``updateChangeCount(_:)``; a dirty document is
/// saved after a quiet delay (2 s by default, 10 s at most under continuous editing), on
/// ``close()``, and by ``DocumentController`` when the process is told to quit.
///
/// Every write is a safe save: a crash at any instant leaves the old or the new file.
///
/// Nothing the user typed is lost to another writer. "Mine" is what the user of this
/// computer typed and has not saved, including typing an editor still holds
/// (``DocumentEditor``):
///
/// - When another program or device changes the file, its file stays and is loaded; the
///   unsaved text is first kept as a conflict version from this computer
///   (``FileVersion/isFromThisComputer``), the document enters ``DocumentState/inConflict``,
///   and ``handleError(_:userInteractionPermitted:)`` hears ``DocumentKitError/Code/editedElsewhere``.
///   With nothing unsaved, the text the other program replaced is kept as a history version.
/// - When the file moves, ``fileURL`` follows and unsaved text is saved at the new place.
/// - When the file is deleted with unsaved text, the text is saved again at its path (a
///   program that does not coordinate deleted it), or into the file first (a coordinated
///   deletion takes it along), or kept beside it; the error says which
///   (``DocumentKitError/Code/deletedElsewhere``).
/// - Resolving a conflict deletes nothing: see ``FileVersion/resolveConflict(ofItemAt:keeping:)``.
///   A revert keeps the discarded text as a history version.
///
/// For example:
///
/// ```swift
/// final class TextDocument: Document {
///     var text = "" {
///         didSet {
///             let old = oldValue
///             undoManager.setActionName("Text Change")
///             undoManager.registerUndo(withTarget: self) { $0.text = old }
///         }
///     }
///     override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }
///     override func load(fromContents contents: Any, ofType typeName: String?) throws {
///         guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
///         text = String(decoding: data, as: UTF8.self)
///     }
/// }
///
/// let document = TextDocument(fileURL: url)
/// if await document.open() {
///     document.text += "more"     // saved by itself two seconds later
/// }
/// ```
@preconcurrency @MainActor
open class Document {
    /// The document's file. It follows the file when a save moves the document elsewhere.
    public internal(set) var fileURL: URL {
        didSet { presentedItem.state.withLock { $0.url = fileURL } }
    }

    /// The modification date of the file as last read or written.
    public var fileModificationDate: Date?

    /// Reports the progress of a long load or save, while ``documentState`` contains
    /// ``DocumentState/progressAvailable``.
    public var progress: Progress?

    /// How long opening a document kept on the server only waits for its download.
    public var downloadTimeout: Duration = .seconds(60)

    /// When autosave runs, and the clock it reads.
    public var autosaveConfiguration = AutosaveConfiguration() {
        didSet {
            autosave.quietDelay = autosaveConfiguration.quietDelay
            autosave.maximumDelay = autosaveConfiguration.maximumDelay
        }
    }

    // `required` with the package trait RequiredDocumentInitializers: generic code may then
    // make a document from a metatype (`T(fileURL:)`), as Swift allows for UIKit's
    // Objective-C class, and subclasses write `required` on their own `init(fileURL:)`.
    #if RequiredDocumentInitializers
        /// Creates a document for the file at `url`. Nothing is read until ``open()``.
        public required init(fileURL url: URL) {
            fileURL = url.standardizedFileURL
            presentedItem = PresentedItem(url: url)
        }
    #else
        /// Creates a document for the file at `url`. Nothing is read until ``open()``.
        public init(fileURL url: URL) {
            fileURL = url.standardizedFileURL
            presentedItem = PresentedItem(url: url)
        }
    #endif

    /// Creates an untitled document, as `UIDocument()` (`NSObject`'s `init()`) compiles on
    /// Apple's platforms: its ``fileURL`` is a new name in the temporary folder, where nothing
    /// is until a save creates it. UIKit raises an exception for a document without a URL;
    /// here it is a document like any other, to be saved (`.forCreating`) where it is or
    /// moved with ``save(to:for:)``.
    ///
    /// A convenience initializer, as the inherited one is on Apple's platforms: a subclass may
    /// declare its own `init()` without `override`, and one that overrides ``init(fileURL:)``
    /// (or declares no initializer) inherits this one.
    public convenience init() {
        self.init(
            fileURL: FileManager.default.temporaryDirectory.appendingPathComponent(
                "Untitled-\(UUID().uuidString)"))
    }

    // Not isolated, as UIDocument's is not: a subclass's own `deinit` must be able to override it.
    // The timer holds the document weakly and ends by itself; the undo observers are removed
    // here, which needs no actor.
    deinit {
        for observer in undoObservers.withLock({ $0.tokens }) {
            NotificationCenter.default.removeObserver(observer)
        }
    }

    // MARK: - Names and types

    /// The uniform type identifier of the file, from its extension through ``FileTypes``.
    open var fileType: String? {
        FileTypes.shared.typeIdentifier(forFilenameExtension: fileURL.pathExtension)
    }

    /// The name to show the user: the file name without its extension.
    open var localizedName: String {
        fileURL.deletingPathExtension().lastPathComponent
    }

    /// The type a save writes; by default ``fileType``. A property, as UIKit's is: a subclass
    /// that saves in another type overrides it as `override var savingFileType: String? {…}`.
    open var savingFileType: String? { fileType }

    /// The extension a file of `typeName` gets when saved; by default the registered one.
    open func fileNameExtension(forType typeName: String?, saveOperation: SaveOperation) -> String {
        typeName.flatMap { FileTypes.shared.preferredFilenameExtension(forType: $0) } ?? fileURL.pathExtension
    }

    // MARK: - State

    /// The document's state. Every change posts ``stateChangedNotification``: at once inside
    /// an operation of `OperationQueue.main` or on a run loop's main thread, otherwise from the
    /// next main-queue operation, so that an observer added with `queue: .main` is not left
    /// waiting for the queue the change was made on (see `MainQueueNotice`).
    public internal(set) var documentState: DocumentState = .closed {
        didSet {
            guard documentState != oldValue else { return }
            MainQueueNotice.post(Document.stateChangedNotification, object: self)
        }
    }

    /// Forbids changes to the document, as during a revert.
    open func disableEditing() {
        editingDisabledCount += 1
        documentState.insert(.editingDisabled)
    }

    /// Allows changes again after ``disableEditing()``.
    open func enableEditing() {
        editingDisabledCount = max(0, editingDisabledCount - 1)
        if editingDisabledCount == 0 { documentState.remove(.editingDisabled) }
    }

    var editingDisabledCount = 0

    // MARK: - Change tracking

    /// Whether the document has changes not yet written to its file.
    public var hasUnsavedChanges: Bool { changeCount != 0 }

    /// Unsaved changes counted since the file was last in step with the document; negative
    /// after undoing past the saved state, which is unsaved too.
    var changeCount = 0 {
        didSet { noteWhetherClean() }
    }

    /// Tells other threads whether there is anything to save: no change counted and no editor
    /// editing. A writer asking a clean document to save is answered without the main actor,
    /// so an app that coordinates on the main actor is not kept waiting by its own document.
    func noteWhetherClean() {
        let clean = changeCount == 0 && editors.isEmpty
        fileRecord.withLock { $0.isClean = clean }
    }

    /// Records a change: the document becomes dirty (or clean, for ``ChangeKind/clear``) and
    /// autosave is scheduled.
    open func updateChangeCount(_ change: ChangeKind) {
        editGeneration &+= 1
        switch change {
        case .done, .redone: changeCount += 1
        case .undone: changeCount -= 1
        case .clear: changeCount = 0
        }
        changeCountChanged()
    }

    /// A token that records the document's change count now, for a save about to start.
    open func changeCountToken(for saveOperation: SaveOperation) -> Any {
        ChangeCountToken(count: changeCount)
    }

    /// Marks as saved the changes counted when `token` was made, keeping any made since.
    ///
    /// This is how an edit made while a save was writing stays unsaved, and gets saved next.
    open func updateChangeCount(withToken token: Any, for saveOperation: SaveOperation) {
        guard let token = token as? ChangeCountToken else { return }
        changeCount -= token.count
        changeCountChanged()
    }

    struct ChangeCountToken {
        let count: Int
    }

    func changeCountChanged() {
        if hasUnsavedChanges {
            let action = autosave.changed(at: autosaveConfiguration.clock.elapsed())
            perform(action)
        } else if !autosave.isSaving {
            autosave.becameClean()
        }
    }

    // MARK: - Undo

    /// The document's undo manager, made on first use. Closing an undo group marks the
    /// document changed; undo and redo count the change back and forth.
    public var undoManager: UndoManager! {
        get {
            if let storedUndoManager { return storedUndoManager }
            let manager = UndoManager()
            storedUndoManager = manager
            observe(manager)
            return manager
        }
        set {
            for observer in undoObservers.withLock({ $0.take() }) {
                NotificationCenter.default.removeObserver(observer)
            }
            storedUndoManager = newValue
            if let newValue { observe(newValue) }
        }
    }

    var storedUndoManager: UndoManager?
    /// The undo manager's observers, in a box the nonisolated `deinit` may reach.
    nonisolated let undoObservers = Mutex(ObserverTokens())

    /// Notification observer tokens: only added, removed and handed to `removeObserver`.
    struct ObserverTokens: @unchecked Sendable {
        var tokens: [any NSObjectProtocol] = []

        mutating func take() -> [any NSObjectProtocol] {
            defer { tokens = [] }
            return tokens
        }
    }

    private func observe(_ manager: UndoManager) {
        let center = NotificationCenter.default
        func on(_ name: Notification.Name, _ handler: @escaping @MainActor (Document, Notification) -> Void) {
            let observer = center.addObserver(forName: name, object: manager, queue: nil) {
                [weak self] note in
                nonisolated(unsafe) let note = note
                MainActor.assumeIsolated {
                    guard let self else { return }
                    handler(self, note)
                }
            }
            undoObservers.withLock { $0.tokens.append(observer) }
        }
        on(.NSUndoManagerDidCloseUndoGroup) { document, note in
            guard let manager = document.storedUndoManager, manager.groupingLevel == 0,
                !manager.isUndoing, !manager.isRedoing
            else { return }
            if (note.userInfo?["NSUndoManagerGroupIsDiscardableKey"] as? Bool) == true { return }
            document.updateChangeCount(.done)
        }
        on(.NSUndoManagerDidUndoChange) { document, _ in document.updateChangeCount(.undone) }
        on(.NSUndoManagerDidRedoChange) { document, _ in document.updateChangeCount(.redone) }
    }

    // MARK: - Errors

    /// Reports an error from opening, saving or reverting. The default logs it and calls
    /// ``finishedHandlingError(_:recovered:)`` with `recovered` false.
    open func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        DocumentLog.write("\(error)")
        finishedHandlingError(error, recovered: false)
    }

    /// Called when the handling of `error` is over.
    open func finishedHandlingError(_ error: any Error, recovered: Bool) {}

    /// Called when error handling that involves the user must end now, for example at quit.
    open func userInteractionNoLongerPermitted(forError error: any Error) {}

    // MARK: - Loading and saving hooks

    /// Returns the document's data to save: `Data` for a flat file, a ``FileWrapper`` for a
    /// package. Runs on the main actor; the bytes are written off it.
    ///
    /// - Throws: Whatever stops the save; the document stays dirty.
    open func contents(forType typeName: String) throws -> Any {
        throw DocumentKitError(
            .notSupported, operation: "save", url: fileURL,
            detail: "\(type(of: self)) does not override contents(forType:)")
    }

    /// Takes the data read from the file: `Data` for a flat file, a ``FileWrapper`` for a
    /// package. Runs on the main actor.
    ///
    /// - Throws: An error if the contents cannot be understood; opening then fails.
    open func load(fromContents contents: Any, ofType typeName: String?) throws {
        throw DocumentKitError(
            .notSupported, operation: "open", url: fileURL,
            detail: "\(type(of: self)) does not override load(fromContents:ofType:)")
    }

    /// Returns the attributes to give the written file; by default none beyond those the
    /// original had.
    ///
    /// Keyed as Apple's are (`[AnyHashable: Any]`), by `FileAttributeKey`s or their raw
    /// values; ``writeContents(_:andAttributes:safelyTo:for:)`` applies the POSIX permissions
    /// and modification date.
    open func fileAttributesToWrite(to url: URL, for saveOperation: SaveOperation) throws
        -> [AnyHashable: Any]
    {
        [:]
    }

    // MARK: - Reading and writing (overridable, off the main actor)

    /// Reads the file at `url` and loads it: the contents are read on the calling thread
    /// (``open()`` calls this off the main actor), and ``load(fromContents:ofType:)`` runs
    /// on the main actor with `Data` for a file or a ``FileWrapper`` for a package.
    ///
    /// Loading is done with undo registration disabled, and leaves the document clean.
    ///
    /// - Throws: ``DocumentKitError`` naming the file and what went wrong.
    /// The read is coordinated: presenters of the file in other programs save first, so a
    /// document opened while another editor holds unsaved text reads that text.
    nonisolated open func read(from url: URL) throws {
        let coordinator = FileCoordinator(filePresenter: self)
        let contents = try coordinator.coordinate(readingItemAt: url) { url in
            try DocumentContents.read(from: url)
        }
        let modificationDate = contents.modificationDate
        let isWritable = contents.isWritable
        try onMainActor {
            try self.loadLoggingNothing(contents.value, from: url, modificationDate: modificationDate)
            // Only once loaded: a refused load leaves the document as it was, file state included.
            self.presentedItem.state.withLock { $0.seenState = contents.state }
            self.isLocked = !isWritable
        }
    }

    /// Runs `block` on the document's serial file-access queue, after any file access
    /// already queued. Reading and writing of one document never overlap.
    nonisolated open func performAsynchronousFileAccess(_ block: @escaping @Sendable () -> Void) {
        fileAccessQueue.async(execute: block)
    }

    /// Writes `contents` safely to `url`: into a new item beside it, flushed, given
    /// `attributes`, then renamed or exchanged into place. Runs off the main actor.
    ///
    /// Override ``writeContents(_:to:for:originalContentsURL:)`` to change how the bytes are
    /// written; this method keeps the write safe around it.
    ///
    /// - Throws: ``DocumentKitError`` naming the file; the file at `url` is untouched.
    nonisolated open func writeContents(
        _ contents: Any, andAttributes attributes: [AnyHashable: Any]? = nil, safelyTo url: URL,
        for saveOperation: SaveOperation
    ) throws {
        let requestedMode = Self.attribute(.posixPermissions, in: attributes)
        let permissions =
            (requestedMode as? NSNumber).map { mode_t($0.uint32Value) }
            ?? (requestedMode as? Int).map { mode_t($0) }
        var options: SafeSave.Options = saveOperation == .forCreating ? .withoutOverwriting : []
        // Unchanged files of a package are hard-linked from the original, already on disk.
        if contents is FileWrapper { options.insert(.linkedFilesAreDurable) }
        if saveOperation == .forCreating, FileManager.default.fileExists(atPath: url.path) {
            throw DocumentKitError(
                .fileExists, operation: "create the document", url: url, errno: .fileExists)
        }
        var original: URL?
        if saveOperation == .forOverwriting, FileManager.default.fileExists(atPath: url.path) {
            original = url
        }
        try SafeSave.writeItem(at: url, options: options, permissions: permissions) { staging in
            try writeContents(contents, to: staging, for: saveOperation, originalContentsURL: original)
            if let modificationDate = Self.attribute(.modificationDate, in: attributes) as? Date {
                try? FileManager.default.setAttributes(
                    [.modificationDate: modificationDate], ofItemAtPath: staging.path)
            }
            // What this document wrote, before it is renamed into place: what is there after
            // may already be another writer's.
            let staged = FileStatus(path: staging.path)
            fileRecord.withLock { $0.writtenState = staged }
        }
    }

    /// Writes `contents` to `url`, where nothing exists yet: `Data` as a file, a
    /// ``FileWrapper`` as a package that reuses unchanged files of `originalContentsURL`.
    /// Runs off the main actor; need not flush or be atomic.
    ///
    /// - Throws: ``DocumentKitError`` naming the file.
    nonisolated open func writeContents(
        _ contents: Any, to url: URL, for saveOperation: SaveOperation, originalContentsURL: URL?
    ) throws {
        switch contents {
        case let data as Data:
            let file = try FileDescriptor.open(
                url, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600, operation: "write the document")
            try data.withUnsafeBytes { try file.writeAll($0, operation: "write the document") }
        case let wrapper as FileWrapper:
            try wrapper.write(to: url, options: [], originalContentsURL: originalContentsURL)
        default:
            throw DocumentKitError(
                .invalidArgument, operation: "write the document", url: url,
                detail: "contents(forType:) returned \(type(of: contents)), not Data or FileWrapper")
        }
    }

    // MARK: - Opening, saving, closing: the forms apps override

    /// Opens the document (see ``open()``) and calls `completionHandler` on the main actor
    /// with whether it opened.
    open func open(completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        Task { @MainActor in
            let opened = await self.performOpen()
            completionHandler?(opened)
        }
    }

    /// Saves the document to `url` (see ``save(to:for:)``) and calls `completionHandler` on
    /// the main actor with the outcome. Every save of the document, autosave included, comes
    /// through here, so an override sees them all.
    open func save(
        to url: URL, for saveOperation: SaveOperation, completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        let onPurpose = !nextSaveIsAutosave
        nextSaveIsAutosave = false
        let save = enqueueFileOperation {
            await self.performSave(to: url, for: saveOperation, onPurpose: onPurpose)
        }
        Task { @MainActor in completionHandler?(await save.value) }
    }

    /// Saves unsaved changes (see ``autosave()``) and calls `completionHandler` on the main
    /// actor with the outcome.
    open func autosave(completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        Task { @MainActor in
            let saved = await self.performAutosave()
            completionHandler?(saved)
        }
    }

    /// Saves unsaved changes and closes the document (see ``close()``), then calls
    /// `completionHandler` on the main actor with the outcome.
    open func close(completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        Task { @MainActor in
            let closed = await self.performClose()
            completionHandler?(closed)
        }
    }

    /// Reverts to the file at `url` (see ``revert(toContentsOf:)``) and calls
    /// `completionHandler` on the main actor with the outcome.
    open func revert(toContentsOf url: URL, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        // After a save already queued, which would write what the revert discards.
        let revert = enqueueFileOperation { await self.performRevert(toContentsOf: url) }
        Task { @MainActor in completionHandler?(await revert.value) }
    }

    // MARK: - Presenting the file (overridable, called off the main actor)

    nonisolated open var presentedItemURL: URL? {
        presentedItem.url
    }

    nonisolated open var presentedItemOperationQueue: OperationQueue {
        presenterQueue
    }

    /// Saves for another writer or reader, at once: the document's own file access comes
    /// after theirs otherwise. A locked document answers with its error, and its unsaved
    /// changes become a conflict version when the other writer's change arrives.
    nonisolated open func savePresentedItemChanges(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        // Nothing to save: answered at once. Typing that arrives meanwhile is unsaved text
        // when the writer's file lands, and is kept by the reload rule, never overwritten.
        if fileRecord.withLock({ $0.isClean }) {
            completionHandler(nil)
            return
        }
        Task { @MainActor in
            let saved = await self.autosave()
            completionHandler(
                saved
                    ? nil
                    : DocumentKitError(.ioFailure, operation: "save for another writer", url: self.fileURL))
        }
    }

    nonisolated open func relinquishPresentedItem(
        toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        reader(nil)
    }

    nonisolated open func relinquishPresentedItem(
        toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        // Saves wait behind the writer's lock and then check the file, so nothing more is needed.
        writer(nil)
    }

    /// Another writer changed the file: the document reloads it, keeping unsaved text safe
    /// (see the rules in the type's summary).
    nonisolated open func presentedItemDidChange() {
        Task { @MainActor in await self.fileChangedElsewhere() }
    }

    /// The file moved: ``fileURL`` follows it.
    nonisolated open func presentedItemDidMove(to newURL: URL) {
        let moved = newURL.standardizedFileURL
        // A rename changes the file's status-change time but not the file: without this, the
        // next save would take the moved file for another writer's and refuse to write it.
        // At once, not on the main actor's next turn: a save waiting for the mover's lock
        // must see that its file is gone elsewhere.
        presentedItem.state.withLock { $0.url = moved }
        let unchanged = noteMetadataChange(at: moved)
        Task { @MainActor in
            self.fileURL = moved
            // Changed as well as moved: a change looked at while the file was away from the
            // path the document knew found nothing there, and no event will come again for it
            // (written in place, then moved away and back at once). It is looked at here.
            if !unchanged { await self.fileChangedElsewhere() }
        }
    }

    /// The file is about to be deleted by a coordinated writer: see the rules in the type's
    /// summary for what happens to unsaved changes.
    nonisolated open func accommodatePresentedItemDeletion(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        Task { @MainActor in
            await self.itemDeletedElsewhere(coordinated: true)
            completionHandler(nil)
        }
    }

    nonisolated open func presentedItemDidGain(_ version: FileVersion) {
        Task { @MainActor in self.updateConflictStateInTurn() }
    }

    nonisolated open func presentedItemDidLose(_ version: FileVersion) {
        Task { @MainActor in self.updateConflictStateInTurn() }
    }

    nonisolated open func presentedItemDidResolveConflict(_ version: FileVersion) {
        Task { @MainActor in self.updateConflictStateInTurn() }
    }

    // MARK: - Internals

    /// Where the file is and what it was when last read or written, for other threads.
    nonisolated let fileRecord = Mutex(DocumentFileRecord())
    /// Which file the document shows and what it last read or wrote of it: the presenter
    /// registry's record of this document, kept here from before the document presents.
    nonisolated let presentedItem: PresentedItem
    /// The queue file coordination calls this document's presenter methods on.
    nonisolated let presenterQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "DocumentKit.Document.presenter"
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    /// Where this document's unsaved state went when another writer changed or deleted its
    /// file: the conflict versions' contents in the version store, or files beside the
    /// document (or in the recovery folder) when the store could not take them.
    public internal(set) var preservedUnsavedChanges: [URL] = []
    /// Whether the document's file is read-only (no write permission in its mode, or none for
    /// this user), as last read (`NSDocument`'s `isLocked`).
    ///
    /// A locked document is never autosaved, nor saved on close or at quit: its unsaved
    /// changes are kept as a version instead. Only an explicit ``save(to:for:)`` writes it,
    /// keeping its mode.
    public internal(set) var isLocked = false
    /// Editors holding changes not yet handed over: see ``objectDidBeginEditing(_:)``.
    var editors: [ObjectIdentifier: WeakEditor] = [:] {
        didSet { noteWhetherClean() }
    }
    /// Moves on at every change counted and every editor that begins editing: a reload that
    /// finds it moved since the unsaved state was kept knows the user typed meanwhile.
    var editGeneration = 0
    /// Set while another writer's file is being loaded over kept unsaved changes: the
    /// generation they were kept at. The load is refused if the user typed since.
    var reloadKeptGeneration: Int?
    /// Where the document's history and conflict versions are kept; nil keeps none.
    /// ``VersionStore/shared`` by default.
    public var versionStore: VersionStore? = VersionStore.shared

    var autosave = AutosaveStateMachine(
        quietDelay: AutosaveConfiguration().quietDelay, maximumDelay: AutosaveConfiguration().maximumDelay)
    /// Set by an autosave just before it calls ``save(to:for:completionHandler:)``, which
    /// takes it: the contents that save replaces are an autosave's, thinned to one version a
    /// minute; any other save's are kept the first hour (``VersionStore/ThinningPolicy``).
    var nextSaveIsAutosave = false
    var autosaveTimer: Task<Void, Never>?
    var autosaveTimerDeadline: Duration?
    /// The save, revert or reload running or queued last; each waits for the one before it.
    var lastFileOperation: Task<Bool, Never>?
    /// Serializes the file access of this document, as `performAsynchronousFileAccess` promises.
    nonisolated let fileAccessQueue = DispatchQueue(label: "DocumentKit.Document.fileAccess")
}

/// When a document saves by itself.
public struct AutosaveConfiguration: Sendable {
    /// How long after the last change a dirty document is saved. Two seconds by default.
    public var quietDelay: Duration = .seconds(2)
    /// The longest a change waits under continuous editing. Ten seconds by default.
    public var maximumDelay: Duration = .seconds(10)
    /// The clock that times autosave; tests use a ``ManualClock``.
    public var clock: AutosaveClock = .continuous
    /// Whether autosave runs at all. Saving on close and at quit happens regardless.
    public var isEnabled = true

    public init() {}
}

// Here, beside Document, and not in NSDocument.swift: a subclass of Document in another file of
// this module is linked against Document's completion-handler methods under a name the compiler
// does not emit for a @preconcurrency class (Swift 6.3.1), and fails to link.
extension NSDocument {
    /// The document machinery the `NSDocument` drives.
    final class Backing: Document {
        var lastError: (any Error)?

        override func contents(forType typeName: String) throws -> Any {
            guard let owner else { throw CocoaError(.fileWriteUnknown) }
            return try owner.fileWrapper(ofType: owner.fileType ?? typeName)
        }

        override func load(fromContents contents: Any, ofType typeName: String?) throws {
            guard let owner else { return }
            let type = owner.fileType ?? typeName ?? "public.data"
            switch contents {
            case let data as Data: try owner.read(from: data, ofType: type)
            case let wrapper as FileWrapper: try owner.read(from: wrapper, ofType: type)
            default: throw CocoaError(.fileReadCorruptFile)
            }
        }

        override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
            lastError = error
            _ = owner?.presentError(error)
            finishedHandlingError(error, recovered: false)
        }

        weak var owner: NSDocument? {
            didSet { presentingOwner.withLock { $0.document = owner } }
        }
        /// ``owner``, for the presenter calls, which come on the presenter queue.
        private nonisolated let presentingOwner = Mutex(WeakOwner())
        struct WeakOwner: Sendable { weak var document: NSDocument? }

        // The coordinator knows this object as the presenter: each call goes to the owner's
        // member of the same name, at once on the queue it came on, so that a subclass's
        // override of it is the one called, as AppKit calls the document's; the owner's
        // default comes back to the machinery's below.

        private nonisolated var presentingDocument: NSDocument? {
            presentingOwner.withLock { $0.document }
        }

        nonisolated override var presentedItemURL: URL? {
            presentingDocument?.presentedItemURL ?? super.presentedItemURL
        }

        nonisolated override var presentedItemOperationQueue: OperationQueue {
            presentingDocument?.presentedItemOperationQueue ?? super.presentedItemOperationQueue
        }

        nonisolated override func savePresentedItemChanges(
            completionHandler: @escaping @Sendable ((any Error)?) -> Void
        ) {
            guard let document = presentingDocument else {
                return super.savePresentedItemChanges(completionHandler: completionHandler)
            }
            document.savePresentedItemChanges(completionHandler: completionHandler)
        }

        nonisolated override func accommodatePresentedItemDeletion(
            completionHandler: @escaping @Sendable ((any Error)?) -> Void
        ) {
            guard let document = presentingDocument else {
                return super.accommodatePresentedItemDeletion(completionHandler: completionHandler)
            }
            document.accommodatePresentedItemDeletion(completionHandler: completionHandler)
        }

        nonisolated override func relinquishPresentedItem(
            toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
        ) {
            guard let document = presentingDocument else {
                return super.relinquishPresentedItem(toReader: reader)
            }
            document.relinquishPresentedItem(toReader: reader)
        }

        nonisolated override func relinquishPresentedItem(
            toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
        ) {
            guard let document = presentingDocument else {
                return super.relinquishPresentedItem(toWriter: writer)
            }
            document.relinquishPresentedItem(toWriter: writer)
        }

        nonisolated override func presentedItemDidChange() {
            guard let document = presentingDocument else { return super.presentedItemDidChange() }
            document.presentedItemDidChange()
        }

        nonisolated override func presentedItemDidMove(to newURL: URL) {
            guard let document = presentingDocument else { return super.presentedItemDidMove(to: newURL) }
            document.presentedItemDidMove(to: newURL)
        }

        nonisolated override func presentedItemDidGain(_ version: FileVersion) {
            guard let document = presentingDocument else { return super.presentedItemDidGain(version) }
            document.presentedItemDidGain(version)
        }

        nonisolated override func presentedItemDidLose(_ version: FileVersion) {
            guard let document = presentingDocument else { return super.presentedItemDidLose(version) }
            document.presentedItemDidLose(version)
        }

        nonisolated override func presentedItemDidResolveConflict(_ version: FileVersion) {
            guard let document = presentingDocument else {
                return super.presentedItemDidResolveConflict(version)
            }
            document.presentedItemDidResolveConflict(version)
        }

        // The machinery's own answers, the owner's defaults.
        nonisolated var defaultPresentedItemURL: URL? { super.presentedItemURL }
        nonisolated var defaultPresentedItemOperationQueue: OperationQueue {
            super.presentedItemOperationQueue
        }
        nonisolated func defaultSavePresentedItemChanges(
            completionHandler: @escaping @Sendable ((any Error)?) -> Void
        ) {
            super.savePresentedItemChanges(completionHandler: completionHandler)
        }
        nonisolated func defaultAccommodatePresentedItemDeletion(
            completionHandler: @escaping @Sendable ((any Error)?) -> Void
        ) {
            super.accommodatePresentedItemDeletion(completionHandler: completionHandler)
        }
        nonisolated func defaultRelinquishPresentedItem(
            toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
        ) {
            super.relinquishPresentedItem(toReader: reader)
        }
        nonisolated func defaultRelinquishPresentedItem(
            toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
        ) {
            super.relinquishPresentedItem(toWriter: writer)
        }
        nonisolated func defaultPresentedItemDidChange() { super.presentedItemDidChange() }
        nonisolated func defaultPresentedItemDidMove(to newURL: URL) {
            super.presentedItemDidMove(to: newURL)
        }
        nonisolated func defaultPresentedItemDidGain(_ version: FileVersion) {
            super.presentedItemDidGain(version)
        }
        nonisolated func defaultPresentedItemDidLose(_ version: FileVersion) {
            super.presentedItemDidLose(version)
        }
        nonisolated func defaultPresentedItemDidResolveConflict(_ version: FileVersion) {
            super.presentedItemDidResolveConflict(version)
        }

        /// Reads `url` through the document machinery, synchronously, for the owner: a
        /// coordinated read on the calling thread, as AppKit's `init(contentsOf:ofType:)`.
        nonisolated func readForOwner(from url: URL) throws {
            let standardized = url.standardizedFileURL
            try onMainActor {
                if standardized != self.fileURL, self.documentState.contains(.closed) {
                    self.adopt(standardized)
                }
            }
            try read(from: standardized)
        }

        /// The document lives at `url` from now on.
        func adopt(_ url: URL) {
            fileURL = url.standardizedFileURL
        }

        /// A save to a new place is about to make this document a document there.
        func adoptForSaving() {
            presentedItem.state.withLock { $0.seenState = nil }
        }

        /// Registers an opened document as open: presented, listed for the quit-time save.
        func startPresentingOpened() {
            documentState.remove(.closed)
            DocumentController.shared.add(self)
            startPresenting()
        }
    }
}
