// Generic document code as libraries write it against UIKit and AppKit, where documents are
// made from a metatype (`T(fileURL:)`): it compiles against DocumentKit built with the trait
// RequiredDocumentInitializers, and this scenario checks what it does. Exits 0 when every
// check holds, 1 naming the first that does not.
import DocumentKit
import Foundation

/// A generic document manager's two calls.
@MainActor func open<T: UIDocument>(_ type: T.Type, at url: URL) -> T { T(fileURL: url) }
@MainActor func read<T: NSDocument>(_ type: T.Type, at url: URL, ofType typeName: String) throws -> T {
    try T(contentsOf: url, ofType: typeName)
}

/// A UIDocument subclass that overrides the initializer: `required`, as the trait asks.
final class NoteDocument: UIDocument {
    var text = ""
    var opened = false

    required init(fileURL url: URL) {
        super.init(fileURL: url)
        opened = true
    }

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        text = String(decoding: contents as? Data ?? Data(), as: UTF8.self)
    }
}

/// One that declares no initializer and inherits the required one.
final class PlainDocument: UIDocument {
    var bytes = Data()
    override func contents(forType typeName: String) throws -> Any { bytes }
    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        bytes = contents as? Data ?? Data()
    }
}

/// An NSDocument subclass, made through `T(contentsOf:ofType:)`.
final class SketchDocument: NSDocument {
    var text = ""
    override func data(ofType typeName: String) throws -> Data { Data(text.utf8) }
    override func read(from data: Data, ofType typeName: String) throws {
        let text = String(decoding: data, as: UTF8.self)
        MainActor.assumeIsolated { self.text = text }
    }
}

func check(_ condition: Bool, _ what: String) {
    guard !condition else { return }
    print("required-initializers: failed: \(what)")
    exit(1)
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
    "required-initializers-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let url = folder.appendingPathComponent("note.txt")
try Data("hello".utf8).write(to: url)

let note = open(NoteDocument.self, at: url)
check(note.opened, "the subclass's required init(fileURL:) ran")
check(await note.open(), "the note opened")
check(note.text == "hello", "the note reads its file: \(note.text)")
note.text = "hello again"
note.updateChangeCount(.done)
check(await note.close(), "the note saved and closed")
check((try? String(contentsOf: url, encoding: .utf8)) == "hello again", "the note's save reached its file")

let plain = open(PlainDocument.self, at: url)
check(await plain.open(), "the inheriting subclass opened")
check(plain.bytes == Data("hello again".utf8), "the inheriting subclass reads its file")
let plainClosed: Bool = await plain.close()
check(plainClosed, "the inheriting subclass closed")

let sketch = try read(SketchDocument.self, at: url, ofType: "public.plain-text")
check(sketch.text == "hello again", "the NSDocument made from its metatype read the file: \(sketch.text)")
check(sketch.fileURL?.standardizedFileURL == url.standardizedFileURL, "the NSDocument is the file's")
let sketchClosed: Bool = await sketch.close()
check(sketchClosed, "the NSDocument closed")
print("required-initializers: generic managers made and used documents of three classes")
