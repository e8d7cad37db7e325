import Foundation
import Synchronization

/// AppKit's document class, on the same machinery as ``Document``: the macOS side of the
/// porting contract, so that an `NSDocument` subclass's model layer ports by changing imports.
///
/// Override ``data(ofType:)`` and ``read(from:ofType:)-(Data,_)`` for a flat file, or
/// ``fileWrapper(ofType:)`` and ``read(from:ofType:)-(FileWrapper,_)`` for a package. Changes
/// are counted through ``undoManager`` or ``updateChangeCount(_:)``; when ``autosavesInPlace``
/// (true by default here, as modern Mac apps have it), the document saves itself after a
/// quiet delay, at ``close()`` and when the process is told to quit. Every write is a
/// coordinated safe save, and everything ``Document`` promises about another writer's changes,
/// moves and deletions (nothing the user typed is lost) holds here too.
///
/// For example:
///
/// ```swift
/// final class Notes: NSDocument {
///     var text = ""
///     override class var autosavesInPlace: Bool { true }
///     override func data(ofType typeName: String) throws -> Data { Data(text.utf8) }
///     // Nonisolated, as AppKit declares it; called on the main thread, as AppKit calls it
///     // for a class that does not read concurrently.
///     override func read(from data: Data, ofType typeName: String) throws {
///         let text = String(decoding: data, as: UTF8.self)
///         MainActor.assumeIsolated { self.text = text }
///     }
/// }
/// let notes = try Notes(contentsOf: url, ofType: "public.plain-text")
/// notes.text += "more"
/// notes.updateChangeCount(.changeDone)
/// ```
///
/// A document made with ``init()`` is untitled (``fileURL`` is nil) until saved with
/// ``save(to:ofType:for:completionHandler:)`` and `.saveAsOperation`.
@preconcurrency @MainActor
open class NSDocument: NSObject {
    /// How a document's change count moves, as AppKit's `NSDocument.ChangeType`.
    public enum ChangeType: UInt, Sendable {
        case changeDone = 0
        case changeUndone = 1
        case changeCleared = 2
        case changeReadOtherContents = 3
        case changeAutosaved = 4
        case changeRedone = 5
        case changeDiscardable = 256
    }

    /// Which save is happening, as AppKit's `NSDocument.SaveOperationType`.
    public enum SaveOperationType: UInt, Sendable {
        case saveOperation = 0
        case saveAsOperation = 1
        case saveToOperation = 2
        case autosaveElsewhereOperation = 3
        case autosaveInPlaceOperation = 4
        case autosaveAsOperation = 5
    }

    /// The document that does the work: it calls back into this one for contents.
    let backing: Backing
    /// Whether the document has no file yet; read by the nonisolated ``fileURL``.
    private nonisolated var isUntitled: Bool {
        get { untitled.withLock { $0 } }
        set { untitled.withLock { $0 = newValue } }
    }
    private nonisolated let untitled = Mutex(true)

    // The initializers are `required` with the package trait RequiredDocumentInitializers, so
    // that generic code can make a document from a metatype (`T(contentsOf:ofType:)`), as
    // Swift allows for AppKit's Objective-C class (docs/Porting.md says why that is not the
    // default). The declarations differ in that word only.
    #if RequiredDocumentInitializers
        /// Creates an untitled document: no file until it is saved.
        public required override init() {
            // Untitled: a new place in the temporary folder, as `UIDocument()`'s.
            backing = Backing()
            super.init()
            takeBacking()
        }

        /// Creates an untitled document of `typeName`.
        public required convenience init(type typeName: String) throws {
            self.init()
            fileType = typeName
        }

        /// Opens the document at `url`: reads it now, through ``read(from:ofType:)-(URL,_)``.
        ///
        /// - Throws: What reading throws: a ``DocumentKitError`` naming the file, or the
        ///   subclass's own error. Nothing is changed on disk.
        public required convenience init(contentsOf url: URL, ofType typeName: String) throws {
            try self.init(for: url, withContentsOf: url, ofType: typeName)
        }

