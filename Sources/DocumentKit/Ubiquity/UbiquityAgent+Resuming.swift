import Foundation

extension UbiquityAgent {
    /// Answers the paused sync of the container at `url` (``UbiquityStatus/pause``): leaves
    /// the decision for its agent (``SyncResumeRequest``), starts the agent if none runs, and
    /// wakes it, so that it acts now and goes on syncing.
    ///
    /// The agent acts only if `pause` is still the pause in force: an answer to a pause that
    /// was lifted or replaced meanwhile (the documents to delete changed) is dropped, and the
    /// new pause is published instead.
    ///
    /// - Parameters:
    ///   - url: The container.
    ///   - pause: The ``SyncPause/identifier`` of the pause the user saw.
    ///   - decision: Delete them, or keep them.
    /// - Throws: ``DocumentKitError`` when the request cannot be written.
    public static func resume(forContainerAt url: URL, pause: String, decision: SyncPause.Decision) throws {
        try SyncResumeRequest(decision: decision, pause: pause).write(forContainer: url)
        start(forContainerAt: url, isRequestedByUser: true)
        wake(forContainerAt: url)
    }
}
