import Foundation

/// An object that edits a document and may hold changes it has not handed to the document
/// yet, such as a text view in the middle of a typing burst (AppKit's `NSEditor`).
///
/// An editor tells the document with ``Document/objectDidBeginEditing(_:)`` when it starts
/// holding such changes. Until it calls ``Document/objectDidEndEditing(_:)``, the document
/// asks it to commit them before it saves, closes, answers another writer, or takes another
/// writer's file, so that typing younger than the editor's own pause is never left out of a
/// save or a conflict version.
///
/// For example:
///
/// ```swift
/// final class TextView: DocumentEditor {
///     func keyTyped() {
///         if !editing { document.objectDidBeginEditing(self); editing = true }
///         pending += key
///     }
///     func commitEditing() -> Bool {
///         document.text += pending
///         pending = ""
///         editing = false
///         document.objectDidEndEditing(self)
///         return true
///     }
/// }
/// ```
@MainActor
public protocol DocumentEditor: AnyObject {
    /// Hands every pending change to the document now.
    ///
    /// - Returns: Whether the changes are in the document.
    func commitEditing() -> Bool
}

extension Document {
    /// Notes that `editor` holds changes not yet in the document (`NSDocument`'s method of
    /// the same name). The document keeps a weak reference.
    public func objectDidBeginEditing(_ editor: any DocumentEditor) {
        let key = ObjectIdentifier(editor)
        if editors[key]?.editor == nil { editors[key] = WeakEditor(editor: editor) }
        editGeneration &+= 1
    }

    /// Notes that `editor` has handed over its changes.
    public func objectDidEndEditing(_ editor: any DocumentEditor) {
        editors.removeValue(forKey: ObjectIdentifier(editor))
    }

    /// Whether an editor holds changes it has not handed to the document yet.
    var hasEditsInProgress: Bool {
        editors.values.contains { $0.editor != nil }
    }

    /// Makes everything the user typed count now: every editor commits its pending changes,
    /// and the undo group this turn opened is closed (a save that checks
    /// ``hasUnsavedChanges`` before the turn ends would otherwise miss the edit).
    func commitPendingEdits() {
        for (key, entry) in editors {
            guard let editor = entry.editor else {
                editors.removeValue(forKey: key)
                continue
            }
            _ = editor.commitEditing()
        }
        #if !canImport(ObjectiveC)
            storedUndoManager?.closeEventGroup()
        #endif
    }

    struct WeakEditor {
        weak var editor: (any DocumentEditor)?
    }
}