        /// Opens the document that is to live at `urlOrNil` with the contents of `contentsURL`.
        public required convenience init(
            for urlOrNil: URL?, withContentsOf contentsURL: URL, ofType typeName: String
        ) throws {
            self.init()
            try take(contentsOf: contentsURL, for: urlOrNil, ofType: typeName)
        }
    #else
        /// Creates an untitled document: no file until it is saved.
        public override init() {
            // Untitled: a new place in the temporary folder, as `UIDocument()`'s.
            backing = Backing()
            super.init()
            takeBacking()
        }

        /// Creates an untitled document of `typeName`.
        public convenience init(type typeName: String) throws {
            self.init()
            fileType = typeName
        }

        /// Opens the document at `url`: reads it now, through ``read(from:ofType:)-(URL,_)``.
        ///
        /// - Throws: What reading throws: a ``DocumentKitError`` naming the file, or the
        ///   subclass's own error. Nothing is changed on disk.
        public convenience init(contentsOf url: URL, ofType typeName: String) throws {
            try self.init(for: url, withContentsOf: url, ofType: typeName)
        }

        /// Opens the document that is to live at `urlOrNil` with the contents of `contentsURL`.
        public convenience init(
            for urlOrNil: URL?, withContentsOf contentsURL: URL, ofType typeName: String
        ) throws {
            self.init()
            try take(contentsOf: contentsURL, for: urlOrNil, ofType: typeName)
        }
    #endif

    /// Becomes the owner of ``backing``; an untitled document does not autosave.
    private func takeBacking() {
        backing.owner = self
        backing.autosaveConfiguration.isEnabled = false
    }

    /// Reads `contentsURL` into the new document and, with `urlOrNil`, makes it the document
    /// there.
    private func take(contentsOf contentsURL: URL, for urlOrNil: URL?, ofType typeName: String) throws {
        fileType = typeName
        try read(from: contentsURL, ofType: typeName)
        if let url = urlOrNil {
            backing.adopt(url)
            isUntitled = false
            applyClassPolicies()
            backing.startPresentingOpened()
        }
        if urlOrNil != contentsURL { updateChangeCount(.changeReadOtherContents) }
    }

    // MARK: - Names and state

    /// The document's file; nil while untitled. It follows the file when another program
    /// moves it. Nonisolated, as AppKit's: it may be read from any thread (a background read
    /// or write, say); setting it off the main actor waits for the main actor.
    nonisolated open var fileURL: URL? {
        get { isUntitled ? nil : backing.defaultPresentedItemURL }
        set {
            guard let newValue else { return }
            try? onMainActor { self.backing.adopt(newValue) }
            isUntitled = false
        }
    }

    /// The document's type; by default the one its file's extension names. Nonisolated, as
    /// AppKit's.
    nonisolated open var fileType: String? {
        get { fileTypeStorage.withLock { $0 } }
        set { fileTypeStorage.withLock { $0 = newValue } }
    }
    private nonisolated let fileTypeStorage = Mutex<String?>(nil)

    /// When the file was last read or written by this document.
    open var fileModificationDate: Date? {
        get { backing.fileModificationDate }
        set { backing.fileModificationDate = newValue }
    }

    /// The name to show: the file name without its extension, or ``defaultDraftName()``.
    open var displayName: String! {
        get { fileURL.map { $0.deletingPathExtension().lastPathComponent } ?? defaultDraftName() }
        set {}
    }

    /// Whether the document saves itself in place after changes. True by default.
    /// Nonisolated, as AppKit's, which asks it "not always on the main thread".
    nonisolated open class var autosavesInPlace: Bool { true }

    /// Whether documents of `typeName` may be read off the main thread; reads here are
    /// always off it, so the answer only documents the subclass's wish.
    open class func canConcurrentlyReadDocuments(ofType typeName: String) -> Bool { false }

    /// Whether the document has changes not yet saved.
    open var isDocumentEdited: Bool { backing.hasUnsavedChanges }

    /// Whether the document has an undo manager; setting it false removes it.
    open var hasUndoManager: Bool {
        get { backing.storedUndoManager != nil || !undoManagerRemoved }
        set {
            undoManagerRemoved = !newValue
            if !newValue { backing.undoManager = nil }
        }
    }
    private var undoManagerRemoved = false

