import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

extension Editor {
    // MARK: - Versions

    func showHistory() {
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

    func handleHistory(_ key: Key, screen: HistoryScreen) {
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

    /// Puts an earlier version's text in the document as one undoable change, saved at once:
    /// the save keeps the text it replaces in the history, and ^Z brings it back. A version
    /// that is not UTF-8 text is restored as a file instead (which empties the undo history).
    private func restore(_ record: VersionRecord) {
        guard let document else { return }
        commitBurst()
        let date = record.modificationDate.map(dateFormatter.string) ?? "an earlier time"
        let text: String?
        do {
            text = try versions.text(of: record)
        } catch {
            return show(error)
        }
        guard let text else { return restoreFile(record, date: date) }
        guard editAsOneStep({ $0.replaceText(text) }) else { return }
        Task { @MainActor in
            if await document.save(to: document.fileURL, for: .forOverwriting) {
                self.show("Restored the version of \(date): ^Z undoes it")
            }
            self.render()
        }
    }

    private func restoreFile(_ record: VersionRecord, date: String) {
        guard let document else { return }
        Task { @MainActor in
            do {
                // Coordinated: the document saves what is unsaved first, and the restore keeps
                // the contents it replaces in the history.
                try await self.versions.restore(record, over: document.fileURL)
                _ = await document.revert(toContentsOf: document.fileURL)
                self.buffer = TextBuffer(text: document.documentText)
                self.show("Restored the version of \(date)")
            } catch {
                self.show(error)
            }
            self.render()
        }
    }

    func showConflicts() {
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
            mode = .conflict(
                compared(ConflictScreen(records: records, versionLines: try lines(of: records[0]))))
        } catch {
            show(error)
        }
    }

    /// `screen` with the shown version's lines read again and compared with the text now,
    /// scrolled to the first difference (two lines before it, for context).
    func compared(_ screen: ConflictScreen) -> ConflictScreen {
        var screen = screen
        let record = screen.records[screen.index]
        screen.versionLines = (try? lines(of: record)) ?? []
        screen.fileLines = buffer.lines
        screen.comparison =
            record.isFromThisComputer
            ? ConflictComparison(mine: screen.versionLines, theirs: screen.fileLines)
            : ConflictComparison(mine: screen.fileLines, theirs: screen.versionLines)
        screen.scroll = max(0, screen.comparison.firstDifference - 2)
        return screen
    }

    func lines(of record: VersionRecord) throws -> [String] {
        try versions.text(of: record).map { TextBuffer(text: $0).lines } ?? ["(not UTF-8 text)"]
    }

    func handleConflict(_ key: Key, screen: ConflictScreen) {
        var screen = screen
        let shown = screen.records[screen.index]
        switch key {
        case .escape:
            mode = .normal
        case .character("n"):
            screen.index = (screen.index + 1) % screen.records.count
            mode = .conflict(compared(screen))
        case .up, .down, .pageUp, .pageDown, .home, .end:
            let page = max(1, conflictBodyHeight - 1)
            let last = max(0, screen.comparison.rows.count - conflictBodyHeight)
            switch key {
            case .up: screen.scroll -= 1
            case .down: screen.scroll += 1
            case .pageUp: screen.scroll -= page
            case .pageDown: screen.scroll += page
            case .home: screen.scroll = 0
            default: screen.scroll = last
            }
            screen.scroll = max(0, min(last, screen.scroll))
            mode = .conflict(screen)
        case .character("e"):
            merge(shown)
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

    /// Merges the conflict shown into the text (``TextContainer/merge(_:of:current:fileDate:)``)
    /// as one undo step, saves it, and resolves the conflict: parts both sides changed stay
    /// marked in the text, and both sides stay in the history.
    private func merge(_ record: VersionRecord) {
        guard let document, let version = record.version else { return }
        commitBurst()
        let merged: ConflictMerge
        do {
            merged = try TextContainer.merge(
                version, of: document.fileURL, current: document.documentText,
                fileDate: document.fileModificationDate)
        } catch let error as ConflictMergeError {
            return show("Cannot merge: \(error.reason); m, t or b keeps a side", isError: true)
        } catch {
            return show(error)
        }
        mode = .normal
        if merged.text != document.documentText {
            guard editAsOneStep({ $0.replaceText(merged.text) }) else { return }
        }
        Task { @MainActor in
            do {
                guard await document.save(to: document.fileURL, for: .forOverwriting) else {
                    throw document.lastError
                        ?? DocumentKitError(.ioFailure, operation: "save the merge of", url: document.fileURL)
                }
                try await self.versions.resolve(record, of: document.fileURL, keeping: .currentItem)
                self.finishResolving(document, merged: merged)
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

    private func finishResolving(
        _ document: SimpleTextDocument, copy: URL? = nil, merged: ConflictMerge? = nil
    ) {
        let remaining = (try? versions.unresolvedConflicts(of: document.fileURL)) ?? []
        var done =
            "Conflict resolved"
            + (copy.map { " (the other side is “\($0.deletingPathExtension().lastPathComponent)”)" } ?? "")
        if let merged { done = merged.summary + " (^Z undoes)" }
        if remaining.isEmpty {
            show(done, untilKey: merged.map { $0.markedParts > 0 } ?? false)
        } else {
            show("\(done); \(remaining.count) more")
            showConflicts()
        }
    }
}
