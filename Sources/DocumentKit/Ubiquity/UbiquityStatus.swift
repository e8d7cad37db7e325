import Foundation

/// Where a ubiquity container stands with its remote, as its sync agent last published it:
/// what the query's ubiquitous attributes, `docs status` and the editor's status line show.
///
/// The agent writes it beside the container's journal (``SyncStateFiles``) at the start and
/// end of every pass and, throttled, as transfers go; any process reads it, and a query
/// watches it. An item the agent recorded as synced whose file has changed since (another
/// size, modification time or inode) reads as not uploaded, so a save shows at once, before
/// the agent's next pass.
public struct UbiquityStatus: Codable, Sendable, Equatable {
    /// The container's state, in a word.
    public enum State: String, Codable, Sendable {
        /// The last pass finished with nothing left to do.
        case upToDate = "up to date"
        /// A pass is under way.
        case syncing
        /// The remote could not be reached; ``offlineSince`` says since when.
        case offline
        /// The last pass failed, or some items could not be synced; ``message`` says what.
        case error
        /// Sync is paused until someone checks (a mass delete, a vanished folder).
        case paused
    }

    public var state: State
    /// When the agent wrote this.
    public var updated: Date
    /// The remote, as messages name it.
    public var remote: String
    /// What went wrong, in words, for ``State/error``, ``State/offline`` and ``State/paused``.
    public var message: String?
    /// When the remote was first found unreachable, while it still is.
    public var offlineSince: Date?
    /// When a pass last reached the remote and finished (to the minute).
    public var reached: Date?
    /// Each synced file, by path in the container, with the inode, size and modification time
    /// (nanoseconds since 1970) it had when it was synced. Kept in a file of its own beside
    /// the status (``syncedURL(of:)``), written only when it changes.
    public var synced: [String: [Int64]] = [:]
    /// The stamp of the sync journal's items that the list of synced files was made from: the
    /// agent makes the list again only when the journal's stamp moved since (a pass over
    /// 100,000 files that changed nothing spent a third of its own time remaking it).
    package var syncedStamp: String?
    /// Files this pass still has to upload (the first of them may be under way).
    public var uploading: [String] = []
    /// Files this pass still has to download (the first of them may be under way).
    public var downloading: [String] = []
    /// The percent done of the transfers under way, by path.
    public var percent: [String: Double] = [:]
    /// Why a file could not be uploaded, by path, until a pass uploads it.
    public var uploadErrors: [String: String] = [:]
    /// Why a file could not be downloaded, by path, until a pass downloads it.
    public var downloadErrors: [String: String] = [:]
    /// While ``State/paused``: why, and what would be deleted (at most
    /// ``SyncPause/publishedNames`` names a side), for the user to decide
    /// (``UbiquityAgent/resume(forContainerAt:pause:decision:)``).
    public var pause: SyncPause?

    public init(state: State, updated: Date = Date(), remote: String) {
        self.state = state
        self.updated = updated
        self.remote = remote
    }

    /// The status the agent of the container at `container` published last, or nil when none
    /// has run.
    public static func read(forContainer container: URL) -> UbiquityStatus? {
        read(SyncStateFiles.status(forContainer: container))
    }

