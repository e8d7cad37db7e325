import Foundation

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
///     override func read(from data: Data, ofType typeName: String) throws {
///         text = String(decoding: data, as: UTF8.self)
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
    private var isUntitled: Bool

    /// Creates an untitled document: no file until it is saved.
    public override init() {
        isUntitled = true
        backing = Backing(
            fileURL: FileManager.default.temporaryDirectory.appendingPathComponent(
                "untitled-\(UUID().uuidString)"))
        super.init()
        backing.owner = self
        backing.autosaveConfiguration.isEnabled = false
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
    public convenience init(for urlOrNil: URL?, withContentsOf contentsURL: URL, ofType typeName: String)
        throws
    {
        self.init()
        fileType = typeName
        try read(from: contentsURL, ofType: typeName)
        if let url = urlOrNil {
            backing.adopt(url)
            isUntitled = false
            backing.autosaveConfiguration.isEnabled = Self.autosavesInPlace
            backing.startPresentingOpened()
        }
        if urlOrNil != contentsURL { updateChangeCount(.changeReadOtherContents) }
    }

    // MARK: - Names and state

    /// The document's file; nil while untitled.
    open var fileURL: URL? {
        get { isUntitled ? nil : backing.fileURL }
        set {
            guard let newValue else { return }
            backing.adopt(newValue)
            isUntitled = false
        }
    }

    /// The document's type; by default the one its file's extension names.
    open var fileType: String?

    /// When the file was last read or written by this document.
    open var fileModificationDate: Date? {
        get { backing.fileModificationDate }
        set { backing.fileModificationDate = newValue }
    }

    /// The name to show: the file name without its extension, or "Untitled".
    open var displayName: String! {
        get { fileURL.map { $0.deletingPathExtension().lastPathComponent } ?? "Untitled" }
        set {}
    }

    /// Whether the document saves itself in place after changes. True by default.
    open class var autosavesInPlace: Bool { true }

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
    open func read(from data: Data, ofType typeName: String) throws {
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
    open func read(from fileWrapper: FileWrapper, ofType typeName: String) throws {
        guard fileWrapper.isRegularFile, let data = fileWrapper.regularFileContents else {
            throw DocumentKitError(
                .wrongFileType, operation: "open", url: fileURL,
                detail: "a package needs read(from: FileWrapper, ofType:) overridden")
        }
        try read(from: data, ofType: typeName)
    }

    /// Reads the file at `url`: a coordinated read handing its contents to
    /// ``read(from:ofType:)-(FileWrapper,_)``. Leaves the document without unsaved changes.
    open func read(from url: URL, ofType typeName: String) throws {
        try backing.readForOwner(from: url)
    }

    /// Writes the document's contents to `url`, where nothing is yet: ``fileWrapper(ofType:)``
    /// written out. The document's own saves write through the same contents, safely.
    open func write(to url: URL, ofType typeName: String) throws {
        try fileWrapper(ofType: typeName).write(to: url, options: [], originalContentsURL: nil)
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
                let wrapper = try fileWrapper(ofType: typeName)
                try SafeSave.writeItem(at: url) { staging in
                    try wrapper.write(to: staging, options: [], originalContentsURL: nil)
                }
                completionHandler(nil)
            } catch {
                completionHandler(error)
            }
            return
        }
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
                    self.backing.autosaveConfiguration.isEnabled = Self.autosavesInPlace
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

    /// Autosaves in place when the document has unsaved changes and a file.
    open func autosave(
        withImplicitCancellability autosavingIsImplicitlyCancellable: Bool,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        guard fileURL != nil else { return completionHandler(nil) }
        backing.autosave { saved in
            Task { @MainActor in
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

    // MARK: - Presenting (overridable)

    /// Another writer changed the file: the document reloads it, its unsaved changes kept as a
    /// conflict version first (see ``Document``).
    nonisolated open func presentedItemDidChange() {
        backing.defaultPresentedItemDidChange()
    }

    /// The file moved: ``fileURL`` follows it.
    nonisolated open func presentedItemDidMove(to newURL: URL) {
        backing.defaultPresentedItemDidMove(to: newURL)
    }

    /// Errors from the document's own work, as ``Document/handleError(_:userInteractionPermitted:)``;
    /// the default logs them.
    open func presentError(_ error: any Error) -> Bool {
        DocumentLog.write("\(error)")
        return false
    }
}
