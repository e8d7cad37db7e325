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
            mode = .conflict(ConflictScreen(records: records, versionLines: try lines(of: records[0])))
        } catch {
            show(error)
        }
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
}
