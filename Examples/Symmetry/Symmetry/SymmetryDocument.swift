import DocumentKit
import Foundation

/// The drawing of Symmetry: an array of ``SymmetryShape`` model objects archived with
/// `NSKeyedArchiver` into `Symmetry.archive` in the user's Documents folder, ported from the
/// seed's `Document` class onto `UIDocument`.
///
/// The seed's four parts map onto the document's lifecycle: its `path` is
/// ``archiveURL(in:)``; `load` and `create` are ``launch(in:)``, which opens the archive or,
/// when there is none, creates an empty one; `save` at `applicationWillTerminate:` is the
/// DocumentKit termination hook, which saves the open, changed document when the process
/// quits normally or is told to by a signal.
///
/// Better than the seed: an archive that cannot be read makes ``launch(in:)`` throw an
/// error naming the file, and the file is left alone; the seed would carry on with no
/// array and its next save would replace the user's drawing with an empty one.
///
/// For example:
///
/// ```swift
/// let drawing = try await SymmetryDocument.launch()   // at launch
/// drawing.append(SymmetryShape(kind: .circle, points: points, color: red, folds: 6))
/// // nothing else to do: the drawing is saved as the process quits
/// ```
@MainActor
public final class SymmetryDocument: UIDocument {
    /// The archive's file name, fixed as in the seed.
    public static let archiveName = "Symmetry.archive"

    /// Where the drawing lives: `Symmetry.archive` in the Documents folder.
    ///
    /// - Parameter directories: The user's folders; by default the process's.
    public static func archiveURL(in directories: StandardDirectories = .current) -> URL {
        directories.documents.appendingPathComponent(archiveName, isDirectory: false)
    }

    /// Opens the drawing at launch, creating an empty archive (and the Documents folder) if
    /// there is none yet. From then on the drawing is saved when the process quits.
    ///
    /// - Parameter directories: The user's folders; by default the process's.
    /// - Returns: The open document.
    /// - Throws: `DocumentKitError` naming the archive if it exists but cannot be read (it is
    ///   left untouched), or if it cannot be created.
    public static func launch(in directories: StandardDirectories = .current) async throws -> SymmetryDocument
    {
        let url = archiveURL(in: directories)
        if !FileManager.default.fileExists(atPath: url.path) {
            let document = SymmetryDocument(fileURL: url)
            try document.makeParentFolder()
            if await document.save(to: url, for: .forCreating) { return document }
            // Another process may have created it first; then open theirs.
            guard let error = document.lastError as? DocumentKitError, error.code == .fileExists else {
                throw document.lastError
                    ?? DocumentKitError(.ioFailure, operation: "create the drawing", url: url)
            }
        }
        let document = SymmetryDocument(fileURL: url)
        guard await document.open() else {
            throw document.lastError ?? DocumentKitError(.ioFailure, operation: "open the drawing", url: url)
        }
        return document
    }

    /// The shapes of the drawing, in drawing order.
    public private(set) var shapes: [SymmetryShape] = []

    /// Adds a shape on top of the drawing.
    public func append(_ shape: SymmetryShape) {
        shapes.append(shape)
        updateChangeCount(.done)
    }

    /// Removes the shape at `index`.
    public func removeShape(at index: Int) {
        shapes.remove(at: index)
        updateChangeCount(.done)
    }

    /// The last error the document reported: a failed open or save.
    public private(set) var lastError: (any Error)?

    /// Archives the array as the archive's root object, the way the seed's
    /// `archiveRootObject:toFile:` did.
    ///
    /// - Throws: ``KeyedArchiveError`` if Foundation cannot produce the archive.
    public override func contents(forType typeName: String) throws -> Any {
        try Self.archive(shapes)
    }

    /// Reads the array of shapes.
    ///
    /// - Throws: ``KeyedArchiveError`` when the contents are not a Symmetry archive; the
    ///   drawing is unchanged and opening fails with an error naming the file.
    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else {
            throw KeyedArchiveError(.notAKeyedArchive, "\(Self.archiveName) must be a file, not a folder")
        }
        shapes = try Self.shapes(fromArchive: data)
    }

    /// Records the error, then reports it as `Document` does; while the document is not open
    /// (during ``launch(in:)``) it is only recorded, because ``launch(in:)`` throws it instead.
    public override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        lastError = error
        if documentState.contains(.closed) {
            finishedHandlingError(error, recovered: false)
        } else {
            super.handleError(error, userInteractionPermitted: userInteractionPermitted)
        }
    }

    /// The archive of `shapes`: a keyed archive whose root object is the array.
    ///
    /// - Throws: ``KeyedArchiveError`` if Foundation cannot produce it.
    public nonisolated static func archive(_ shapes: [SymmetryShape]) throws -> Data {
        try SymmetryArchive.classes.archive { archiver in
            archiver.encode(shapes as NSArray, forKey: NSKeyedArchiveRootObjectKey)
        }
    }

    /// The shapes in a `Symmetry.archive`.
    ///
    /// - Throws: ``KeyedArchiveError`` if `data` is not a keyed archive of shapes.
    public nonisolated static func shapes(fromArchive data: Data) throws -> [SymmetryShape] {
        let classes = SymmetryArchive.classes
        let unarchiver = try classes.unarchiver(for: data)
        let root = unarchiver.decodeObject(of: classes.allowedClasses, forKey: NSKeyedArchiveRootObjectKey)
        try classes.finish(unarchiver)
        guard let shapes = root as? [SymmetryShape] else {
            throw KeyedArchiveError(.missingValue, "the archive holds no array of shapes")
        }
        return shapes
    }

    private func makeParentFolder() throws {
        let folder = fileURL.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw DocumentKitError(
                .ioFailure, operation: "create the Documents folder", url: folder,
                detail: KeyedArchiveClasses.reason(error))
        }
    }
}
