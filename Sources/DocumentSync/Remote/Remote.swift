import Foundation

/// An opaque version tag: an ETag on WebDAV, anything that changes on every write.
///
/// Two tags are compared for equality and nothing else: equal tags mean the same bytes, as
/// far as the remote can tell. A remote hands one out with every entry and every write, and
/// takes one back in ``WriteCondition/matches(_:)`` to write only over what the caller saw.
public struct RemoteTag: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The tag as the remote spells it.
    public let rawValue: String

    /// A tag spelled `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A tag spelled `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One item in a remote folder, as a listing gives it.
public struct RemoteEntry: Hashable, Sendable {
    /// Whether an item is a file or a folder; remotes leave out anything else (links, devices).
    public enum Kind: String, Sendable, Codable {
        case file
        case folder
    }

    /// The item's name in its folder, in NFC.
    public var name: String
    /// A file or a folder.
    public var kind: Kind
    /// The file's size in bytes; for a folder, whatever the remote says (often 0).
    public var size: Int64
    /// The item's version; nil where the remote gives none (some servers tag no folders).
    public var tag: RemoteTag?
    /// What the remote calls the stored item, kept when it moves (an inode, Nextcloud's
    /// `oc:fileid`): lets the engine tell a remote rename from a delete and a create. Nil where
    /// the remote has no such identity.
    public var fileID: String?

    /// An entry; `fileID` defaults to none.
    public init(name: String, kind: Kind, size: Int64, tag: RemoteTag?, fileID: String? = nil) {
        self.name = name
        self.kind = kind
        self.size = size
        self.tag = tag
        self.fileID = fileID
    }
}

/// A complete listing of one folder.
///
/// A remote that cannot give a complete listing throws; it never returns part of one, so that
/// a name missing from a listing really is missing from the folder. What a server, or another
/// program or user writing a remote's folder, says a folder holds is hostile input: every
/// remote's listing goes through one check (``Remote/checkedListing(_:_:folderTag:)``) before
/// the engine sees it, with these rules:
///
/// - Every name is one name: not empty, not "." or "..", without "/" (a WebDAV `%2F` decodes
///   to one inside a name), NUL or another control character (C0, DEL, C1). A name that is not
///   fails the whole listing, with an error naming it (its control characters escaped) and
///   the remote: it is never skipped, since a name left out reads as a file deleted, and never
///   reaches the engine, which could make a path outside the container of it.
/// - Names are in NFC. Two items whose names differ only in how their letters are encoded (a
///   server's NFD and NFC spellings of "é") fail the listing: one path cannot hold both.
/// - An item listed twice with the same description is one item; listed twice differently,
///   the listing fails (which one is there?).
/// - Names sync keeps for its own files (``RemotePath/reservedPrefix``, `.documentsync-…`) are
///   left out: hidden, never a document the engine knows, so leaving one out never reads as a
///   deletion.
/// - An answer that is not a whole document (cut short, elements never closed, not UTF-8), or
///   whose pages go round (a continuation token given twice), fails the listing; see
///   ``S3XML``, ``S3Remote/listPages(prefix:delimiter:maxKeys:pages:_:_:_:)`` and
///   ``WebDAVRemote``.
public struct RemoteListing: Sendable {
    /// The folder listed.
    public var folder: RemotePath
    /// Every file and folder directly inside, sorted by name.
    public var entries: [RemoteEntry]
    /// The folder's own tag, where the remote has one.
    public var folderTag: RemoteTag?

    /// A listing of `folder`.
    public init(folder: RemotePath, entries: [RemoteEntry], folderTag: RemoteTag?) {
        self.folder = folder
        self.entries = entries
        self.folderTag = folderTag
    }
}

/// What must hold at a path for a write, delete or move to go ahead.
public enum WriteCondition: Hashable, Sendable {
    /// Nothing is at the path (WebDAV's `If-None-Match: *`).
    case absent
    /// The item at the path has this tag (WebDAV's `If-Match`).
    case matches(RemoteTag)
}

