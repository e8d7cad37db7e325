import DocumentKit
import Foundation
import TextContainer

#if canImport(Glibc)
    import Glibc
#endif

/// Where `docs edit` keeps the copy of a document it hands to `$EDITOR`: a private folder per
/// edit in `$XDG_DATA_HOME/Simple Text Editor/Editing`, named for the `docs` process, with the
/// text copied out (`.original`) and the document's path (`.document`) beside the copy.
///
/// A copy that a `docs` process told the user about (its text could not be saved back) is
/// marked kept and stays until the user deals with it. What a killed `docs edit` left is
/// swept at the next `docs edit`: an unedited copy goes; an edited one is the user's text,
/// never lost, so it becomes a conflict version of the document from this computer first.
enum EditCopies {
    static var folder: URL {
        StandardDirectories.current.applicationSupport(for: "Simple Text Editor")
            .appendingPathComponent("Editing", isDirectory: true)
    }

    /// A fresh private folder for one edit of `document`, whose text is `original`.
    static func make(for document: URL, original: Data) throws -> URL {
        let parent = folder
        try FileManager.default.createDirectory(
            at: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = Syscall.chmod(parent.path, 0o700)
        let made = parent.appendingPathComponent(
            "\(getpid())-\(UUID().uuidString.prefix(8))", isDirectory: true)
        if case .failure(let error) = Syscall.mkdirat(AT_FDCWD, made.path, 0o700) {
            throw DocumentKitError(error, operation: "make a folder for the copy to edit", url: made)
        }
        try original.write(to: made.appendingPathComponent(".original"))
        try Data(document.path.utf8).write(to: made.appendingPathComponent(".document"))
        return made
    }

    /// Marks the copy in `folder` as told to the user: it is never swept.
    static func keep(_ folder: URL) {
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(".kept").path, contents: nil)
    }

    /// Removes an edit's folder: renamed out of the way in one step first, so a `docs` killed
    /// while deleting leaves a folder the next sweep removes whole, never a copy without the
    /// path of its document (which the sweep could only keep, for ever).
    static func remove(_ folder: URL) {
        let doomed = folder.deletingLastPathComponent().appendingPathComponent(
            removingPrefix + folder.lastPathComponent, isDirectory: true)
        do {
            try FileManager.default.moveItem(at: folder, to: doomed)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            return
        }
        // Left for the next sweep if it fails: the name says it is being removed.
        try? FileManager.default.removeItem(at: doomed)
    }

    private static let removingPrefix = ".removing-"

    /// Deals with what killed `docs edit` runs left; see the type's summary.
    static func sweep() {
        let fileManager = FileManager.default
        // No folder of copies yet (or none readable): nothing was left to sweep.
        for name in ((try? DirectoryEntry.entries(ofFolderAt: folder)) ?? []).map(\.name) {
            if name.hasPrefix(removingPrefix) {
                // A folder a killed docs was removing: nothing in it is needed any more.
                try? fileManager.removeItem(at: folder.appendingPathComponent(name, isDirectory: true))
                continue
            }
            guard let owner = name.split(separator: "-").first.flatMap({ pid_t($0) }), owner != getpid(),
                kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            let edit = folder.appendingPathComponent(name, isDirectory: true)
            if fileManager.fileExists(atPath: edit.appendingPathComponent(".kept").path) { continue }
            let entries = ((try? DirectoryEntry.entries(ofFolderAt: edit)) ?? []).map(\.name)
            let original = try? Data(contentsOf: edit.appendingPathComponent(".original"))
            guard let copyName = entries.first(where: { !$0.hasPrefix(".") }),
                let copy = try? Data(contentsOf: edit.appendingPathComponent(copyName)), copy != original
            else {
                remove(edit)
                continue
            }
            let document =
                (try? String(contentsOf: edit.appendingPathComponent(".document"), encoding: .utf8))
                .map { URL(fileURLWithPath: $0) }
            do {
                guard let document, fileManager.fileExists(atPath: document.path) else {
                    throw DocumentKitError(
                        .fileNotFound, operation: "keep an interrupted edit", url: document)
                }
                try FileVersion.addConflictOfItem(
                    at: document, withContentsOf: edit.appendingPathComponent(copyName))
                remove(edit)
            } catch {
                // Nowhere better to keep it: the copy stays, and is no longer swept.
                keep(edit)
            }
        }
    }
}
