import DocumentKit
import Foundation
import Synchronization

/// Publishes a container's status (``UbiquityStatus``) for other processes, as a sync agent
/// does (``SyncConfiguration/publishesStatus``): the state of sync, what is being uploaded and
/// downloaded and how far, what failed, and every synced file as the journal has it.
///
/// The status file is written at once at the start and end of a pass and when it fails, and
/// otherwise at most every ``interval`` (or four times what the last write took, when that is
/// longer): the status of a pass over 100,000 files takes a tenth of a second to write, and
/// written every quarter of a second it took half of the pass. Nothing is written when nothing
/// but the time changed. A status that cannot be written leaves the last one standing: sync
/// goes on, and the pass says so.
///
/// It is `Sendable`: a remote may report an upload's bytes on a thread of its own.
final class StatusPublisher: Sendable {
    /// How often, at most, a pass rewrites its status while it runs.
    static let interval = Duration.milliseconds(250)

    /// What has been published, and when it was last written.
    private struct Publication {
        var status: UbiquityStatus
        var written: UbiquityStatus?
        var lastWrite: Duration
        /// How long to wait after a write before the next one that is not forced.
        var interval = StatusPublisher.interval
        /// The transfer under way: its path, size and the bytes moved so far.
        var transfer: (path: String, size: Int64, bytes: Int64)?
        /// Why the last write failed, for the pass's notes.
        var writeError: String?
        /// How the last listing of the remote failed, if it did: whether the remote is offline.
        var listingFailure: RemoteError?
        /// The journal's stamp (``UbiquityStatus/syncedStamp``) of the list of synced files on
        /// disk: made again only for another stamp, or none. The list is written at the end of
        /// a pass only; until then the one on disk stands.
        var listStamp: String?
    }

    private let publishes: Bool
    private let url: URL
    private let remoteName: String
    private let clock: any SyncClock
    private let publication: Mutex<Publication>

    /// The publisher of `container`'s status, starting from the status last published.
    init(container: URL, remote: any Remote, configuration: SyncConfiguration) {
        publishes = configuration.publishesStatus
        url = SyncStateFiles.status(forContainer: container, stateHome: configuration.stateHome)
        remoteName = remote.displayName
        clock = configuration.clock
        let published = UbiquityStatus.read(url, withSynced: false)
        var publication = Publication(
            status: published ?? UbiquityStatus(state: .syncing, remote: remote.displayName),
            lastWrite: configuration.clock.elapsed - .seconds(60))
        // The list is written before the status that names its stamp: a status on disk names
        // the stamp of the list beside it, or of an older one (a crash between the two).
        publication.listStamp = published?.syncedStamp
        self.publication = Mutex(publication)
    }

    /// Whether the list of synced files beside the status is there.
    private var listIsThere: Bool {
        FileManager.default.fileExists(atPath: UbiquityStatus.syncedURL(of: url).path)
    }

    /// Changes the published status and writes it: at once when `force`, else when the last
    /// write is older than the interval. Nothing is written unless the configuration
    /// publishes status, or when nothing but the time changed.
    private func publish(force: Bool = false, _ change: (inout UbiquityStatus) -> Void) {
        guard publishes else { return }
        publication.withLock { publication in
            change(&publication.status)
            let now = clock.elapsed
            guard force || now - publication.lastWrite >= publication.interval else { return }
            var comparable = publication.status
            comparable.updated = publication.written?.updated ?? comparable.updated
            guard comparable != publication.written else { return }
            publication.status.updated = clock.now
            do {
                try publication.status.write(to: url, withSynced: false)
                publication.written = publication.status
                publication.lastWrite = now
                publication.interval = max(Self.interval, (clock.elapsed - now) * 4)
                publication.writeError = nil
            } catch {
                publication.writeError = "the sync status \(url.path) could not be written: \(error)"
            }
        }
    }

