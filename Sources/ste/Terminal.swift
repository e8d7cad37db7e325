import CNcursesw
import Foundation
import TextContainer

/// A key read from the terminal.
enum Key: Equatable {
    case character(Character)
    case control(UInt8)  // ^A is 1 ... ^Z is 26; Esc is 27
    case up, down, left, right, home, end, pageUp, pageDown
    case backspace, delete, enter, tab, backTab, escape
    case resize
    /// F1 to F12.
    case function(Int)
    /// A movement key held with Shift, Ctrl or Alt (a plain one is `.up` and so on).
    case modified(Movement, Modifiers)
    /// A character typed with Alt (or Meta, or after Esc): a command, never text.
    case meta(Character)
    /// The start and end of text the terminal pastes (bracketed paste).
    case pasteStart, pasteEnd
    case mouse(MouseEvent)
    case other(Int32)

    enum Movement: Equatable { case up, down, left, right, home, end, pageUp, pageDown }

    struct Modifiers: OptionSet, Equatable {
        let rawValue: Int
        static let shift = Modifiers(rawValue: 1)
        static let alt = Modifiers(rawValue: 2)
        static let control = Modifiers(rawValue: 4)
    }

    /// The movement and modifiers of a movement key, plain or modified.
    var movement: (Movement, Modifiers)? {
        switch self {
        case .up: return (.up, [])
        case .down: return (.down, [])
        case .left: return (.left, [])
        case .right: return (.right, [])
        case .home: return (.home, [])
        case .end: return (.end, [])
        case .pageUp: return (.pageUp, [])
        case .pageDown: return (.pageDown, [])
        case .modified(let movement, let modifiers): return (movement, modifiers)
        default: return nil
        }
    }
}

/// A mouse report (xterm's SGR encoding): a press, a move with the button held, a release
/// or a wheel step, at a zero-based cell.
struct MouseEvent: Equatable {
    enum Action: Equatable { case press, drag, release, wheelUp, wheelDown }
    var action: Action
    var x: Int
    var y: Int
}

/// The ncursesw screen: set up in raw mode with the keypad on and the reads non-blocking, so
/// the main queue stays free for the document machinery (autosave, reloads, quit hooks).
@MainActor
final class Terminal {
    private let window: UnsafeMutablePointer<WINDOW>
    private(set) var isActive = true

    static let reverse: Int32 = 1 << 18
    static let bold: Int32 = 1 << 21
    static let underline: Int32 = 1 << 17
    static let dim: Int32 = 1 << 20

    init() {
        guard let window = initscr() else {
            FileHandle.standardError.write(Data("ste: cannot initialise the terminal (is TERM set?)\n".utf8))
            exit(1)
        }
        self.window = window
        raw()
        noecho()
        nonl()
        keypad(window, true)
        nodelay(window, true)
        set_escdelay(25)
        // Keys as tmux, screen and the Linux console send them, whatever TERM says, so that
        // Home and End work under a multiplexer started with TERM=xterm-256color.
        for (sequence, key) in [
            ("\u{1B}[1~", KEY_HOME), ("\u{1B}[4~", KEY_END), ("\u{1B}[7~", KEY_HOME), ("\u{1B}[8~", KEY_END),
            ("\u{1B}[H", KEY_HOME), ("\u{1B}[F", KEY_END), ("\u{1B}OH", KEY_HOME), ("\u{1B}OF", KEY_END),
            // The arrows outside keypad mode, from terminals that ignore it.
            ("\u{1B}[A", KEY_UP), ("\u{1B}[B", KEY_DOWN), ("\u{1B}[C", KEY_RIGHT), ("\u{1B}[D", KEY_LEFT),
        ] {
            define_key(sequence, key)
        }
        // xterm's modified movement keys (CSI 1;m X, CSI n;m ~), the paste brackets and the SGR
        // mouse prefix, each under a code of ste's own: one table, whatever terminfo knows.
        for (sequence, code) in Self.ownSequences {
            define_key(sequence, 0)
            define_key(sequence, code)
        }
    }

    /// Codes above any ncurses assigns, for the sequences ste reads itself.
    private static let firstOwnCode: Int32 = 0x4000
    private static let pasteStartCode = firstOwnCode
    private static let pasteEndCode = firstOwnCode + 1
    private static let mouseCode = firstOwnCode + 2
    private static let movements: [(Key.Movement, String)] = [
        (.up, "A"), (.down, "B"), (.right, "C"), (.left, "D"), (.home, "H"), (.end, "F"), (.pageUp, "5~"),
        (.pageDown, "6~"),
    ]

