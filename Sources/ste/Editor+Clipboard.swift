import Foundation
import TextContainer

#if canImport(Glibc)
    import Glibc
#endif

extension Editor {
    // MARK: - Clipboard

    func copySelection() {
        guard let selection = buffer.selection else {
            return show("Nothing selected: Shift with the arrows selects, M-A selects all")
        }
        let text = buffer.text(in: selection)
        clipboard = Clipboard(text: text, isWholeLines: false)
        publish(text)
        show("Copied \(Self.count(text))")
    }

    func cutSelection() {
        guard buffer.selection != nil else {
            return show("Nothing selected: Shift with the arrows selects, ^K cuts the line")
        }
        var cut = ""
        guard editAsOneStep({ cut = $0.deleteSelection() ?? "" }) else { return }
        clipboard = Clipboard(text: cut, isWholeLines: false)
        publish(cut)
        show("Cut \(Self.count(cut))")
    }

    /// ^K: the selection if there is one, otherwise the cursor's line; ^K again straight after
    /// adds the next line to what was cut, as nano's does.
    func cutLine(appending: Bool) {
        if buffer.selection != nil { return cutSelection() }
        var line = ""
        guard editAsOneStep({ line = $0.cutLine() }) else { return }
        if appending, let previous = clipboard, previous.isWholeLines {
            clipboard = Clipboard(text: previous.text + line, isWholeLines: true)
        } else {
            clipboard = Clipboard(text: line, isWholeLines: true)
        }
        lastWasCutLine = true
        publish(clipboard?.text ?? line)
    }

    /// Pastes the internal clipboard: over the selection, or, for lines cut with ^K, above
    /// the cursor's line.
    func paste() {
        guard let clipboard else { return show("The clipboard is empty: ^C copies, ^X and ^K cut") }
        editAsOneStep {
            $0.deleteSelection()
            if clipboard.isWholeLines { $0.moveToLineStart() }
            $0.insert(clipboard.text)
        }
    }

    /// A bracketed paste arriving: its keys are text, gathered until its end, then inserted as
    /// one undo step, exactly as pasted (no key of it is a command).
    func receivePaste(_ key: Key) {
        switch key {
        case .pasteStart:
            pasted = pasted ?? ""
        case .pasteEnd:
            let text = pasted ?? ""
            pasted = nil
            insertPasted(text)
        case .character(let character): pasted?.append(character)
        case .enter: pasted?.append("\n")
        case .tab: pasted?.append("\t")
        case .meta(let character): pasted?.append("\u{1B}" + String(character))
        default: break
        }
    }

    private func insertPasted(_ text: String) {
        guard !text.isEmpty else { return }
        // A prompt, and find, take one line.
        let firstLine =
            text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        switch mode {
        case .prompt(let kind, let typed):
            mode = .prompt(kind, typed + firstLine)
        case .find(let origin):
            search.needle += firstLine
            lookUp(from: origin, backwards: false, origin: origin)
        case .normal:
            focus = .editor
            if editAsOneStep({
                $0.deleteSelection()
                $0.insert(text)
            }) {
                show("Pasted \(Self.count(text)): ^Z undoes the paste")
            }
        default:
            show("Not pasted here: Esc first", isError: true)
        }
    }

    static func count(_ text: String) -> String {
        let lines = text.reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
        if lines > 0 { return lines == 1 ? "1 line" : "\(lines) lines" }
        return text.count == 1 ? "1 character" : "\(text.count) characters"
    }

    /// Hands copied text to the system clipboard where one is reachable: to the terminal by
    /// OSC 52 (which xterm, kitty, iTerm2, WezTerm and tmux with set-clipboard take), and to
    /// `wl-copy` or `xclip` when a Wayland or X display is there and the tool is installed.
    func publish(_ text: String) {
        terminal.write("\u{1B}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}")
        let environment = ProcessInfo.processInfo.environment
        let tool: [String]? =
            environment["WAYLAND_DISPLAY"] != nil
            ? Self.executable("wl-copy").map { [$0] }
            : environment["DISPLAY"] != nil
                ? Self.executable("xclip").map { [$0, "-selection", "clipboard"] } : nil
        guard let tool else { return }
        DispatchQueue.global().async { Self.pipe(text, to: tool) }
    }

    private static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs `arguments` with `text` on its standard input and its output to /dev/null, and
    /// waits for it (off the main actor).
    nonisolated private static func pipe(_ text: String, to arguments: [String]) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { return }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        close(fds[0])
        if spawned == 0 {
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let result = bytes.withUnsafeBytes {
                    write(fds[1], $0.baseAddress! + written, $0.count - written)
                }
                if result < 0, errno == EINTR { continue }
                if result <= 0 { break }
                written += result
            }
        }
        close(fds[1])
        if spawned == 0 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        }
    }
}