    /// The document's undo manager: registering an action and closing its group marks the
    /// document edited, as AppKit's does.
    open var undoManager: UndoManager? {
        get { undoManagerRemoved ? nil : backing.undoManager }
        set {
            undoManagerRemoved = newValue == nil
            backing.undoManager = newValue
        }
    }

    /// Whether the file is read-only: see ``Document/isLocked``.
    open var isLocked: Bool { backing.isLocked }

    // MARK: - Change counting

    /// Records a change, as AppKit's `updateChangeCount(_:)`.
    open func updateChangeCount(_ change: ChangeType) {
        switch change {
        case .changeDone, .changeDiscardable, .changeReadOtherContents: backing.updateChangeCount(.done)
        case .changeUndone: backing.updateChangeCount(.undone)
        case .changeRedone: backing.updateChangeCount(.redone)
        case .changeCleared, .changeAutosaved: backing.updateChangeCount(.clear)
        }
    }

    /// A token for the changes counted now, for a save about to start.
    open func changeCountToken(for saveOperation: SaveOperationType) -> Any {
        backing.changeCountToken(for: .forOverwriting)
    }

    /// Marks as saved the changes counted when `changeCountToken` was made.
    open func updateChangeCount(withToken changeCountToken: Any, for saveOperation: SaveOperationType) {
        backing.updateChangeCount(withToken: changeCountToken, for: .forOverwriting)
    }

    // MARK: - Contents (override these)

    /// The document's contents as bytes. Override this or ``fileWrapper(ofType:)``.
    open func data(ofType typeName: String) throws -> Data {
        throw DocumentKitError(
            .notSupported, operation: "save", url: fileURL,
            detail: "\(type(of: self)) overrides neither data(ofType:) nor fileWrapper(ofType:)")
    }

    /// Takes the document's contents from bytes. Override this or
    /// ``read(from:ofType:)-(FileWrapper,_)``.
    nonisolated open func read(from data: Data, ofType typeName: String) throws {
        throw DocumentKitError(
            .notSupported, operation: "open", url: fileURL,
            detail:
                "\(type(of: self)) overrides neither read(from: Data, ofType:) nor read(from: FileWrapper, ofType:)"
        )
    }

    /// The document's contents as a file wrapper; by default a regular file of ``data(ofType:)``.
    open func fileWrapper(ofType typeName: String) throws -> FileWrapper {
        FileWrapper(regularFileWithContents: try data(ofType: typeName))
    }

    /// Takes the document's contents from a file wrapper; by default the bytes of a regular
    /// file go to ``read(from:ofType:)-(Data,_)``.
    nonisolated open func read(from fileWrapper: FileWrapper, ofType typeName: String) throws {
        guard fileWrapper.isRegularFile, let data = fileWrapper.regularFileContents else {
            throw DocumentKitError(
                .wrongFileType, operation: "open", url: fileURL,
                detail: "a package needs read(from: FileWrapper, ofType:) overridden")
        }
        try read(from: data, ofType: typeName)
    }

    /// Reads the file at `url`: a coordinated read handing its contents to
    /// ``read(from:ofType:)-(FileWrapper,_)``. Leaves the document without unsaved changes.
    nonisolated open func read(from url: URL, ofType typeName: String) throws {
        try backing.readForOwner(from: url)
    }

    /// Writes the document's contents to `url`, where nothing is yet: ``fileWrapper(ofType:)``
    /// (asked on the main actor, where it is isolated) written out on the calling thread. The
    /// document's own saves write through the same contents, safely.
    nonisolated open func write(to url: URL, ofType typeName: String) throws {
        nonisolated(unsafe) var contents: FileWrapper?
        try onMainActor { contents = try self.fileWrapper(ofType: typeName) }
        try contents?.write(to: url, options: [], originalContentsURL: nil)
    }

    // MARK: - Saving, reverting, closing

