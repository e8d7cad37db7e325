// A generic document manager, a common library shape: `T(fileURL:)` from a metatype. Against
// Apple's SDK it compiles with `T: UIDocument`; here it needs the one change docs/Porting.md
// gives ("Constructing a document from a metatype"): a protocol naming the initializer, which
// each document class the manager makes conforms to.
import DocumentKit
import Foundation

// Linux: Apple's code constrains to `T: UIDocument` alone.
public protocol FileURLDocument: UIDocument {
    init(fileURL url: URL)
}

public final class DocumentManager {
    public static let shared = DocumentManager()
    private var open: [URL: UIDocument] = [:]

    /// The document at `url`, made once and kept.
    public func document<T: FileURLDocument>(_ type: T.Type, at url: URL) -> T {
        if let existing = open[url] as? T { return existing }
        let document = T(fileURL: url)
        open[url] = document
        return document
    }

    public func forget(_ url: URL) {
        open[url] = nil
    }
}

/// A plain-text note, one of the manager's document classes.
public final class NoteDocument: UIDocument {
    public var text = ""

    public override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
    }
}

// Linux: the one line the manager's document classes gain.
extension NoteDocument: FileURLDocument {}
