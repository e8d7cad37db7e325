import DocumentKit
import Foundation

/// The document of the Simple Text Editor: one UTF-8 text file, edited with undo and saved
/// by autosave, ported from Apple's `STESimpleTextDocument`.
///
/// Setting ``documentText`` registers an undo action named "Text Change"; the undo manager's
/// closed group marks the document changed, which is what starts autosave. Loading
/// (opening, reverting) replaces the text without registering undo and then tells the
/// ``delegate``.
///
/// Unlike the seed, a file that is not valid UTF-8 is refused rather than decoded with
/// replacement characters (or to nil): opening fails with an error naming the file and the
/// offset of the first bad byte, and the file is left as it was, so the next save cannot
/// overwrite the user's bytes with mangled text.
///
/// For example:
///
/// ```swift
/// let document = SimpleTextDocument(fileURL: url)
/// document.delegate = editorView
/// if await document.open() {
///     document.documentText += "more"        // undoable, autosaved
///     document.undoManager.undo()
/// }
/// ```
@MainActor
public final class SimpleTextDocument: UIDocument {
    /// Told when the document replaces its own text: after every load.
    public weak var delegate: (any SimpleTextDocumentDelegate)?

    /// The text of the document. Setting a different text registers its undo under the
    /// action name "Text Change".
    public var documentText: String {
        get { storedText }
        set {
            let oldText = storedText
            // Setting what is already there is not an edit: no undo step, nothing to save.
            guard newValue != oldText else { return }
            storedText = newValue
            undoManager.setActionName(Self.textChangeActionName)
            undoManager.registerUndo(withTarget: self) { $0.documentText = oldText }
        }
    }

    /// The undo action name of a text change, as the seed names it.
    public static let textChangeActionName = "Text Change"

    private var storedText = ""

    /// The last error this document reported: a failed open, save or revert.
    public private(set) var lastError: (any Error)?

    /// The text as UTF-8 bytes.
    public override func contents(forType typeName: String) throws -> Any {
        Data(storedText.utf8)
    }

    /// Takes the file's bytes as UTF-8 text (no bytes is an empty text) and tells the delegate.
    ///
    /// - Throws: ``InvalidTextError`` if the bytes are not valid UTF-8; the text is unchanged.
    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else {
            throw InvalidTextError(reason: .notAFile)
        }
        storedText = try Self.decodeUTF8(data)
        delegate?.documentContentsDidChange(self)
    }

    /// Records the error and hands it to the delegate, or, without one, logs it as `Document` does.
    public override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        lastError = error
        if let delegate {
            delegate.document(self, didFailWith: error)
            finishedHandlingError(error, recovered: false)
        } else {
            super.handleError(error, userInteractionPermitted: userInteractionPermitted)
        }
    }

    /// Decodes `data` as UTF-8, refusing invalid sequences.
    ///
    /// - Throws: ``InvalidTextError`` with the offset of the first byte that is not UTF-8.
    public static func decodeUTF8(_ data: Data) throws -> String {
        if let text = String(validating: data, as: UTF8.self) { return text }
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar):
                offset += scalar.count
            case .error:
                throw InvalidTextError(reason: .invalidUTF8(byteOffset: offset))
            case .emptyInput:
                // String(validating:) refused it, so the parser must have found the error.
                throw InvalidTextError(reason: .invalidUTF8(byteOffset: offset))
            }
        }
    }
}

/// The object a ``SimpleTextDocument`` tells when its contents change under it.
@MainActor
public protocol SimpleTextDocumentDelegate: AnyObject {
    /// The document loaded new text: it was opened or reverted, for instance because the file
    /// changed on disk. Show ``SimpleTextDocument/documentText`` again.
    func documentContentsDidChange(_ document: SimpleTextDocument)

    /// Opening, saving or reverting failed; `error` names the file and the reason. The
    /// default does nothing.
    func document(_ document: SimpleTextDocument, didFailWith error: any Error)
}

extension SimpleTextDocumentDelegate {
    public func document(_ document: SimpleTextDocument, didFailWith error: any Error) {}
}

/// Why a file could not be loaded as text.
public struct InvalidTextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the contents.
    public enum Reason: Sendable, Equatable {
        /// The bytes are not UTF-8; the first bad byte is at this offset from the start.
        case invalidUTF8(byteOffset: Int)
        /// The document is a folder, not a file.
        case notAFile
    }

    /// What is wrong with the contents.
    public var reason: Reason

    /// Creates an error.
    public init(reason: Reason) {
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .invalidUTF8(let offset):
            return "the file is not UTF-8 text (the byte at offset \(offset) is not valid UTF-8)"
        case .notAFile:
            return "a text document must be a file, not a folder"
        }
    }
}
