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
    case other(Int32)
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
        ] {
            define_key(sequence, key)
        }
    }

    var height: Int { Int(getmaxy(window)) }
    var width: Int { Int(getmaxx(window)) }

    /// The keys waiting, without blocking.
    func readKeys() -> [Key] {
        var keys: [Key] = []
        while true {
            var value: wint_t = 0
            let result = wget_wch(window, &value)
            if result == ERR { break }
            if result == KEY_CODE_YES {
                keys.append(Self.functionKey(Int32(value)))
            } else {
                keys.append(Self.characterKey(UInt32(value)))
            }
        }
        return keys
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
        endwin()
    }
}
