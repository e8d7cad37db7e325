import Foundation

/// The state of a document: closed, in conflict, failing to save, and so on.
///
/// The raw values are UIKit's, so code that stores or compares them behaves the same.
///
/// For example:
///
/// ```swift
/// if document.documentState.contains(.inConflict) {
///     showConflictResolution()
/// }
/// ```
public struct DocumentState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The document is open, editing is enabled, and nothing is wrong.
    public static let normal: DocumentState = []
    /// The document is not open: before `open` and after `close`.
    public static let closed = DocumentState(rawValue: 1 << 0)
    /// Conflict versions of the document's file exist and are unresolved.
    public static let inConflict = DocumentState(rawValue: 1 << 1)
    /// The last save failed; the document still has its unsaved changes.
    public static let savingError = DocumentState(rawValue: 1 << 2)
    /// The app must not change the document now, for example while it is reverting.
    public static let editingDisabled = DocumentState(rawValue: 1 << 3)
    /// The document is loading or saving and ``Document/progress`` reports how far along.
    public static let progressAvailable = DocumentState(rawValue: 1 << 4)

    public var description: String {
        if isEmpty { return "normal" }
        let names: [(DocumentState, String)] = [
            (.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"),
            (.editingDisabled, "editingDisabled"), (.progressAvailable, "progressAvailable"),
        ]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: ", ")
    }
}

extension Document {
    /// UIKit's name for ``DocumentState``.
    public typealias State = DocumentState

    /// Posted on the main actor, with the document as the object, whenever ``documentState``
    /// changes.
    public static let stateChangedNotification = Notification.Name("UIDocumentStateChangedNotification")

    /// How a change affects the document's change count.
    public enum ChangeKind: Int, Sendable {
        /// A change was made.
        case done = 0
        /// A change was undone.
        case undone = 1
        /// The document was saved or otherwise brought in line with its file: nothing is unsaved.
        case clear = 2
        /// An undone change was redone.
        case redone = 5
    }

    /// Whether a save writes a new file or replaces the existing one.
    public enum SaveOperation: Int, Sendable {
        /// Write a new file; fails if one already exists at the URL.
        case forCreating = 0
        /// Replace the document's file.
        case forOverwriting = 1
    }
}