    /// Saves the document to `url`: a coordinated safe save for `.saveOperation`,
    /// `.saveAsOperation` (the document moves to `url`) and the autosave operations; a copy for
    /// `.saveToOperation`. Calls `completionHandler` on the main actor with nil or the error.
    open func save(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        fileType = typeName
        if saveOperation == .saveToOperation {
            do {
                try writeSafely(to: url, ofType: typeName, for: saveOperation)
                completionHandler(nil)
            } catch {
                completionHandler(error)
            }
            return
        }
        applyVersionPolicy()
        let creating = isUntitled || url.standardizedFileURL != backing.fileURL
        if creating { backing.adoptForSaving() }
        backing.save(
            to: url,
            for: creating && !FileManager.default.fileExists(atPath: url.path)
                ? .forCreating : .forOverwriting
        ) {
            saved in
            Task { @MainActor in
                if saved {
                    self.isUntitled = false
                    self.applyClassPolicies()
                }
                completionHandler(
                    saved
                        ? nil
                        : self.backing.lastError ?? DocumentKitError(.ioFailure, operation: "save", url: url))
            }
        }
    }

    /// Saves the document to its file (AppKit's Save command); an untitled one cannot be, here,
    /// without a place: use ``save(to:ofType:for:completionHandler:)``.
    open func save(_ sender: Any?) {
        guard let url = fileURL else { return }
        save(to: url, ofType: fileType ?? backing.fileType ?? "public.data", for: .saveOperation) { _ in }
    }

    /// Autosaves in place when the document has unsaved changes and a file, and
    /// ``autosavingFileType`` is not nil. ``checkAutosavingSafety()`` is asked first (until
    /// `unlock(completionHandler:)` turns the check off), and its error, if
    /// any, is handed to `completionHandler` with nothing written.
    /// ``autosavingIsImplicitlyCancellable`` holds `autosavingIsImplicitlyCancellable` meanwhile.
    open func autosave(
        withImplicitCancellability autosavingIsImplicitlyCancellable: Bool,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        guard fileURL != nil, autosavingFileType != nil else { return completionHandler(nil) }
        if !autosavingSafetyCheckIsOff {
            do {
                try checkAutosavingSafety()
            } catch {
                return completionHandler(error)
            }
        }
        autosaveInProgressIsCancellable = autosavingIsImplicitlyCancellable
        backing.autosave { saved in
            Task { @MainActor in
                self.autosaveInProgressIsCancellable = false
                completionHandler(saved ? nil : self.backing.lastError)
            }
        }
    }

    /// Discards unsaved changes and reads the file at `url` again (the discarded text is kept
    /// as a history version, as ``Document/revert(toContentsOf:)`` keeps it).
    open func revert(toContentsOf url: URL, ofType typeName: String) throws {
        backing.lastError = nil
        backing.undoManager?.removeAllActions()
        try read(from: url, ofType: typeName)
        backing.updateChangeCount(.clear)
    }

    /// Saves unsaved changes and closes the document.
    open func close() {
        backing.close { _ in }
    }

    /// Closes the document and waits: whether its changes were saved (or kept) and it closed.
    public func close() async -> Bool {
        await backing.close()
    }

    // MARK: - Presenting (NSFilePresenter, overridable)

    // A document is its file's presenter, as AppKit's NSDocument is: coordinators in this and
    // other programs call these on ``presentedItemOperationQueue``, and a subclass's override
    // is the one called. A coordinator made with the document
    // (`NSFileCoordinator(filePresenter: self)`) never messages it about its own accesses.

    /// The presented file: the document's.
    nonisolated open var presentedItemURL: URL? { backing.defaultPresentedItemURL }

    /// The serial queue the presenter calls come on.
    nonisolated open var presentedItemOperationQueue: OperationQueue {
        backing.defaultPresentedItemOperationQueue
    }

    /// Another program is about to read or write the file: unsaved changes are saved first,
    /// then `completionHandler` is called with nil or the save's error.
    nonisolated open func savePresentedItemChanges(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        backing.defaultSavePresentedItemChanges(completionHandler: completionHandler)
    }

    /// The file is about to be deleted by a coordinated writer: unsaved changes are kept
    /// (see ``Document``) and the document closes.
    nonisolated open func accommodatePresentedItemDeletion(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        backing.defaultAccommodatePresentedItemDeletion(completionHandler: completionHandler)
    }

    /// Another program is about to read the file: the document lets it at once.
    nonisolated open func relinquishPresentedItem(
        toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        backing.defaultRelinquishPresentedItem(toReader: reader)
    }

