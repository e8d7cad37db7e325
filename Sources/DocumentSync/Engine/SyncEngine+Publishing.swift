import DocumentKit
import Foundation
import Synchronization

/// What an engine has published of its container's status, and when it last wrote it.
struct StatusPublication {
    var status: UbiquityStatus
    var written: UbiquityStatus?
    var lastWrite = ContinuousClock.now - .seconds(60)
    /// How long to wait after a write before the next one that is not forced: the status
    /// interval, or four times what the last write took when that is longer (the status of a
    /// pass over 100,000 files takes a tenth of a second to write; written every quarter of a
    /// second, it took half of the pass).
    var interval = SyncEngine.statusInterval
    /// The transfer under way: its path, size and the bytes moved so far.
    var transfer: (path: String, size: Int64, bytes: Int64)?
    /// Why the last write failed, for the pass's notes.
    var writeError: String?
}

extension SyncEngine {
    /// How often, at most, a pass rewrites its status while it runs.
    static let statusInterval = Duration.milliseconds(250)

    /// Changes the published status and writes it: at once when `force`, else when the last
    /// write is older than ``statusInterval``. Nothing is written unless the configuration
    /// publishes status, or when nothing but the time changed.
    func publish(force: Bool = false, _ change: (inout UbiquityStatus) -> Void) {
        guard configuration.publishesStatus else { return }
        let url = SyncStateFiles.status(forContainer: container, stateHome: configuration.stateHome)
        publication.withLock { publication in
            change(&publication.status)
            let now = ContinuousClock.now
            guard force || now - publication.lastWrite >= publication.interval else { return }
            var comparable = publication.status
            comparable.updated = publication.written?.updated ?? comparable.updated
            guard comparable != publication.written else { return }
            publication.status.updated = Date()
            do {
                try publication.status.write(to: url)
                publication.written = publication.status
                publication.lastWrite = now
                publication.interval = max(Self.statusInterval, (ContinuousClock.now - now) * 4)
                publication.writeError = nil
            } catch {
                // A status that cannot be written leaves the last one standing: sync goes on,
                // and the pass says so.
                publication.writeError = "the sync status \(url.path) could not be written: \(error)"
            }
        }
    }

    /// At the start of a pass with work to do: what it has to upload and download.
    func publishPlan(_ plan: SyncPlan) {
        guard configuration.publishesStatus, !plan.actions.isEmpty else { return }
        publish(force: true) { status in
            status.state = .syncing
            status.message = nil
            status.pause = nil
            status.uploading = []
            status.downloading = []
            for action in plan.actions {
                switch action {
                case .upload(let path, _, _), .reconcile(let path, _): status.uploading.append(path.string)
                case .download(let path, _, _): status.downloading.append(path.string)
                case .moveRemote(_, let to, _): status.uploading.append(to.string)
                case .moveLocal(_, let to, _): status.downloading.append(to.string)
                default: break
                }
            }
            // Last to be done first: each action's path is then found at the end (below).
            status.uploading.reverse()
            status.downloading.reverse()
            status.percent = [:]
        }
    }

    /// Before an action: the transfer it starts, if any.
    func publishStart(of action: SyncAction, size: Int64) {
        guard configuration.publishesStatus else { return }
        let path = action.path.string
        publication.withLock { $0.transfer = (path, max(size, 1), 0) }
        publish { $0.percent = [path: 0] }
    }

    /// After an action: done, or failed with `error`.
    func publishEnd(of action: SyncAction, error: (any Error)?) {
        guard configuration.publishesStatus else { return }
        let path = action.path.string
        let isDownload: Bool
        switch action {
        case .download, .moveLocal, .deleteLocal: isDownload = true
        default: isDownload = false
        }
        publication.withLock { $0.transfer = nil }
        publish { status in
            // Looked for from the end, where the plan's order puts it: a look at every path
            // per action was quadratic in the pass.
            if let index = status.uploading.lastIndex(of: path) { status.uploading.remove(at: index) }
            if let index = status.downloading.lastIndex(of: path) { status.downloading.remove(at: index) }
            status.percent[path] = nil
            if let error {
                if isDownload {
                    status.downloadErrors[path] = "\(error)"
                } else {
                    status.uploadErrors[path] = "\(error)"
                }
            } else {
                status.uploadErrors[path] = nil
                status.downloadErrors[path] = nil
            }
        }
    }

    /// Bytes of the transfer under way moved: its percent, throttled.
    func publishBytes(_ count: Int) {
        guard configuration.publishesStatus else { return }
        guard
            let (path, percent) = publication.withLock({ publication -> (String, Double)? in
                guard var transfer = publication.transfer else { return nil }
                transfer.bytes += Int64(count)
                publication.transfer = transfer
                return (transfer.path, min(100, Double(transfer.bytes) * 100 / Double(transfer.size)))
            })
        else { return }
        publish { $0.percent[path] = percent }
    }

    /// At the end of a pass: every synced file as the journal has it, and the outcome.
    func publishEnd(of summary: SyncSummary) {
        guard configuration.publishesStatus else { return }
        let synced = (try? journal.itemsByPath()) ?? [:]
        publish(force: true) { status in
            status.synced = [:]
            for (path, item) in synced where item.kind == .file {
                guard let local = item.local, local != .evicted, item.remoteTag != nil else { continue }
                status.synced[path.string] = [Int64(bitPattern: local.inode), local.size, local.modification]
            }
            status.uploading = []
            status.downloading = []
            status.percent = [:]
            status.offlineSince = nil
            let failed = status.uploadErrors.count + status.downloadErrors.count
            status.pause = nil
            status.state = failed == 0 ? .upToDate : .error
            status.message =
                failed == 0 ? nil : "\(failed) documents could not be synced; the next pass tries again"
        }
        if let error = publication.withLock({ $0.writeError }) { self.summary.notes.append(error) }
    }

    /// A pass that failed as a whole: offline when the remote could not be reached.
    func publishFailure(_ error: any Error) {
        guard configuration.publishesStatus else { return }
        let offline =
            lastListingFailure.map { [.timedOut, .connectionLost, .unavailable].contains($0.kind) } ?? false
        publish(force: true) { status in
            status.uploading = []
            status.downloading = []
            status.percent = [:]
            if let error = error as? SyncError, error.kind == .paused {
                status.state = .paused
                status.message = error.message
                status.pause = (try? pause)?.limited()
            } else if offline {
                if status.state != .offline { status.offlineSince = Date() }
                status.state = .offline
                status.message = "cannot reach \(remote.displayName)"
            } else {
                status.state = .error
                status.message = (error as? SyncError)?.message ?? "\(error)"
            }
        }
    }
}
