import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

/// The Simple Text Editor: a list of the container's documents beside an editor of the
/// selected one, or, given one file, just the editor.
///
/// Typing goes into a ``TextBuffer``; a burst of typing (edits less than
/// ``burstPause`` apart, with no other command in between) is handed to the document as one
/// `documentText` change, which is one undo step and what starts the document's autosave.
/// While a burst is open the editor is one of the document's editors
/// (`objectDidBeginEditing`): the document has it commit the burst before it saves, answers
/// another writer or keeps the text as a conflict version, so typing of any age counts.
@MainActor
final class Editor: SimpleTextDocumentDelegate, DocumentEditor {
    enum Focus { case list, editor }

    enum PromptKind { case newDocument, rename }

    struct HistoryScreen {
        var records: [VersionRecord]
        var selection = 0
        var preview: [String]?
        var confirmingRestore = false
        var error: String?
    }

    /// One conflict at a time: the file against one unresolved conflict version, each side
    /// labelled with who wrote it and when; `m`, `t` and `b` act on this version only.
    struct ConflictScreen {
        var records: [VersionRecord]
        var index = 0
        /// The conflict version's text, as lines.
        var versionLines: [String]
    }

    enum Mode {
        case normal
        case prompt(PromptKind, String)
        case confirmDelete
        case find(String, origin: TextBuffer.Position)
        case history(HistoryScreen)
        case conflict(ConflictScreen)
    }

    /// Edits closer together than this form one undo step.
    static let burstPause: Duration = .seconds(1)
    /// How often the list is redrawn when nothing else redraws it, so that ages stay current.
    static let ageRedrawInterval: Duration = .seconds(5)

    let terminal: Terminal
    let container: TextContainer?
    let versions: any VersionSource
    private let clock = ContinuousClock()

    /// The container's documents, newest first, as the live query last reported them (with
    /// ste's own creations, renames and deletions applied at once, until the query reports them).
    private(set) var entries: [TextContainerEntry] = []
    /// The live query behind ``entries``; nil for a single file, or when it could not start.
    private var query: DocumentQuery?
    /// Whether the list holds a first listing yet.
    private var isListed = false
    private var selectedURL: URL?
    private var listTop = 0
    private var focus: Focus
    private var mode: Mode = .normal

    private var document: SimpleTextDocument?
    private var buffer = TextBuffer(text: "")
    private var isEditable = false
    private var isLoading = false
    private var openFailure: String?
    private var openGeneration = 0
    private var top = 0
    private var left = 0

    private var burstStarted = false
    private var lastEdit: ContinuousClock.Instant?
    private var message: (text: String, isError: Bool, shown: ContinuousClock.Instant)?
    private var isQuitting = false
    private var quitWithoutSavingArmed = false
    /// The conflict versions the conflict screen has been opened for: a new one opens it again.
    private var offeredConflicts: Set<String> = []
    private var lastConflictCheck: ContinuousClock.Instant?
    /// A read-only document with unsaved changes was asked to quit once: ^Q again quits.
    private var quitKeepingChangesArmed = false
    private var lastRender: ContinuousClock.Instant?
    private var renderedStatus: DocumentStatus?

    /// What the list mark and the status line show of the open document: a change redraws.
    struct DocumentStatus: Equatable {
        var url: URL
        var isEdited: Bool
        var state: UInt
        var saved: Date?
    }

