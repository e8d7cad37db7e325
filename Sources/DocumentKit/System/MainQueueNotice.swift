import Foundation

/// Posts notifications that observers added with `queue: .main` can receive from the main actor.
///
/// Foundation's `NotificationCenter` runs a `.main` observer inline only when
/// `OperationQueue.current` is `.main`; otherwise it adds the block to the main queue and
/// waits for it. Under an async `main` or `swift test` the main actor runs on the main
/// dispatch queue but on a worker thread, where `OperationQueue.current` is nil, so a post
/// from the main actor waits for the queue it is running on, forever. A UIDocument app's
/// usual state observer (`queue: .main`) would hang the first time the state changed.
///
/// So a post is synchronous where Foundation can deliver it synchronously (on the main
/// thread of a run loop, or inside an operation of `OperationQueue.main`) and is otherwise
/// delivered from the next operation of `OperationQueue.main`, in the order posted. Every
/// observer, `.main` or `nil`, then runs on the main queue, as it would on Apple's platforms.
enum MainQueueNotice {
    static func post(_ name: Notification.Name, object: AnyObject?, userInfo: [AnyHashable: Any]? = nil) {
        if OperationQueue.current === OperationQueue.main {
            NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
            return
        }
        let notification = UncheckedNotification(Notification(name: name, object: object, userInfo: userInfo))
        OperationQueue.main.addOperation {
            NotificationCenter.default.post(notification.value)
        }
    }

    /// A notification handed to the main queue; its object and user info are only read there.
    private struct UncheckedNotification: @unchecked Sendable {
        let value: Notification
        init(_ value: Notification) { self.value = value }
    }
}

/// Runs `body` on the main actor from any thread, synchronously, the way UIKit calls
/// `load(fromContents:)` on the main queue from its reading queue.
nonisolated func onMainActor<T: Sendable>(_ body: @MainActor () throws -> T) throws -> T {
    if isOnMainQueue {
        return try MainActor.assumeIsolated { try body() }
    }
    return try withoutActuallyEscaping(body) { body in
        nonisolated(unsafe) var result: Result<T, any Error>?
        DispatchQueue.main.sync {
            result = Result { try MainActor.assumeIsolated { try body() } }
        }
        return try result!.get()
    }
}

/// Whether the caller runs on the main queue (the main actor's executor), which under
/// `dispatchMain()` or Swift Testing is a thread other than the main one.
nonisolated var isOnMainQueue: Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()
