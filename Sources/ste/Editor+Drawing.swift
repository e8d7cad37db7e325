import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

extension Editor {
    // MARK: - Drawing

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
        let bodyHeight = self.bodyHeight
        // A page over the whole screen: the help, or what sync says in full.
        var page: (title: String, draw: () -> Void)?
        switch mode {
        case .syncDetails(let scroll):
            page = (
                " Sync — what it says, in full",
                { self.drawSyncDetails(scroll: scroll, top: bodyTop, height: bodyHeight, width: width) }
            )
        case .help(let scroll):
            page = (
                " Help — every key of ste",
                { self.drawHelp(scroll: scroll, top: bodyTop, height: bodyHeight, width: width) }
            )
        default: page = nil
        }
        if let page {
            terminal.draw(page.title, y: 0, x: 0, width: width, attributes: Terminal.reverse, pad: true)
            page.draw()
            drawStatus(y: height - 1 - helpBarHeight, width: width)
            _ = drawBottom(y: height - helpBarHeight, width: width)
            terminal.hideCursor()
            terminal.refresh()
            return
        }
        var editorX = 0
        var isConflict = false
        if case .conflict = mode { isConflict = true }
        // The conflict screen takes the whole width: two texts side by side need it.
        if container != nil && !isConflict {
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
        case .syncPause(let screen):
            drawSyncPause(screen, top: bodyTop, height: bodyHeight, x: editorX, width: editorWidth)
        default:
            cursor = drawEditor(top: bodyTop, height: bodyHeight, x: editorX, width: editorWidth)
        }
        drawStatus(y: height - 1 - helpBarHeight, width: width)
        let promptCursor = drawBottom(y: height - helpBarHeight, width: width)
        if let promptCursor {
            terminal.showCursor(y: height - helpBarHeight, x: promptCursor)
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
        let (textX, textWidth) = textArea
        scrollToCursor(height: height)
        let cursor = buffer.cursor
        if !softWrap {
            let column = buffer.displayColumn(of: cursor)
            if column < left { left = max(0, column - textWidth / 4) }
            if column >= left + textWidth { left = column - textWidth + textWidth / 4 + 1 }
        }
        let highlight = buffer.selection ?? foundMatch
        drawnRows = []
        var cursorOnScreen: (Int, Int)?
        var place = (line: self.top, row: topRow)
        var lineRows = rows(ofLine: self.top)
        for screenRow in 0..<height {
            let row = lineRows[place.row]
            drawnRows.append(row)
            let text = buffer.lines[row.line]
            if showsLineNumbers, row.start == 0 {
                let number = String(row.line + 1)
                terminal.draw(
                    String(repeating: " ", count: max(0, gutterWidth - 1 - number.count)) + number,
                    y: top + screenRow, x: textX - gutterWidth, width: gutterWidth - 1,
                    attributes: Terminal.dim)
            }
            let highlighted = highlight.flatMap { Self.offsets(of: $0, inLine: row.line, length: text.count) }
            drawRow(
                text, row, y: top + screenRow, x: textX, width: textWidth, left: softWrap ? 0 : left,
                highlighted: highlighted)
            if row.line == cursor.line, row.start <= cursor.offset, cursor.offset < row.end || row.isLast {
                let cells = text[
                    row.startIndex..<text.index(row.startIndex, offsetBy: cursor.offset - row.start)
                ]
                .reduce(0) { $0 + TextBuffer.width(of: $1) }
                let column = cells - (softWrap ? 0 : left)
                cursorOnScreen = (top + screenRow, textX + min(column, textWidth - 1))
            }
            if !row.isLast {
                place.row += 1
            } else if row.line + 1 < buffer.lines.count {
                place = (row.line + 1, 0)
                lineRows = rows(ofLine: place.line)
            } else {
                break
            }
        }
        return cursorOnScreen
    }