    /// The sequence for each modified movement key: xterm's modifier parameter is 1 plus
    /// Shift 1, Alt 2, Ctrl 4.
    private static let ownSequences: [(String, Int32)] = {
        var table: [(String, Int32)] = [
            ("\u{1B}[200~", pasteStartCode), ("\u{1B}[201~", pasteEndCode), ("\u{1B}[<", mouseCode),
        ]
        for (index, (_, final)) in movements.enumerated() {
            for modifiers in 1...7 {
                let sequence =
                    final.hasSuffix("~")
                    ? "\u{1B}[\(final.dropLast());\(modifiers + 1)~" : "\u{1B}[1;\(modifiers + 1)\(final)"
                table.append((sequence, firstOwnCode + 16 + Int32(index * 8 + modifiers)))
            }
        }
        return table
    }()

    /// Turns on what ste reads beyond keys: bracketed paste, and the mouse unless `mouse` is
    /// false (button presses, drags and the wheel, in SGR encoding).
    func enableReports(mouse: Bool) {
        write("\u{1B}[?2004h" + (mouse ? "\u{1B}[?1002h\u{1B}[?1006h" : ""))
    }

    /// Writes `sequence` to the terminal as it is, after what curses has drawn.
    func write(_ sequence: String) {
        fflush(nil)
        var bytes = Array(sequence.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeMutableBytes {
                Glibc.write(STDOUT_FILENO, $0.baseAddress! + written, $0.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                return
            }
            written += result
        }
    }

    var height: Int { Int(getmaxy(window)) }
    var width: Int { Int(getmaxx(window)) }

    /// A resize curses has not seen: the terminal's size (TIOCGWINSZ) differs from the
    /// window's. curses learns of a resize from SIGWINCH, which a loaded machine was seen to
    /// lose (the screen stayed at its old size for 30 s); this look, made with every read,
    /// makes the resize whatever happened to the signal.
    private func missedResize() -> Bool {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else {
            return false
        }
        guard Int(size.ws_row) != height || Int(size.ws_col) != width else { return false }
        resizeterm(Int32(size.ws_row), Int32(size.ws_col))
        return true
    }

    /// The keys waiting, without blocking.
    func readKeys() -> [Key] {
        var keys: [Key] = []
        if missedResize() { keys.append(.resize) }
        while true {
            var value: wint_t = 0
            let result = wget_wch(window, &value)
            if result == ERR { break }
            if result == KEY_CODE_YES {
                if Int32(value) == Self.mouseCode {
                    if let event = readMouseReport() { keys.append(.mouse(event)) }
                } else {
                    keys.append(Self.functionKey(Int32(value)))
                }
            } else if value == 27 {
                keys += readAfterEscape()
            } else {
                keys.append(Self.characterKey(UInt32(value)))
            }
        }
        return keys
    }

    /// Esc alone, or Alt with the character that came with it: terminals send Alt+F as Esc
    /// then F. (Esc before a whole key sequence is Esc, then that key.)
    private func readAfterEscape() -> [Key] {
        var value: wint_t = 0
        let result = wget_wch(window, &value)
        if result == ERR { return [.escape] }
        if result == KEY_CODE_YES { return [.escape, Self.functionKey(Int32(value))] }
        // A key sequence curses does not know (CSI ... final, or SS3 and one character) is
        // dropped whole: none of it is typed.
        if value == 0x5B || value == 0x4F, let rest = readUnknownSequence(isCSI: value == 0x5B) {
            return [.other(rest)]
        }
        switch Self.characterKey(UInt32(value)) {
        // Alt+Shift+F is Alt+F: the commands are letters, whatever the case.
        case .character(let character):
            return [.meta(character.isUppercase ? Character(character.lowercased()) : character)]
        case let key: return [.escape, key]
        }
    }

    /// Reads the rest of an unknown sequence after ESC [ or ESC O; nil when nothing follows
    /// (Alt+[ or Alt+O typed alone). Returns the final character's code.
    private func readUnknownSequence(isCSI: Bool) -> Int32? {
        var value: wint_t = 0
        var count = 0
        while wget_wch(window, &value) != ERR {
            count += 1
            // SS3 takes one character; CSI ends at its final byte, 0x40 to 0x7E.
            if !isCSI || (0x40...0x7E).contains(value) || count > 32 { return Int32(bitPattern: value) }
        }
        return count == 0 ? nil : 0
    }

    /// The rest of an SGR mouse report after its CSI <: button;x;y then M (press) or m (release).
    private func readMouseReport() -> MouseEvent? {
        var text = ""
        while text.count < 32 {
            var value: wint_t = 0
            guard wget_wch(window, &value) != ERR, let scalar = Unicode.Scalar(UInt32(value)) else {
                return nil
            }
            if scalar == "M" || scalar == "m" {
                let numbers = text.split(separator: ";").compactMap { Int($0) }
                guard numbers.count == 3 else { return nil }
                let button = numbers[0]
                let action: MouseEvent.Action
                switch (button & ~(4 | 8 | 16), scalar == "M") {
                case (64, _): action = .wheelUp
                case (65, _): action = .wheelDown
                case (32, true): action = .drag
                case (0, true): action = .press
                case (0, false): action = .release
                default: return nil
                }
                return MouseEvent(action: action, x: numbers[1] - 1, y: numbers[2] - 1)
            }
            text.unicodeScalars.append(scalar)
        }
        return nil
    }

    private static func functionKey(_ code: Int32) -> Key {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_ENTER: return .enter
        case KEY_BTAB: return .backTab
        case KEY_RESIZE: return .resize
        case (KEY_F0 + 1)...(KEY_F0 + 12): return .function(Int(code - KEY_F0))
        // What terminfo names for Shift with a movement key, on terminals ste has no table for.
        case KEY_SLEFT: return .modified(.left, .shift)
        case KEY_SRIGHT: return .modified(.right, .shift)
        case KEY_SR: return .modified(.up, .shift)
        case KEY_SF: return .modified(.down, .shift)
        case KEY_SHOME: return .modified(.home, .shift)
        case KEY_SEND: return .modified(.end, .shift)
        case KEY_SPREVIOUS: return .modified(.pageUp, .shift)
        case KEY_SNEXT: return .modified(.pageDown, .shift)
        case pasteStartCode: return .pasteStart
        case pasteEndCode: return .pasteEnd
        case (firstOwnCode + 16)..<(firstOwnCode + 16 + 8 * Int32(movements.count)):
            let number = Int(code - firstOwnCode - 16)
            return .modified(movements[number / 8].0, Key.Modifiers(rawValue: number % 8))
        default: return .other(code)
        }
    }

