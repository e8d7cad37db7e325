import TextContainer

/// Every key ste knows, in one table: the help screen lists it, `ste --help` prints it, and
/// the help bar shows the first few in the order of ``bar``.
@MainActor
enum KeyHelp {
    struct Binding {
        var keys: String
        var action: String
    }

    static let sections: [(title: String, bindings: [Binding])] = [
        (
            "Documents",
            [
                Binding(keys: "^S", action: "save now (documents also save by themselves)"),
                Binding(keys: "^Q", action: "save and quit"),
                Binding(keys: "^N", action: "new document"),
                Binding(keys: "^R", action: "rename the document (its undo history stays)"),
                Binding(
                    keys: "^D",
                    action: "delete the document (it goes to the desktop's trash)"),
                Binding(keys: "^H", action: "version history: Enter previews, r restores (^Z undoes it)"),
                Binding(keys: "^T", action: "resolve a conflict: e merge, m mine, t theirs, b both"),
                Binding(
                    keys: "F5", action: "sync now (in a synced container); when sync is paused, what it asks"),
                Binding(
                    keys: "F7", action: "what sync says, in full: its errors, each document's, what to do"),
                Binding(keys: "Esc  F6  Shift+Tab", action: "from the text to the list of documents"),
                Binding(
                    keys: "Tab  Enter  → F6", action: "from the list to the text; ↑ ↓ PgUp PgDn Home End pick"
                ),
            ]
        ),
        (
            "Editing",
            [
                Binding(keys: "Tab", action: "insert a tab"),
                Binding(keys: "^Z  M-U", action: "undo"),
                Binding(keys: "^Y  M-E", action: "redo"),
                Binding(keys: "^C", action: "copy the selection (also to the terminal's clipboard)"),
                Binding(keys: "^X", action: "cut the selection"),
                Binding(keys: "^V  ^U", action: "paste (lines cut with ^K paste above the cursor's line)"),
                Binding(keys: "^K", action: "cut the line (again: add the next line), or the selection"),
                Binding(keys: "M-A", action: "select all"),
                Binding(keys: "Shift+movement", action: "select (Shift with any key below)"),
            ]
        ),
        (
            "Moving",
            [
                Binding(keys: "← → ↑ ↓", action: "by character, and by screen line"),
                Binding(keys: "^← ^→  M-B M-F", action: "by word (M-← M-→ too)"),
                Binding(keys: "Home End  ^A ^E", action: "start and end of the line"),
                Binding(keys: "PgUp PgDn", action: "by a screen, the cursor keeping its row"),
                Binding(keys: "^Home ^End  M-\\ M-/", action: "start and end of the document"),
                Binding(keys: "^L  ^_", action: "go to a line, or line:column"),
                Binding(
                    keys: "mouse",
                    action: "click places the cursor or picks a document, drag selects, wheel scrolls"),
            ]
        ),
        (
            "Find and replace",
            [
                Binding(keys: "^F", action: "find as you type; Enter stays, Esc goes back"),
                Binding(keys: "↓ ↑ (in find)", action: "next and previous match"),
                Binding(keys: "M-W  M-Q", action: "next and previous match, after a find"),
                Binding(keys: "M-C  M-O", action: "while finding: case-sensitive, whole words"),
                Binding(keys: "^\\  M-R", action: "replace: y this one, n skip, a all (one undo step)"),
            ]
        ),
        (
            "Screens and questions",
            [
                Binding(
                    keys: "history (^H)",
                    action: "↑ ↓ pick a version, Enter or p previews, r restores, Esc back"),
                Binding(
                    keys: "conflict (^T)",
                    action: "e merge, m keep mine, t keep theirs, b keep both, n next, Esc later"),
                Binding(
                    keys: "sync paused (F5)",
                    action: "k keep them (bring them back), d delete them, Esc later"),
                Binding(keys: "a question", action: "Enter answers, Esc or ^G cancels; y or n where asked"),
                Binding(keys: "^Q twice", action: "quits when saving failed (the text is kept as a version)"),
            ]
        ),
        (
            "View",
            [
                Binding(keys: "M-S", action: "soft wrap on or off (on at start)"),
                Binding(keys: "M-N", action: "line numbers on or off"),
                Binding(keys: "F1  ^G", action: "this help; Esc, F1 or ^G closes it"),
            ]
        ),
    ]

    /// The help bar's entries, most wanted first: as many as fit are shown.
    static func bar(list: Bool, synced: Bool, inList: Bool) -> [String] {
        var items = ["^G Help", "^S Save", "^Q Quit"]
        if list { items.append(inList ? "Tab Text" : "Esc List") }
        items += [
            "^F Find", "^\\ Replace", "^C Copy", "^X Cut", "^V Paste", "^K Cut line", "^Z Undo", "^Y Redo",
            "^L Go to",
        ]
        if list { items += ["^N New", "^R Rename", "^D Delete"] }
        items.append("^H History")
        if synced { items.append("F5 Sync") }
        return items
    }

    /// The help screen's lines, for a screen `width` cells wide.
    static func lines(width: Int) -> [(text: String, isTitle: Bool)] {
        let keyWidth = 22
        var lines: [(String, Bool)] = [
            (
                " ^ is Ctrl, M- is Alt. nano's and micro's keys where they agree; ste --help says whose elsewhere.",
                false
            )
        ]
        for section in sections {
            lines.append(("", false))
            lines.append((" " + section.title, true))
            for binding in section.bindings {
                lines.append(("   " + Editor.fit(binding.keys, width: keyWidth) + binding.action, false))
            }
        }
        return lines
    }

    /// The key list of `ste --help`.
    static var usage: String {
        sections.map { section in
            "  \(section.title):\n"
                + section.bindings.map { "    " + Editor.fit($0.keys, width: 22) + $0.action }.joined(
                    separator: "\n")
        }
        .joined(separator: "\n")
    }
}

extension Editor {
    func handleHelp(_ key: Key, scroll: Int) {
        if let scrolled = scrolled(by: key, from: scroll, lines: KeyHelp.lines(width: terminal.width).count) {
            mode = .help(scrolled)
        } else if [.escape, .function(1), .control(7), .character("q")].contains(key) {
            mode = .normal
        }
    }

    /// Where a page of `lines` lines scrolled down by `scroll` is after `key` (↑ ↓ PgUp PgDn
    /// Space Home End); nil for a key that does not scroll.
    func scrolled(by key: Key, from scroll: Int, lines: Int) -> Int? {
        let page = max(1, bodyHeight - 1)
        let last = max(0, lines - bodyHeight)
        switch key {
        case .up: return max(0, scroll - 1)
        case .down: return min(last, scroll + 1)
        case .pageUp: return max(0, scroll - page)
        case .pageDown, .character(" "): return min(last, scroll + page)
        case .home: return 0
        case .end: return last
        default: return nil
        }
    }

    /// Draws the help screen over the list and the text.
    func drawHelp(scroll: Int, top: Int, height: Int, width: Int) {
        let lines = KeyHelp.lines(width: width)
        for row in 0..<height {
            let index = scroll + row
            guard index < lines.count else { break }
            terminal.draw(
                lines[index].text, y: top + row, x: 0, width: width,
                attributes: lines[index].isTitle ? Terminal.bold : 0)
        }
    }
}
