import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The text an editor shows and edits: an array of lines and a cursor, so that a keystroke
/// changes one line and a screen update touches only the lines on screen, whatever the size
/// of the document.
///
/// Columns are counted two ways: the cursor's ``Position/offset`` counts characters
/// (grapheme clusters) within the line, and display columns count terminal cells, where a
/// CJK character takes two and a combining mark none (`wcwidth`).
///
/// For example:
///
/// ```swift
/// var buffer = TextBuffer(text: "日本語\nsecond")
/// buffer.moveRight()                      // after 日: offset 1, display column 2
/// buffer.insert("x")
/// buffer.text                             // "日x本語\nsecond"
/// ```
public struct TextBuffer: Sendable, Equatable {
    /// A place in the text: a line index and a character offset within that line.
    public struct Position: Sendable, Hashable, Comparable {
        public var line: Int
        public var offset: Int

        public init(line: Int, offset: Int) {
            self.line = line
            self.offset = offset
        }

        public static func < (a: Position, b: Position) -> Bool {
            (a.line, a.offset) < (b.line, b.offset)
        }
    }

    /// The lines, without their line feeds; never empty.
    public private(set) var lines: [String] {
        didSet { revision = Self.nextRevision() }
    }
    /// A number no other text of any buffer had: it changes with every change of the text
    /// (not with cursor moves), so what is laid out from the text can be kept until then.
    public private(set) var revision = TextBuffer.nextRevision()

    private static let revisions = Atomic<Int>(0)

    private static func nextRevision() -> Int {
        revisions.wrappingAdd(1, ordering: .relaxed).newValue
    }
    /// Where the cursor is.
    public private(set) var cursor = Position(line: 0, offset: 0)
    /// The other end of the selection, where it was started; nil when nothing is selected.
    public private(set) var anchor: Position?
    /// The display column up and down movement aims for, kept across short lines.
    private var goalColumn: Int?

    /// The number of cells a tab takes.
    public static let tabWidth = 4

    /// A buffer holding `text`, split at line feeds, with the cursor at the start.
    public init(text: String) {
        lines = Self.split(text)
    }

    /// The whole text, lines joined by line feeds.
    public var text: String { lines.joined(separator: "\n") }

    /// The UTF-8 size of the whole text, without building it.
    public var utf8Count: Int { lines.reduce(lines.count - 1) { $0 + $1.utf8.count } }

