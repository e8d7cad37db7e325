// The same shapes in today's Swift 6: a UIDocument subclass that declares its own `init()`
// (no `override`: the inherited one is a convenience initializer on Apple's platforms too),
// saves as plain text whatever its extension (`savingFileType`), and registers undo from the
// main actor. Only the imports differ from the iOS code (`import UIKit` there).
import DocumentKit
import Foundation

public final class UntitledDraft: UIDocument {
    public var text = "" {
        didSet {
            let old = oldValue
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }

    public init() {
        super.init(
            fileURL: FileManager.default.temporaryDirectory.appendingPathComponent("Draft-\(UUID()).draft"))
    }

    public override init(fileURL url: URL) {
        super.init(fileURL: url)
    }

    public override var savingFileType: String? { "public.plain-text" }

    public override func contents(forType typeName: String) throws -> Any {
        guard typeName == "public.plain-text" else { throw CocoaError(.fileWriteUnknown) }
        return Data(text.utf8)
    }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
    }
}
