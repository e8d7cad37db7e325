import DocumentKit
import Foundation

/// What sync passes did: counts by kind, and a line for each item that needs the user's
/// attention (a conflict, an edit that beat a delete, an item that failed and will be tried
/// again).
///
/// For example:
///
/// ```swift
/// let summary = try engine.sync()
/// print("\(summary.uploaded) up, \(summary.downloaded) down, \(summary.conflicts) conflicts")
/// for note in summary.notes { print(note) }
/// ```
public struct SyncSummary: Codable, Sendable, Equatable, CustomStringConvertible {
    public var uploaded = 0
    public var downloaded = 0
    /// Items both sides changed whose changes merged cleanly, written to both sides.
    public var merged = 0
    /// Items both sides changed differently: the remote's version is at the path, this
    /// device's is a conflict version on every device.
    public var conflicts = 0
    /// Items deleted here because the remote deleted them (kept in the version store).
    public var deletedLocally = 0
    /// Items deleted on the remote because they were deleted here.
    public var deletedRemotely = 0
    /// Items renamed on one side and moved to match on the other.
    public var moved = 0
    /// Folders made on either side.
    public var foldersMade = 0
    /// Folders deleted on either side because the other side deleted them.
    public var foldersDeleted = 0
    /// Items both sides changed to the same bytes, or found equal: recorded, nothing moved.
    public var recorded = 0
    /// Conflict versions shared with other devices, taken from them, or resolved.
    public var conflictsShared = 0
    /// Documents left on the server (downloads on demand), with a placeholder here made or
    /// brought up to date.
    public var keptOnServer = 0
    /// Items that could not be synced this pass; each is tried again by the next.
    public var failures: [String] = []
    /// What the user should know: conflicts, edits that beat deletes, items waiting.
    public var notes: [String] = []
    /// Items left because they were modified too recently: a program may still be writing.
    var settling = 0
    /// When the last of those will have settled, if nothing writes them again.
    var settledAt: Date?
    /// Items left because they changed while the pass handled them: the next pass takes them.
    var changedDuringPass = 0
    /// Those items, each with why it was left.
    var changed: [String] = []

    public init() {}

    /// Whether the passes changed anything on either side or in the journal.
    public var didWork: Bool {
        uploaded + downloaded + merged + conflicts + deletedLocally + deletedRemotely + moved + foldersMade
            + foldersDeleted + recorded + conflictsShared + keptOnServer > 0
    }

    /// Whether a pass that did this left nothing it knows of for a next pass: it did work,
    /// and only of the kinds that leave both sides and the journal as one (uploads, downloads,
    /// deletions, folders made, equal bytes recorded), each done, none skipped, failed or
    /// waiting. Merges, conflicts, moves, folder deletions and documents left on the server
    /// are confirmed by a pass of their own.
    var settledWhatItSaw: Bool {
        didWork && failures.isEmpty && settling == 0 && changedDuringPass == 0 && changed.isEmpty
            && merged + conflicts + conflictsShared + moved + foldersDeleted + keptOnServer == 0
    }

    public var description: String {
        var parts: [String] = []
        for (count, label) in [
            (uploaded, "uploaded"), (downloaded, "downloaded"), (merged, "merged"), (conflicts, "conflicted"),
            (deletedLocally, "deleted here"), (deletedRemotely, "deleted on the remote"), (moved, "moved"),
            (foldersMade, "folders made"), (foldersDeleted, "folders deleted"),
            (conflictsShared, "conflict versions shared"), (keptOnServer, "kept on the server"),
        ] where count > 0 {
            parts.append("\(count) \(label)")
        }
        if !failures.isEmpty { parts.append("\(failures.count) failed") }
        if changedDuringPass > 0 { parts.append("\(changedDuringPass) left for the next sync") }
        return parts.isEmpty ? "nothing to do" : parts.joined(separator: ", ")
    }

    mutating func add(_ other: SyncSummary) {
        uploaded += other.uploaded
        downloaded += other.downloaded
        merged += other.merged
        conflicts += other.conflicts
        deletedLocally += other.deletedLocally
        deletedRemotely += other.deletedRemotely
        moved += other.moved
        foldersMade += other.foldersMade
        foldersDeleted += other.foldersDeleted
        recorded += other.recorded
        conflictsShared += other.conflictsShared
        keptOnServer += other.keptOnServer
        notes += other.notes
    }
}

/// Why sync stopped: it names the container or the remote, and what to do.
public struct SyncError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// Sync is paused (a mass delete, a vanished root) until told to go on.
        case paused
        /// Another sync process has the container.
        case busy
        /// The container and the remote overlap, or the remote cannot be used.
        case unusable
        /// The remote or the journal failed for the whole pass.
        case failed
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
