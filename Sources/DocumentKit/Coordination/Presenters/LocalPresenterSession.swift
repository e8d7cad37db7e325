import Foundation
import Synchronization

/// What a coordinated access is about to do to an item, as told to presenters.
struct AccessEvent: Sendable {
    enum Kind: String, Sendable, Codable {
        case read
        case write
    }

    var kind: Kind
    /// The canonical path of the item.
    var path: String
    /// The raw value of the reading or writing options.
    var options: UInt
    /// Whether the item existed when the access began: tells an appearing subitem from a changed one.
    var itemExisted: Bool

    var readingOptions: FileCoordinator.ReadingOptions { .init(rawValue: options) }
    var writingOptions: FileCoordinator.WritingOptions { .init(rawValue: options) }

    var isDeletion: Bool { kind == .write && writingOptions.contains(.forDeleting) }
    var isMove: Bool { kind == .write && writingOptions.contains(.forMoving) }
    var affectsDescendants: Bool { isDeletion || isMove }
}

/// What happened during a coordinated access, as told to presenters afterwards.
struct AccessOutcome: Sendable {
    /// Where the item moved, if the accessor reported a move with `item(at:didMoveTo:)`.
    var movedTo: String?
    /// Whether the item exists after the access.
    var itemExists: Bool
}

/// Asks this process's presenters to get out of the way of an access and tells them how it
/// went, each on its own queue, and never waiting on one longer than the bound.
final class LocalPresenterSession: Sendable {
    let event: AccessEvent
    let timeout: Duration
    private let reacquirers = Mutex<[@Sendable () -> Void]>([])
    private let participants: [(PresenterReference, PresenterRelation)]

    /// The presenters asked, with how they relate to the item.
    var presenters: [(any FilePresenter, PresenterRelation)] {
        participants.map { ($0.0.presenter, $0.1) }
    }

    init(event: AccessEvent, excluding excluded: (any FilePresenter)?, timeout: Duration) {
        self.event = event
        self.timeout = timeout
        participants = PresenterRegistry.shared.presenters(
            relatedTo: event.path, includingDescendants: event.affectsDescendants, excluding: excluded
        ).map { (PresenterReference($0.0), $0.1) }
    }

    var isEmpty: Bool { participants.isEmpty }

    /// Before the access: save, relinquish, or accommodate a deletion, as the access requires.
    func prepare() {
        guard !participants.isEmpty else { return }
        let url = URL(fileURLWithPath: event.path)
        for (presenter, relation) in presenters {
            switch (event.kind, relation) {
            case (.read, .item):
                let options = event.readingOptions
                if !options.contains(.withoutChanges) && !options.contains(.immediatelyAvailableMetadataOnly)
                {
                    save(presenter)
                }
                relinquish(presenter, toWriter: false)
            case (.write, .item), (.write, .descendant):
                if event.isDeletion {
                    ask(presenter, "accommodatePresentedItemDeletion") { presenter, done in
                        presenter.accommodatePresentedItemDeletion { _ in done() }
                    }
                } else {
                    if !event.writingOptions.contains(.contentIndependentMetadataOnly) { save(presenter) }
                    relinquish(presenter, toWriter: true)
                }
            case (.write, .ancestor):
                if event.isDeletion {
                    ask(presenter, "accommodatePresentedSubitemDeletion") { presenter, done in
                        presenter.accommodatePresentedSubitemDeletion(at: url) { _ in done() }
                    }
                }
            case (.read, .ancestor), (.read, .descendant):
                continue
            }
        }
    }

    /// After the access: give the item back and say what changed.
    func finish(_ outcome: AccessOutcome) {
        let taken = reacquirers.withLock { list in
            defer { list = [] }
            return list
        }
        for reacquire in taken { reacquire() }
        guard event.kind == .write, !participants.isEmpty else { return }
        let url = URL(fileURLWithPath: event.path)
        let newState = FileStatus(path: outcome.movedTo ?? event.path)
        for (presenter, relation) in presenters {
            switch relation {
            case .item:
                if let destination = outcome.movedTo {
                    PresenterRegistry.shared.updatePath(of: presenter, to: destination)
                    PresenterRegistry.shared.noteKnownState(of: presenter, newState)
                    let newURL = URL(fileURLWithPath: destination)
                    presenter.enqueue { presenter in presenter.presentedItemDidMove(to: newURL) }
                } else if !event.isDeletion {
                    PresenterRegistry.shared.noteKnownState(of: presenter, newState)
                    presenter.enqueue { presenter in presenter.presentedItemDidChange() }
                }
            case .ancestor:
                if let destination = outcome.movedTo {
                    let newURL = URL(fileURLWithPath: destination)
                    presenter.enqueue { presenter in presenter.presentedSubitem(at: url, didMoveTo: newURL) }
                } else if event.isDeletion {
                    continue
                } else if event.itemExisted {
                    presenter.enqueue { presenter in presenter.presentedSubitemDidChange(at: url) }
                } else if outcome.itemExists {
                    presenter.enqueue { presenter in presenter.presentedSubitemDidAppear(at: url) }
                }
            case .descendant:
                guard let destination = outcome.movedTo, let presented = presenter.presentedItemURL else {
                    continue
                }
                let old = CanonicalPath.of(presented)
                let suffix = String(old.dropFirst(event.path.count))
                let newPath = destination + suffix
                PresenterRegistry.shared.updatePath(of: presenter, to: newPath)
                let newURL = URL(fileURLWithPath: newPath)
                presenter.enqueue { presenter in presenter.presentedItemDidMove(to: newURL) }
            }
        }
    }