    /// Another program is about to write the file: the document lets it at once (its own
    /// saves wait behind the writer and check the file after).
    nonisolated open func relinquishPresentedItem(
        toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        backing.defaultRelinquishPresentedItem(toWriter: writer)
    }

    /// Another writer changed the file: the document reloads it, its unsaved changes kept as a
    /// conflict version first (see ``Document``).
    nonisolated open func presentedItemDidChange() {
        backing.defaultPresentedItemDidChange()
    }

    /// The file moved: ``fileURL`` follows it.
    nonisolated open func presentedItemDidMove(to newURL: URL) {
        backing.defaultPresentedItemDidMove(to: newURL)
    }

    /// A version of the file appeared (a conflict from another device, say): the document's
    /// conflict state is brought up to date.
    nonisolated open func presentedItemDidGain(_ version: FileVersion) {
        backing.defaultPresentedItemDidGain(version)
    }

    /// A version of the file went away.
    nonisolated open func presentedItemDidLose(_ version: FileVersion) {
        backing.defaultPresentedItemDidLose(version)
    }

    /// A conflict version of the file was resolved.
    nonisolated open func presentedItemDidResolveConflict(_ version: FileVersion) {
        backing.defaultPresentedItemDidResolveConflict(version)
    }

    /// Errors from the document's own work, as ``Document/handleError(_:userInteractionPermitted:)``;
    /// the default logs them.
    open func presentError(_ error: any Error) -> Bool {
        DocumentLog.write("\(willPresentError(error))")
        return false
    }

    // MARK: - Apple's further members
    //
    // Declared here in the class and not in an extension, because apps override them and Swift
    // overrides only what the class itself declares. Their helpers are in NSDocument+Members.swift.
    // docs/Porting.md lists the members left out, and why.

    // MARK: Types

    /// The types this class reads. AppKit takes them from the app's `Info.plist`, which a
    /// Linux program does not have: empty unless a subclass overrides it, as apps that declare
    /// their types in code do.
    open class var readableTypes: [String] { [] }

    /// The types this class writes, natively or by export. Empty unless overridden, like
    /// ``readableTypes``.
    open class var writableTypes: [String] { [] }

    /// Whether `type` is native to this class: one it both reads and writes (AppKit: one for
    /// which the app is an Editor).
    open class func isNativeType(_ type: String) -> Bool {
        readableTypes.contains(type) && writableTypes.contains(type)
    }

    /// The types a `saveOperation` may write: ``writableTypes``, without the types that are not
    /// native (``isNativeType(_:)``) except for `.saveToOperation`, an export. As AppKit's.
    open func writableTypes(for saveOperation: SaveOperationType) -> [String] {
        let writable = Self.writableTypes
        return saveOperation == .saveToOperation ? writable : writable.filter { Self.isNativeType($0) }
    }

    /// The extension a file of `typeName` gets: the one ``FileTypes`` registers for it (AppKit
    /// asks `NSWorkspace` the same), or nil for a type with none.
    nonisolated open func fileNameExtension(forType typeName: String, saveOperation: SaveOperationType)
        -> String?
    {
        FileTypes.shared.preferredFilenameExtension(forType: typeName)
    }

    /// Whether this class keeps its documents in iCloud. AppKit answers from the app's
    /// ubiquity-container entitlement; a Linux program has no entitlements, and a synced folder
    /// is synced by the sync agent whatever the class says, so false unless overridden.
    open class var usesUbiquitousStorage: Bool { false }

    // MARK: Loading

    /// Whether the whole file is in memory. True, as AppKit's default; a document that reads
    /// its file lazily overrides it to answer false. AppKit uses it to keep a volume from
    /// ejecting and to warn when a partly read file disappears; here a document keeps what it
    /// holds in either case (see ``Document``), and the answer is the subclass's to give.
    nonisolated open var isEntireFileLoaded: Bool { true }

    // MARK: The Save panel's choices

    /// Whether the user hid the file name's extension in the last Save panel. No Save panel
    /// runs here, so false unless a subclass overrides it, as AppKit's is before any panel ran.
    nonisolated open var fileNameExtensionWasHiddenInLastRunSavePanel: Bool { false }