    private let timeFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }()
    private let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }()
    /// How long a message stays on the status line with no key pressed, before Ln and Col
    /// come back. (A key pressed a second after a message that is not an error clears it.)
    static let messageDuration: Duration = .seconds(10)

    init(terminal: Terminal, container: TextContainer?, versions: any VersionSource) {
        self.terminal = terminal
        self.container = container
        self.versions = versions
        focus = container == nil ? .editor : .list
    }

    // MARK: - Starting

    /// Starts the live list of the container; its newest document opens once it is listed.
    func start() {
        guard let container else { return }
        let query = container.documentQuery()
        let snapshots = query.snapshots()
        if query.start() {
            self.query = query
            Task { @MainActor [weak self] in
                for await snapshot in snapshots {
                    guard let self else { return }
                    self.showListing(container.entries(for: snapshot.results))
                }
            }
        } else {
            // Without inotify (its limits reached, say) the list is one listing, brought up
            // to date by ste's own changes only.
            let reason = describe(query.lastError, opening: nil)
            show("The list does not follow other programs' changes: \(reason)", isError: true)
            do {
                showListing(try container.entries())
            } catch {
                show(error)
            }
        }
        render()
    }

    /// Opens one file without the list, creating it if it does not exist.
    func start(file url: URL) {
        if FileManager.default.fileExists(atPath: url.path) {
            open(url)
        } else {
            create(url)
        }
        render()
    }

    // MARK: - Periodic work

    /// Called about ten times a second: ends a typing burst after its pause, notices a
    /// conflict that appeared, and redraws when the document's save state changed or, once in
    /// a while, for the ages in the list.
    func tick() {
        if burstStarted, let lastEdit, clock.now - lastEdit >= Self.burstPause {
            commitBurst()
            render()
        }
        if let message,
            clock.now - message.shown >= Self.messageDuration
        {
            self.message = nil
            render()
        }
        if let document, document.documentState.contains(.closed), !isLoading, !isQuitting {
            // Closed by itself: another program deleted its file. Its message says where any
            // unsaved text went.
            self.document = nil
            buffer = TextBuffer(text: "")
            isEditable = false
            render()
        }
        offerNewConflicts()
        if let lastRender, clock.now - lastRender >= Self.ageRedrawInterval {
            render()
        } else if documentStatus != renderedStatus {
            render()
        }
    }

    /// Opens the conflict screen when the open document has a conflict version the screen
    /// has not been opened for: a second conflict while the editor stays open is offered too,
    /// so its keys are never typed into the text.
    private func offerNewConflicts() {
        guard let document, document.documentState.contains(.inConflict), isEditable, case .normal = mode,
            lastConflictCheck.map({ clock.now - $0 >= .milliseconds(300) }) ?? true
        else { return }
        lastConflictCheck = clock.now
        guard let records = try? versions.unresolvedConflicts(of: document.fileURL),
            records.contains(where: { !offeredConflicts.contains($0.id ?? "") })
        else { return }
        showConflicts()
        render()
    }

    private var documentStatus: DocumentStatus? {
        document.map {
            DocumentStatus(
                url: $0.fileURL, isEdited: burstStarted || $0.hasUnsavedChanges,
                state: $0.documentState.rawValue, saved: $0.fileModificationDate)
        }
    }

    // MARK: - The list

    /// Shows a new listing, keeping the selection on the same document: by its URL, or by
    /// its query identity when another program renamed it.
    private func showListing(_ listing: [TextContainerEntry]) {
        let selectedID = entries.first { $0.url == selectedURL }?.itemID
        entries = listing
        if let selected = selectedURL, !entries.contains(where: { $0.url == selected }) {
            if let selectedID, let renamed = entries.first(where: { $0.itemID == selectedID }) {
                selectedURL = renamed.url
            } else if let document, entries.contains(where: { $0.url == document.fileURL }) {
                selectedURL = document.fileURL
            }
        }
        if !isListed {
            isListed = true
            if selectedURL == nil, let first = entries.first { select(first.url) }
        }
        render()
    }

    /// Shows ste's own change at once, rather than when the query reports it: the entry at
    /// `oldURL` (if any) leaves the list and the document at `newURL` (if any) takes its place.
    private func updateListing(removing oldURL: URL?, adding newURL: URL?) {
        var replaced: TextContainerEntry?
        if let oldURL, let index = entries.firstIndex(where: { $0.url == oldURL }) {
            replaced = entries.remove(at: index)
        }
        guard let newURL, let container, var entry = container.entry(at: newURL) else { return }
        entries.removeAll { $0.url == newURL }
        entry.itemID = replaced?.itemID
        entry.hasUnresolvedConflicts = replaced?.hasUnresolvedConflicts ?? false
        let index = entries.firstIndex { TextContainer.isNewer(entry, $0) } ?? entries.count
        entries.insert(entry, at: index)
    }

    // MARK: - Documents

    private func select(_ url: URL) {
        selectedURL = url
        open(url)
    }

    private func open(_ url: URL) {
        if let document, document.fileURL == url.standardizedFileURL { return }
        let opening = startShowing(url)
        let generation = openGeneration
        Task { @MainActor in
            let opened = await opening.open()
            guard generation == self.openGeneration else {
                if opened { _ = await opening.close() }
                return
            }
            self.isLoading = false
            if opened {
                self.isEditable = true
                if opening.isLocked {
                    self.show(
                        "“\(opening.localizedName)” is read-only: changes are not saved unless ^S saves anyway",
                        isError: true)
                }
            } else {
                let reason = self.describe(opening.lastError, opening: url)
                self.openFailure = reason
                self.document = nil
                self.show(reason, isError: true)
            }
            self.render()
        }
    }

    /// Closes the shown document and shows the one at `url` instead, empty and read-only
    /// until it has loaded; a newer call makes an older load's result stale.
    private func startShowing(_ url: URL) -> SimpleTextDocument {
        closeCurrentDocument()
        openGeneration += 1
        let shown = SimpleTextDocument(fileURL: url)
        shown.delegate = self
        document = shown
        buffer = TextBuffer(text: "")
        isEditable = false
        isLoading = true
        openFailure = nil
        top = 0
        left = 0
        return shown
    }

    private func create(_ url: URL) {
        let creating = startShowing(url)
        Task { @MainActor in
            let created = await creating.save(to: url, for: .forCreating)
            guard creating === self.document else { return }
            self.isLoading = false
            if created {
                self.isEditable = true
                self.selectedURL = creating.fileURL
                self.focus = .editor
                self.updateListing(removing: nil, adding: creating.fileURL)
                self.show("Created “\(creating.localizedName)”")
            } else {
                self.document = nil
                self.show(self.describe(creating.lastError, opening: url), isError: true)
            }
            self.render()
        }
    }

    /// Hands the typing in progress to the document, then lets it save and close by itself.
    private func closeCurrentDocument() {
        commitBurst()
        guard let closing = document else { return }
        document = nil
        Task { @MainActor in
            _ = await closing.close()
        }
    }

    /// Makes the typing burst in progress one undoable change of the document.
    private func commitBurst() {
        guard burstStarted else { return }
        burstStarted = false
        lastEdit = nil
        guard let document, let undo = document.undoManager else { return }
        document.objectDidEndEditing(self)
        // An explicit group closes now, so the change counts at once (for a save or a quit
        // in this same turn) rather than when the main queue's turn ends.
        let grouping = undo.groupingLevel == 0
        if grouping { undo.beginUndoGrouping() }
        document.documentText = buffer.text
        if grouping { undo.endUndoGrouping() }
    }

    /// The document asks for the typing burst before it saves or takes another writer's file.
    func commitEditing() -> Bool {
        commitBurst()
        return true
    }

    func documentContentsDidChange(_ changed: SimpleTextDocument) {
        guard changed === document else { return }
        if isLoading {
            buffer = TextBuffer(text: changed.documentText)
            return
        }
        // Another program changed the file and the document reloaded it. The document had the
        // typing burst committed first (and kept it as a conflict version if it was unsaved),
        // so an open burst here can only be typing a revert drops on purpose.
        if burstStarted {
            burstStarted = false
            lastEdit = nil
            changed.objectDidEndEditing(self)
        }
        // Nothing the user sees changed: a reload after ste's own restore, or after an
        // attribute change, is not news.
        if changed.documentText == buffer.text { return }
        if !changed.documentState.contains(.inConflict) {
            show("“\(changed.localizedName)” changed on disk and was reloaded")
        }
        buffer.replaceText(changed.documentText)
        render()
    }

    func document(_ failed: SimpleTextDocument, didFailWith error: any Error) {
        guard failed === document, !isLoading else { return }
        show(describe(error, opening: nil), isError: true)
        render()
    }

    // MARK: - Messages

    private func show(_ text: String, isError: Bool = false) {
        message = (text, isError, clock.now)
    }

    private func show(_ error: any Error) {
        show(describe(error, opening: nil), isError: true)
    }

    /// An error in words for the status line: short, naming the document, not its temporary
    /// files or full path.
    func describe(_ error: (any Error)?, opening url: URL?) -> String {
        guard let error else { return "Could not open “\(url?.lastPathComponent ?? "the document")”" }
        if let error = error as? DocumentKitError {
            let name = error.url.map { $0.deletingPathExtension().lastPathComponent } ?? "The document"
            switch error.code {
            case .editedElsewhere:
                return
                    "“\(name)” was changed by another program: theirs is shown, your unsaved text is kept (^K)"
            case .deletedElsewhere:
                return "“\(name)” was deleted by another program; " + (error.detail.map(Self.outcome) ?? "")
            case .permissionDenied where error.operation == "autosave the document":
                return "“\(name)” is read-only: not saved; ^S saves anyway"
            default: break
            }
        }
        let underlying = (error as? DocumentKitError)?.underlying ?? error
        if let invalid = underlying as? InvalidTextError {
            let name =
                url?.lastPathComponent ?? (error as? DocumentKitError)?.url?.lastPathComponent ?? "the file"
            return "Not opened for editing: “\(name)”: \(invalid); the file is left unchanged"
        }
        if let error = error as? DocumentKitError {
            if error.code == .permissionDenied, let url {
                return "Cannot open “\(url.lastPathComponent)”: permission denied"
            }
            return error.description
        }
        return "\(error)"
    }

    /// What a deletion notice says happened, after its "another program deleted it; " (or
    /// "is deleting it; ").
    static func outcome(_ detail: String) -> String {
        detail.range(of: "; ").map { String(detail[$0.upperBound...]) } ?? detail
    }

    // MARK: - Keys

    func handle(_ keys: [Key]) {
        for key in keys { handle(key) }
        render()
    }

    private func handle(_ key: Key) {
        if key == .resize { return }
        if key == .control(17) || key == .control(3) {  // ^Q, ^C
            quit()
            return
        }
        if let shown = message?.shown, clock.now - shown > .seconds(1), message?.isError == false {
            message = nil
        }
        switch mode {
        case .normal: handleNormal(key)
        case .prompt(let kind, let text): handlePrompt(key, kind: kind, text: text)
        case .confirmDelete: handleConfirmDelete(key)
        case .find(let query, let origin): handleFind(key, query: query, origin: origin)
        case .history(let screen): handleHistory(key, screen: screen)
        case .conflict(let screen): handleConflict(key, screen: screen)
        }
    }

    private func handleNormal(_ key: Key) {
        switch key {
        case .control(14):  // ^N
            guard container != nil else {
                return show("New documents need the list: run ste without a file", isError: true)
            }
            commitBurst()
            mode = .prompt(.newDocument, "")
        case .control(18):  // ^R
            guard container != nil, let document else { return show("Nothing to rename", isError: true) }
            commitBurst()
            mode = .prompt(.rename, document.localizedName)
        case .control(4):  // ^D
            guard container != nil, document != nil else { return show("Nothing to delete", isError: true) }
            commitBurst()
            mode = .confirmDelete
        case .control(26): undo()  // ^Z
        case .control(25): redo()  // ^Y
        case .control(6):  // ^F
            guard document != nil else { return }
            commitBurst()
            mode = .find("", origin: buffer.cursor)
        case .control(19): saveNow()  // ^S
        case .control(8): showHistory()  // ^H
        case .control(11): showConflicts()  // ^K
        case .tab, .backTab:
            guard container != nil else {
                if key == .tab { edit { $0.insert("\t") } }
                return
            }
            commitBurst()
            focus = focus == .list ? .editor : .list
        default:
            if focus == .list { handleList(key) } else { handleEditing(key) }
        }
    }

    private func handleList(_ key: Key) {
        guard !entries.isEmpty else { return }
        let current = entries.firstIndex { $0.url == selectedURL } ?? 0
        var next = current
        let page = max(1, terminal.height - 3)
        switch key {
        case .up: next = current - 1
        case .down: next = current + 1
        case .pageUp: next = current - page
        case .pageDown: next = current + page
        case .home: next = 0
        case .end: next = entries.count - 1
        case .enter, .right:
            focus = .editor
            if document == nil { select(entries[current].url) }
            return
        default: return
        }
        next = min(max(0, next), entries.count - 1)
        select(entries[next].url)
    }

    private func handleEditing(_ key: Key) {
        let page = max(1, terminal.height - 4)
        switch key {
        case .up: moveCursor { $0.moveVertically(by: -1) }
        case .down: moveCursor { $0.moveVertically(by: 1) }
        case .left: moveCursor { $0.moveLeft() }
        case .right: moveCursor { $0.moveRight() }
        case .home: moveCursor { $0.moveToLineStart() }
        case .end: moveCursor { $0.moveToLineEnd() }
        case .pageUp: moveCursor { $0.moveVertically(by: -page) }
        case .pageDown: moveCursor { $0.moveVertically(by: page) }
        case .enter: edit { $0.insert("\n") }
        case .backspace: edit { $0.deleteBackward() }
        case .delete: edit { $0.deleteForward() }
        case .character(let character): edit { $0.insert(String(character)) }
        default: break
        }
    }

    private func moveCursor(_ move: (inout TextBuffer) -> Void) {
        // A text view ends its typing group when the insertion point moves.
        commitBurst()
        move(&buffer)
    }

    private func edit(_ change: (inout TextBuffer) -> Void) {
        guard let document, isEditable else {
            return show(
                openFailure ?? (isLoading ? "Still opening…" : "No document: ^N creates one"), isError: true)
        }
        guard !document.documentState.contains(.editingDisabled) else {
            return show("The document cannot be edited right now", isError: true)
        }
        change(&buffer)
        if !burstStarted { document.objectDidBeginEditing(self) }
        burstStarted = true
        lastEdit = clock.now
    }

    // MARK: - Undo, save, quit

    private func undo() {
        guard let document, isEditable else { return }
        commitBurst()
        guard let manager = document.undoManager, manager.canUndo else { return show("Nothing to undo") }
        manager.undo()
        reloadBufferAfterUndo()
    }

    private func redo() {
        guard let document, isEditable else { return }
        commitBurst()
        guard let manager = document.undoManager, manager.canRedo else { return show("Nothing to redo") }
        manager.redo()
        reloadBufferAfterUndo()
    }

    /// Shows the text the undo or redo left, with the cursor where the text changed.
    private func reloadBufferAfterUndo() {
        guard let document else { return }
        let old = buffer.lines
        let new = TextBuffer(text: document.documentText)
        var line = 0
        while line < old.count, line < new.lines.count, old[line] == new.lines[line] { line += 1 }
        var offset = 0
        if line < old.count, line < new.lines.count {
            let commonPrefix = zip(old[line], new.lines[line]).prefix { $0 == $1 }.count
            offset = commonPrefix
        }
        buffer = new
        buffer.move(to: TextBuffer.Position(line: line, offset: offset))
    }

    private func saveNow() {
        guard let document, isEditable else { return }
        commitBurst()
        show("Saving…")
        Task { @MainActor in
            let saved = await document.save(to: document.fileURL, for: .forOverwriting)
            if saved { self.show("Saved “\(document.localizedName)”") }
            self.render()
        }
    }

    /// Saves and quits: the document's close writes what is unsaved and the process ends when
    /// it has. A save that fails keeps the editor open and says why; ^Q again quits anyway.
    func quit() {
        if quitWithoutSavingArmed {
            // The user chose to discard the unsaved text: it stays recoverable as a version.
            Task { @MainActor in
                _ = await self.document?.keepUnsavedChangesAsVersion(asConflict: false)
                self.terminal.end()
                exit(1)
            }
            return
        }
        guard !isQuitting else { return }
        commitBurst()
        if let document, document.isLocked, document.hasUnsavedChanges, !quitKeepingChangesArmed {
            quitKeepingChangesArmed = true
            return show(
                "“\(document.localizedName)” is read-only: ^S saves anyway; ^Q again quits, keeping your changes as a conflict version",
                isError: true)
        }
        isQuitting = true
        show("Saving before quitting…")
        render()
        let closing = document
        Task { @MainActor in
            let saved = await closing?.close() ?? true
            if saved {
                self.terminal.end()
                exit(0)
            }
            self.isQuitting = false
            self.quitWithoutSavingArmed = true
            self.show(
                "Could not save: \(self.describe(closing?.lastError, opening: nil)). ^Q again quits without saving",
                isError: true)
            self.render()
        }
    }

    /// A termination signal: hand over the typing, save every open document now, and end.
    func terminate(bySignal number: Int32) {
        commitBurst()
        DocumentController.shared.saveAllDocuments()
        terminal.end()
        exit(128 + number)
    }

    // MARK: - Prompts

    private func handlePrompt(_ key: Key, kind: PromptKind, text: String) {
        switch key {
        case .escape, .control(7):
            mode = .normal
        case .backspace:
            mode = .prompt(kind, String(text.dropLast()))
        case .character(let character):
            mode = .prompt(kind, text + String(character))
        case .enter:
            mode = .normal
            switch kind {
            case .newDocument: createDocument(named: text)
            case .rename: renameDocument(to: text)
            }
        default: break
        }
    }

    private func createDocument(named name: String) {
        guard let container else { return }
        do {
            let url = try container.url(forNewDocumentNamed: name)
            create(url)
        } catch {
            show(error)
        }
    }

    private func renameDocument(to name: String) {
        guard let container, let renaming = document else { return }
        let cursor = buffer.cursor
        do {
            _ = try TextContainer.validatedName(name)
        } catch {
            return show(error)
        }
        document = nil
        openGeneration += 1
        Task { @MainActor in
            guard await renaming.close() else {
                self.show(self.describe(renaming.lastError, opening: nil), isError: true)
                self.open(renaming.fileURL)
                return
            }
            do {
                let renamed = try container.renameDocument(at: renaming.fileURL, to: name)
                self.updateListing(removing: renaming.fileURL, adding: renamed)
                self.selectedURL = renamed
                self.open(renamed)
                self.show("Renamed to “\(renamed.deletingPathExtension().lastPathComponent)”")
            } catch {
                self.show(error)
                self.open(renaming.fileURL)
            }
            self.buffer.move(to: cursor)
            self.render()
        }
    }

    private func handleConfirmDelete(_ key: Key) {
        mode = .normal
        guard key == .character("y") || key == .character("Y"), let deleting = document else {
            return show("Not deleted")
        }
        let index = entries.firstIndex { $0.url == deleting.fileURL } ?? 0
        document = nil
        openGeneration += 1
        buffer = TextBuffer(text: "")
        isEditable = false
        Task { @MainActor in
            _ = await deleting.close()
            do {
                let moved = try TextContainer.moveToDeleted(deleting.fileURL)
                self.updateListing(removing: deleting.fileURL, adding: nil)
                self.show("Moved “\(deleting.localizedName)” to \(moved.deletingLastPathComponent().path)")
            } catch {
                self.show(error)
            }
            self.focus = .list
            if !self.entries.isEmpty {
                self.select(self.entries[min(index, self.entries.count - 1)].url)
            } else {
                self.selectedURL = nil
            }
            self.render()
        }
    }

    private func handleFind(_ key: Key, query: String, origin: TextBuffer.Position) {
        switch key {
        case .escape, .control(7):
            buffer.move(to: origin)
            mode = .normal
        case .enter:
            mode = .normal
            focus = .editor
        case .control(6):  // ^F again: the next match
            var after = buffer.cursor
            after.offset += 1
            if let found = buffer.find(query, from: after) { buffer.move(to: found) }
        case .backspace:
            let shorter = String(query.dropLast())
            mode = .find(shorter, origin: origin)
            buffer.move(to: buffer.find(shorter, from: origin) ?? origin)
        case .character(let character):
            let longer = query + String(character)
            mode = .find(longer, origin: origin)
            if let found = buffer.find(longer, from: origin) {
                buffer.move(to: found)
            } else {
                show("“\(longer)” not found", isError: true)
            }
        default: break
        }
    }

    // MARK: - Versions

    private func showHistory() {
        guard let document, isEditable else { return show("No document", isError: true) }
        commitBurst()
        var screen = HistoryScreen(records: [])
        do {
            screen.records = try versions.history(of: document.fileURL)
        } catch {
            screen.error = describe(error, opening: nil)
        }
        mode = .history(screen)
    }

    private func handleHistory(_ key: Key, screen: HistoryScreen) {
        var screen = screen
        if screen.confirmingRestore {
            screen.confirmingRestore = false
            if key == .character("y") || key == .character("Y") {
                mode = .normal
                restore(screen.records[screen.selection])
                return
            }
            mode = .history(screen)
            return
        }
        switch key {
        case .escape, .control(8):
            mode = .normal
            return
        case .up:
            screen.selection = max(0, screen.selection - 1)
            screen.preview = nil
        case .down:
            screen.selection = min(max(0, screen.records.count - 1), screen.selection + 1)
            screen.preview = nil
        case .enter, .character("p"):
            guard screen.records.indices.contains(screen.selection) else { break }
            do {
                let text = try versions.text(of: screen.records[screen.selection])
                screen.preview = text.map { TextBuffer(text: $0).lines } ?? ["(not UTF-8 text)"]
            } catch {
                screen.error = describe(error, opening: nil)
            }
        case .character("r"):
            if screen.records.indices.contains(screen.selection) { screen.confirmingRestore = true }
        default: break
        }
        mode = .history(screen)
    }

    private func restore(_ record: VersionRecord) {
        guard let document else { return }
        commitBurst()
        Task { @MainActor in
            do {
                // Coordinated: the document saves what is unsaved first, and the restore keeps
                // the contents it replaces in the history.
                try await self.versions.restore(record, over: document.fileURL)
                _ = await document.revert(toContentsOf: document.fileURL)
                self.buffer = TextBuffer(text: document.documentText)
                self.show(
                    "Restored the version of \(record.modificationDate.map(self.dateFormatter.string) ?? "an earlier time")"
                )
            } catch {
                self.show(error)
            }
            self.render()
        }
    }

    private func showConflicts() {
        guard let document, isEditable else { return }
        commitBurst()
        guard versions.isAvailable else {
            if document.documentState.contains(.inConflict) {
                show(
                    "This document is in conflict, but versions cannot be listed in this build", isError: true
                )
            } else {
                show("No conflict to resolve")
            }
            return
        }
        do {
            let records = try versions.unresolvedConflicts(of: document.fileURL)
            guard !records.isEmpty else { return show("No conflict to resolve") }
            offeredConflicts.formUnion(records.compactMap(\.id))
            mode = .conflict(ConflictScreen(records: records, versionLines: try lines(of: records[0])))
        } catch {
            show(error)
        }
    }

    private func lines(of record: VersionRecord) throws -> [String] {
        try versions.text(of: record).map { TextBuffer(text: $0).lines } ?? ["(not UTF-8 text)"]
    }

    private func handleConflict(_ key: Key, screen: ConflictScreen) {
        var screen = screen
        let shown = screen.records[screen.index]
        switch key {
        case .escape:
            mode = .normal
        case .character("n"):
            screen.index = (screen.index + 1) % screen.records.count
            screen.versionLines = (try? lines(of: screen.records[screen.index])) ?? []
            mode = .conflict(screen)
        case .character("m"):
            resolve(shown, keeping: shown.isFromThisComputer ? .conflictVersion : .currentItem)
        case .character("t"):
            resolve(shown, keeping: shown.isFromThisComputer ? .currentItem : .conflictVersion)
        case .character("b"): keepBoth(shown)
        default: break
        }
    }

    /// Resolves the one conflict shown, keeping `side`; the other side stays in the history.
    /// The screen comes back for the conflicts that remain.
    private func resolve(_ record: VersionRecord, keeping side: ConflictSide) {
        guard let document else { return }
        mode = .normal
        Task { @MainActor in
            do {
                try await self.versions.resolve(record, of: document.fileURL, keeping: side)
                if side == .conflictVersion {
                    _ = await document.revert(toContentsOf: document.fileURL)
                    self.buffer.replaceText(document.documentText)
                }
                self.finishResolving(document)
            } catch {
                self.show(error)
            }
            self.render()
        }
    }

    /// Keeps the file, and the conflict version as a new document beside it.
    private func keepBoth(_ record: VersionRecord) {
        guard let document, let version = record.version else { return }
        mode = .normal
        Task { @MainActor in
            do {
                if let container = self.container {
                    let copy = try await container.saveConflictCopy(of: version, of: document.fileURL)
                    self.updateListing(removing: nil, adding: copy)
                    try await self.versions.resolve(record, of: document.fileURL, keeping: .currentItem)
                    self.finishResolving(document, copy: copy)
                } else {
                    self.show("Keeping both needs the list: run ste without a file", isError: true)
                }
            } catch {
                self.show(error)
            }
            self.render()
        }
    }

    private func finishResolving(_ document: SimpleTextDocument, copy: URL? = nil) {
        let remaining = (try? versions.unresolvedConflicts(of: document.fileURL)) ?? []
        let kept = copy.map { " (the other side is “\($0.deletingPathExtension().lastPathComponent)”)" } ?? ""
        if remaining.isEmpty {
            show("Conflict resolved" + kept)
        } else {
            show("Conflict resolved\(kept); \(remaining.count) more")
            showConflicts()
        }
    }

    // MARK: - Drawing

    private var listWidth: Int {
        container == nil ? 0 : min(36, max(18, terminal.width / 3))
    }

    func render() {
        lastRender = clock.now
        renderedStatus = documentStatus
        let height = terminal.height
        let width = terminal.width
        guard height >= 4, width >= 20 else {
            terminal.clear()
            terminal.draw("Window too small", y: 0, x: 0, width: width)
            terminal.refresh()
            return
        }
        terminal.clear()
        let title = container.map { " Simple Text Editor — \($0.url.path)" } ?? " Simple Text Editor"
        terminal.draw(title, y: 0, x: 0, width: width, attributes: Terminal.reverse, pad: true)
        let bodyTop = 1
        let bodyHeight = height - 3
        var editorX = 0
        if container != nil {
            drawList(top: bodyTop, height: bodyHeight, width: listWidth)
            terminal.verticalLine(x: listWidth, top: bodyTop, count: bodyHeight)
            editorX = listWidth + 1
        }
        let editorWidth = width - editorX
        var cursor: (Int, Int)?
        switch mode {
        case .history(let screen):
            drawHistory(screen, top: bodyTop, height: bodyHeight, x: editorX, width: editorWidth)
        case .conflict(let screen):
            drawConflict(screen, top: bodyTop, height: bodyHeight, x: editorX, width: editorWidth)
        default:
            cursor = drawEditor(top: bodyTop, height: bodyHeight, x: editorX, width: editorWidth)
        }
        drawStatus(y: height - 2, width: width)
        let promptCursor = drawBottom(y: height - 1, width: width)
        if let promptCursor {
            terminal.showCursor(y: height - 1, x: promptCursor)
        } else if let cursor, focus == .editor {
            terminal.showCursor(y: cursor.0, x: cursor.1)
        } else {
            terminal.hideCursor()
        }
        terminal.refresh()
    }

    private func drawList(top: Int, height: Int, width: Int) {
        guard isListed else {
            terminal.draw(" Listing…", y: top, x: 0, width: width)
            return
        }
        guard !entries.isEmpty else {
            terminal.draw(" No documents", y: top, x: 0, width: width)
            terminal.draw(" ^N creates one", y: top + 1, x: 0, width: width)
            return
        }
        let selected = entries.firstIndex { $0.url == selectedURL } ?? -1
        if selected >= 0 {
            if selected < listTop { listTop = selected }
            if selected >= listTop + height { listTop = selected - height + 1 }
        }
        listTop = max(0, min(listTop, entries.count - height))
        let now = Date()
        for row in 0..<height {
            let index = listTop + row
            guard index < entries.count else { break }
            let entry = entries[index]
            let isCurrent = document?.fileURL == entry.url
            // The open document's own state is the freshest; the others' is the query's.
            var mark = entry.hasUnresolvedConflicts ? "!" : " "
            if isCurrent, let document {
                if document.documentState.contains(.inConflict) {
                    mark = "!"
                } else if burstStarted || document.hasUnsavedChanges {
                    mark = "*"
                } else {
                    mark = " "
                }
            }
            let details = " \(Self.size(entry.size)) \(Self.age(of: entry.modificationDate, now: now))"
            let nameWidth = max(1, width - 1 - details.count)
            let name = Self.fit(entry.name, width: nameWidth)
            let line = mark + name + details
            let attributes: Int32 =
                index == selected ? (focus == .list ? Terminal.reverse : Terminal.bold) : 0
            terminal.draw(
                line, y: top + row, x: 0, width: width, attributes: attributes, pad: index == selected)
        }
    }

    /// `text` cut or padded with spaces to exactly `width` cells.
    static func fit(_ text: String, width: Int) -> String {
        var out = ""
        var used = 0
        for character in text {
            let cells = TextBuffer.width(of: character)
            if used + cells > width { break }
            out.append(character)
            used += cells
        }
        return out + String(repeating: " ", count: max(0, width - used))
    }

    static func size(_ bytes: Int64) -> String {
        let text: String
        switch bytes {
        case ..<1024: text = "\(bytes)B"
        case ..<(1024 * 1024): text = String(format: "%.1fK", Double(bytes) / 1024)
        case ..<(1024 * 1024 * 1024): text = String(format: "%.1fM", Double(bytes) / 1_048_576)
        default: text = String(format: "%.1fG", Double(bytes) / 1_073_741_824)
        }
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }

    static func age(of date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        let text: String
        switch seconds {
        case ..<60: text = "now"
        case ..<3600: text = "\(seconds / 60)m"
        case ..<86400: text = "\(seconds / 3600)h"
        default: text = "\(seconds / 86400)d"
        }
        return String(repeating: " ", count: max(0, 3 - text.count)) + text
    }

    /// Draws the text and returns where the cursor goes on screen.
    private func drawEditor(top: Int, height: Int, x: Int, width: Int) -> (Int, Int)? {
        guard document != nil || openFailure != nil || isLoading else {
            terminal.draw(
                container == nil ? "" : "  No document selected", y: top, x: x + 1, width: width - 1)
            return nil
        }
        if isLoading {
            terminal.draw("  Opening…", y: top, x: x + 1, width: width - 1)
            return nil
        }
        if let openFailure {
            terminal.draw("  Not opened:", y: top, x: x + 1, width: width - 1)
            var row = top + 1
            var rest = Substring(openFailure)
            while !rest.isEmpty, row < top + height {
                let piece = rest.prefix(max(1, width - 4))
                terminal.draw("  " + piece, y: row, x: x + 1, width: width - 1)
                rest = rest.dropFirst(piece.count)
                row += 1
            }
            return nil
        }
        let textX = x + 1
        let textWidth = max(1, width - 1)
        let cursor = buffer.cursor
        if cursor.line < self.top { self.top = cursor.line }
        if cursor.line >= self.top + height { self.top = cursor.line - height + 1 }
        let column = buffer.displayColumn(of: cursor)
        if column < left { left = max(0, column - textWidth / 4) }
        if column >= left + textWidth { left = column - textWidth + textWidth / 4 + 1 }
        var highlight: (line: Int, from: Int, to: Int)?
        if case .find(let query, _) = mode, !query.isEmpty, buffer.find(query, from: cursor) == cursor {
            var end = cursor
            end.offset += query.count
            highlight = (cursor.line, column, buffer.displayColumn(of: end))
        }
        for row in 0..<height {
            let index = self.top + row
            guard index < buffer.lines.count else { break }
            let visible = Self.visiblePart(of: buffer.lines[index], from: left, width: textWidth)
            terminal.draw(visible, y: top + row, x: textX, width: textWidth)
            if let highlight, highlight.line == index {
                let from = max(highlight.from, left)
                let to = min(highlight.to, left + textWidth)
                if to > from {
                    let part = Self.visiblePart(of: buffer.lines[index], from: from, width: to - from)
                    terminal.draw(
                        part, y: top + row, x: textX + from - left, width: to - from,
                        attributes: Terminal.reverse)
                }
            }
        }
        return (top + cursor.line - self.top, textX + column - left)
    }

    /// The cells of `line` from display column `start`, `width` wide; a wide character cut by
    /// the left edge becomes a space.
    static func visiblePart(of line: String, from start: Int, width: Int) -> String {
        var out = ""
        var column = 0
        let end = start + width
        for character in line {
            let cells = TextBuffer.width(of: character)
            defer { column += cells }
            if column + cells <= start { continue }
            if column >= end { break }
            if column < start {
                out += String(repeating: " ", count: column + cells - start)
                continue
            }
            if column + cells > end { break }
            out += TextBuffer.displayed(character)
        }
        return out
    }

    private func drawHistory(_ screen: HistoryScreen, top: Int, height: Int, x: Int, width: Int) {
        let name = document?.localizedName ?? ""
        terminal.draw(" Versions of “\(name)”", y: top, x: x + 1, width: width - 1, attributes: Terminal.bold)
        guard versions.isAvailable else {
            terminal.draw(
                " Version history is not available in this build:", y: top + 2, x: x + 1, width: width - 1)
            terminal.draw(" FileVersion cannot list versions yet.", y: top + 3, x: x + 1, width: width - 1)
            return
        }
        if let error = screen.error {
            terminal.draw(" " + error, y: top + 2, x: x + 1, width: width - 1)
            return
        }
        if screen.records.isEmpty {
            terminal.draw(" No earlier versions", y: top + 2, x: x + 1, width: width - 1)
            return
        }
        let listHeight = screen.preview == nil ? height - 2 : min(screen.records.count, max(3, height / 3))
        let first = max(0, screen.selection - listHeight + 1)
        for row in 0..<listHeight {
            let index = first + row
            guard index < screen.records.count else { break }
            let record = screen.records[index]
            let date = record.modificationDate.map(dateFormatter.string) ?? "unknown date"
            let program = record.savingProgram.map { " (\($0))" } ?? ""
            let conflict =
                record.isConflict ? (record.isResolved ? "  (conflict, resolved)" : "  (conflict)") : ""
            let line = " \(date)  on \(record.savingComputer ?? "unknown computer")\(program)\(conflict)"
            terminal.draw(
                line, y: top + 2 + row, x: x + 1, width: width - 1,
                attributes: index == screen.selection ? Terminal.reverse : 0, pad: index == screen.selection)
        }
        if let preview = screen.preview {
            let previewTop = top + 3 + listHeight
            terminal.draw(
                " Preview", y: previewTop - 1, x: x + 1, width: width - 1, attributes: Terminal.underline)
            for (row, line) in preview.prefix(max(0, top + height - previewTop)).enumerated() {
                terminal.draw(" " + line, y: previewTop + row, x: x + 1, width: width - 1)
            }
        }
    }

    private func drawConflict(_ screen: ConflictScreen, top: Int, height: Int, x: Int, width: Int) {
        let half = (width - 1) / 2
        let record = screen.records[screen.index]
        let versionDate = record.modificationDate.map(dateFormatter.string) ?? "unknown date"
        let fileDate = document?.fileModificationDate.map(dateFormatter.string) ?? "unknown date"
        let program = record.savingProgram.map { "\($0) on " } ?? ""
        // Each side: who wrote it, then where and when, on two lines so a narrow pane shows both.
        let version: (title: String, detail: String) =
            record.isFromThisComputer
            ? ("your unsaved text", "\(program)this computer, \(versionDate)")
            : (
                "from \(record.savingComputer ?? "another computer")",
                "\(program)\(record.savingComputer ?? "?"), \(versionDate)"
            )
        let file: (title: String, detail: String) =
            record.isFromThisComputer
            ? ("the file now", "as another program left it, \(fileDate)")
            : ("the file here", "on this computer, \(fileDate)")
        let fileLines = buffer.lines
        let (mine, theirs) =
            record.isFromThisComputer
            ? ((version, screen.versionLines), (file, fileLines))
            : ((file, fileLines), (version, screen.versionLines))
        let count = screen.records.count > 1 ? " \(screen.index + 1)/\(screen.records.count)" : ""
        terminal.draw(" Mine: \(mine.0.title)", y: top, x: x + 1, width: half - 1, attributes: Terminal.bold)
        terminal.draw(
            " Theirs: \(theirs.0.title)\(count)", y: top, x: x + half + 1, width: width - half - 1,
            attributes: Terminal.bold)
        terminal.draw(" (\(mine.0.detail))", y: top + 1, x: x + 1, width: half - 1)
        terminal.draw(" (\(theirs.0.detail))", y: top + 1, x: x + half + 1, width: width - half - 1)
        terminal.verticalLine(x: x + half, top: top, count: height)
        for row in 0..<max(0, height - 2) {
            let a = row < mine.1.count ? mine.1[row] : ""
            let b = row < theirs.1.count ? theirs.1[row] : ""
            let differs = a != b
            terminal.draw(
                " " + a, y: top + 2 + row, x: x + 1, width: half - 1, attributes: differs ? Terminal.bold : 0)
            terminal.draw(
                " " + b, y: top + 2 + row, x: x + half + 1, width: width - half - 1,
                attributes: differs ? Terminal.bold : 0)
        }
    }

    private func drawStatus(y: Int, width: Int) {
        var parts: [String] = []
        if let document {
            parts.append(document.localizedName)
            let edited = burstStarted || document.hasUnsavedChanges
            parts.append(isLoading ? "opening…" : edited ? "edited" : "saved")
            if let date = document.fileModificationDate {
                parts.append("saved \(timeFormatter.string(from: date))")
            }
            if document.isLocked { parts.append("read-only") }
            if document.documentState.contains(.inConflict) { parts.append("! in conflict: ^K resolves") }
            if document.documentState.contains(.savingError) && !document.isLocked {
                parts.append("saving failed")
            }
            let cursor = buffer.cursor
            parts.append("Ln \(cursor.line + 1), Col \(buffer.displayColumn(of: cursor) + 1)")
        }
        var line = " " + parts.joined(separator: " — ")
        if let message {
            // The message first, and the document's name, state and position still in sight.
            let brief = parts.count > 3 ? Array(parts.prefix(2)) + [parts[parts.count - 1]] : parts
            line = " " + message.text + (brief.isEmpty ? "" : "   [" + brief.joined(separator: " — ") + "]")
        }
        let attributes = message?.isError == true ? Terminal.reverse | Terminal.bold : Terminal.reverse
        terminal.draw(line, y: y, x: 0, width: width, attributes: attributes, pad: true)
    }

    /// Draws the help bar or the prompt; returns the cursor column when a prompt is showing.
    private func drawBottom(y: Int, width: Int) -> Int? {
        let prompt: String?
        switch mode {
        case .prompt(.newDocument, let text): prompt = " New document name: " + text
        case .prompt(.rename, let text): prompt = " Rename to: " + text
        case .find(let text, _): prompt = " Find: " + text
        case .confirmDelete:
            prompt = " Delete “\(document?.localizedName ?? "")”? It goes to the Deleted folder. (y/n) "
        case .history(let screen) where screen.confirmingRestore:
            prompt = " Replace the document with this version? (y/n) "
        default: prompt = nil
        }
        if let prompt {
            terminal.draw(prompt, y: y, x: 0, width: width, pad: true)
            let cells = prompt.reduce(0) { $0 + TextBuffer.width(of: $1) }
            return min(width - 1, cells)
        }
        let help: String
        switch mode {
        case .history: help = " ↑↓ Select  Enter Preview  r Restore  Esc Back"
        case .conflict: help = " m Keep mine  t Keep theirs  b Keep both  n Next  Esc Later"
        default:
            help =
                container == nil
                ? " ^Q Quit  ^Z Undo  ^Y Redo  ^F Find  ^S Save  ^H History"
                : " ^Q Quit  ^N New  ^R Rename  ^D Delete  ^Z Undo  ^Y Redo  ^F Find  ^S Save  ^H History  Tab List/Text"
        }
        terminal.draw(help, y: y, x: 0, width: width, pad: true)
        return nil
    }
}