    /// The offsets of `line` that `range` covers.
    static func offsets(of range: Range<TextBuffer.Position>, inLine line: Int, length: Int) -> Range<Int>? {
        guard range.lowerBound.line <= line, line <= range.upperBound.line else { return nil }
        let from = range.lowerBound.line == line ? range.lowerBound.offset : 0
        let to = range.upperBound.line == line ? range.upperBound.offset : length
        return from < to ? from..<to : nil
    }

    /// Draws one screen row of `text` from cell `left` (sideways scroll), with the characters
    /// at `highlighted` offsets in reverse video. A wide character cut by the left edge
    /// becomes spaces.
    private func drawRow(
        _ text: String, _ row: ScreenRow, y: Int, x: Int, width: Int, left: Int, highlighted: Range<Int>?
    ) {
        var run = ""
        var runX = 0
        var runHighlighted = false
        func flush() {
            if !run.isEmpty {
                terminal.draw(
                    run, y: y, x: x + runX, width: width - runX,
                    attributes: runHighlighted ? Terminal.reverse : 0)
            }
            run = ""
        }
        var column = 0
        var offset = row.start
        var index = row.startIndex
        while index < row.endIndex {
            let character = text[index]
            let cells = TextBuffer.width(of: character)
            defer {
                column += cells
                offset += 1
                index = text.index(after: index)
            }
            if column + cells <= left { continue }
            if column + cells - left > width { break }
            let shown =
                column < left
                ? String(repeating: " ", count: column + cells - left) : TextBuffer.displayed(character)
            let isHighlighted = highlighted?.contains(offset) ?? false
            if run.isEmpty || isHighlighted != runHighlighted {
                flush()
                runX = max(0, column - left)
                runHighlighted = isHighlighted
            }
            run += shown
        }
        flush()
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
            let line = " \(date)  on \(record.computerLabel ?? "unknown computer")\(program)\(conflict)"
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
        let (mine, theirs) = conflictHeadings(screen)
        // Each side's heading wraps in its column, never cut: who (in bold), then when and how.
        func lines(_ heading: (title: String, detail: String), width: Int) -> [(String, Int32)] {
            Self.wrapped(heading.title, width: width).map { ($0, Terminal.bold) }
                + Self.wrapped(heading.detail, width: width).map { ($0, 0) }
        }
        let mineLines = lines(mine, width: half - 1)
        let theirsLines = lines(theirs, width: width - half - 2)
        let headingHeight = min(max(mineLines.count, theirsLines.count), max(2, height / 3))
        for row in 0..<headingHeight {
            if row < mineLines.count {
                terminal.draw(
                    " " + mineLines[row].0, y: top + row, x: x, width: half, attributes: mineLines[row].1)
            }
            if row < theirsLines.count {
                terminal.draw(
                    " " + theirsLines[row].0, y: top + row, x: x + half + 1, width: width - half - 1,
                    attributes: theirsLines[row].1)
            }
        }
        terminal.verticalLine(x: x + half, top: top, count: height)
        let bodyTop = top + headingHeight + 1
        let bodyHeight = max(0, top + height - bodyTop)
        conflictBodyHeight = max(1, bodyHeight)
        let rows = screen.comparison.rows
        let parts = screen.comparison.differingParts
        let shown =
            rows.isEmpty
            ? ""
            : "  lines \(min(rows.count, screen.scroll + 1))-\(min(rows.count, screen.scroll + bodyHeight)) of \(rows.count)"
        terminal.draw(
            " " + (parts == 1 ? "1 part differs" : "\(parts) parts differ") + shown, y: top + headingHeight,
            x: x, width: half, attributes: Terminal.underline)
        for row in 0..<bodyHeight {
            let index = screen.scroll + row
            guard index < rows.count else { break }
            let line = rows[index]
            // A differing line in reverse video, on the side that has it.
            for (text, column, columnWidth) in [
                (line.mine, x, half), (line.theirs, x + half + 1, width - half - 1),
            ] {
                guard let text else { continue }
                terminal.draw(
                    " " + text, y: bodyTop + row, x: column, width: columnWidth,
                    attributes: line.differs ? Terminal.reverse : 0, pad: line.differs)
            }
        }
    }

