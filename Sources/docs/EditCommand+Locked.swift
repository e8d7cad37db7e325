import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

extension EditCommand {
    /// Refuses to edit a read-only document before the editor runs: saving the edit back
    /// would replace a file whose mode says it is not to be written, without a word.
    ///
    /// The rule is the document's own (``Document/isLocked``: no write bit in the file's
    /// mode, or none for this user). Anything else that stops the document opening is left
    /// for ``run(_:name:)`` to report as it always has.
    ///
    /// - Throws: ``DocsFailure`` naming the file, with exit status 1.
    static func refuseLockedDocument(_ container: TextContainer, name: String) async throws {
        guard let url = try? container.url(forExistingDocumentNamed: name) else { return }
        let document = SimpleTextDocument(fileURL: url)
        document.delegate = QuietDelegate.shared
        guard await document.open() else { return }
        let locked = document.isLocked
        _ = await document.close()
        guard locked else { return }
        var info = stat()
        let mode = stat(url.path, &info) == 0 ? ", mode " + String(info.st_mode & 0o7777, radix: 8) : ""
        throw DocsFailure.failure(
            "cannot edit “\(name)”: \(url.path) is read-only (no write permission\(mode)); the editor was not started and the document is unchanged"
        )
    }
}
