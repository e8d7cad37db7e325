import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

extension Editor {
    // MARK: - Keys

    func handle(_ keys: [Key]) {
        batchStarted = clock.now
        for key in keys { handle(key) }
        render()
    }

    private func handle(_ key: Key) {
        if pasted != nil || key == .pasteStart { return receivePaste(key) }
        if key == .resize { return resetNeedlessScrolling() }
        if key == .escape, isReplacingAll { return stopReplacingAll() }
        if case .mouse(let event) = key { return handleMouse(event) }
        if key == .control(17) {  // ^Q
            quit()
            return
        }
        // A message is news until the next key; an error stays until Esc acknowledges it.
        if let message, !message.isError, message.shown < (batchStarted ?? clock.now) {
            self.message = nil
        }
        if key == .escape, message?.isError == true, case .normal = mode {
            message = nil
            return
        }
        let cutLineBefore = lastWasCutLine
        lastWasCutLine = false
        switch mode {
        case .normal: handleNormal(key, afterCutLine: cutLineBefore)
        case .prompt(let kind, let text): handlePrompt(key, kind: kind, text: text)
        case .confirmDelete: handleConfirmDelete(key)
        case .find(let origin): handleFind(key, origin: origin)
        case .confirmReplace(let replacement): handleConfirmReplace(key, replacement: replacement)
        case .help(let scroll): handleHelp(key, scroll: scroll)
        case .history(let screen): handleHistory(key, screen: screen)
        case .conflict(let screen): handleConflict(key, screen: screen)
        case .syncPause(let screen): handleSyncPause(key, screen: screen)
        case .syncDetails(let scroll): handleSyncDetails(key, scroll: scroll)
        }
    }

    private func handleNormal(_ key: Key, afterCutLine: Bool) {
        switch key {
        case .function(1), .control(7):  // F1, ^G
            mode = .help(0)
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
        case .control(26), .meta("u"): undo()  // ^Z, M-U
        case .control(25), .meta("e"): redo()  // ^Y, M-E
        case .control(6):  // ^F
            guard document != nil else { return }
            commitBurst()
            focus = .editor
            search.needle = ""
            foundMatch = nil
            mode = .find(origin: buffer.cursor)
        case .control(28), .meta("r"):  // ^\, M-R
            guard document != nil else { return }
            commitBurst()
            focus = .editor
            mode = .prompt(.replaceWhat, buffer.selection.map { buffer.text(in: $0) } ?? search.needle)
        case .meta("w"): findAgain(backwards: false)
        case .meta("q"): findAgain(backwards: true)
        case .control(12), .control(31):  // ^L, ^_
            guard document != nil else { return }
            commitBurst()
            focus = .editor
            mode = .prompt(.goToLine, "")
        case .control(19): saveNow()  // ^S
        case .control(8): showHistory()  // ^H
        case .control(20): showConflicts()  // ^T
        case .function(5): syncNow()  // F5
        case .function(7):  // F7
            commitBurst()
            message = nil
            mode = .syncDetails(0)
        case .meta("s"):
            softWrap.toggle()
            topRow = 0
            left = 0
            show(softWrap ? "Soft wrap on: long lines wrap at the window's edge" : "Soft wrap off")
        case .meta("n"):
            showsLineNumbers.toggle()
        case .function(6), .backTab:
            switchPanes()
        case .tab where container != nil && focus == .list:
            switchPanes()
        case .escape where focus == .editor:
            if buffer.selection != nil {
                buffer.clearSelection()
            } else if container != nil {
                switchPanes()
            }
        default:
            if focus == .list { handleList(key) } else { handleEditing(key, afterCutLine: afterCutLine) }
        }
    }

    private func switchPanes() {
        guard container != nil else { return }
        commitBurst()
        focus = focus == .list ? .editor : .list
        if focus == .list { sortList() }
    }

