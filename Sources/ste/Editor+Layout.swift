import TextContainer

/// A line's screen rows and what they were laid out for.
struct CachedRows {
    var text: String
    var width: Int
    var softWrap: Bool
    /// The buffer's revision when the text was last seen the same.
    var revision: Int
    var rows: [ScreenRow]
}

/// One screen row of text: a whole line, or with soft wrap a part of one.
struct ScreenRow {
    var line: Int
    /// The character offset of the row's first character in its line.
    var start: Int
    /// The offset just past its last character; the line's length for its last row.
    var end: Int
    var startIndex: String.Index
    var endIndex: String.Index
    /// Whether the row is its line's last.
    var isLast: Bool
}

extension Editor {
    // MARK: - Layout

    var listWidth: Int {
        container == nil ? 0 : min(36, max(18, terminal.width / 3))
    }

    /// The rows of the help bar: two like nano's when the window is tall enough.
    var helpBarHeight: Int { terminal.height >= 12 ? 2 : 1 }

    /// The rows between the title and the status line.
    var bodyHeight: Int { max(1, terminal.height - 2 - helpBarHeight) }

    /// The width of the line-number gutter, 0 when line numbers are off.
    var gutterWidth: Int {
        showsLineNumbers ? String(buffer.lines.count).count + 1 : 0
    }

    /// Where the text starts on screen and how many cells wide it is.
    var textArea: (x: Int, width: Int) {
        let editorX = container == nil ? 0 : listWidth + 1
        let x = editorX + 1 + gutterWidth
        return (x, max(2, terminal.width - x))
    }

    /// The screen rows of `line`: one without soft wrap.
    func rows(ofLine line: Int) -> [ScreenRow] {
        let text = buffer.lines[line]
        let width = textArea.width
        if var cached = rowCache[line], cached.width == width, cached.softWrap == softWrap {
            // The same revision is the same text; after an edit, the same bytes are.
            if cached.revision == buffer.revision { return cached.rows }
            if Self.sameBytes(cached.text, text) {
                cached.revision = buffer.revision
                rowCache[line] = cached
                return cached.rows
            }
        }
        if rowCache.count > 512 { rowCache.removeAll(keepingCapacity: true) }
        let rows = layOut(text, line: line, width: width)
        rowCache[line] = CachedRows(
            text: text, width: width, softWrap: softWrap, revision: buffer.revision, rows: rows)
        return rows
    }

