import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Asks for a passphrase on the controlling terminal (`/dev/tty`), what is typed not shown, as
/// `ssh` and `gpg` ask: never from standard input, which a script may be feeding documents
/// through, and never when there is no terminal (an agent, a cron job), where it answers nil.
enum PassphrasePrompt {
    /// The terminal's settings while echo is off, put back by an interrupt before the process
    /// ends (SIGINT's handler can capture nothing).
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var terminal: CInt = -1

    /// The line typed after `question`, without its line end; nil when there is no terminal or
    /// the input ended first.
    @Sendable static func ask(_ question: String) -> String? {
        guard
            let tty = try? FileDescriptor.open(
                URL(fileURLWithPath: "/dev/tty"), O_RDWR | O_NOCTTY | O_CLOEXEC, operation: "open")
        else { return nil }
        var settings = termios()
        guard tcgetattr(tty.rawValue, &settings) == 0 else { return nil }
        saved = settings
        terminal = tty.rawValue
        let restore: @convention(c) (CInt) -> Void = { signal in
            tcsetattr(PassphrasePrompt.terminal, TCSANOW, &PassphrasePrompt.saved)
            _exit(128 + signal)
        }
        let previousInterrupt = Glibc.signal(SIGINT, restore)
        let previousTerminate = Glibc.signal(SIGTERM, restore)
        defer {
            _ = Glibc.signal(SIGINT, previousInterrupt)
            _ = Glibc.signal(SIGTERM, previousTerminate)
        }
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        // Echo off before the question, and nothing typed discarded: an answer typed as soon as
        // the question shows is read whole, never half echoed.
        guard tcsetattr(tty.rawValue, TCSANOW, &quiet) == 0 else { return nil }
        defer { tcsetattr(tty.rawValue, TCSANOW, &saved) }
        try? Array(question.utf8).withUnsafeBytes { try tty.writeAll($0) }
        // One byte at a time up to the line's end, at most 4 KiB: a passphrase, not a file.
        var line: [UInt8] = []
        defer { line.withUnsafeMutableBytes { wipe($0) } }
        var byte: UInt8 = 0
        while line.count < 4096 {
            let count = withUnsafeMutableBytes(of: &byte) { Syscall.read(tty.rawValue, $0) }
            guard case .success(1) = count else {
                return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }

    /// Overwrites the bytes typed once they are a string (which itself cannot be wiped).
    private static func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        explicit_bzero(base, bytes.count)
    }
}