    /// The type the user chose in the last Save panel: nil, as no Save panel runs here.
    nonisolated open var fileTypeFromLastRunSavePanel: String? { nil }

    // MARK: Drafts and versions

    /// Whether the document is a draft: one the app made (an import, say) rather than the
    /// user. False until set.
    open var isDraft = false

    /// The name of an untitled document: "Untitled", as AppKit's default (it localizes it).
    /// ``displayName`` uses it.
    open func defaultDraftName() -> String { "Untitled" }

    /// Whether drafts of this class are autosaved. True, as AppKit's default. An untitled
    /// document is not autosaved here in any case (it has no file until saved), so this only
    /// answers for the subclass.
    open class var autosavesDrafts: Bool { true }

    /// Whether saves keep the contents they replace as versions (``FileVersion``). As AppKit's,
    /// the default is ``autosavesInPlace``; a class that answers false keeps no history
    /// versions: its documents have no ``Document/versionStore``, and unsaved changes that
    /// another writer's change or a deletion would lose are kept in files beside the document
    /// instead.
    open class var preservesVersions: Bool { autosavesInPlace }

    /// Whether saving also keeps the previous contents in a backup file. False, as AppKit's.
    /// Here the previous contents are kept as a version (``preservesVersions``), never as a
    /// file beside the document, so ``backupFileURL`` stays nil either way.
    nonisolated open var keepBackupFile: Bool { false }

    /// The backup file made while saving: nil, as AppKit's is when none is needed; see
    /// ``keepBackupFile``.
    nonisolated open var backupFileURL: URL? { nil }

    // MARK: Autosaving

    /// The type an autosave writes: ``fileType`` by default. A subclass that answers nil turns
    /// autosaving off for the document, as in AppKit: neither the quiet-delay timer nor
    /// ``autosave(withImplicitCancellability:completionHandler:)`` saves it (the answer is read
    /// when the document opens or is saved, and by each autosave call).
    nonisolated open var autosavingFileType: String? { fileType }

    /// Where autosaved contents are kept when the document autosaves elsewhere. Documents here
    /// autosave in place, into their own file, so it stays nil unless set.
    nonisolated open var autosavedContentsFileURL: URL? {
        get { autosavedContents.withLock { $0 } }
        set { autosavedContents.withLock { $0 = newValue } }
    }
    private nonisolated let autosavedContents = Mutex<URL?>(nil)

    /// Whether the document has changes no autosave has written yet. An autosave writes the
    /// document's own file here, so these are its unsaved changes.
    open var hasUnautosavedChanges: Bool { backing.hasUnsavedChanges }

    /// Whether the autosave in progress may be cancelled without harm: what
    /// ``autosave(withImplicitCancellability:completionHandler:)`` was given, while it runs;
    /// false otherwise.
    open var autosavingIsImplicitlyCancellable: Bool { autosaveInProgressIsCancellable }
    var autosaveInProgressIsCancellable = false

    /// Schedules an autosave after the quiet delay when autosaving is on and the document has
    /// unautosaved changes; with none, cancels one scheduled. As AppKit's, it never starts a
    /// second autosave while one runs.
    open func scheduleAutosaving() {
        guard backing.autosaveConfiguration.isEnabled else { return }
        backing.changeCountChanged()
    }

    /// Throws when autosaving in place is not safe. The default throws for a locked document
    /// (``isLocked``), which the document machinery never autosaves either; AppKit's also
    /// questions documents not edited for a while or kept in the Downloads folder, a
    /// question asked in a dialog, which has no place here. Overrides may add their own checks.
    /// ``autosave(withImplicitCancellability:completionHandler:)`` asks it first.
    ///
    /// - Throws: ``DocumentKitError`` with ``DocumentKitError/Code/permissionDenied``.
    open func checkAutosavingSafety() throws {
        if isLocked {
            throw DocumentKitError(
                .permissionDenied, operation: "autosave", url: fileURL, detail: "the document is locked")
        }
    }
    var autosavingSafetyCheckIsOff = false

    // MARK: Writing