/// Bytes to upload, read in order in chunks; `nextChunk` returns nil at the end.
///
/// Reading may throw (the local file vanished); the remote then stops, applies nothing, and
/// rethrows that error as it is. A source that gives more or fewer than ``size`` bytes makes
/// the write fail with ``RemoteError/Kind/sourceChanged`` and apply nothing. A remote applies
/// nothing before it has read the last chunk: sync records its intent as that chunk is read.
///
/// For example:
///
/// ```swift
/// let tag = try remote.write(path, from: UploadSource(data), condition: .absent)
/// ```
public struct UploadSource {
    /// How many bytes the source gives in all.
    public let size: Int64
    /// The next chunk, or nil after the last.
    public let nextChunk: () throws -> Data?
    /// The SHA-256 (64 lowercase hexadecimal digits) of all the source's bytes, when the
    /// caller knows it (sync hashes a file before it sends it where
    /// ``Remote/wantsHashBeforeUpload(ofSize:)`` says so, and as it sends it otherwise): a
    /// remote that signs its payload (S3) then signs the request with it, rather than each
    /// chunk as it is sent.
    public var sha256: String?

    /// A source of `size` bytes produced by `nextChunk`.
    public init(size: Int64, nextChunk: @escaping () throws -> Data?) {
        self.size = size
        self.nextChunk = nextChunk
    }

    /// A source giving `data` in chunks of `chunkSize` bytes.
    public init(_ data: Data, chunkSize: Int = RemoteChunk.size) {
        var offset = data.startIndex
        let step = max(chunkSize, 1)
        self.init(size: Int64(data.count)) {
            guard offset < data.endIndex else { return nil }
            let end = data.index(offset, offsetBy: step, limitedBy: data.endIndex) ?? data.endIndex
            defer { offset = end }
            return data[offset..<end]
        }
    }
}

/// The size of the chunks remotes read and write: large enough that calls cost nothing beside
/// the bytes, small enough that a file of any size streams in little memory.
public enum RemoteChunk {
    /// 1 MiB.
    public static let size = 1 << 20

    /// The buffer to read a file of `fileSize` bytes through: a chunk, or the file and a page
    /// more when that is less (a file that grew is still read to its end, a buffer at a
    /// time). Many small documents in flight then hold kilobytes each, not a chunk each.
    public static func bufferSize(forFileOf fileSize: Int64) -> Int {
        Int(min(Int64(size), max(fileSize, 0) + 4096))
    }
}

/// Where a synced container's documents are kept: a folder on another disk, a WebDAV
/// collection, an in-memory tree for the simulation.
///
/// A remote holds each document as a plain file at its relative path, so that people and other
/// clients see ordinary files; the engine's own data is in ``RemotePath/metadataFolder``. Every
/// write is conditional, so that an update made elsewhere since the caller looked is never
/// overwritten: the call fails with ``RemoteError/Kind/preconditionFailed`` instead.
///
/// The calls are synchronous and throwing on purpose: the deterministic simulation drives a
/// remote step by step, and a network remote blocks its caller (the sync engine's own task).
/// Every failure is a ``RemoteError`` naming the remote, the operation and the path, except
/// an error thrown by an ``UploadSource`` or a read's sink, which passes through as it is.
///
/// For example:
///
/// ```swift
/// let remote = LocalFolderRemote(root: URL(fileURLWithPath: "/mnt/backup/Notes"))
/// let tag = try remote.write(RemotePath("plan.txt"), from: UploadSource(bytes), condition: .absent)
/// try remote.write(RemotePath("plan.txt"), from: UploadSource(edited), condition: .matches(tag!))
/// ```
public protocol Remote: AnyObject, Sendable {
    /// The remote as the user named it, without credentials: used in messages.
    var displayName: String { get }

    /// How to reach this remote again: its whole URL and the settings it was made with,
    /// never a secret (what a journal remembers for a later sync that names no remote); nil
    /// by default, for a remote that cannot be made from a URL (the simulation's).
    var address: RemoteAddress? { get }

    /// Every file and folder directly in `folder`, sorted by name.
    ///
    /// - Throws: ``RemoteError``: `.notFound` when there is no such folder, `.notAFolder` when
    ///   it is a file; never a partial listing.
    func list(_ folder: RemotePath) throws -> RemoteListing

    /// The item at `path`, or nil when there is none.
    func entry(at path: RemotePath) throws -> RemoteEntry?

    /// Streams the file's bytes to `sink` in chunks; returns the tag of the bytes read.
    ///
    /// - Throws: ``RemoteError``: `.notFound`, `.notAFile` for a folder, `.connectionLost` after
    ///   part of the bytes, `.changedDuringRead` when the file changed under the read (the bytes
    ///   given are then not one version); or what `sink` throws.
    func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag

