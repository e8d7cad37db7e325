// A folder presenter as Mac and iOS apps write one: an NSObject with its own operation queue
// and mutable state, told when files inside the folder appear or change. Only the imports
// differ from the Apple-platform code.
import DocumentKit
import Foundation

public class FolderWatcher: NSObject, NSFilePresenter {
    public let presentedItemURL: URL?
    public let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let lock = NSLock()
    private var seen: [String] = []

    public init(folder: URL) {
        presentedItemURL = folder
        super.init()
        NSFileCoordinator.addFilePresenter(self)
    }

    public func stop() {
        NSFileCoordinator.removeFilePresenter(self)
    }

    public var events: [String] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    private func record(_ event: String) {
        lock.lock()
        seen.append(event)
        lock.unlock()
    }

    public func presentedSubitemDidAppear(at url: URL) {
        record("appeared \(url.lastPathComponent)")
    }

    public func presentedSubitemDidChange(at url: URL) {
        record("changed \(url.lastPathComponent)")
    }

    public func presentedItemDidChange() {
        record("folder changed")
    }
}
