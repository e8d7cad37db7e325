import DocumentKit
import Foundation

extension TextContainer {
    /// Renames a document under file coordination, so that an editor showing it follows it;
    /// never replaces a document that has the new name.
    ///
    /// For example:
    ///
    /// ```swift
    /// let moved = try container.renameDocument(named: "Draft", to: "Letter")   // …/Letter.txt
    /// ```
    ///
    /// - Returns: The document's new URL.
    /// - Throws: ``DocumentKitError``: `.invalidArgument` for a bad name, `.fileNotFound` when
    ///   there is no document `name`, `.fileExists` when `newName` is taken (nothing moves).
    @discardableResult
    public func renameDocument(named name: String, to newName: String) throws -> URL {
        let source = try url(forExistingDocumentNamed: name)
        let destination = try url(forDocumentNamed: newName)
        if FileManager.default.fileExists(atPath: destination.path) {
            throw DocumentKitError(
                .fileExists, operation: "rename the document", url: destination, errno: .fileExists,
                detail:
                    "a document named “\(Self.documentName(forFileName: destination.lastPathComponent))” already exists"
            )
        }
        let coordinator = FileCoordinator(filePresenter: nil)
        try coordinator.coordinate(
            writingItemAt: source, options: .forMoving, writingItemAt: destination, options: .forReplacing
        ) { from, to in
            try SafeSave.moveItem(at: from, to: to, operation: "rename the document")
            coordinator.item(at: from, didMoveTo: to)
        }
        return destination
    }

    /// Where sync sets aside a document that another device deleted: `Deleted` in the Simple
    /// Text Editor's application data folder (`$XDG_DATA_HOME/Simple Text Editor/Deleted`).
    /// `docs delete` and ste's ^D move documents to the desktop's trash instead (see
    /// ``deleteDocument(named:)``); documents deleted into this folder by earlier versions stay
    /// in it.
    public static var deletedDocumentsFolder: URL {
        StandardDirectories.current.applicationSupport(for: "Simple Text Editor")
            .appendingPathComponent("Deleted", isDirectory: true)
    }

    /// Deletes a document recoverably: moves it to the desktop's trash with
    /// `FileManager.trashItem(at:resultingItemURL:)`, a coordinated move, so that an editor
    /// showing it follows it there. The file managers, `gio trash` and trash-cli list it with
    /// its original path and restore it; its versions stay in the version store.
    ///
    /// A document deleted twice keeps both copies in the trash: the second is `NAME 2.txt`, and
    /// so on.
    ///
    /// - Returns: Where the document is now, in the trash.
    /// - Throws: ``DocumentKitError`` naming the document or the trash folder; the document is
    ///   where it was.
    @discardableResult
    public func deleteDocument(named name: String) throws -> URL {
        let source = try url(forExistingDocumentNamed: name)
        var trashed: NSURL?
        do {
            try FileManager.default.trashItem(at: source, resultingItemURL: &trashed)
        } catch let error as CocoaError {
            throw error.userInfo[NSUnderlyingErrorKey] as? DocumentKitError ?? error
        }
        guard let trashed = trashed as URL? else {
            throw DocumentKitError(
                .ioFailure, operation: "move the document to the trash", url: source,
                detail: "the trash gave no place for it")
        }
        return trashed
    }
}