    /// Writes the file only if `condition` holds, atomically where the remote can: a reader
    /// sees the old bytes or the new, never part.
    ///
    /// - Returns: The new tag when the remote tells it, nil when the caller must ask
    ///   (``entry(at:)``).
    /// - Throws: ``RemoteError``: `.preconditionFailed` when the condition does not hold
    ///   (`.absent` with an item there, `.matches` with another tag or nothing there; nothing
    ///   is written), `.parentMissing` when the folder is not there, `.notAFile` when a folder
    ///   has the tag asked for; or what the source throws.
    @discardableResult
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws -> RemoteTag?

    /// ``write(_:from:condition:)``, told whether the caller's listing of this pass vouches
    /// for the file's place (`placeListed`): its folder is there (listed, or made since by the
    /// caller) and no folder is at `path`. A remote that would look for both with requests of
    /// its own before a new file (S3, whose keys are only names) skips them; by default the
    /// same as ``write(_:from:condition:)``.
    @discardableResult
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition, placeListed: Bool)
        throws -> RemoteTag?

    /// Deletes the file or the empty folder at `path` if `condition` holds.
    ///
    /// A folder is deleted only when it is empty (`.notEmpty` otherwise), so that a delete
    /// never takes along items the caller has not seen; its condition is checked against the
    /// folder's own tag. `.absent` never holds for something to delete.
    ///
    /// - Throws: ``RemoteError``: `.notFound`, `.preconditionFailed`, `.notEmpty`.
    func delete(_ path: RemotePath, condition: WriteCondition) throws

    /// Moves the item at `source` to `destination` without overwriting anything there.
    ///
    /// `condition`, when given, must hold for the source (`.matches(tag)`: the item is still
    /// the one the caller saw); nil moves whatever is there. A folder moves with its contents.
    ///
    /// - Returns: The moved item's tag at its new path when the remote tells it (a move may
    ///   change it), nil when the caller must ask.
    /// - Throws: ``RemoteError``: `.exists` when `destination` is taken (nothing moves),
    ///   `.notFound`, `.parentMissing`, `.preconditionFailed`, `.invalidMove` for a folder
    ///   into itself.
    @discardableResult
    func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?

    /// Makes a folder at `path`, in a folder that exists.
    ///
    /// - Throws: ``RemoteError``: `.exists` when anything is there, `.parentMissing`.
    func makeFolder(_ path: RemotePath) throws

    /// Whether entries carry a ``RemoteEntry/fileID``; true by default.
    var hasFileIDs: Bool { get }

    /// The most requests worth having in flight at once: the ceiling of the engine's request
    /// window. 64 by default; less where more only wait in line (the remote serialises them)
    /// or cost more than they bring.
    var mostRequestsAtOnce: Int { get }

    /// Whether a move is one step that happens whole or not at all; true by default. Where it
    /// is a copy and a delete (S3), a crash between them leaves the item at both paths, and
    /// the engine finishes the move when it finds the moved bytes at the destination.
    var movesAreAtomic: Bool { get }

    /// Whether an upload of `size` bytes is better given its source's ``UploadSource/sha256``
    /// (S3 sends a large source signed with it in one request); false by default, where the
    /// engine hashes the bytes as they are sent rather than read the file twice.
    func wantsHashBeforeUpload(ofSize size: Int64) -> Bool

    /// Completes a move from `source` to `destination` that a crash interrupted, on a remote
    /// whose moves are not atomic (``movesAreAtomic``): what was copied is deleted at the
    /// source, unless it was written again since. Does nothing by default.
    func finishMove(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws

    /// Every item below the root, by path, skipping hidden names and what is in hidden
    /// folders, from one complete listing of the whole tree; nil where the remote can only
    /// list a folder at a time (the default), and the engine lists each folder.
    ///
    /// - Parameter keeping: Asked of files (never of a folder) as the listing finds them, on
    ///   any of its threads: one it refuses is left out of the tree returned, since the caller
    ///   knows it already. It is asked only of a file listed at its path's own spelling (a key
    ///   that is another spelling of the path is always kept), and is asked again of a file
    ///   listed twice; the folders above a file left out are in the tree.
    /// - Throws: ``RemoteError``; never a partial tree.
    func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws -> [RemotePath:
        RemoteEntry]?

    /// Lets this remote's writes (``write(_:from:condition:)``) return before they are durable,
    /// to be made durable together by ``makeWritesDurable()``; returns whether it will. The
    /// caller takes on to call ``makeWritesDurable()`` before it relies on a write having
    /// happened (records it, or deletes what the write replaces): the sync engine does before
    /// every journal commit that records an outcome. Until asked, every write is durable when
    /// it returns; a remote that has nothing to gain returns false (the default).
    func deferDurability() -> Bool

    /// Makes every write this remote has returned from durable: a power loss after this
    /// returns loses none of them. Does nothing by default, and when nothing waits.
    ///
    /// - Throws: ``RemoteError`` when the flush fails; the writes are then not known durable,
    ///   and the next call flushes them again.
    func makeWritesDurable() throws

    /// ``read(_:into:)``, told the size a listing gave (nil when unknown), so that the remote
    /// can choose how to receive the bytes; by default the same as ``read(_:into:)``.
    func read(_ path: RemotePath, expectedSize: Int64?, into sink: (Data) throws -> Void) throws -> RemoteTag

    /// A value that changes when the remote changes, from one cheap request, so that a device
    /// can ask every second or two whether a pass would find anything: by default the tag of
    /// ``RemotePath/changeMarker``, which every device rewrites after a pass that changed the
    /// remote; a remote that can tell more (a WebDAV root whose ETag changes with anything
    /// below it) tells that. Nil is a value too (no marker yet). A change made by a program
    /// that does not rewrite the marker may not change it: the engine passes at its interval
    /// as well.
    ///
    /// What the answer says is hostile: the caller only compares it with the last one, and a
    /// failure means "ask again later".
    ///
    /// - Throws: ``RemoteError`` when the remote cannot be asked now.
    func changeMarker() throws -> RemoteTag?

    /// Tells `changed`, on a thread of the remote's, whenever the remote changes, for as long
    /// as the watch returned is kept; nil (the default) where the remote cannot watch and is
    /// asked instead (``changeMarker()``). A folder remote watches with inotify: a change
    /// there wakes the engine at once, with no request while nothing changes.
    ///
    /// - Throws: What starting the watch threw.
    func watchChanges(_ changed: @escaping @Sendable () -> Void) throws -> RemoteWatch?

    /// A link anyone may download the file at `path` from, without credentials, for about
    /// `lifetime` (less where the remote allows less): what
    /// `FileManager.url(forPublishingUbiquitousItemAt:expiration:)` gives. S3 presigns a `GET`
    /// of the object; a remote with no such links throws.
    ///
    /// - Throws: ``RemoteError``: `.unsupported`, naming the kind of remote, when it has no share
    ///   links (the default); `.notFound` or `.notAFile` when no file is at `path`.
    func publishedLink(of path: RemotePath, lifetime: Duration) throws -> PublishedLink
}