    private static func characterKey(_ value: UInt32) -> Key {
        switch value {
        case 9: return .tab
        case 10, 13: return .enter
        case 27: return .escape
        case 127: return .backspace
        case 0..<32: return .control(UInt8(value))
        default:
            guard let scalar = Unicode.Scalar(value) else { return .other(Int32(bitPattern: value)) }
            return .character(Character(scalar))
        }
    }

    // MARK: - Drawing

    func clear() { werase(window) }

    /// Draws `text` at row `y`, column `x`, cut to `width` cells; the rest of the width is
    /// filled with spaces when `pad` is set.
    func draw(_ text: String, y: Int, x: Int, width: Int, attributes: Int32 = 0, pad: Bool = false) {
        guard width > 0, y >= 0, y < height else { return }
        var out = ""
        var used = 0
        for character in text {
            let cells = TextBuffer.width(of: character)
            if used + cells > width { break }
            out += TextBuffer.displayed(character)
            used += cells
        }
        if pad, used < width { out += String(repeating: " ", count: width - used) }
        if attributes != 0 { wattron(window, attributes) }
        mvwaddstr(window, Int32(y), Int32(x), out)
        if attributes != 0 { wattroff(window, attributes) }
    }

    /// Draws a vertical line at column `x` from row `top` for `count` rows.
    func verticalLine(x: Int, top: Int, count: Int) {
        for row in top..<(top + max(0, count)) {
            mvwaddstr(window, Int32(row), Int32(x), "│")
        }
    }

    func showCursor(y: Int, x: Int) {
        curs_set(1)
        wmove(window, Int32(y), Int32(x))
    }

    func hideCursor() { curs_set(0) }

    func refresh() { wrefresh(window) }

    func end() {
        guard isActive else { return }
        isActive = false
        write("\u{1B}[?2004l\u{1B}[?1002l\u{1B}[?1006l")
        endwin()
    }
}