    /// Who wrote each side of the conflict shown, and when: for a sync conflict, this device
    /// and the other device by its name and identifier ("Theirs: from laptop (device
    /// 1F0C29A3)"); for a conflict a program here made, "your unsaved text" and "the file now".
    private func conflictHeadings(_ screen: ConflictScreen)
        -> (mine: (title: String, detail: String), theirs: (title: String, detail: String))
    {
        let record = screen.records[screen.index]
        let versionDate = record.modificationDate.map(dateFormatter.string) ?? "unknown date"
        let fileDate = document?.fileModificationDate.map(dateFormatter.string) ?? "unknown date"
        let count = screen.records.count > 1 ? " \(screen.index + 1)/\(screen.records.count)" : ""
        if !record.isFromThisComputer {
            return (
                ("Mine: the file here", "this device, saved \(fileDate)"),
                (
                    "Theirs: from \(record.computerLabel ?? "another device")\(count)",
                    "saved there \(versionDate), came through sync"
                )
            )
        }
        if record.savingProgram == nil {
            // This device's side of a sync conflict: sync put the other device's version in the
            // file, and the remote does not say which device that was.
            return (
                ("Mine: this device", "saved \(versionDate), kept when sync brought theirs"),
                ("Theirs: another device\(count)", "brought by sync \(fileDate)")
            )
        }
        let program = record.savingProgram.map { "\($0) on " } ?? ""
        return (
            ("Mine: your unsaved text", "\(program)this device, \(versionDate)"),
            ("Theirs: the file now\(count)", "as another program left it, \(fileDate)")
        )
    }

