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

    /// Where deleted documents go: `Deleted` in the Simple Text Editor's application data
    /// folder (`$XDG_DATA_HOME/Simple Text Editor/Deleted`).
    public static var deletedDocumentsFolder: URL {
        StandardDirectories.current.applicationSupport(for: "Simple Text Editor")
            .appendingPathComponent("Deleted", isDirectory: true)
    }

    /// Deletes a document recoverably: moves it into ``deletedDocumentsFolder`` under file
    /// coordination, so that an editor showing it closes it without writing it back.
    ///
    /// A document deleted twice keeps both copies: the second is `NAME 2.txt`, and so on.
    ///
    /// - Returns: Where the document is now.
    /// - Throws: ``DocumentKitError`` naming the document or the Deleted folder.
    @discardableResult
    public func deleteDocument(named name: String) throws -> URL {
        let source = try url(forExistingDocumentNamed: name)
        let folder = Self.deletedDocumentsFolder
        // Private (0700), as sync keeps it: documents set aside may be as private as they were.
        try PrivateFolder.open(at: folder, operation: "create the folder for deleted documents")
        let coordinator = FileCoordinator(filePresenter: nil)
        // Names are taken by a no-replace move, so a race with another delete only moves on
        // to the next free name.
        for attempt in 1...1000 {
            let stem = source.deletingPathExtension().lastPathComponent
            let fileName =
                attempt == 1
                ? source.lastPathComponent
                : "\(Self.shortened(stem, leaving: Self.numberedSuffixRoom)) \(attempt).\(Self.fileExtension)"
            let destination = folder.appendingPathComponent(fileName)
            if FileManager.default.fileExists(atPath: destination.path) { continue }
            do {
                try coordinator.coordinate(
                    writingItemAt: source, options: .forDeleting, writingItemAt: destination,
                    options: .forReplacing
                ) { from, to in
                    try SafeSave.moveItem(
                        at: from, to: to, operation: "move the document to the Deleted folder")
                }
                return destination
            } catch Errno.fileExists {
                continue
            }
        }
        throw DocumentKitError(
            .fileExists, operation: "move the document to the Deleted folder", url: source,
            detail: "too many deleted documents with this name in \(folder.path)")
    }
}