    /// The status in the file at `url`, or nil when there is none or it cannot be read.
    ///
    /// - Parameter withSynced: Whether to read the list of synced files too (``synced``); the
    ///   agent, which makes the list again at the end of every pass, does not.
    package static func read(_ url: URL, withSynced: Bool = true) -> UbiquityStatus? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard var status = try? decoder.decode(UbiquityStatus.self, from: data) else { return nil }
        // The synced files are in a file of their own (an agent before it kept them here).
        if withSynced, let list = FileManager.default.contents(atPath: syncedURL(of: url).path) {
            status.synced = parseSynced(list)
        }
        return status
    }

    /// The file beside the status at `url` that lists the synced files: rewritten only when
    /// the list changed, so that a pass that changed nothing does not rewrite (or re-encode) a
    /// line for every file of the container.
    package static func syncedURL(of url: URL) -> URL {
        url.deletingPathExtension().appendingPathExtension("synced")
    }

    /// ``synced`` as its file holds it: a record a file, sorted by path, each
    /// `inode size modification path` ended by a NUL (which no path holds).
    package static func encodeSynced(_ synced: [String: [Int64]]) -> Data {
        var data = Data()
        data.reserveCapacity(synced.count * 64)
        for (path, record) in synced.sorted(by: { $0.key < $1.key }) {
            guard record.count == 3 else { continue }
            appendSynced(path: path, record, to: &data)
        }
        return data
    }

    /// Appends the record of one synced file (its ``record(of:)`` fields) to a list as
    /// ``encodeSynced(_:)`` makes it: for a writer that makes the list from rows in path
    /// order, without holding them all.
    package static func appendSynced(path: String, _ record: [Int64], to data: inout Data) {
        for field in record {
            data.append(contentsOf: String(field).utf8)
            data.append(0x20)
        }
        data.append(contentsOf: path.utf8)
        data.append(0)
    }

    /// Writes `list` (``encodeSynced(_:)``'s format) as the list of synced files beside the
    /// status at `url`, unless it holds those bytes already; makes the folder (0700) if it is
    /// missing. The list is written before the status that names its stamp.
    package static func writeSynced(_ list: Data, besideStatusAt url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let listURL = syncedURL(of: url)
        if FileManager.default.contents(atPath: listURL.path) != list {
            try SafeSave.write(list, to: listURL, permissions: 0o600)
        }
    }

    /// The records of a synced-files list; a record that is not one is passed over.
    package static func parseSynced(_ data: Data) -> [String: [Int64]] {
        var synced: [String: [Int64]] = [:]
        for record in data.split(separator: 0) {
            var fields: [Int64] = []
            var start = record.startIndex
            while fields.count < 3, let space = record[start...].firstIndex(of: 0x20) {
                guard let value = Int64(String(decoding: record[start..<space], as: UTF8.self)) else { break }
                fields.append(value)
                start = record.index(after: space)
            }
            guard fields.count == 3, start < record.endIndex else { continue }
            synced[String(decoding: record[start...], as: UTF8.self)] = fields
        }
        return synced
    }

    /// Writes the status safely to `url` (readable by its owner only), making its folder
    /// (mode 0700) if it is missing.
    ///
    /// - Parameter withSynced: Whether to write the list of synced files too (when it
    ///   changed); false leaves the list there as it is (an agent that did not read it).
    package func write(to url: URL, withSynced: Bool = true) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        // The synced files first, and only when they changed: a reader that sees the new status
        // finds its list.
        if withSynced { try Self.writeSynced(Self.encodeSynced(synced), besideStatusAt: url) }
        var rest = self
        rest.synced = [:]
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        try SafeSave.write(try encoder.encode(rest), to: url, permissions: 0o600)
    }

    /// What the record of a synced file holds: inode, size and modification time.
    package static func record(of status: FileStatus) -> [Int64] {
        [
            Int64(bitPattern: status.inode), status.size,
            status.modification.seconds &* 1_000_000_000 &+ Int64(status.modification.nanoseconds),
        ]
    }

    /// Where one item stands, in the terms of Apple's ubiquitous item attributes.
    public struct ItemState: Sendable, Equatable {
        /// The item's bytes are on the remote as they are here (`…IsUploadedKey`).
        public var isUploaded: Bool
        /// The item is waiting for or in its upload (`…IsUploadingKey`).
        public var isUploading: Bool
        /// The item is waiting for or in its download (`…IsDownloadingKey`).
        public var isDownloading: Bool
        /// Only a placeholder is here: the document is on the server only.
        public var isOnServerOnly: Bool
        /// A download of the item was asked for and is not done
        /// (`…DownloadRequestedKey`): the item is waiting for or in its download, or, kept on the
        /// server only, an app asked for it (`startDownloadingUbiquitousItem(at:)`) before the
        /// agent took the request.
        public var isDownloadRequested = false
        /// Percent of the upload or download under way.
        public var percent: Double?
        public var uploadError: String?
        public var downloadError: String?
    }

    /// The files waiting for transfers, as sets: what ``item(_:status:pending:)`` looks in.
    package struct Pending: Sendable {
        var uploading: Set<String>
        var downloading: Set<String>
    }

    package var pending: Pending { Pending(uploading: Set(uploading), downloading: Set(downloading)) }

    /// Where the item at `path` (relative to the container), whose file is `status` here,
    /// stands; `pending` is this status's ``pending``, made once for many items.
    package func item(_ path: String, status: FileStatus?, pending: Pending? = nil) -> ItemState {
        let pending = pending ?? self.pending
        let recorded = synced[path]
        let current = status.map(Self.record(of:))
        let uploadingNow = pending.uploading.contains(path)
        let downloadingNow = pending.downloading.contains(path)
        return ItemState(
            isUploaded: recorded != nil && recorded == current && !uploadingNow,
            isUploading: uploadingNow, isDownloading: downloadingNow,
            isOnServerOnly: status == nil, isDownloadRequested: downloadingNow, percent: percent[path],
            uploadError: uploadErrors[path], downloadError: downloadErrors[path])
    }

    /// The container's state in words, for a status line: "up to date", "3 to upload",
    /// "offline since 14:02", "error: …".
    public var summary: String {
        switch state {
        case .upToDate:
            return uploadErrors.isEmpty && downloadErrors.isEmpty
                ? "up to date" : "\(uploadErrors.count + downloadErrors.count) not synced"
        case .syncing:
            var parts: [String] = []
            if !uploading.isEmpty { parts.append("\(uploading.count) to upload") }
            if !downloading.isEmpty { parts.append("\(downloading.count) to download") }
            return parts.isEmpty ? "syncing" : parts.joined(separator: ", ")
        case .offline:
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm"
            return "offline since \(formatter.string(from: offlineSince ?? updated))"
        case .error: return "error: \(message ?? "sync failed")"
        case .paused: return "paused: \(message ?? "check, then resume")"
        }
    }
}
