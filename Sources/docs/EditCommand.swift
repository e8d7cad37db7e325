import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `docs edit NAME`: the document's text in `$EDITOR`, saved back as a document save.
///
/// The document is not held open or locked while the editor runs (that could be hours, and
/// would stall every other writer). Instead the text is copied out, and on the way back the
/// document is opened again: if its text is no longer the one copied out, another program
/// changed it meanwhile, and the edit is kept aside instead of overwriting that change. The
/// document's own save check covers the moment between that open and the save.
@MainActor
enum EditCommand {
    static func run(_ container: TextContainer, name: String) async throws {
        let url: URL
        do {
            url = try container.url(forExistingDocumentNamed: name)
        } catch {
            throw DocsFailure.cannot("edit", name, error)
        }
        let original = try await openText(of: url, name: name)

        let originalBytes = Data(original.utf8)
        let folder = try makeTemporaryFolder(name: name, document: url, original: originalBytes)
        let copy = folder.appendingPathComponent(url.lastPathComponent)
        do {
            try originalBytes.write(to: copy)
        } catch {
            removeTemporaryFolder(folder)
            throw DocsFailure.failure(
                "cannot edit “\(name)”: cannot write a copy to edit in \(folder.path): \(error.localizedDescription)"
            )
        }

        let editor = ProcessInfo.processInfo.environment["EDITOR"].flatMap { $0.isEmpty ? nil : $0 } ?? "vi"
        let status = runEditor(editor, on: copy.path)
        guard status.succeeded else {
            removeTemporaryFolder(folder)
            throw DocsFailure.failure(
                "cannot edit “\(name)”: the editor (\(editor)) \(status.description); the document is unchanged"
            )
        }

        let editedBytes: Data
        do {
            editedBytes = try Data(contentsOf: copy)
        } catch {
            EditCopies.keep(folder)
            throw DocsFailure.failure(
                "cannot edit “\(name)”: cannot read the edited copy \(copy.path): \(error.localizedDescription)"
            )
        }
        if editedBytes == originalBytes {
            removeTemporaryFolder(folder)
            return
        }
        let edited: String
        do {
            edited = try SimpleTextDocument.decodeUTF8(editedBytes)
        } catch let error as InvalidTextError {
            EditCopies.keep(folder)
            throw DocsFailure.failure(
                "cannot save “\(name)”: \(notText("the edited text", error)); the document is unchanged and your text is kept in \(copy.path)"
            )
        }

        let document = SimpleTextDocument(fileURL: url)
        document.delegate = QuietDelegate.shared
        guard await document.open() else {
            EditCopies.keep(folder)
            throw DocsFailure.failure(
                "cannot save “\(name)”: \(reason(document.lastError)); your text is kept in \(copy.path)")
        }
        guard document.documentText == original else {
            EditCopies.keep(folder)
            _ = await document.close()
            throw DocsFailure.failure(
                "cannot save “\(name)”: another program changed it while you were editing; the document keeps their text and yours is kept in \(copy.path)"
            )
        }
        document.documentText = edited
        let saved = await document.save(to: url, for: .forOverwriting)
        let error = document.lastError
        _ = await document.close()
        guard saved else {
            EditCopies.keep(folder)
            throw DocsFailure.failure(
                "cannot save “\(name)”: \(reason(error)); your text is kept in \(copy.path)")
        }
        removeTemporaryFolder(folder)
    }

    /// The document's text, to copy out; a read-only document is refused here, before the
    /// editor runs: saving the edit back would replace a file whose mode says it is not to be
    /// written, without a word. The rule is the document's own (``Document/isLocked``).
    private static func openText(of url: URL, name: String) async throws -> String {
        let document = SimpleTextDocument(fileURL: url)
        document.delegate = QuietDelegate.shared
        guard await document.open() else {
            throw DocsFailure.failure("cannot edit “\(name)”: \(reason(document.lastError))")
        }
        let text = document.documentText
        let locked = document.isLocked
        _ = await document.close()
        if locked {
            let mode = FileStatus(path: url.path).map { ", mode " + String($0.permissions, radix: 8) } ?? ""
            throw DocsFailure.failure(
                "cannot edit “\(name)”: \(url.path) is read-only (no write permission\(mode)); the editor was not started and the document is unchanged"
            )
        }
        return text
    }

    private static func reason(_ error: (any Error)?) -> String {
        switch error {
        case let error as DocumentKitError: return DocsFailure.reason(for: error)
        case let error as InvalidTextError: return error.description
        case let error?: return "\(error)"
        case nil: return "the document could not be opened"
        }
    }

    /// A folder for the copy, where a killed `docs edit` leaves nothing for good: see
    /// ``EditCopies``, whose sweep of earlier runs' leftovers runs first.
    private static func makeTemporaryFolder(name: String, document: URL, original: Data) throws -> URL {
        EditCopies.sweep()
        do {
            return try EditCopies.make(for: document, original: original)
        } catch {
            throw DocsFailure.failure(
                "cannot edit “\(name)”: cannot make a folder for the copy to edit: \(error)")
        }
    }

    private static func removeTemporaryFolder(_ folder: URL) {
        EditCopies.remove(folder)
    }

    /// How the editor ended.
    struct EditorStatus: CustomStringConvertible {
        var exitStatus: Int32?
        var signal: Int32?
        var launchError: Int32?

        var succeeded: Bool { exitStatus == 0 }

        var description: String {
            if let launchError { return "could not be started: \(String(cString: strerror(launchError)))" }
            if let signal { return "was killed by signal \(signal)" }
            if exitStatus == 127 { return "was not found (exit status 127)" }
            return "exited with status \(exitStatus ?? -1)"
        }
    }

    /// Runs `editor` through `sh` (so `EDITOR="code --wait"` works) on this terminal, in this
    /// process group so that it can read the keyboard, and waits for it. Like `system(3)`,
    /// `docs` ignores SIGINT and SIGQUIT meanwhile: they are the editor's to handle.
    static func runEditor(_ editor: String, on path: String) -> EditorStatus {
        let arguments = ["sh", "-c", editor + " \"$@\"", "sh", path]
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArguments.append(nil)
        defer { for argument in cArguments { free(argument) } }

        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
        }
        // The child gets the default dispositions back.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        var child: pid_t = 0
        let spawned = posix_spawn(&child, "/bin/sh", nil, &attributes, cArguments, environ)
        guard spawned == 0 else { return EditorStatus(launchError: spawned) }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 {
            if errno != EINTR { return EditorStatus(launchError: errno) }
        }
        // WIFEXITED and friends are macros Swift does not import.
        let signalNumber = status & 0x7F
        if signalNumber == 0 { return EditorStatus(exitStatus: (status >> 8) & 0xFF) }
        return EditorStatus(signal: signalNumber)
    }
}
