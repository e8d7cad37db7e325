import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

extension Editor {
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
        case .function(5): syncNow()  // F5
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
}
