import DocumentKit
import Foundation

/// What the journal remembers of one item of a synced container: how it was on both sides
/// the last time they agreed.
///
/// Reconciliation is three-way against these rows: a local edit is a change from
/// ``local`` (then from ``syncedHash``), a remote edit a change from ``remoteTag``.
///
/// For example:
///
/// ```swift
/// var item = JournalItem(path: RemotePath("Notes/plan.txt"), kind: .file)
/// item.remoteTag = tag
/// item.syncedHash = ContentHash(of: bytes).hex
/// item.local = JournalItem.LocalStatus(FileStatus(path: url.path)!)
/// try journal.upsert(item)
/// ```
package struct JournalItem: Hashable, Sendable {
    /// The local file's status when the journal last looked: a change in any field means the
    /// file may have changed, and is hashed to know.
    package struct LocalStatus: Hashable, Sendable {
        package var inode: UInt64
        package var size: Int64
        /// The modification time, in nanoseconds since 1970.
        package var modification: Int64
        /// The status-change time, in nanoseconds since 1970.
        package var statusChange: Int64

        package init(inode: UInt64, size: Int64, modification: Int64, statusChange: Int64) {
            self.inode = inode
            self.size = size
            self.modification = modification
            self.statusChange = statusChange
        }

        /// A file the journal knows was here but never looked at (a download a crash cut short):
        /// whatever is found there is hashed, and nothing found there is a deletion.
        package static let unseen = LocalStatus(inode: 0, size: -1, modification: 0, statusChange: 0)

        /// A document kept on the server only, which a placeholder stands for here: its
        /// placeholder gone (and no file in its place) is a deletion here.
        package static let evicted = LocalStatus(inode: 0, size: -2, modification: 0, statusChange: 0)

        /// The fields of a look at the file.
        package init(_ status: FileStatus) {
            self.init(
                inode: status.inode, size: status.size,
                modification: Self.nanoseconds(status.modification),
                statusChange: Self.nanoseconds(status.statusChange))
        }

        private static func nanoseconds(_ time: FileStatus.Timestamp) -> Int64 {
            time.seconds &* 1_000_000_000 &+ Int64(time.nanoseconds)
        }
    }

    /// The item's path in the container and on the remote.
    package var path: RemotePath
    package var kind: RemoteEntry.Kind
    /// The remote tag last seen.
    package var remoteTag: RemoteTag?
    /// The remote size last seen.
    package var remoteSize: Int64?
    /// The remote's identity for the item last seen (``RemoteEntry/fileID``).
    package var remoteFileID: String?
    /// The SHA-256 (hex) of the bytes both sides last agreed on.
    package var syncedHash: String?
    /// The local file's status last seen.
    package var local: LocalStatus?
    /// Where the version store keeps the bytes last synced, the merge base.
    package var baseVersion: String?

    package init(
        path: RemotePath, kind: RemoteEntry.Kind, remoteTag: RemoteTag? = nil, remoteSize: Int64? = nil,
        remoteFileID: String? = nil, syncedHash: String? = nil, local: LocalStatus? = nil,
        baseVersion: String? = nil
    ) {
        self.path = path
        self.kind = kind
        self.remoteTag = remoteTag
        self.remoteSize = remoteSize
        self.remoteFileID = remoteFileID
        self.syncedHash = syncedHash
        self.local = local
        self.baseVersion = baseVersion
    }
}

/// What a pass compares its scan with, of one journal row (``JournalItem`` without what only a
/// change needs): a file whose local status and remote tag are both as recorded here is as the
/// journal last saw it on both sides, and the pass has nothing to do for it.
package struct JournalReference: Hashable, Sendable {
    package var kind: RemoteEntry.Kind
    package var local: JournalItem.LocalStatus?
    package var remoteTag: RemoteTag?

    package init(kind: RemoteEntry.Kind, local: JournalItem.LocalStatus?, remoteTag: RemoteTag?) {
        self.kind = kind
        self.local = local
        self.remoteTag = remoteTag
    }
}

/// A remote write the engine is about to make, recorded before it is made.
///
/// The row is removed in the same transaction that records the write's outcome; a row left
/// after a crash says a write may or may not have reached the remote, and the engine resolves
/// it by reading the remote and comparing hashes, never by retrying blindly.
///
/// For example:
///
/// ```swift
/// let intent = try journal.beginIntent(
///     SyncIntent(operation: .upload, path: path, hash: hash, condition: .matches(tag), created: now))
/// let newTag = try remote.write(path, from: source, condition: .matches(tag))
/// try journal.transaction { journal in
///     try journal.upsert(item)
///     try journal.completeIntent(intent.id)
/// }
/// ```
package struct SyncIntent: Hashable, Sendable, Identifiable {
    /// The remote write.
    package enum Operation: String, Hashable, Sendable, CaseIterable {
        case upload
        case delete
        case move
        case makeFolder
        /// A conflict version written to the remote's conflicts area.
        case conflictUpload
        /// A remote file put in place here (not a remote write, but a crash between the rename
        /// and the journal must be settled as one): ``SyncIntent/hash`` is what was fetched,
        /// ``SyncIntent/condition`` `.matches` the tag it was read at.
        case download
    }

    /// The journal's number for the intent; 0 until ``SyncJournal/beginIntent(_:)`` records it.
    package var id: Int64
    package var operation: Operation
    package var path: RemotePath
    /// Where a move goes.
    package var destination: RemotePath?
    /// The SHA-256 (hex) of the bytes being written.
    package var hash: String?
    /// The condition the write is made on; nil for one made on none.
    package var condition: WriteCondition?
    /// When the intent was made, to the millisecond.
    package var created: Date

    package init(
        id: Int64 = 0, operation: Operation, path: RemotePath, destination: RemotePath? = nil,
        hash: String? = nil, condition: WriteCondition?, created: Date
    ) {
        self.id = id
        self.operation = operation
        self.path = path
        self.destination = destination
        self.hash = hash
        self.condition = condition
        self.created = Self.date(milliseconds: Self.milliseconds(created))
    }

    /// The time as stored: whole milliseconds since 1970.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

/// A conflict version that every device shows: kept in the remote's conflicts area under
/// ``id``, and in this device's version store as ``localVersion``.
///
/// Resolving it on any device (marking the version resolved, or removing it) removes it from
/// the remote; a device that finds it gone from the remote marks its own copy resolved.
package struct SharedConflict: Hashable, Sendable {
    /// The conflict's name in the remote's conflicts area, the same on every device.
    package var id: String
    /// The item it is a conflict version of.
    package var path: RemotePath
    /// Its ``FileVersion/persistentIdentifier`` in this device's version store.
    package var localVersion: String
    /// Whether its bytes and description are on the remote; false for a conflict this device
    /// made and has not yet shared.
    package var isUploaded: Bool
    /// The path the remote's description names, when the item moved since and the
    /// description is still to be rewritten; nil when it names ``path``.
    package var describedPath: RemotePath?
    /// The tag of the remote's description when this device last read it: a device whose
    /// document is gone reads it again only when it changed (its document moved elsewhere).
    package var descriptionTag: RemoteTag?

    package init(
        id: String, path: RemotePath, localVersion: String, isUploaded: Bool,
        describedPath: RemotePath? = nil,
        descriptionTag: RemoteTag? = nil
    ) {
        self.id = id
        self.path = path
        self.localVersion = localVersion
        self.isUploaded = isUploaded
        self.describedPath = describedPath
        self.descriptionTag = descriptionTag
    }
}
