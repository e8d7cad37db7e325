// A Mac drawing document in today's Swift 6: an NSDocument whose model objects register their
// own undo with the document's undo manager, read and written as a property list. Only the
// imports differ from the AppKit code (`import Cocoa` there).
import DocumentKit
import Foundation

@MainActor
public final class Shape {
    public private(set) var name: String
    public private(set) var x: Double
    weak var document: SketchDocument?

    init(name: String, x: Double) {
        self.name = name
        self.x = x
    }

    /// Moves the shape, undoably, through the document's undo manager.
    public func move(to newX: Double) {
        let oldX = x
        x = newX
        document?.undoManager?.registerUndo(withTarget: self) { shape in
            MainActor.assumeIsolated { shape.move(to: oldX) }
        }
        document?.undoManager?.setActionName("Move \(name)")
    }
}

public final class SketchDocument: NSDocument {
    public private(set) var shapes: [Shape] = []

    public override class var autosavesInPlace: Bool { true }

    public func addShape(named name: String, at x: Double) {
        let shape = Shape(name: name, x: x)
        shape.document = self
        shapes.append(shape)
        undoManager?.registerUndo(withTarget: self) { document in
            MainActor.assumeIsolated { document.removeLastShape() }
        }
        undoManager?.setActionName("Add \(name)")
    }

    func removeLastShape() {
        shapes.removeLast()
    }

    public override func data(ofType typeName: String) throws -> Data {
        let list = shapes.map { ["name": $0.name, "x": $0.x] as [String: Any] }
        return try PropertyListSerialization.data(fromPropertyList: list, format: .binary, options: 0)
    }

    public override func read(from data: Data, ofType typeName: String) throws {
        guard
            let list = try PropertyListSerialization.propertyList(from: data, format: nil) as? [[String: Any]]
        else { throw CocoaError(.fileReadCorruptFile) }
        let entries = list.compactMap { entry -> (name: String, x: Double)? in
            guard let name = entry["name"] as? String, let x = entry["x"] as? Double else { return nil }
            return (name, x)
        }
        // read(from:ofType:) is nonisolated, as AppKit declares it; AppKit calls it on the
        // main thread for a class that does not read concurrently.
        MainActor.assumeIsolated {
            shapes = entries.map { entry in
                let shape = Shape(name: entry.name, x: entry.x)
                shape.document = self
                return shape
            }
        }
    }
}
