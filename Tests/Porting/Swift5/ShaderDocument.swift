// Shapes of the UIDocument API that model layers written for iOS in the Swift 5 language mode
// use, and that issue 29 found DocumentKit lacked: a subclass with an `init()` of its own
// beside `init(fileURL:)` and a bare `UIDocument()` (items 2), a save type given as an
// overridden `savingFileType` property (3), and a model class not isolated to the main actor
// that registers undo with its document's undo manager (8). Only the imports differ from the
// iOS code (`import UIKit` there).
import DocumentKit
import Foundation

/// A shader kept as JSON, saved as JSON whatever its file's extension says.
public class ShaderDocument: UIDocument {
    public var source = ""
    public var layers: [ShaderLayer] = []
    /// The type each save asked `contents(forType:)` for.
    public private(set) var typesWritten: [String] = []

    public override init(fileURL url: URL) {
        super.init(fileURL: url)
    }

    /// A new shader in the temporary folder, as the app's "New" button makes one.
    public init() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("MyShader-\(UUID()).shader")
        super.init(fileURL: url)
    }

    public override var savingFileType: String? { "public.json" }

    public override func contents(forType typeName: String) throws -> Any {
        typesWritten.append(typeName)
        return try JSONSerialization.data(withJSONObject: ["source": source])
    }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data,
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let source = object["source"] as? String
        else { throw CocoaError(.fileReadCorruptFile) }
        self.source = source
    }

    public func addLayer(named name: String) -> ShaderLayer {
        let layer = ShaderLayer(name: name)
        layer.undoManager = undoManager
        layers.append(layer)
        return layer
    }
}

/// A layer of the shader: a plain model class, not isolated to any actor, that records its
/// own undo as such classes did before Swift concurrency.
public final class ShaderLayer {
    public private(set) var name: String
    weak var undoManager: UndoManager?

    init(name: String) { self.name = name }

    public func rename(_ newName: String) {
        let oldName = name
        name = newName
        undoManager?.registerUndo(withTarget: self) { layer in
            layer.rename(oldName)
        }
        undoManager?.setActionName("Rename Layer")
    }
}

/// An untitled document of the base class, as `UIDocument()` makes one.
public func makeUntitledDocument() -> UIDocument {
    UIDocument()
}
