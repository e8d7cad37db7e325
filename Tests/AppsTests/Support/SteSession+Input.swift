import Foundation

extension SteSession {
    /// Pastes `text` as a terminal does for an application that asked for bracketed paste
    /// (tmux's paste-buffer -p): between ESC [200~ and ESC [201~, line feeds sent as returns.
    func paste(_ text: String) throws {
        let file = root.appendingPathComponent("paste-\(UUID().uuidString.prefix(8))")
        try Data(text.utf8).write(to: file)
        tmux(["load-buffer", "-b", "ste-paste", file.path])
        tmux(["paste-buffer", "-p", "-b", "ste-paste", "-d"])
    }

    /// What the application last put on the clipboard through OSC 52, as tmux (with
    /// set-clipboard on) keeps it: its newest buffer.
    var clipboard: String? {
        let result = tmux(["show-buffer"])
        return result.status == 0 ? result.output : nil
    }

    /// Lets tmux take the clipboard from the application (OSC 52), as a terminal does.
    func acceptClipboard() {
        tmux(["set-option", "-s", "set-clipboard", "on"])
    }

    /// A left click at zero-based cell `x`, `y`, as an xterm reports it (SGR encoding).
    func click(x: Int, y: Int) {
        type("\u{1B}[<0;\(x + 1);\(y + 1)M\u{1B}[<0;\(x + 1);\(y + 1)m")
    }

    /// A press at one cell, a move with the button held to another, and the release there.
    func drag(from start: (x: Int, y: Int), to end: (x: Int, y: Int)) {
        type(
            "\u{1B}[<0;\(start.x + 1);\(start.y + 1)M\u{1B}[<32;\(end.x + 1);\(end.y + 1)M"
                + "\u{1B}[<0;\(end.x + 1);\(end.y + 1)m")
    }

    /// One step of the mouse wheel at row `y`, down or up.
    func wheel(down: Bool, y: Int) {
        type("\u{1B}[<\(down ? 65 : 64);40;\(y + 1)M")
    }

    /// The screen's rows.
    var rows: [String] { screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// The text pane's part of screen row `y`: right of the list's separator.
    func textRow(_ y: Int) -> String {
        guard y < rows.count, let bar = rows[y].firstIndex(of: "│") else { return "" }
        return String(rows[y][rows[y].index(after: bar)...])
    }
}
