import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

extension Editor {
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
            // In a ubiquity container, a cell for the sync state; a transfer's percent stands
            // in for the age while it goes.
            let sync = ubiquity == nil ? "" : (entry.sync ?? .synced).symbol
            var age = Self.age(of: entry.modificationDate, now: now)
            switch entry.sync {
            case .uploading(let percent?), .downloading(let percent?):
                age = String(format: "%3.0f%%", percent)
            default: break
            }
            let details = " \(Self.size(entry.size)) \(age)"
            let nameWidth = max(1, width - 1 - sync.count - details.count)
            let name = Self.fit(entry.name, width: nameWidth)
            let line = mark + sync + name + details
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
        if let sync = syncSummary { parts.append(sync) }
        var line = " " + parts.joined(separator: " — ")
        if let message {
            // The message first, and the document's name, state and position still in sight.
            let withoutSync = syncSummary == nil ? parts : Array(parts.dropLast())
            let brief =
                withoutSync.count > 3
                ? Array(withoutSync.prefix(2)) + [withoutSync[withoutSync.count - 1]] : withoutSync
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
                : ubiquity == nil
                    ? " ^Q Quit  ^N New  ^R Rename  ^D Delete  ^Z Undo  ^Y Redo  ^F Find  ^S Save  ^H History  Tab List/Text"
                    : " ^Q Quit  ^N New  ^R Rename  ^D Delete  ^Z Undo  ^Y Redo  ^F Find  ^S Save  ^H History  F5 Sync  Tab List/Text"
        }
        terminal.draw(help, y: y, x: 0, width: width, pad: true)
        return nil
    }
}
