import DocumentKit
import Foundation

/// Where one item of a container stands with its remote.
public struct SyncItemStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Both sides hold what the journal recorded.
        case synced
        /// Changed or new here: the next pass uploads it.
        case toUpload = "to upload"
        /// Changed or new on the remote: the next pass downloads it.
        case toDownload = "to download"
        /// Changed on both sides: the next pass merges it or makes a conflict.
        case toReconcile = "changed on both sides"
        /// Deleted on one side: the next pass deletes it on the other.
        case toDelete = "to delete"
        /// Renamed on one side: the next pass moves it on the other.
        case toMove = "to move"
        /// It has unresolved conflict versions.
        case conflict
        /// The container has no remote yet, or the item is new to both.
        case notSynced = "not synced"
        /// Kept on the server only: a placeholder stands for it here (`docs download`).
        case onServerOnly = "on the server only"
    }

    /// The item's path in the container.
    public var path: String
    public var state: State

    public init(path: String, state: State) {
        self.path = path
        self.state = state
    }
}

extension SyncEngine {
    /// The remote the container's journal remembers: the address the last sync was given,
    /// with its settings; nil when the container has not synced.
    ///
    /// A journal of an older version remembers only the remote's display name: it is the
    /// URL for a folder and a WebDAV server, and is used as such.
    ///
    /// - Throws: ``SyncError`` of kind `.unusable` when the journal remembers an S3 store by
    ///   the display name of an older version, which lacks its settings (give the remote
    ///   again); what opening the journal throws.
    public static func rememberedRemote(
        ofContainer container: URL, configuration: SyncConfiguration = SyncConfiguration()
    ) throws -> RemoteAddress? {
        let url = SyncJournal.url(
            forContainer: URL(fileURLWithPath: CanonicalPath.of(container)),
            stateHome: configuration.stateHome)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let journal = try SyncJournal(url: url)
        if let address = try journal.setting(.remoteAddress).flatMap(RemoteAddress.init(encoded:)) {
            return address
        }
        guard let shown = try journal.setting(.remoteURL) else { return nil }
        // `s3://bucket/prefix at ENDPOINT`: the endpoint without its region, profile and
        // addressing, and not a URL; read as one, it would name the bucket on AWS.
        if shown.lowercased().hasPrefix("s3:") && shown.contains(" ") {
            throw SyncError(
                .unusable,
                "\(container.path) synced with \(shown), remembered by an older version without its settings; give the remote once again with --remote (and --endpoint, --region, --profile)"
            )
        }
        return RemoteAddress(url: shown)
    }

    /// The version each synced file's next merge starts from, by the file's path in the
    /// container: what pruning its history must keep (``VersionStore/pruneVersionsOfItem(at:keeping:)``).
    /// Empty when the container has not synced. Read-only, and usable while another process
    /// syncs the container.
    ///
    /// - Throws: What opening or reading the journal throws.
    public static func mergeBases(
        ofContainer container: URL, configuration: SyncConfiguration = SyncConfiguration()
    ) throws -> [String: String] {
        let url = SyncJournal.url(
            forContainer: URL(fileURLWithPath: CanonicalPath.of(container)),
            stateHome: configuration.stateHome)
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        var bases: [String: String] = [:]
        for (path, item) in try SyncJournal(url: url).itemsByPath() {
            if let base = item.baseVersion { bases[path.string] = base }
        }
        return bases
    }

    /// Where each item of the container stands, by what a pass would do now: read-only, and
    /// usable while another process syncs the container.
    ///
    /// - Throws: ``SyncError`` when the remote cannot be listed.
    public static func status(
        ofContainer container: URL, remote: any Remote, configuration: SyncConfiguration = SyncConfiguration()
    ) throws -> [SyncItemStatus] {
        try status(ofContainer: container, remote: Optional(remote), configuration: configuration)
    }

    /// Where each item of the container stands by what a pass would do if the remote were as
    /// the journal last saw it: what waits here to upload, move or delete, and the conflicts,
    /// while the remote cannot be reached. Read-only, and usable while another process syncs
    /// the container.
    ///
    /// - Throws: What opening the journal or scanning the container throws.
    public static func statusAsLastSeen(
        ofContainer container: URL, configuration: SyncConfiguration = SyncConfiguration()
    ) throws -> [SyncItemStatus] {
        try status(ofContainer: container, remote: nil, configuration: configuration)
    }

    private static func status(
        ofContainer container: URL, remote: (any Remote)?, configuration: SyncConfiguration
    ) throws -> [SyncItemStatus] {
        let container = URL(fileURLWithPath: CanonicalPath.of(container), isDirectory: true)
        let journalURL = SyncJournal.url(forContainer: container, stateHome: configuration.stateHome)
        let journal =
            FileManager.default.fileExists(atPath: journalURL.path) ? try SyncJournal(url: journalURL) : nil
        let known = try journal?.itemsByPath() ?? [:]
        let scanned: SyncScan
        do {
            scanned = try SyncScan(container, known: known, remote: remote, configuration: configuration)
        } catch let error as RemoteError {
            throw SyncError(.failed, "cannot list \(remote?.displayName ?? "the remote"): \(error)")
        }
        let (local, remoteTree, plan) = (scanned.local, scanned.remote, scanned.plan)
        var states: [RemotePath: SyncItemStatus.State] = [:]
        for path in Set(known.keys).union(local.keys).union(remoteTree.keys)
        where (known[path]?.kind ?? local[path]?.kind ?? remoteTree[path]?.kind) == .file {
            states[path] = known[path] == nil ? .notSynced : .synced
        }
        for path in scanned.placeholders where local[path] == nil && known[path] != nil {
            states[path] = .onServerOnly
        }
        for action in plan.actions {
            switch action {
            case .upload(let path, _, _): states[path] = .toUpload
            case .download(let path, _, _): states[path] = .toDownload
            case .reconcile(let path, _): states[path] = .toReconcile
            case .deleteRemote(let path, _), .deleteLocal(let path): states[path] = .toDelete
            case .moveRemote(let from, let to, _), .moveLocal(let from, let to, _):
                states[from] = nil
                states[to] = .toMove
            case .placeholder(let path, _): states[path] = .onServerOnly
            case .removePlaceholder(let path, let forget): if forget { states[path] = nil }
            case .recordLocalStatus, .forget, .forgetIfGone, .makeRemoteFolder, .makeLocalFolder,
                .recordFolder,
                .deleteRemoteFolder, .deleteLocalFolder:
                break
            }
        }
        for path in states.keys where local[path] != nil {
            if configuration.versionStore.hasUnresolvedConflicts(
                itemAt: container.appendingPathComponent(path.string))
            {
                states[path] = .conflict
            }
        }
        return states.map { SyncItemStatus(path: $0.key.string, state: $0.value) }.sorted {
            $0.path < $1.path
        }
    }
}