    /// `text` in lines of at most `width` cells, broken at spaces where it can be.
    static func wrapped(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var line = ""
        var cells = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let wordCells = word.reduce(0) { $0 + TextBuffer.width(of: $1) }
            if cells > 0 && cells + 1 + wordCells > width {
                lines.append(line)
                (line, cells) = ("", 0)
            }
            if cells > 0 {
                line += " "
                cells += 1
            }
            // A word longer than the line is cut into pieces.
            for character in word {
                let characterCells = TextBuffer.width(of: character)
                if cells + characterCells > width, cells > 0 {
                    lines.append(line)
                    (line, cells) = ("", 0)
                }
                line.append(character)
                cells += characterCells
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// The status line: the document's name and state, or a message with the name still
    /// shown, and Ln and Col always at the right end, whatever the message's length.
    private func drawStatus(y: Int, width: Int) {
        var parts: [String] = []
        var position = ""
        if let document {
            parts.append(document.localizedName)
            let edited = burstStarted || document.hasUnsavedChanges
            parts.append(isLoading ? "opening…" : edited ? "edited" : "saved")
            if let date = document.fileModificationDate {
                parts.append("saved \(timeFormatter.string(from: date))")
            }
            if document.isLocked { parts.append("read-only") }
            if document.documentState.contains(.inConflict) { parts.append("! in conflict: ^T resolves") }
            if document.documentState.contains(.savingError) && !document.isLocked {
                parts.append("saving failed")
            }
            let cursor = buffer.cursor
            position = "Ln \(cursor.line + 1), Col \(buffer.displayColumn(of: cursor) + 1) "
            if let selection = buffer.selection {
                position = "\(Self.count(buffer.text(in: selection))) selected  " + position
            }
        }
        if let sync = syncSummary {
            // Sync in trouble first: it is what the user must act on, and it is long.
            if syncLeads { parts.insert(sync, at: 0) } else { parts.append(sync) }
        }
        var line = " " + parts.joined(separator: " — ")
        if let message {
            // The message first, and the document's name and state still in sight.
            let brief = parts.count > 2 ? Array(parts.prefix(2)) : parts
            let acknowledge = message.isError ? " (Esc)" : ""
            line =
                " " + message.text + acknowledge
                + (brief.isEmpty ? "" : "   [" + brief.joined(separator: " — ") + "]")
        }
        let attributes = message?.isError == true ? Terminal.reverse | Terminal.bold : Terminal.reverse
        let positionCells = position.reduce(0) { $0 + TextBuffer.width(of: $1) }
        terminal.draw(
            line, y: y, x: 0, width: max(0, width - positionCells - 1), attributes: attributes, pad: true)
        terminal.draw(
            " " + position, y: y, x: max(0, width - positionCells - 1), width: positionCells + 1,
            attributes: Terminal.reverse, pad: true)
    }

    /// Draws the help bar or the prompt; returns the cursor column when a prompt is showing.
    private func drawBottom(y: Int, width: Int) -> Int? {
        let prompt: String?
        let options = Self.describe(search)
        switch mode {
        case .prompt(.newDocument, let text): prompt = " New document name: " + text
        case .prompt(.rename, let text): prompt = " Rename to: " + text
        case .prompt(.goToLine, let text): prompt = " Go to line (line:column): " + text
        case .prompt(.replaceWhat, let text): prompt = " Replace\(options): " + text
        case .prompt(.replaceWith(let what), let text): prompt = " Replace “\(what)” with: " + text
        case .find: prompt = " Find\(options): " + search.needle
        case .confirmReplace:
            prompt = " Replace this one? y Yes  n No  a All  Esc Stop "
        case .confirmDelete:
            prompt = " Delete “\(document?.localizedName ?? "")”? It goes to the trash. (y/n) "
        case .history(let screen) where screen.confirmingRestore:
            prompt = " Replace the document with this version? (y/n) "
        default: prompt = nil
        }
        if let prompt {
            terminal.draw(prompt, y: y, x: 0, width: width, pad: true)
            if helpBarHeight > 1 {
                let hint: String
                switch mode {
                case .find: hint = " Enter Done  ↓ Next  ↑ Previous  M-C Case  M-O Whole words  Esc Back"
                case .prompt(.replaceWhat, _):
                    hint = " Enter Next question  M-C Case  M-O Whole words  Esc Cancel"
                default: hint = " Enter Done  Esc Cancel"
                }
                terminal.draw(hint, y: y + 1, x: 0, width: width, pad: true)
            }
            let cells = prompt.reduce(0) { $0 + TextBuffer.width(of: $1) }
            return min(width - 1, cells)
        }
        let items: [String]
        switch mode {
        case .history: items = ["↑↓ Select", "Enter Preview", "r Restore", "Esc Back"]
        case .conflict:
            items = [
                "e Merge", "m Keep mine", "t Keep theirs", "b Keep both", "n Next", "↑↓ Scroll", "Esc Later",
            ]
        case .syncPause: items = ["k Keep them", "d Delete them", "↑↓ Scroll", "Esc Later"]
        case .help: items = ["↑↓ PgUp PgDn Scroll", "Esc Close"]
        case .syncDetails: items = ["↑↓ PgUp PgDn Scroll", "F5 Sync now", "Esc Close"]
        default: items = KeyHelp.bar(list: container != nil, synced: ubiquity != nil, inList: focus == .list)
        }
        for (row, text) in Self.helpBar(items, width: width, rows: helpBarHeight).enumerated() {
            terminal.draw(text, y: y + row, x: 0, width: width, pad: true)
        }
        return nil
    }

    /// Lays `items` out on `rows` rows of `width` cells, in order, as many as fit: entries are
    /// never cut, and the first (help) always shows.
    static func helpBar(_ items: [String], width: Int, rows: Int) -> [String] {
        var lines = [String](repeating: "", count: rows)
        var row = 0
        for item in items {
            let piece = " " + item + " "
            while row < rows, lines[row].count + piece.count > width { row += 1 }
            guard row < rows else { break }
            lines[row] += piece
        }
        return lines
    }
}