    /// Whether `save(to:ofType:for:completionHandler:)` may write off the main thread. False,
    /// as AppKit's default; writes here are always off the main actor, from contents taken on
    /// it, so the answer only records the subclass's wish.
    open func canAsynchronouslyWrite(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType
    )
        -> Bool
    {
        false
    }

    /// Lets the user go on while a save writes: the main actor is never held by a save here,
    /// so it does nothing, as AppKit's does when nothing is blocked.
    nonisolated open func unblockUserInteraction() {}

    /// Writes the document to `url` safely: ``write(to:ofType:for:originalContentsURL:)``
    /// writes a new item beside it, which gets the attributes of
    /// ``fileAttributesToWrite(to:ofType:for:originalContentsURL:)`` (POSIX permissions and
    /// modification date) and is flushed and renamed into place (``SafeSave``). A crash leaves
    /// the old file or the new. `.saveToOperation` saves come through here.
    ///
    /// - Throws: ``DocumentKitError`` naming the file, or what the subclass's writing throws;
    ///   the file at `url` is then untouched.
    nonisolated open func writeSafely(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType
    ) throws {
        let original = FileManager.default.fileExists(atPath: url.path) ? url : nil
        let attributes = try fileAttributesToWrite(
            to: url, ofType: typeName, for: saveOperation, originalContentsURL: original)
        let keyed = Dictionary(uniqueKeysWithValues: attributes.map { (AnyHashable($0.key), $0.value) })
        try SafeSave.writeItem(at: url, permissions: Document.permissions(in: keyed)) { staging in
            try write(to: staging, ofType: typeName, for: saveOperation, originalContentsURL: original)
            Document.applyModificationDate(in: keyed, to: staging)
        }
    }

    /// Writes the document to `url`, where nothing is yet, for `saveOperation`; the original
    /// file, if any, is at `absoluteOriginalContentsURL`. The default calls
    /// ``write(to:ofType:)``.
    nonisolated open func write(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType,
        originalContentsURL absoluteOriginalContentsURL: URL?
    ) throws {
        try write(to: url, ofType: typeName)
    }

    /// The attributes ``writeSafely(to:ofType:for:)`` gives the written file, keyed by
    /// `FileAttributeKey` raw values. None by default (AppKit's adds Finder's type codes and
    /// hidden-extension flag, which Linux files do not have); the original's permissions are
    /// kept regardless.
    nonisolated open func fileAttributesToWrite(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType,
        originalContentsURL absoluteOriginalContentsURL: URL?
    ) throws -> [String: Any] {
        [:]
    }

    // MARK: Moving

    /// Moves the document's file to `url`, replacing what is there, as a coordinated move:
    /// other programs' presenters of the file follow it, and the document goes on at `url`
    /// (unsaved changes are saved there). Calls `completionHandler` on the main actor with nil
    /// or the error; the file stays where it was on error.
    open func move(to url: URL, completionHandler: (((any Error)?) -> Void)? = nil) {
        guard let source = fileURL else {
            completionHandler?(
                DocumentKitError(
                    .invalidArgument, operation: "move the document", url: url, detail: "it is untitled"))
            return
        }
        let backing = backing
        Task { @MainActor in
            let outcome = await Task.detached { NSDocument.moveFile(at: source, to: url, presenter: backing) }
                .value
            switch outcome {
            case .success(let moved):
                backing.defaultPresentedItemDidMove(to: moved)
                backing.adopt(moved)
                completionHandler?(nil)
            case .failure(let error):
                completionHandler?(error)
            }
        }
    }

    // MARK: Locking

    /// Locks the document's file: makes it read-only (no write permission for anyone, where
    /// AppKit sets the "user immutable" flag, which needs root on Linux), in a coordinated
    /// metadata write. ``isLocked`` is then true. A document without a file cannot be locked.
    /// Calls `completionHandler` on the main actor with nil or the error.
    open func lock(completionHandler: (((any Error)?) -> Void)? = nil) {
        setFileLocked(true, completionHandler: completionHandler)
    }