    /// Byte for byte, not ==: the rows hold indices into the text, and == compares canonically.
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let compared = a.utf8.withContiguousStorageIfAvailable { first in
            b.utf8.withContiguousStorageIfAvailable { second in
                first.elementsEqual(second)
            }
        }
        return (compared ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    private func layOut(_ text: String, line: Int, width: Int) -> [ScreenRow] {
        let starts =
            softWrap ? TextBuffer.wrap(text, width: width) : [(offset: 0, index: text.startIndex)]
        return starts.indices.map { row in
            let isLast = row == starts.count - 1
            return ScreenRow(
                line: line, start: starts[row].offset, end: isLast ? text.count : starts[row + 1].offset,
                startIndex: starts[row].index, endIndex: isLast ? text.endIndex : starts[row + 1].index,
                isLast: isLast)
        }
    }

    /// The cursor's row within its line: the row a character offset falls in.
    func rowIndex(of position: TextBuffer.Position) -> Int {
        let rows = rows(ofLine: position.line)
        return rows.lastIndex { $0.start <= position.offset } ?? 0
    }

    /// The row `count` rows after (or, negative, before) row `row` of `line`, stopping at the
    /// document's ends.
    func step(line: Int, row: Int, by count: Int) -> (line: Int, row: Int) {
        var place = (line: line, row: row)
        for _ in 0..<abs(count) {
            if count > 0 {
                if place.row + 1 < rows(ofLine: place.line).count {
                    place.row += 1
                } else if place.line + 1 < buffer.lines.count {
                    place = (place.line + 1, 0)
                } else {
                    break
                }
            } else {
                if place.row > 0 {
                    place.row -= 1
                } else if place.line > 0 {
                    place = (place.line - 1, rows(ofLine: place.line - 1).count - 1)
                } else {
                    break
                }
            }
        }
        return place
    }

    /// The character offset in `row` whose cell is at or before `cells` from the row's start;
    /// a row that wraps keeps the offset on itself.
    func offset(in row: ScreenRow, atCells cells: Int) -> Int {
        let text = buffer.lines[row.line]
        let offset =
            row.start
            + TextBuffer.offset(forDisplayColumn: cells, in: String(text[row.startIndex..<row.endIndex]))
        return row.isLast ? offset : min(offset, max(row.start, row.end - 1))
    }

    /// The cells between the start of the cursor's row and the cursor.
    private var cursorCellsInRow: Int {
        let cursor = buffer.cursor
        let row = rows(ofLine: cursor.line)[rowIndex(of: cursor)]
        let text = buffer.lines[cursor.line]
        let before = text[row.startIndex..<text.index(row.startIndex, offsetBy: cursor.offset - row.start)]
        return before.reduce(0) { $0 + TextBuffer.width(of: $1) }
    }

    /// Up and down: by screen rows, aiming for the same cell as the first move started from.
    func moveRows(by count: Int) {
        let goal = goalCells ?? cursorCellsInRow
        let cursor = buffer.cursor
        let place = step(line: cursor.line, row: rowIndex(of: cursor), by: count)
        let row = rows(ofLine: place.line)[place.row]
        buffer.move(to: TextBuffer.Position(line: place.line, offset: offset(in: row, atCells: goal)))
        goalCells = goal
    }

    /// Page Up and Page Down: the view and the cursor move by a screen less a row, so the
    /// cursor keeps its row on the screen.
    func movePage(by direction: Int) {
        let count = direction * max(1, bodyHeight - 1)
        let cursorRowOnScreen = screenRowOfCursor(height: bodyHeight)
        moveRows(by: count)
        let cursor = buffer.cursor
        let place = step(line: cursor.line, row: rowIndex(of: cursor), by: -max(0, cursorRowOnScreen ?? 0))
        top = place.line
        topRow = place.row
    }

    /// Scrolls the view so the cursor's row is on screen, touching only the rows between.
    func scrollToCursor(height: Int) {
        top = min(max(0, top), buffer.lines.count - 1)
        topRow = min(max(0, topRow), rows(ofLine: top).count - 1)
        let cursor = buffer.cursor
        let row = rowIndex(of: cursor)
        if (cursor.line, row) < (top, topRow) {
            (top, topRow) = (cursor.line, row)
            return
        }
        // More lines between than rows on screen: the cursor is off screen whatever they wrap to.
        if cursor.line - top < height, screenRowOfCursor(height: height) != nil { return }
        let place = step(line: cursor.line, row: row, by: -(height - 1))
        (top, topRow) = (place.line, place.row)
    }

    /// The cursor's row on screen counted from the top of the text, when it is within `height`.
    private func screenRowOfCursor(height: Int) -> Int? {
        let cursor = buffer.cursor
        let row = rowIndex(of: cursor)
        var place = (line: top, row: topRow)
        for count in 0..<height {
            if place.line == cursor.line, place.row == row { return count }
            let next = step(line: place.line, row: place.row, by: 1)
            if next == place { return nil }
            place = next
        }
        return nil
    }

    /// After a resize: the cursor stays in view (drawing sees to it), and a sideways scroll
    /// the wider window no longer needs goes.
    func resetNeedlessScrolling() {
        guard !softWrap else {
            left = 0
            return
        }
        if buffer.displayColumn(of: buffer.cursor) < textArea.width { left = 0 }
    }

    // MARK: - Mouse

    func handleMouse(_ event: MouseEvent) {
        let bodyTop = 1
        let row = event.y - bodyTop
        if case .help(let scroll) = mode {
            if event.action == .wheelUp { handleHelp(.up, scroll: scroll) }
            if event.action == .wheelDown { handleHelp(.down, scroll: scroll) }
            return
        }
        guard case .normal = mode, row >= 0, row < bodyHeight else { return }
        if container != nil, event.x < listWidth {
            guard event.action == .press, listTop + row < entries.count else { return }
            commitBurst()
            // The row the user saw is the one chosen; the list is sorted after.
            let chosen = entries[listTop + row].url
            focus = .list
            select(chosen)
            sortList()
            return
        }
        switch event.action {
        case .wheelUp, .wheelDown:
            scroll(by: event.action == .wheelUp ? -3 : 3)
        case .press:
            guard let position = position(atRow: row, x: event.x) else { return }
            commitBurst()
            focus = .editor
            buffer.clearSelection()
            buffer.move(to: position)
            goalCells = nil
            mouseAnchor = position
        case .drag:
            guard let anchor = mouseAnchor, let position = position(atRow: row, x: event.x) else { return }
            buffer.select(from: anchor, to: position)
        case .release:
            mouseAnchor = nil
        }
    }

    /// The text position under screen row `row` (counted from the body's top) and column `x`,
    /// from the rows as last drawn; below the text, the end of the document.
    private func position(atRow row: Int, x: Int) -> TextBuffer.Position? {
        guard let last = drawnRows.last else { return nil }
        guard row < drawnRows.count else { return TextBuffer.Position(line: last.line, offset: last.end) }
        let shown = drawnRows[row]
        let cells = max(0, x - textArea.x) + (softWrap ? 0 : left)
        return TextBuffer.Position(line: shown.line, offset: offset(in: shown, atCells: cells))
    }

    /// The wheel: the view moves by `count` rows, and the cursor with it when it would leave.
    private func scroll(by count: Int) {
        let place = step(line: top, row: topRow, by: count)
        (top, topRow) = (place.line, place.row)
        let cursor = buffer.cursor
        let row = rowIndex(of: cursor)
        let bottom = step(line: top, row: topRow, by: bodyHeight - 1)
        let target: (line: Int, row: Int)?
        if (cursor.line, row) < (top, topRow) {
            target = (top, topRow)
        } else if (cursor.line, row) > (bottom.line, bottom.row) {
            target = bottom
        } else {
            target = nil
        }
        if let target {
            commitBurst()
            let shown = rows(ofLine: target.line)[target.row]
            buffer.clearSelection()
            buffer.move(to: TextBuffer.Position(line: target.line, offset: shown.start))
        }
    }
}