/// A share link to a file of a remote, and until when it works.
public struct PublishedLink: Sendable, Equatable {
    /// The link: it carries no secret (an S3 link carries the access key's id and a signature).
    public var url: URL
    /// When the link stops working, by this computer's clock; nil when it does not expire.
    public var expires: Date?

    public init(url: URL, expires: Date?) {
        self.url = url
        self.expires = expires
    }
}

extension Remote {
    /// An error of this remote: `kind` in `operation` on `path`, named by its display name.
    func failure(
        _ kind: RemoteError.Kind, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil, detail: String? = nil
    ) -> RemoteError {
        RemoteError(
            kind, operation: operation, path: path, destination: destination, remote: displayName,
            detail: detail)
    }

    public var hasFileIDs: Bool { true }

    public var mostRequestsAtOnce: Int { 64 }

    public var address: RemoteAddress? { nil }

    public var movesAreAtomic: Bool { true }

    public func wantsHashBeforeUpload(ofSize size: Int64) -> Bool { false }

    public func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws
        -> [RemotePath: RemoteEntry]?
    { nil }

    /// ``listTree(keeping:)`` keeping every file.
    public func listTree() throws -> [RemotePath: RemoteEntry]? { try listTree(keeping: { _, _ in true }) }

    public func deferDurability() -> Bool { false }

    public func publishedLink(of path: RemotePath, lifetime: Duration) throws -> PublishedLink {
        throw failure(.unsupported, .publish, path, detail: "this kind of remote has no share links")
    }

    public func makeWritesDurable() throws {}

    @discardableResult
    public func write(
        _ path: RemotePath, from source: UploadSource, condition: WriteCondition, placeListed: Bool
    ) throws -> RemoteTag? {
        try write(path, from: source, condition: condition)
    }

    public func finishMove(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?)
        throws
    {}

    public func read(_ path: RemotePath, expectedSize: Int64?, into sink: (Data) throws -> Void) throws
        -> RemoteTag
    {
        try read(path, into: sink)
    }
}
