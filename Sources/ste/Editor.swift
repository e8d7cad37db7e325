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

    enum PromptKind: Equatable {
        case newDocument, rename, goToLine
        /// Replace's first question, what to look for, then its second, what to put instead.
        case replaceWhat
        case replaceWith(String)
    }

    /// What the internal clipboard holds: text, and whether it is whole lines cut with ^K,
    /// which paste as lines above the cursor's line.
    struct Clipboard {
        var text: String
        var isWholeLines: Bool
    }

    struct HistoryScreen {
        var records: [VersionRecord]
        var selection = 0
        var preview: [String]?
        var confirmingRestore = false
        var error: String?
    }

    /// One conflict at a time: the file against one unresolved conflict version, side by
    /// side and lined up with the differing lines highlighted, each side labelled with who
    /// wrote it and when; `m`, `t`, `b` and `e` act on this version only.
    struct ConflictScreen {
        var records: [VersionRecord]
        var index = 0
        /// The conflict version's text, as lines.
        var versionLines: [String]
        /// The file's text the comparison was made with, as lines.
        var fileLines: [String] = []
        /// Mine and theirs side by side.
        var comparison = ConflictComparison(mine: [], theirs: [])
        /// The first row of the comparison shown.
        var scroll = 0
    }

    /// A paused sync's question: what it would delete, scrolled down by ``scroll`` names.
    struct SyncPauseScreen {
        var pause: SyncPause
        var scroll = 0
    }

    enum Mode {
        case normal
        case prompt(PromptKind, String)
        case confirmDelete
        /// Find: the query is ``search``'s needle; Esc goes back to `origin`.
        case find(origin: TextBuffer.Position)
        /// Replace, asking at each match (``foundMatch``) whether to replace it.
        case confirmReplace(replacement: String)
        /// The help screen, scrolled down by this many lines.
        case help(Int)
        case history(HistoryScreen)
        case conflict(ConflictScreen)
        /// Sync is paused (F5): `d` deletes them, `k` keeps them, Esc asks later.
        case syncPause(SyncPauseScreen)
        /// Everything sync says (F7), scrolled down by this many lines.
        case syncDetails(Int)
    }

    /// Edits closer together than this form one undo step.
    static let burstPause: Duration = .seconds(1)
    /// How often the list is redrawn when nothing else redraws it, so that ages stay current.
    static let ageRedrawInterval: Duration = .seconds(5)

    let terminal: Terminal
    let container: TextContainer?
    let versions: any VersionSource
    let clock = ContinuousClock()

    /// The container's documents, newest first, as the live query last reported them (with
    /// ste's own creations, renames and deletions applied at once, until the query reports them).
    private(set) var entries: [TextContainerEntry] = []
    /// The live query behind ``entries``; nil for a single file, or when it could not start.
    private var query: DocumentQuery?
    /// Whether the list holds a first listing yet.
    private(set) var isListed = false
    var selectedURL: URL?
    var listTop = 0
    var focus: Focus
    var mode: Mode = .normal

    var document: SimpleTextDocument?
    var buffer = TextBuffer(text: "")
    var isEditable = false
    private(set) var isLoading = false
    private(set) var openFailure: String?
    var openGeneration = 0
    var top = 0
    var left = 0

    /// What find and replace look for, with their case and whole-word settings.
    var search = TextSearch("")
    /// The match find or replace shows, highlighted; nil when none.
    var foundMatch: Range<TextBuffer.Position>?
    /// The find or replace-all running off the main actor, cancelled by a newer one or Esc.
    var searchWork: Task<Void, Never>?
    /// Whether a replace-all is running: the text takes no edits until it ends.
    var isReplacingAll = false
    var clipboard: Clipboard?
    /// Whether the last command was ^K: another ^K adds its line to the clipboard, as nano's.
    var lastWasCutLine = false
    /// The text of a bracketed paste while it arrives; nil when none is arriving.
    var pasted: String?
    /// Where a mouse press started a selection, while the button is held.
    var mouseAnchor: TextBuffer.Position?
    /// Whether long lines wrap at the pane's width (on by default: documents are prose).
    var softWrap = true
    /// How many rows of the conflict screen's comparison were shown last: its page.
    var conflictBodyHeight = 10
    var showsLineNumbers = false
    /// The wrapped row of line ``top`` that the screen starts with.
    var topRow = 0
    /// The cell within its screen row that up and down movement aims for.
    var goalCells: Int?
    /// The screen rows of lines lately laid out, by line: a long line is wrapped once, not at
    /// every step through it nor at every key typed elsewhere, until its text, the width or
    /// soft wrap changes.
    var rowCache: [Int: CachedRows] = [:]
    /// The rows the screen shows, as last drawn, so a mouse click finds its character.
    var drawnRows: [ScreenRow] = []
    /// When the batch of keys being handled arrived: a message shown before it clears.
    var batchStarted: ContinuousClock.Instant?

    var burstStarted = false
    var lastEdit: ContinuousClock.Instant?
    var message: (text: String, isError: Bool, shown: ContinuousClock.Instant, untilKey: Bool)?
    private var isQuitting = false
    private var quitWithoutSavingArmed = false
    /// The conflict versions the conflict screen has been opened for: a new one opens it again.
    var offeredConflicts: Set<String> = []
    private var lastConflictCheck: ContinuousClock.Instant?
    /// A read-only document with unsaved changes was asked to quit once: ^Q again quits.
    private var quitKeepingChangesArmed = false
    var lastRender: ContinuousClock.Instant?
    var renderedStatus: DocumentStatus?
    /// The ubiquity container the list shows, when the container is one; nil otherwise.
    var ubiquity: UbiquityContainer?
    /// What the container's sync agent last published, and the status file's change time
    /// when it was read.
    var syncStatus: UbiquityStatus?
    var syncStatusStamp: FileStatus.Timestamp?
    /// The sync pauses the status line has announced: a new one is announced again.
    var announcedPauses: Set<String> = []
    /// Whether the container's agent runs, as last looked (once a second): its status file
    /// says what it last did, and stays when it stops or dies.
    var agentRuns = false
    var lastAgentLook: ContinuousClock.Instant?
    /// When ste last started the agent (as it opened the container, or on F5): until it
    /// runs, the status line says it is starting, and one that never does is said to have
    /// failed, with the last line of its log.
    var agentStartAsked: ContinuousClock.Instant?

    /// What the list mark and the status line show of the open document: a change redraws.
    struct DocumentStatus: Equatable {
        var url: URL
        var isEdited: Bool
        var state: UInt
        var saved: Date?
    }

    let timeFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }()
    let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }()
    /// How long a message that is not an error stays on the status line with no key pressed
    /// (the next key clears it too); an error stays until Esc acknowledges it.
    static let messageDuration: Duration = .seconds(4)

    /// How long after the last change the shown document saves by itself.
    let autosaveDelay: Duration

    init(
        terminal: Terminal, container: TextContainer?, versions: any VersionSource,
        autosaveDelay: Duration = AutosaveConfiguration().quietDelay
    ) {
        self.terminal = terminal
        self.autosaveDelay = autosaveDelay
        self.container = container
        self.versions = versions
        focus = container == nil ? .editor : .list
    }

    // MARK: - Starting

    /// Starts the live list of the container; its newest document opens once it is listed.
    func start() {
        guard let container else { return }
        // A ubiquity container is synced by its agent: started now if none runs.
        ubiquity = UbiquityAgent.start(forContainerAt: container.url)
        if ubiquity != nil, UbiquityAgent.startsAgents { agentStartAsked = clock.now }
        refreshSyncStatus()
        followAgent()
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
        if let message, !message.isError, !message.untilKey,
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
        if followAgent() {
            render()
        }
        if refreshSyncStatus() {
            followSyncPause()
            render()
        } else if let lastRender, clock.now - lastRender >= Self.ageRedrawInterval {
            render()
        } else if documentStatus != renderedStatus {
            render()
        }
    }

    /// Opens the conflict screen when the open document has a conflict version the screen
    /// has not been opened for: a second conflict while the editor stays open is offered too,
    /// so its keys are never typed into the text.
    private func offerNewConflicts() {
        guard let document, isEditable,
            lastConflictCheck.map({ clock.now - $0 >= .milliseconds(300) }) ?? true
        else { return }
        if case .conflict(let screen) = mode {
            closeConflictsResolvedElsewhere(screen, of: document)
            return
        }
        guard document.documentState.contains(.inConflict), case .normal = mode else { return }
        lastConflictCheck = clock.now
        guard let records = try? versions.unresolvedConflicts(of: document.fileURL),
            records.contains(where: { !offeredConflicts.contains($0.id ?? "") })
        else { return }
        showConflicts()
        render()
    }

    /// The conflict screen shows only conflicts still unresolved: one resolved on another
    /// device (or by another program) leaves it, and the screen closes when none is left, so
    /// its keys never act on a conflict that is gone.
    private func closeConflictsResolvedElsewhere(_ screen: ConflictScreen, of document: SimpleTextDocument) {
        lastConflictCheck = clock.now
        guard let records = try? versions.unresolvedConflicts(of: document.fileURL) else { return }
        let open = Set(records.compactMap(\.id))
        let remaining = screen.records.filter { open.contains($0.id ?? "") }
        guard remaining.count != screen.records.count else {
            // The text changed under the screen (sync brought another version): compared again.
            if screen.fileLines != buffer.lines {
                mode = .conflict(compared(screen))
                render()
            }
            return
        }
        if remaining.isEmpty {
            mode = .normal
            // The screen the user looked at closed under them: why stays until a key.
            show("The conflict was resolved elsewhere", untilKey: true)
        } else {
            var screen = screen
            let shownID = screen.records[screen.index].id
            screen.records = remaining
            screen.index = remaining.firstIndex { $0.id == shownID } ?? 0
            mode = .conflict(compared(screen))
        }
        render()
    }

    var documentStatus: DocumentStatus? {
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
        entries = holdsListOrder ? Self.inOrder(of: entries, listing) : listing
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

    /// While the user is in a document, the list keeps its order (the document typed into
    /// would otherwise climb to the top at each autosave, and the rows move under the next
    /// Up or Down); it is sorted again as the user leaves the document for the list.
    var holdsListOrder: Bool { focus == .editor && document != nil }

    /// `listing` in the order `previous` had, new entries first (the newest), in their own
    /// order.
    static func inOrder(of previous: [TextContainerEntry], _ listing: [TextContainerEntry])
        -> [TextContainerEntry]
    {
        var rank: [URL: Int] = [:]
        for (index, entry) in previous.enumerated() where rank[entry.url] == nil { rank[entry.url] = index }
        return listing.enumerated().sorted { a, b in
            let (rankA, rankB) = (rank[a.element.url] ?? -1, rank[b.element.url] ?? -1)
            return rankA != rankB ? rankA < rankB : a.offset < b.offset
        }
        .map(\.element)
    }

    /// Sorts the list as the container does, newest first: when the user leaves a document.
    func sortList() {
        let sorted = entries.sorted(by: TextContainer.isNewer)
        guard sorted.map(\.url) != entries.map(\.url) else { return }
        entries = sorted
        render()
    }

    /// Shows ste's own change at once, rather than when the query reports it: the entry at
    /// `oldURL` (if any) leaves the list and the document at `newURL` (if any) takes its place.
    func updateListing(removing oldURL: URL?, adding newURL: URL?) {
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

    func select(_ url: URL) {
        selectedURL = url
        open(url)
    }

    func open(_ url: URL) {
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
        shown.autosaveConfiguration.quietDelay = autosaveDelay
        shown.autosaveConfiguration.maximumDelay = max(
            shown.autosaveConfiguration.maximumDelay, autosaveDelay)
        shown.delegate = self
        document = shown
        buffer = TextBuffer(text: "")
        isEditable = false
        isLoading = true
        openFailure = nil
        top = 0
        topRow = 0
        left = 0
        foundMatch = nil
        return shown
    }

    func create(_ url: URL) {
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
                // Until the next key, like the news of a conflict resolved elsewhere: four
                // seconds can pass unseen by a user who looks away (and by a test on a loaded
                // machine, which missed it in CI).
                self.show("Created “\(creating.localizedName)”", untilKey: true)
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

    /// Makes the typing burst in progress one undoable change of the document; `text`, when
    /// given, is the buffer's text already joined.
    func commitBurst(text: String? = nil) {
        guard burstStarted else { return }
        burstStarted = false
        lastEdit = nil
        guard let document, let undo = document.undoManager else { return }
        document.objectDidEndEditing(self)
        // An explicit group closes now, so the change counts at once (for a save or a quit
        // in this same turn) rather than when the main queue's turn ends.
        let grouping = undo.groupingLevel == 0
        if grouping { undo.beginUndoGrouping() }
        document.documentText = text ?? buffer.text
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

    /// Shows `text` on the status line: for ``messageDuration`` or until the next key, or,
    /// `untilKey`, until the next key only (news the user must not miss by looking away).
    func show(_ text: String, isError: Bool = false, untilKey: Bool = false) {
        message = (text, isError, clock.now, untilKey)
    }

    func show(_ error: any Error) {
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
                    "“\(name)” was changed by another program: theirs is shown, your unsaved text is kept (^T)"
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

    // MARK: - Quitting

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
}
