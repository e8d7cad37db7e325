import Foundation
import Synchronization
import Testing

@testable import DocumentKit

/// A presenter that read its item before it was registered, as a document does: a change
/// another program made between that read and the watch being armed raised no event the
/// watch could see, and was never heard (StoreHygieneTests' outside change, under a loaded CI
/// machine, waited a minute for a reload that never came).
@Suite struct LateRegistrationTests {
    private final class ReadFirstPresenter: FilePresenter, PresentedItemOwner, @unchecked Sendable {
        let presentedItemURL: URL?
        let presentedItemOperationQueue: OperationQueue = {
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            return queue
        }()
        let presentedItem: PresentedItem
        let changes = Mutex(0)

        init(url: URL) {
            presentedItemURL = url
            presentedItem = PresentedItem(url: url)
            presentedItem.state.withLock { $0.seenState = FileStatus(path: url.path) }
        }

        func presentedItemDidChange() { changes.withLock { $0 += 1 } }
    }

    private func changes(of presenter: ReadFirstPresenter, settling seconds: Double) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, presenter.changes.withLock({ $0 }) == 0 { usleep(10_000) }
        Thread.sleep(forTimeInterval: 0.3)
        return presenter.changes.withLock { $0 }
    }

    @Test func aChangeBetweenTheReadAndTheRegistrationIsHeardOnce() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("as read\n", to: "n.txt")
        let presenter = ReadFirstPresenter(url: file)
        try shell("echo 'written before the watch' > '\(file.path)'")
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }
        #expect(changes(of: presenter, settling: 10) == 1)
    }

    @Test func anItemUnchangedSinceTheReadIsNotReported() throws {
        let tree = try TemporaryTree()
        let file = try tree.write("as read\n", to: "n.txt")
        let presenter = ReadFirstPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }
        #expect(changes(of: presenter, settling: 0.5) == 0)
    }
}
