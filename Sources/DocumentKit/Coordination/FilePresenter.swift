import Foundation

/// An object that shows the user a file or folder and wants to hear when others touch it,
/// with `NSFilePresenter`'s API and semantics.
///
/// Register a presenter with ``FileCoordinator/addFilePresenter(_:)``. Before another
/// coordinated writer, in this process or any other, changes the item, the presenter is
/// asked to save (``savePresentedItemChanges(completionHandler:)``) and to relinquish the
/// item; afterwards it is told what happened (``presentedItemDidChange()``,
/// ``presentedItemDidMove(to:)``, and the subitem variants for a folder). Writes by programs
/// that do not coordinate, such as another editor or `git checkout`, arrive as the same
/// calls through inotify.
///
/// Every method has a default implementation; a presenter implements the ones it needs.
/// They are called on ``presentedItemOperationQueue``.
///
/// For example:
///
/// ```swift
/// final class Watcher: FilePresenter, @unchecked Sendable {
///     let presentedItemURL: URL?
///     let presentedItemOperationQueue = OperationQueue()
///     init(url: URL) { presentedItemURL = url }
///     func presentedItemDidChange() { print("changed elsewhere") }
/// }
/// let watcher = Watcher(url: url)
/// FileCoordinator.addFilePresenter(watcher)
/// ```
public protocol FilePresenter: AnyObject {
    /// The file or folder presented. `nil` while it has none; its calls then stop.
    var presentedItemURL: URL? { get }

    /// The queue the presenter's methods are called on. It must be serial or the
    /// presenter must tolerate concurrent calls.
    var presentedItemOperationQueue: OperationQueue { get }

    /// Another process or object is about to read the item: stop writing, then call
    /// `reader` with a block to run when the read is done.
    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)

    /// Another process or object is about to write the item: stop using it, then call
    /// `writer` with a block to run when the write is done.
    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)

    /// Save unsaved changes now, because another writer or reader needs the file current.
    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item is about to be deleted: close it, then call `completionHandler`.
    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item moved or was renamed to `newURL`.
    func presentedItemDidMove(to newURL: URL)

    /// The item's contents or attributes changed.
    func presentedItemDidChange()

    /// The contents or attributes of an item inside the presented folder, at any depth, changed.
    ///
    /// By default, for a presented file package (a folder whose extension ``FileTypes``
    /// registers as a package type), calls ``presentedItemDidChange()`` instead, as Apple's
    /// file coordination does for a presenter that does not implement this method.
    func presentedSubitemDidChange(at url: URL)

    /// An item appeared inside the presented folder, at any depth.
    ///
    /// By default, for a presented file package, calls ``presentedItemDidChange()`` instead.
    func presentedSubitemDidAppear(at url: URL)

    /// An item inside the presented folder moved; `newURL` may be outside the folder.
    ///
    /// By default, for a presented file package, calls ``presentedItemDidChange()`` instead.
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL)

    /// An item inside the presented folder is about to be deleted.
    func accommodatePresentedSubitemDeletion(
        at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// A version of the item was added, for example a conflict version.
    func presentedItemDidGain(_ version: FileVersion)

    /// A version of the item was removed.
    func presentedItemDidLose(_ version: FileVersion)

    /// A conflict version of the item was resolved.
    func presentedItemDidResolveConflict(_ version: FileVersion)
}

extension FilePresenter {
    public var presentedItemOperationQueue: OperationQueue { FilePresenterDefaults.queue }

    public func relinquishPresentedItem(
        toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        reader(nil)
    }

    public func relinquishPresentedItem(
        toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        writer(nil)
    }

    public func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }

    public func accommodatePresentedItemDeletion(
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        completionHandler(nil)
    }

    public func presentedItemDidMove(to newURL: URL) {}
    public func presentedItemDidChange() {}
    public func presentedSubitemDidChange(at url: URL) { presentedPackageDidChange() }
    public func presentedSubitemDidAppear(at url: URL) { presentedPackageDidChange() }
    public func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) { presentedPackageDidChange() }

    public func accommodatePresentedSubitemDeletion(
        at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        completionHandler(nil)
    }

    public func presentedItemDidGain(_ version: FileVersion) {}
    public func presentedItemDidLose(_ version: FileVersion) {}
    public func presentedItemDidResolveConflict(_ version: FileVersion) {}
}

enum FilePresenterDefaults {
    /// The queue presenters that name none are called on: serial, so calls arrive in order.
    static let queue: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "DocumentKit.FilePresenter"
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
}

/// A presenter another registered presenter acts for: a coordinator given it leaves that one
/// out of its own accesses. An `NSDocument` is one: the document machinery behind it is
/// the presenter registered, and `FileCoordinator(filePresenter: document)` must not message
/// the document about the document's own writes.
package protocol PresenterStandIn: FilePresenter {
    var presenterStoodInFor: any FilePresenter { get }
}
