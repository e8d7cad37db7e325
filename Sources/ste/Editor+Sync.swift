import DocumentKit
import Foundation
import TextContainer

extension Editor {
    /// Reads the sync agent's status again when its file changed; true when it did.
    @discardableResult
    func refreshSyncStatus() -> Bool {
        guard let ubiquity else { return false }
        let file = SyncStateFiles.status(forContainer: ubiquity.url)
        let stamp = FileStatus(path: file.path)?.statusChange
        guard stamp != syncStatusStamp else { return false }
        syncStatusStamp = stamp
        syncStatus = UbiquityStatus.read(file)
        return true
    }

    /// The container's sync state in words for the status line: nil when the container is
    /// not a ubiquity container.
    var syncSummary: String? {
        guard let ubiquity else { return nil }
        guard let syncStatus else {
            return UbiquityAgent.isRunning(for: ubiquity.url)
                ? "sync: starting" : "sync: not running (F5 starts it)"
        }
        return "sync: " + syncStatus.summary
    }

    /// F5: asks the agent to sync now (starting it if none runs) and shows the details.
    func syncNow() {
        guard let container, let ubiquity else {
            return show(
                "This container is not synced: add a remote with docs remote add NAME URL", isError: true)
        }
        // Asked for: started even when this process started one a moment ago.
        UbiquityAgent.start(forContainerAt: container.url, isRequestedByUser: true)
        UbiquityAgent.wake(forContainerAt: container.url)
        var details = "Syncing with \(ubiquity.remote)"
        if let syncStatus {
            details +=
                ": \(syncStatus.summary), \(syncStatus.synced.count) synced, updated \(timeFormatter.string(from: syncStatus.updated))"
            if let selectedURL {
                let path = selectedURL.lastPathComponent
                if let error = syncStatus.uploadErrors[path] ?? syncStatus.downloadErrors[path] {
                    return show("\(details); this document: \(error)", isError: true)
                }
            }
        }
        show(details + "; syncing now", isError: false)
    }
}
