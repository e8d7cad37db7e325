// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Apple's global names (NSMetadataQuery…, NSUbiquity…, NSUndoManager…) are the porting contract.

#if !canImport(ObjectiveC)
    import Foundation

    /// The user-info key of a close-group notification whose value says whether the group is discardable.
    ///
    /// ``UndoManager`` puts this key in the `userInfo` of the
    /// `NSUndoManagerWillCloseUndoGroup` and `NSUndoManagerDidCloseUndoGroup` notifications, with a
    /// `Bool` value that is `true` when every action in the closing group was marked discardable with
    /// ``UndoManager/setActionIsDiscardable(_:)``.
    public let NSUndoManagerGroupIsDiscardableKey = "NSUndoManagerGroupIsDiscardableKey"

    extension Notification.Name {
        /// Posted when an undo manager checks whether grouping, undo or redo may proceed.
        ///
        /// ``UndoManager/beginUndoGrouping()`` posts it unless an undo or redo is in progress;
        /// ``UndoManager/endUndoGrouping()``, ``UndoManager/undo()``, ``UndoManager/redo()`` and
        /// ``UndoManager/canRedo`` post it too. The object is the undo manager.
        public static let NSUndoManagerCheckpoint = Notification.Name("NSUndoManagerCheckpointNotification")

        /// Posted after an undo manager opens an undo group; the object is the undo manager.
        public static let NSUndoManagerDidOpenUndoGroup = Notification.Name(
            "NSUndoManagerDidOpenUndoGroupNotification")

        /// Posted before an undo manager closes an undo group.
        ///
        /// The object is the undo manager; `userInfo` holds ``NSUndoManagerGroupIsDiscardableKey``.
        public static let NSUndoManagerWillCloseUndoGroup = Notification.Name(
            "NSUndoManagerWillCloseUndoGroupNotification")

        /// Posted after an undo manager closes an undo group.
        ///
        /// The object is the undo manager; `userInfo` holds ``NSUndoManagerGroupIsDiscardableKey``.
        /// When it is posted the group is already on the undo stack (or, while undoing, the redo
        /// stack), so observers that count changes see ``UndoManager/canUndo`` up to date. Observers
        /// that count user edits should ignore it while ``UndoManager/isUndoing`` or
        /// ``UndoManager/isRedoing`` is `true`: undo and redo record their inverse in a group of their
        /// own.
        public static let NSUndoManagerDidCloseUndoGroup = Notification.Name(
            "NSUndoManagerDidCloseUndoGroupNotification")

        /// Posted just before an undo manager performs an undo; the object is the undo manager.
        public static let NSUndoManagerWillUndoChange = Notification.Name(
            "NSUndoManagerWillUndoChangeNotification")

        /// Posted just after an undo manager performs an undo; the object is the undo manager.
        public static let NSUndoManagerDidUndoChange = Notification.Name(
            "NSUndoManagerDidUndoChangeNotification")

        /// Posted just before an undo manager performs a redo; the object is the undo manager.
        public static let NSUndoManagerWillRedoChange = Notification.Name(
            "NSUndoManagerWillRedoChangeNotification")

        /// Posted just after an undo manager performs a redo; the object is the undo manager.
        public static let NSUndoManagerDidRedoChange = Notification.Name(
            "NSUndoManagerDidRedoChangeNotification")
    }

    extension UndoManager {
        /// Posted when an undo manager checks whether grouping, undo or redo may proceed.
        ///
        /// The same name as `Notification.Name.NSUndoManagerCheckpoint`.
        nonisolated public static let checkpointNotification = Notification.Name.NSUndoManagerCheckpoint

        /// Posted after an undo manager opens an undo group.
        ///
        /// The same name as `Notification.Name.NSUndoManagerDidOpenUndoGroup`.
        nonisolated public static let didOpenUndoGroupNotification = Notification.Name
            .NSUndoManagerDidOpenUndoGroup

        /// Posted before an undo manager closes an undo group.
        ///
        /// The same name as `Notification.Name.NSUndoManagerWillCloseUndoGroup`.
        nonisolated public static let willCloseUndoGroupNotification = Notification.Name
            .NSUndoManagerWillCloseUndoGroup

        /// Posted after an undo manager closes an undo group.
        ///
        /// The same name as `Notification.Name.NSUndoManagerDidCloseUndoGroup`.
        nonisolated public static let didCloseUndoGroupNotification = Notification.Name
            .NSUndoManagerDidCloseUndoGroup

        /// Posted just before an undo manager performs an undo.
        ///
        /// The same name as `Notification.Name.NSUndoManagerWillUndoChange`.
        nonisolated public static let willUndoChangeNotification = Notification.Name
            .NSUndoManagerWillUndoChange

        /// Posted just after an undo manager performs an undo.
        ///
        /// The same name as `Notification.Name.NSUndoManagerDidUndoChange`.
        nonisolated public static let didUndoChangeNotification = Notification.Name.NSUndoManagerDidUndoChange

        /// Posted just before an undo manager performs a redo.
        ///
        /// The same name as `Notification.Name.NSUndoManagerWillRedoChange`.
        nonisolated public static let willRedoChangeNotification = Notification.Name
            .NSUndoManagerWillRedoChange

        /// Posted just after an undo manager performs a redo.
        ///
        /// The same name as `Notification.Name.NSUndoManagerDidRedoChange`.
        nonisolated public static let didRedoChangeNotification = Notification.Name.NSUndoManagerDidRedoChange

        // The two user-info dictionaries of the close-group notifications, built once: a fresh
        // `[String: Bool]` bridged to `[AnyHashable: Any]` for every post cost as much as the post.
        // Dictionaries are values, so observers cannot tell a shared one from a fresh one.
        private static let discardableGroupUserInfo: [AnyHashable: Any] = [
            NSUndoManagerGroupIsDiscardableKey: true
        ]
        private static let nondiscardableGroupUserInfo: [AnyHashable: Any] = [
            NSUndoManagerGroupIsDiscardableKey: false
        ]

        /// Posts `name` with this undo manager as the object, synchronously, to the default center.
        func post(_ name: Notification.Name) {
            NotificationCenter.default.post(Notification(name: name, object: self, userInfo: nil))
        }

        /// Posts a close-group notification, whose user info says whether the group is discardable.
        func post(_ name: Notification.Name, groupIsDiscardable: Bool) {
            let userInfo =
                groupIsDiscardable ? Self.discardableGroupUserInfo : Self.nondiscardableGroupUserInfo
            NotificationCenter.default.post(Notification(name: name, object: self, userInfo: userInfo))
        }
    }
#endif