    /// Remembers how the last listing of the remote went: nil when it was listed, else how it
    /// failed (a failure of the pass then says whether the remote is offline).
    func listed(failure: RemoteError?) {
        publication.withLock { $0.listingFailure = failure }
    }

    /// At the start of a pass with work to do: what it has to upload and download.
    func plan(_ plan: SyncPlan) {
        guard publishes, !plan.actions.isEmpty else { return }
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

    /// Before a transfer of `size` bytes to or from `path`.
    func start(ofTransferAt path: RemotePath, size: Int64) {
        guard publishes else { return }
        let path = path.string
        publication.withLock { $0.transfer = (path, max(size, 1), 0) }
        publish { $0.percent = [path: 0] }
    }

    /// After an action: done, or failed with `error`.
    func end(of action: SyncAction, error: (any Error)?) {
        guard publishes else { return }
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
    func bytes(_ count: Int) {
        guard publishes else { return }
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

    /// At the end of a pass: every synced file as the journal has it (`list`, as
    /// ``SyncJournal/encodedSyncedFiles()`` makes it), and the outcome.
    ///
    /// The list is made and written only when the journal's items changed since the list on
    /// disk was made (`stamp`, ``SyncJournal/itemsStamp()``, against
    /// ``UbiquityStatus/syncedStamp``), when it is gone, or when there is no stamp; it is
    /// written before the status that names its stamp. A list that cannot be made (nil) or
    /// written leaves the one on disk, and the status names no stamp, so that the next pass
    /// makes it again.
    ///
    /// - Returns: Why the status could not be written, for the pass's notes; nil when it was.
    func end(of summary: SyncSummary, stamp: String?, list: @autoclosure () -> Data?) -> String? {
        guard publishes else { return nil }
        let current = publication.withLock { $0.listStamp }
        var listed = stamp != nil && stamp == current && listIsThere
        var listError: String?
        if !listed, let list = list() {
            do {
                try UbiquityStatus.writeSynced(list, besideStatusAt: url)
                listed = true
            } catch {
                listError = "the list of synced files beside \(url.path) could not be written: \(error)"
            }
        }
        publication.withLock { $0.listStamp = listed ? stamp : nil }
        publish(force: true) { status in
            status.syncedStamp = listed ? stamp : nil
            status.uploading = []
            status.downloading = []
            status.percent = [:]
            status.offlineSince = nil
            // Kept to the minute: a pass that changed nothing else does not rewrite the status
            // for it more than once a minute.
            let now = clock.now
            if status.reached.map({ now.timeIntervalSince($0) >= 60 || now < $0 }) ?? true {
                status.reached = now
            }
            let failed = status.uploadErrors.count + status.downloadErrors.count
            status.pause = nil
            status.state = failed == 0 ? .upToDate : .error
            status.message =
                failed == 0 ? nil : "\(failed) documents could not be synced; the next pass tries again"
        }
        return listError ?? publication.withLock { $0.writeError }
    }

    /// A pass that failed as a whole: paused (with `pause`, the pause in force), offline when
    /// the remote could not be listed for want of an answer, else an error.
    func failure(_ error: any Error, pause: @autoclosure () -> SyncPause?) {
        guard publishes else { return }
        let offline =
            publication.withLock { $0.listingFailure }.map {
                [.timedOut, .connectionLost, .unavailable].contains($0.kind)
            } ?? false
        let paused = (error as? SyncError)?.kind == .paused ? pause()?.limited() : nil
        publish(force: true) { status in
            status.uploading = []
            status.downloading = []
            status.percent = [:]
            if let error = error as? SyncError, error.kind == .paused {
                status.state = .paused
                status.message = error.message
                status.pause = paused
            } else if offline {
                if status.state != .offline { status.offlineSince = clock.now }
                status.state = .offline
                status.message = "cannot reach \(remoteName)"
            } else {
                status.state = .error
                status.message = (error as? SyncError)?.message ?? "\(error)"
            }
        }
    }
}