    private func save(_ presenter: any FilePresenter) {
        // Its own coordinated access is under way: see `PresenterRegistry.isInOwnAccess`.
        if PresenterRegistry.shared.isInOwnAccess(presenter) { return }
        ask(presenter, "savePresentedItemChanges") { presenter, done in
            presenter.savePresentedItemChanges { _ in done() }
        }
    }

    private func relinquish(_ presenter: any FilePresenter, toWriter: Bool) {
        ask(presenter, toWriter ? "relinquishPresentedItem(toWriter:)" : "relinquishPresentedItem(toReader:)")
        {
            presenter, done in
            let handOver: @Sendable ((@Sendable () -> Void)?) -> Void = { reacquirer in
                if let reacquirer { self.reacquirers.withLock { $0.append(reacquirer) } }
                done()
            }
            if toWriter {
                presenter.relinquishPresentedItem(toWriter: handOver)
            } else {
                presenter.relinquishPresentedItem(toReader: handOver)
            }
        }
    }

    /// Runs `body` on the presenter's queue and waits, at most ``timeout``, for it to call back.
    private func ask(
        _ presenter: any FilePresenter, _ what: String,
        _ body:
            @escaping @Sendable (_ presenter: any FilePresenter, _ done: @escaping @Sendable () -> Void) ->
            Void
    ) {
        let answered = DispatchSemaphore(value: 0)
        let once = OnceFlag()
        let done: @Sendable () -> Void = {
            if once.claim() { answered.signal() }
        }
        presenter.enqueue { presenter in body(presenter, done) }
        if answered.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .timedOut {
            CoordinationLog.warning(
                "a file presenter of \(event.path) did not answer \(what) within \(timeout); going on without it"
            )
        }
    }
}

/// A presenter handed to another thread. A presenter need not be Sendable (Apple's
/// `NSFilePresenter` is not): it is called on its ``FilePresenter/presentedItemOperationQueue``,
/// which is its promise of thread safety, and its URL and queue are read from any thread,
/// as Apple's coordination machinery reads them.
struct PresenterReference: @unchecked Sendable {
    let presenter: any FilePresenter
    init(_ presenter: any FilePresenter) { self.presenter = presenter }
}

extension FilePresenter {
    /// Runs `body` with this presenter on its own queue.
    func enqueue(_ body: @escaping @Sendable (any FilePresenter) -> Void) {
        let reference = PresenterReference(self)
        presentedItemOperationQueue.addOperation { body(reference.presenter) }
    }

    /// What the subitem calls do when a presenter does not implement them: Apple's
    /// `NSFilePresenter.h` says that then, "if the directory is actually a file package",
    /// `presentedItemDidChange` is invoked instead. A plain folder's presenter hears nothing.
    func presentedPackageDidChange() {
        guard let url = presentedItemURL, FilePackage.isPackage(url) else { return }
        presentedItemDidChange()
    }
}

/// File packages: folders that are one document.
enum FilePackage {
    /// Whether the folder at `url` is a package, by its extension's type in ``FileTypes``.
    static func isPackage(_ url: URL) -> Bool {
        let fileExtension = url.pathExtension
        guard !fileExtension.isEmpty else { return false }
        let types = FileTypes.shared
        let identifier = types.typeIdentifier(forFilenameExtension: fileExtension)
        return types.type(withIdentifier: identifier)?.isPackage ?? false
    }
}

/// Warnings from coordination, on standard error: a presenter that hangs must be visible.
enum CoordinationLog {
    static func warning(_ message: String) {
        DocumentLog.write("warning: \(message)")
    }
}

/// A flag that lets exactly one caller through, for callbacks that may be called twice.
final class OnceFlag: Sendable {
    private let taken = Atomic<Bool>(false)

    /// True the first time, false ever after.
    func claim() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}