    private func handleList(_ key: Key) {
        guard !entries.isEmpty else { return }
        let current = entries.firstIndex { $0.url == selectedURL } ?? 0
        var next = current
        let page = max(1, bodyHeight)
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
        case .meta(let character): return showUnboundAlt(character)
        default: return
        }
        next = min(max(0, next), entries.count - 1)
        select(entries[next].url)
    }

    private func handleEditing(_ key: Key, afterCutLine: Bool) {
        if let (movement, modifiers) = key.movement { return move(movement, modifiers) }
        switch key {
        case .enter: type("\n")
        case .tab: type("\t")
        case .backspace: edit { if $0.deleteSelection() == nil { $0.deleteBackward() } }
        case .delete: edit { if $0.deleteSelection() == nil { $0.deleteForward() } }
        case .character(let character): type(String(character))
        case .control(1): move(.home, [])  // ^A
        case .control(5): move(.end, [])  // ^E
        case .meta("b"): move(.left, .alt)
        case .meta("f"): move(.right, .alt)
        case .meta("\\"): move(.home, .control)
        case .meta("/"): move(.end, .control)
        case .meta("a"):
            commitBurst()
            buffer.selectAll()
        case .control(3): copySelection()  // ^C
        case .control(24): cutSelection()  // ^X
        case .control(22), .control(21): paste()  // ^V, ^U
        case .control(11): cutLine(appending: afterCutLine)  // ^K
        case .meta(let character): showUnboundAlt(character)
        default: break
        }
    }

    /// Alt with a letter ste has no command for: said, never typed.
    private func showUnboundAlt(_ character: Character) {
        show("Alt+\(character.uppercased()) does nothing here: F1 or ^G lists the keys")
    }

    /// Typing: replaces the selection, if any.
    private func type(_ text: String) {
        edit {
            $0.deleteSelection()
            $0.insert(text)
        }
    }

    /// A movement key: with Shift it extends the selection; with Ctrl or Alt, Left and Right go
    /// by words, and with Ctrl, Home and End go to the start and end of the document.
    func move(_ movement: Key.Movement, _ modifiers: Key.Modifiers) {
        // A text view ends its typing group when the insertion point moves.
        commitBurst()
        if modifiers.contains(.shift) { buffer.extendSelection() } else { buffer.clearSelection() }
        let byWord = !modifiers.isDisjoint(with: [.control, .alt])
        switch movement {
        case .up: return moveRows(by: -1)
        case .down: return moveRows(by: 1)
        case .pageUp: return movePage(by: -1)
        case .pageDown: return movePage(by: 1)
        case .left: byWord ? buffer.moveWordLeft() : buffer.moveLeft()
        case .right: byWord ? buffer.moveWordRight() : buffer.moveRight()
        case .home: modifiers.contains(.control) ? buffer.moveToDocumentStart() : buffer.moveToLineStart()
        case .end: modifiers.contains(.control) ? buffer.moveToDocumentEnd() : buffer.moveToLineEnd()
        }
        goalCells = nil
    }

    /// Applies `change` to the text as part of the typing burst; false when the text takes no
    /// edits now (the reason is on the status line).
    @discardableResult
    func edit(_ change: (inout TextBuffer) -> Void) -> Bool {
        guard let document, isEditable else {
            let reason =
                openFailure
                ?? (isLoading
                    ? "Still opening…"
                    : self.document == nil ? "No document: ^N creates one" : "Renaming… a moment")
            show(reason, isError: true)
            return false
        }
        guard !document.documentState.contains(.editingDisabled) else {
            show("The document cannot be edited right now", isError: true)
            return false
        }
        guard !isReplacingAll else {
            show("Replacing… the text takes no edits until it is done (Esc stops it)", isError: true)
            return false
        }
        change(&buffer)
        goalCells = nil
        if !burstStarted { document.objectDidBeginEditing(self) }
        burstStarted = true
        lastEdit = clock.now
        return true
    }

    /// Applies `change` as an undo step of its own: a paste, a cut, a replacement.
    @discardableResult
    func editAsOneStep(_ change: (inout TextBuffer) -> Void) -> Bool {
        commitBurst()
        let changed = edit(change)
        commitBurst()
        return changed
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

    // MARK: - Prompts

    private func handlePrompt(_ key: Key, kind: PromptKind, text: String) {
        switch key {
        case .escape, .control(7):
            mode = .normal
            foundMatch = nil
        case .backspace:
            mode = .prompt(kind, String(text.dropLast()))
        case .character(let character):
            mode = .prompt(kind, text + String(character))
        case .meta("c") where kind == .replaceWhat:
            search.isCaseSensitive.toggle()
        case .meta("o") where kind == .replaceWhat:
            search.matchesWholeWords.toggle()
        case .enter:
            mode = .normal
            switch kind {
            case .newDocument: createDocument(named: text)
            case .rename: renameDocument(to: text)
            case .goToLine: goToLine(text)
            case .replaceWhat:
                guard !text.isEmpty else { return }
                search.needle = text
                mode = .prompt(.replaceWith(text), "")
            case .replaceWith: startReplacing(with: text)
            }
        default: break
        }
    }

    /// Moves to "LINE" or "LINE:COLUMN" (columns as the status line counts them), with the
    /// line in the middle of the screen.
    private func goToLine(_ text: String) {
        let numbers = text.split(separator: ":", omittingEmptySubsequences: false).map {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
        guard let first = numbers.first, let line = first, numbers.count <= 2 else {
            return show("Go to: a line number, or line:column", isError: true)
        }
        let column = numbers.count == 2 ? (numbers[1] ?? 1) : 1
        let index = min(max(0, line - 1), buffer.lines.count - 1)
        buffer.clearSelection()
        buffer.move(
            to: TextBuffer.Position(
                line: index,
                offset: TextBuffer.offset(forDisplayColumn: max(0, column - 1), in: buffer.lines[index])))
        goalCells = nil
        top = max(0, index - bodyHeight / 2)
        topRow = 0
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

    /// Renames the open document without closing it: its undo history stays. What is unsaved
    /// is saved first, and the move is coordinated (off the main actor, where the document
    /// answers it as a presenter), so the document follows its file.
    private func renameDocument(to name: String) {
        guard let container, let renaming = document else { return }
        do {
            _ = try TextContainer.validatedName(name)
        } catch {
            return show(error)
        }
        commitBurst()
        isEditable = false
        Task { @MainActor in
            defer { self.render() }
            if renaming.hasUnsavedChanges, await !renaming.save(to: renaming.fileURL, for: .forOverwriting) {
                self.isEditable = renaming === self.document
                return self.show(self.describe(renaming.lastError, opening: nil), isError: true)
            }
            let from = renaming.fileURL
            let renamed: URL
            do {
                renamed = try await Task.detached { try container.renameDocument(at: from, to: name) }.value
            } catch {
                self.isEditable = renaming === self.document
                return self.show(error)
            }
            // The document learns of the move on the main actor's next turns.
            for _ in 0..<200 where renaming.fileURL.standardizedFileURL != renamed.standardizedFileURL {
                try? await Task.sleep(for: .milliseconds(10))
            }
            guard renaming === self.document else { return }
            self.isEditable = true
            self.updateListing(removing: from, adding: renamed)
            self.selectedURL = renamed
            self.show("Renamed to “\(renamed.deletingPathExtension().lastPathComponent)”")
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
                let trashed = try TextContainer.moveToTrash(deleting.fileURL)
                self.updateListing(removing: deleting.fileURL, adding: nil)
                self.show(
                    "Moved “\(deleting.localizedName)” to the trash (\(trashed.deletingLastPathComponent().path))"
                )
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

    // MARK: - Find and replace

    private func handleFind(_ key: Key, origin: TextBuffer.Position) {
        switch key {
        case .escape, .control(7):
            cancelSearch()
            buffer.move(to: origin)
            foundMatch = nil
            mode = .normal
        case .enter:
            mode = .normal
            foundMatch = nil
        case .control(6), .down:  // the next match
            findAgain(backwards: false)
        case .up:
            findAgain(backwards: true)
        case .meta("c"):
            search.isCaseSensitive.toggle()
            lookUp(from: origin, backwards: false, origin: origin)
        case .meta("o"):
            search.matchesWholeWords.toggle()
            lookUp(from: origin, backwards: false, origin: origin)
        case .backspace:
            search.needle = String(search.needle.dropLast())
            lookUp(from: origin, backwards: false, origin: origin)
        case .character(let character):
            search.needle += String(character)
            lookUp(from: origin, backwards: false, origin: origin)
        default: break
        }
    }

    /// The next (or previous) match from the cursor, from the find prompt or with M-W and M-Q.
    func findAgain(backwards: Bool) {
        guard document != nil, !search.needle.isEmpty else {
            return show("Nothing to find: ^F asks what to look for")
        }
        commitBurst()
        var from = foundMatch?.lowerBound ?? buffer.cursor
        if !backwards { from.offset += 1 }
        lookUp(from: from, backwards: backwards, origin: nil)
    }

    /// Looks for ``search`` off the main actor, so that a 20 MiB document never stops the keys,
    /// and moves to what it finds; a newer search cancels this one.
    func lookUp(from start: TextBuffer.Position, backwards: Bool, origin: TextBuffer.Position?) {
        cancelSearch()
        let search = self.search
        guard !search.needle.isEmpty else {
            foundMatch = nil
            if let origin { buffer.move(to: origin) }
            return
        }
        let lines = buffer.lines
        let work = Task.detached(priority: .userInitiated) {
            search.firstMatch(in: lines, from: start, backwards: backwards) { Task.isCancelled }
        }
        searchWork = Task { @MainActor [weak self] in
            let found = await withTaskCancellationHandler {
                await work.value
            } onCancel: {
                work.cancel()
            }
            guard let self, !Task.isCancelled, search == self.search else { return }
            self.foundMatch = found
            if let found {
                self.buffer.clearSelection()
                self.buffer.move(to: found.lowerBound)
                self.goalCells = nil
            } else {
                if let origin { self.buffer.move(to: origin) }
                self.show("“\(search.needle)” not found\(Self.describe(search))", isError: true)
            }
            if case .confirmReplace = self.mode, found == nil { self.mode = .normal }
            self.render()
        }
    }

    private func cancelSearch() {
        searchWork?.cancel()
        searchWork = nil
    }

    /// The settings a search used, for its messages: " (case-sensitive, whole words)".
    static func describe(_ search: TextSearch) -> String {
        let settings = [
            search.isCaseSensitive ? "case-sensitive" : nil, search.matchesWholeWords ? "whole words" : nil,
        ]
        .compactMap { $0 }
        return settings.isEmpty ? "" : " (" + settings.joined(separator: ", ") + ")"
    }

    /// Replace's questions are answered: asks at each match from the cursor.
    private func startReplacing(with replacement: String) {
        mode = .confirmReplace(replacement: replacement)
        foundMatch = nil
        lookUp(from: buffer.cursor, backwards: false, origin: nil)
    }

    private func handleConfirmReplace(_ key: Key, replacement: String) {
        switch key {
        case .character("y"), .character("Y"), .enter:
            guard let match = foundMatch else { return }
            editAsOneStep { $0.replace(match, with: replacement) }
            foundMatch = nil
            lookUp(from: buffer.cursor, backwards: false, origin: nil)
        case .character("n"), .character("N"):
            findAgain(backwards: false)
        case .character("a"), .character("A"):
            replaceAll(with: replacement)
        case .escape, .control(7):
            cancelSearch()
            foundMatch = nil
            mode = .normal
        default: break
        }
    }

    /// Replaces every match in the document, off the main actor, as one undo step; Esc stops
    /// it with nothing changed. Movement keys work meanwhile; edits wait.
    private func replaceAll(with replacement: String) {
        cancelSearch()
        commitBurst()
        mode = .normal
        foundMatch = nil
        let search = self.search
        let lines = buffer.lines
        isReplacingAll = true
        show("Replacing all “\(search.needle)”… (Esc stops)")
        // The document's text is built off the main actor too: joining 20 MiB of lines is
        // most of what applying the result would cost there.
        let work = Task.detached(priority: .userInitiated) {
            () -> (lines: [String], text: String, count: Int)? in
            guard
                let result = search.replacingAll(
                    in: lines, with: replacement, isCancelled: { Task.isCancelled })
            else { return nil }
            return (result.lines, result.lines.joined(separator: "\n"), result.count)
        }
        searchWork = Task { @MainActor [weak self] in
            let result = await withTaskCancellationHandler {
                await work.value
            } onCancel: {
                work.cancel()
            }
            guard let self else { return }
            self.isReplacingAll = false
            guard !Task.isCancelled, let result else {
                self.show("Replace all stopped: nothing was replaced")
                return self.render()
            }
            guard result.count > 0 else {
                self.show("“\(search.needle)” not found\(Self.describe(search))", isError: true)
                return self.render()
            }
            // One undo step: the burst was committed before the replace began, and edits
            // waited for it.
            if self.edit({ $0.replaceLines(result.lines) }) { self.commitBurst(text: result.text) }
            let times = result.count == 1 ? "1 match" : "\(result.count) matches"
            self.show("Replaced \(times) of “\(search.needle)”: ^Z undoes them all")
            self.render()
        }
    }

    /// Esc while a replace-all runs stops it.
    func stopReplacingAll() {
        guard isReplacingAll else { return }
        cancelSearch()
        isReplacingAll = false
        show("Replace all stopped: nothing was replaced")
    }
}
