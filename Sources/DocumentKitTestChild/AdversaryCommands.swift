import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the adversarial writer; returns false if `name` is not its command.
///
/// - `adversary PATH SCRIPT`: another program writing PATH at chosen instants. SCRIPT is a
///   comma-separated list of `KIND:MILLISECONDS` steps, each run after sleeping that long:
///   `i` writes in place, `r` replaces by rename (a safe save that keeps no attributes), `a`
///   appends, `c` replaces under a coordinated write, `d` deletes, `n` creates the file if it
///   is missing, `m` moves it away and back. What it writes never holds the test's words.
///   Prints "done" at the end. The test makes the script from its seed, so a run replays.
func runAdversaryCommand(_ name: String, _ arguments: [String]) -> Bool {
    guard name == "adversary" else { return false }
    guard arguments.count == 2 else { fail("usage: adversary PATH SCRIPT") }
    let path = arguments[0]
    let steps = arguments[1].split(separator: ",").compactMap { step -> (Character, UInt32)? in
        let parts = step.split(separator: ":")
        guard parts.count == 2, let kind = parts[0].first, let delay = UInt32(parts[1]) else { return nil }
        return (kind, delay)
    }
    let url = URL(fileURLWithPath: path)
    let aside = path + ".away"
    for (index, (kind, delay)) in steps.enumerated() {
        usleep(delay * 1000)
        let text = "child \(index) \(kind)\n"
        switch kind {
        case "i":
            let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            if fd >= 0 {
                _ = text.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, $0.count - 1) }
                close(fd)
            }
        case "r":
            let temporary = path + ".tmp"
            if FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) {
                rename(temporary, path)
            }
        case "a":
            let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
            if fd >= 0 {
                _ = text.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, $0.count - 1) }
                close(fd)
            }
        case "c":
            try? FileCoordinator().coordinate(writingItemAt: url, options: .forReplacing) { url in
                try SafeSave.write(Data(text.utf8), to: url)
            }
        case "d":
            unlink(path)
        case "n":
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            }
        case "m":
            if rename(path, aside) == 0 {
                usleep(5000)
                rename(aside, path)
            }
        default:
            fail("unknown step \(kind)")
        }
    }
    let done = Array("done\n".utf8)
    _ = done.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    return true
}
