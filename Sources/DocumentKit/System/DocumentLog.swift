import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where DocumentKit reports what no one can be asked about: warnings from coordination and
/// the version store, and errors at exit or at a signal. Standard error unless the app sends
/// it elsewhere, as an editor drawing on the terminal must.
///
/// For example:
///
/// ```swift
/// try DocumentLog.redirect(to: logFolder.appendingPathComponent("ste.log"))
/// ```
public enum DocumentLog {
    /// Writes one line, prefixed with "DocumentKit: ", to ``destination``.
    static func write(_ message: String) {
        let line = Data("DocumentKit: \(message)\n".utf8)
        destination.withLock { handle in (handle ?? FileHandle.standardError).write(line) }
        recent.withLock { lines in
            lines.append(message)
            if lines.count > 256 { lines.removeFirst(lines.count - 256) }
        }
    }

    /// The last 256 messages written, oldest first, for a test to ask what was reported.
    package static var recentMessages: [String] { recent.withLock { $0 } }
    private static let recent = Mutex<[String]>([])

    /// Where ``write(_:)`` goes: nil for standard error.
    static let destination = Mutex<FileHandle?>(nil)

    /// Sends DocumentKit's messages (warnings from coordination and the version store,
    /// errors no app handled) to the file at `url`, appended, created with mode 0600.
    ///
    /// - Throws: ``DocumentKitError`` if the file cannot be opened; messages then stay on
    ///   standard error.
    public static func redirect(to url: URL) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DocumentKitError(Errno.current, operation: "open the log", url: url)
        }
        destination.withLock { $0 = FileHandle(fileDescriptor: fd, closeOnDealloc: true) }
    }
}