    /// Splits at line feed bytes: much faster than splitting by `Character` on large texts, and
    /// a CR LF pair stays "\r" at the end of its line, so the text round-trips unchanged.
    static func split(_ text: String) -> [String] {
        var result: [String] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == 0x0A {
                result.append(String(Substring(utf8[start..<index])))
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        result.append(String(Substring(utf8[start..<utf8.endIndex])))
        return result
    }

    /// Replaces the whole text, as when the file changed elsewhere, keeping the cursor at the
    /// same line and offset clamped to the new text.
    public mutating func replaceText(_ text: String) {
        replaceLines(Self.split(text))
    }

    /// Replaces the whole text with `lines` (as a replace-all made them), keeping the cursor at
    /// the same line and offset clamped to the new text; nothing stays selected.
    public mutating func replaceLines(_ lines: [String]) {
        self.lines = lines.isEmpty ? [""] : lines
        anchor = nil
        move(to: cursor)
    }

    // MARK: - Editing

    /// Inserts `string` at the cursor (line feeds split the line) and moves the cursor after it.
    public mutating func insert(_ string: String) {
        anchor = nil
        let pieces = Self.split(string)
        let line = lines[cursor.line]
        let split = Self.index(line, cursor.offset)
        let before = line[..<split]
        let after = line[split...]
        if pieces.count == 1 {
            lines[cursor.line] = before + pieces[0] + after
            cursor.offset += pieces[0].count
        } else {
            var replacement = [String(before) + pieces[0]]
            replacement.append(contentsOf: pieces.dropFirst().dropLast())
            let last = pieces[pieces.count - 1]
            replacement.append(last + String(after))
            lines.replaceSubrange(cursor.line...cursor.line, with: replacement)
            cursor = Position(line: cursor.line + pieces.count - 1, offset: last.count)
        }
        goalColumn = nil
    }

    /// Deletes the character before the cursor, joining with the previous line at a line start.
    ///
    /// - Returns: Whether anything was deleted.
    @discardableResult
    public mutating func deleteBackward() -> Bool {
        goalColumn = nil
        anchor = nil
        if cursor.offset > 0 {
            var line = lines[cursor.line]
            let end = Self.index(line, cursor.offset)
            line.remove(at: line.index(before: end))
            lines[cursor.line] = line
            cursor.offset -= 1
            return true
        }
        guard cursor.line > 0 else { return false }
        let previous = lines[cursor.line - 1]
        let joinedOffset = previous.count
        lines[cursor.line - 1] = previous + lines[cursor.line]
        lines.remove(at: cursor.line)
        cursor = Position(line: cursor.line - 1, offset: joinedOffset)
        return true
    }

    /// Deletes the character after the cursor, joining with the next line at a line end.
    ///
    /// - Returns: Whether anything was deleted.
    @discardableResult
    public mutating func deleteForward() -> Bool {
        goalColumn = nil
        anchor = nil
        let line = lines[cursor.line]
        if cursor.offset < line.count {
            var changed = line
            changed.remove(at: Self.index(changed, cursor.offset))
            lines[cursor.line] = changed
            return true
        }
        guard cursor.line + 1 < lines.count else { return false }
        lines[cursor.line] = line + lines[cursor.line + 1]
        lines.remove(at: cursor.line + 1)
        return true
    }

    // MARK: - Moving

    /// Moves the cursor to `position`, clamped to the text.
    public mutating func move(to position: Position) {
        let line = min(max(0, position.line), lines.count - 1)
        cursor = Position(line: line, offset: min(max(0, position.offset), lines[line].count))
        goalColumn = nil
    }

    public mutating func moveLeft() {
        if cursor.offset > 0 {
            cursor.offset -= 1
        } else if cursor.line > 0 {
            cursor = Position(line: cursor.line - 1, offset: lines[cursor.line - 1].count)
        }
        goalColumn = nil
    }

    public mutating func moveRight() {
        if cursor.offset < lines[cursor.line].count {
            cursor.offset += 1
        } else if cursor.line + 1 < lines.count {
            cursor = Position(line: cursor.line + 1, offset: 0)
        }
        goalColumn = nil
    }

    /// Moves `count` lines up (negative) or down, aiming for the same display column.
    public mutating func moveVertically(by count: Int) {
        let goal = goalColumn ?? displayColumn(of: cursor)
        let line = min(max(0, cursor.line + count), lines.count - 1)
        cursor = Position(line: line, offset: Self.offset(forDisplayColumn: goal, in: lines[line]))
        goalColumn = goal
    }

    public mutating func moveToLineStart() {
        cursor.offset = 0
        goalColumn = nil
    }

    public mutating func moveToLineEnd() {
        cursor.offset = lines[cursor.line].count
        goalColumn = nil
    }

    // MARK: - Finding

    /// The first occurrence of `needle` at or after `start` (wrapping round to the top),
    /// ignoring case.
    public func find(_ needle: String, from start: Position) -> Position? {
        TextSearch(needle).firstMatch(in: lines, from: start)?.lowerBound
    }

    // MARK: - Selecting

    /// The selected text's bounds, start first; nil when nothing is selected.
    public var selection: Range<Position>? {
        guard let anchor, anchor != cursor else { return nil }
        return min(anchor, cursor)..<max(anchor, cursor)
    }

    /// Starts a selection at the cursor unless one is started: the moves that follow extend it.
    public mutating func extendSelection() {
        if anchor == nil { anchor = cursor }
    }

    public mutating func clearSelection() {
        anchor = nil
    }

    /// Selects from `start` to `end`, leaving the cursor at `end`.
    public mutating func select(from start: Position, to end: Position) {
        move(to: start)
        anchor = cursor
        move(to: end)
    }

    public mutating func selectAll() {
        select(from: Position(line: 0, offset: 0), to: Position(line: lines.count - 1, offset: .max))
    }

    /// The text between two positions, lines joined by line feeds.
    public func text(in range: Range<Position>) -> String {
        let lower = range.lowerBound
        let upper = range.upperBound
        let first = lines[lower.line]
        if lower.line == upper.line {
            return String(first[Self.index(first, lower.offset)..<Self.index(first, upper.offset)])
        }
        var pieces = [String(first[Self.index(first, lower.offset)...])]
        pieces.append(contentsOf: lines[(lower.line + 1)..<upper.line])
        let last = lines[upper.line]
        pieces.append(String(last[..<Self.index(last, upper.offset)]))
        return pieces.joined(separator: "\n")
    }

    /// Replaces the text between two positions with `string` and puts the cursor after it.
    public mutating func replace(_ range: Range<Position>, with string: String) {
        let lower = range.lowerBound
        let upper = range.upperBound
        let first = lines[lower.line]
        let last = lines[upper.line]
        let joined = String(
            first[..<Self.index(first, lower.offset)] + last[Self.index(last, upper.offset)...])
        lines.replaceSubrange(lower.line...upper.line, with: [joined])
        cursor = lower
        insert(string)
    }

    /// Deletes the selected text and returns it; nil when nothing was selected.
    @discardableResult
    public mutating func deleteSelection() -> String? {
        guard let selection else { return nil }
        let text = text(in: selection)
        replace(selection, with: "")
        return text
    }

    /// Removes the cursor's line with its line feed (the last line: its text, leaving it
    /// empty) and returns what was removed, with a line feed, as nano's ^K does.
    public mutating func cutLine() -> String {
        anchor = nil
        goalColumn = nil
        let removed = lines[cursor.line]
        if lines.count > 1 {
            lines.remove(at: cursor.line)
            cursor = Position(line: min(cursor.line, lines.count - 1), offset: 0)
        } else {
            lines[0] = ""
            cursor = Position(line: 0, offset: 0)
        }
        return removed + "\n"
    }

    // MARK: - Moving by words and through the document

    /// How a character counts for word movement: words are letters, digits and `_` (in any
    /// script); an emoji or punctuation run is a word of its own.
    enum CharacterClass { case space, word, other }

    static func characterClass(_ character: Character) -> CharacterClass {
        if character.isWhitespace { return .space }
        if character.isLetter || character.isNumber || character == "_" { return .word }
        return .other
    }

    /// Moves to the end of the word after the cursor (to the next line's start at a line end).
    public mutating func moveWordRight() {
        goalColumn = nil
        let line = lines[cursor.line]
        var index = Self.index(line, cursor.offset)
        guard index != line.endIndex else {
            if cursor.line + 1 < lines.count { cursor = Position(line: cursor.line + 1, offset: 0) }
            return
        }
        var offset = cursor.offset
        while index != line.endIndex, Self.characterClass(line[index]) == .space {
            index = line.index(after: index)
            offset += 1
        }
        if index != line.endIndex {
            let kind = Self.characterClass(line[index])
            while index != line.endIndex, Self.characterClass(line[index]) == kind {
                index = line.index(after: index)
                offset += 1
            }
        }
        cursor.offset = offset
    }

    /// Moves to the start of the word before the cursor (to the previous line's end at a line start).
    public mutating func moveWordLeft() {
        goalColumn = nil
        let line = lines[cursor.line]
        var index = Self.index(line, cursor.offset)
        guard index != line.startIndex else {
            if cursor.line > 0 {
                cursor = Position(line: cursor.line - 1, offset: lines[cursor.line - 1].count)
            }
            return
        }
        var offset = cursor.offset
        while index != line.startIndex, Self.characterClass(line[line.index(before: index)]) == .space {
            index = line.index(before: index)
            offset -= 1
        }
        if index != line.startIndex {
            let kind = Self.characterClass(line[line.index(before: index)])
            while index != line.startIndex, Self.characterClass(line[line.index(before: index)]) == kind {
                index = line.index(before: index)
                offset -= 1
            }
        }
        cursor.offset = offset
    }

    public mutating func moveToDocumentStart() {
        move(to: Position(line: 0, offset: 0))
    }

    public mutating func moveToDocumentEnd() {
        move(to: Position(line: lines.count - 1, offset: .max))
    }

    // MARK: - Soft wrap

    /// Where the screen rows of `line` start when it is wrapped at `width` cells: the
    /// character offset and index of each row's first character, the first row's being 0.
    /// Rows break between grapheme clusters, and a wide character that does not fit the rest
    /// of a row starts the next one.
    public static func wrap(_ line: String, width: Int) -> [(offset: Int, index: String.Index)] {
        var rows = [(offset: 0, index: line.startIndex)]
        let width = max(2, width)
        var used = 0
        var offset = 0
        var index = line.startIndex
        while index != line.endIndex {
            let cells = Self.width(of: line[index])
            if used + cells > width, used > 0 {
                rows.append((offset, index))
                used = 0
            }
            used += cells
            offset += 1
            index = line.index(after: index)
        }
        return rows
    }

    // MARK: - Display columns

    /// The display column of `position`: the cells taken by the characters before it.
    public func displayColumn(of position: Position) -> Int {
        let line = lines[position.line]
        var column = 0
        for character in line.prefix(position.offset) { column += Self.width(of: character) }
        return column
    }

    /// The character offset in `line` whose display column is the last at or before `column`.
    public static func offset(forDisplayColumn column: Int, in line: String) -> Int {
        var used = 0
        var offset = 0
        for character in line {
            let width = Self.width(of: character)
            if used + width > column { break }
            used += width
            offset += 1
        }
        return offset
    }

    /// The number of cells `character` takes: 2 for wide (CJK) characters, 0 for a lone
    /// combining mark, ``tabWidth`` for a tab, 1 for a control character (shown as `?`).
    public static func width(of character: Character) -> Int {
        if character.isASCII {
            return character == "\t" ? tabWidth : 1
        }
        guard let first = character.unicodeScalars.first else { return 0 }
        return max(scalarWidth(first), character.unicodeScalars.count > 1 ? 1 : 0)
    }

    /// What to draw for `character`: itself, spaces for a tab, `?` for a control character.
    public static func displayed(_ character: Character) -> String {
        if character == "\t" { return String(repeating: " ", count: tabWidth) }
        if let scalar = character.unicodeScalars.first,
            scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)
        {
            return "?"
        }
        return String(character)
    }

    static func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 1 }
        let width = systemCharacterWidth(Int32(bitPattern: value))
        if width >= 0 { return Int(width) }
        // wcwidth knows nothing outside a UTF-8 locale; the wide ranges of East Asian Width then.
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return scalar.properties.generalCategory == .nonspacingMark ? 0 : 1
        }
    }

    /// The `String.Index` of character `offset` in `line`, clamped to its end.
    static func index(_ line: String, _ offset: Int) -> String.Index {
        line.index(line.startIndex, offsetBy: offset, limitedBy: line.endIndex) ?? line.endIndex
    }
}

// The C library's wcwidth(3), which ncursesw also uses to place characters, so that the
// editor's columns and the screen's agree. Glibc's Swift module does not export it.
@_silgen_name("wcwidth")
private func systemCharacterWidth(_ character: Int32) -> Int32