    /// Locks the document: autosaves it when it has unautosaved changes, then locks its file
    /// (`lock(completionHandler:)`), and calls `completionHandler`
    /// on the main actor with whether it is locked.
    open func lock(completionHandler: ((Bool) -> Void)? = nil) {
        Task { @MainActor in
            if self.hasUnautosavedChanges, self.fileURL != nil, !(await self.backing.autosave()) {
                completionHandler?(false)
                return
            }
            self.lock { (error: (any Error)?) in completionHandler?(error == nil) }
        }
    }

    /// Unlocks the document's file: gives its owner write permission again, in a coordinated
    /// metadata write. ``isLocked`` is then false. Calls `completionHandler` on the main actor
    /// with nil or the error.
    open func unlock(completionHandler: (((any Error)?) -> Void)? = nil) {
        setFileLocked(false, completionHandler: completionHandler)
    }

    /// Unlocks the document (`unlock(completionHandler:)`) and, as
    /// AppKit's, stops asking ``checkAutosavingSafety()`` before autosaves. Calls
    /// `completionHandler` on the main actor with whether it is unlocked.
    open func unlock(completionHandler: ((Bool) -> Void)? = nil) {
        unlock { (error: (any Error)?) in
            if error == nil { self.autosavingSafetyCheckIsOff = true }
            completionHandler?(error == nil)
        }
    }

    // MARK: Serialized work

    /// Runs `block` once the activities begun before it have finished, passing it the handler
    /// to call when its own activity is finished. With `waitSynchronously`, it does not return
    /// before `block` has been called (it waits for the earlier activities, running meanwhile
    /// the work handed to ``continueAsynchronousWorkOnMainThread(_:)``); otherwise `block` may
    /// run later on the main actor. Inside ``continueActivity(_:)``, `block` runs at once.
    open func performActivity(
        withSynchronousWaiting waitSynchronously: Bool, using block: @escaping (@escaping () -> Void) -> Void
    ) {
        if activityContinuations > 0 {
            block {}
            return
        }
        if waitSynchronously {
            activities.waitForTurn()
            block(activities.finisher())
        } else {
            activities.enqueue(block)
        }
    }

    /// Runs `block` now, such that activities it begins with
    /// ``performActivity(withSynchronousWaiting:using:)`` do not wait for the one in progress,
    /// which would never finish.
    open func continueActivity(_ block: () -> Void) {
        activityContinuations += 1
        defer { activityContinuations -= 1 }
        block()
    }
    var activityContinuations = 0

    /// Waits for the file accesses begun before it, then runs `block`; the next access starts
    /// when `block` returns. A wait on the main thread runs meanwhile the work handed to
    /// ``continueAsynchronousWorkOnMainThread(_:)``.
    nonisolated open func performSynchronousFileAccess(_ block: () -> Void) {
        fileAccesses.waitForTurn()
        block()
        fileAccesses.finisher()()
    }

    /// Runs `block` once the file accesses begun before it have finished, without blocking: at
    /// once when none is under way, otherwise later, on the main queue if called on the main
    /// thread, else on the thread that finishes the access before it. `block` is passed the
    /// handler to call, from any thread, when its access is finished.
    nonisolated open func performAsynchronousFileAccess(_ block: @escaping (@escaping () -> Void) -> Void) {
        fileAccesses.enqueue(block)
    }

    /// Runs `block` on the main thread and returns first: at the next turn of the main queue,
    /// or, when the main thread is waiting in ``performSynchronousFileAccess(_:)`` or
    /// ``performActivity(withSynchronousWaiting:using:)``, inside that wait, which would
    /// otherwise wait for ever for work that needs the main thread.
    nonisolated open func continueAsynchronousWorkOnMainThread(_ block: @escaping () -> Void) {
        SerialAccessQueue.runOnMainThread(block)
    }

    nonisolated let fileAccesses = SerialAccessQueue()
    nonisolated let activities = SerialAccessQueue()

    // MARK: Errors

    /// Gives a subclass the chance to replace `error` before it is presented: ``presentError(_:)``
    /// presents what this returns. The default returns `error`.
    open func willPresentError(_ error: any Error) -> any Error { error }
}

extension NSDocument: FilePresenter, PresenterStandIn {
    /// The machinery behind the document is the presenter the coordinator knows.
    nonisolated package var presenterStoodInFor: any FilePresenter { backing }
}
