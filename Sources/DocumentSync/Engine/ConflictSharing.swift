import DocumentKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a shared conflict version is described in the remote's conflicts area, beside its bytes.
///
/// It names the device whose edit the version holds by its identifier (``DeviceIdentity``), not
/// only by its computer's name, which other devices may share: a device takes a conflict as
/// its own ("mine") only when the identifier is its own. A description without one (written
/// before identifiers were shared) or with one no device can have is another device's.
struct SharedConflictDescription: Codable, Equatable {
    /// The item it is a conflict version of.
    var path: String
    /// The computer whose edit it holds, for people.
    var computer: String?
    /// When that edit was made, in seconds since 1970.
    var modified: Double?
    /// The identifier of the device whose edit it holds; nil when not said.
    var device: String? = nil
    /// The SHA-256 of the bytes both sides started from (``FileVersion/mergeBase``), so that
    /// every device can merge the conflict three ways; nil when not said.
    var base: String? = nil

    /// Who made the edit, as the version store records it: a device identifier that is not
    /// valid is no device's.
    var origin: VersionOrigin {
        VersionOrigin(computer: computer, device: DeviceIdentity.validIdentifier(device))
    }

    /// Who made the edit, for people: the computer's name and, where said, the device.
    var maker: String {
        let name = computer ?? "another device"
        return origin.device.map { DeviceIdentity(identifier: $0, name: name).description } ?? name
    }
}

extension SyncEngine {
    /// The remote folder conflict versions are shared in: `.documentsync/conflicts`.
    static let conflictsFolder = ConflictSharing.folder
}

/// Shares conflict versions between devices through the remote's conflicts area
/// (`.documentsync/conflicts/`): each conflict is two files there, its bytes (`ID.data`) and
/// its description (`ID.json`, a ``SharedConflictDescription``), whose presence says the
/// conflict is whole.
///
/// The rules it keeps:
///
/// - Conflicts made here are shared; conflicts another device shared become conflict versions
///   here, once each (the journal remembers them by identifier).
/// - A conflict resolved on any device (marked resolved, or removed) is removed from the
///   remote, and a device that finds it gone (read, not only missing from a listing, which may
///   be behind) marks its own resolved.
/// - A conflict belongs where its description says: when its document moves, the device that
///   moved it rewrites the description and the others follow; described at a path with no
///   document here, it waits (the version shown before is kept, resolved) and is taken when a
///   document arrives there.
/// - Whose a conflict is ("mine") is told by the device identifier its description carries,
///   never by a computer's name.
/// - A description's path is a server's word: one that is not a document's path is left alone.
///
/// Made for one pass (``SyncPass``), whose container, remote and summary it works with; what it
/// remembers from pass to pass is its engine's ``Memory``.
struct ConflictSharing {
    /// The remote folder conflict versions are shared in: `.documentsync/conflicts`.
    static let folder = RemotePath.metadataFolder.appending("conflicts")

    /// What an engine remembers of conflicts across its passes.
    final class Memory: Sendable {
        /// The conflicts whose document was looked for among every file here, once each (see
        /// ``ConflictSharing/share(newFiles:allFiles:)``).
        let searched = Mutex<Set<String>>([])
    }

    let pass: SyncPass
    private var remote: any Remote { pass.remote }
    private var journal: SyncJournal { pass.journal }
    private var store: VersionStore { pass.store }
    private var conflictsFolder: RemotePath { Self.folder }

    /// Brings this device's conflict versions and the remote's conflicts area in line, as the
    /// type's rules say.
    ///
    /// - Parameter newFiles: The files this pass found here that the journal did not know
    ///   (new, or another file at a known path): where to look for a conflicted document that
    ///   moved without sync seeing a move.
    /// - Parameter allFiles: Every file here, made only when wanted: where a conflict whose
    ///   document is gone from its path is looked for once by each engine, for a move sync
    ///   saw in a pass that a crash cut short (the file is no longer new to the journal then).
    func share(newFiles: [RemotePath] = [], allFiles: () -> [RemotePath] = { [] }) throws {
        let listing: RemoteListing
        do {
            listing = try remote.list(conflictsFolder)
        } catch let error as RemoteError where error.kind == .notFound {
            listing = RemoteListing(folder: conflictsFolder, entries: [], folderTag: nil)
        }
        var descriptionTags: [String: RemoteTag?] = [:]
        for entry in listing.entries where entry.name.hasSuffix(".json") {
            descriptionTags[String(entry.name.dropLast(5))] = entry.tag
        }
        let described = Set(descriptionTags.keys)
        var known: Set<String> = []
        for var conflict in try journal.conflicts() {
            known.insert(conflict.id)
            var url = pass.localURL(conflict.path)
            var version = store.version(itemAt: url, forPersistentIdentifier: conflict.localVersion)
            // Not found at its path: its document may have moved where sync saw no move (a
            // new document there, or another file renamed onto the path here).
            if version == nil, let moved = try follow(&conflict, among: newFiles + pass.arrived.sorted()) {
                (url, version) = (pass.localURL(conflict.path), moved)
            }
            if version == nil, FileStatus(path: url.path) == nil,
                pass.engine.conflicts.searched.withLock({ $0.insert(conflict.id).inserted }),
                let moved = try follow(&conflict, among: allFiles())
            {
                (url, version) = (pass.localURL(conflict.path), moved)
            }
            if version == nil, FileStatus(path: url.path) == nil {
                // The document is gone (deleted, here or elsewhere): its version cannot be looked up,
                // which says nothing of the conflict. It waits, as a conflict another device shared
                // waits for its document to arrive; a document that comes back at the path (an edit
                // beat the delete) finds its conflict again on every device. If documents arrived
                // here, the device that moved it may have described it at a new path: it is taken
                // again there.
                if conflict.isUploaded, let tag = descriptionTags[conflict.id],
                    tag != conflict.descriptionTag || !pass.arrived.isEmpty || !newFiles.isEmpty
                {
                    if try take(conflict.id, movedFrom: conflict.path) == .taken {
                        // Taken at the new path: the version kept under the deleted document
                        // is resolved, so that a new document at the old path does not show it.
                        store.version(forPersistentIdentifier: conflict.localVersion)?.isResolved = true
                    } else if tag != conflict.descriptionTag {
                        // Read and not taken (the same path, or one with no document here yet:
                        // documents arriving later look again).
                        conflict.descriptionTag = tag
                        let seen = conflict
                        try journal.transaction { try $0.upsertConflict(seen) }
                    }
                }
                continue
            }
            let unresolved = version.map { !$0.isResolved } ?? false
            if !conflict.isUploaded {
                guard let version, unresolved else {
                    try journal.transaction { try $0.removeConflict(conflict.id) }
                    continue
                }
                try upload(conflict, version)
            } else if !unresolved {
                // Resolved here: resolved everywhere.
                try removeFromRemote(conflict.id)
                try journal.transaction { try $0.removeConflict(conflict.id) }
                pass.summary.conflictsShared += 1
            } else if !described.contains(conflict.id), try isGone(conflict.id) {
                // Resolved on another device.
                version?.isResolved = true
                try journal.transaction { try $0.removeConflict(conflict.id) }
                pass.summary.conflictsShared += 1
            } else if conflict.describedPath == nil, let tag = descriptionTags[conflict.id],
                tag != conflict.descriptionTag || !pass.arrived.isEmpty
            {
                // Its description changed: the device that moved its document described it at
                // the new path, and it follows there here too, kept here as a resolved version.
                let taking = try take(conflict.id, movedFrom: conflict.path)
                if taking == .taken {
                    version?.isResolved = true
                } else if case .waiting(let path) = taking, path != conflict.path {
                    // Described at a path with no document here (moved there, then deleted; or
                    // not arrived yet): it leaves this document, as on the devices that took it
                    // there, kept here as a resolved version; this device takes it again as one
                    // that never had it, when a document is at that path.
                    version?.isResolved = true
                    try journal.transaction { try $0.removeConflict(conflict.id) }
                    pass.summary.conflictsShared += 1
                } else if tag != conflict.descriptionTag {
                    var seen = conflict
                    seen.descriptionTag = tag
                    try journal.transaction { try $0.upsertConflict(seen) }
                }
            } else if conflict.describedPath != nil, let version {
                // Its item moved: devices that have not taken it yet look for it at the new path.
                try describe(conflict, version, replacing: true)
                var described = conflict
                described.describedPath = nil
                try journal.transaction { try $0.upsertConflict(described) }
                pass.summary.conflictsShared += 1
            }
        }
        for id in described.subtracting(known).sorted() {
            try take(id)
        }
    }

    /// Finds the document of a conflict whose path has no file any more among the files new
    /// here, as the version store sees them: a rename sync took for a deletion and a new
    /// document (the other side changed meanwhile) moved the document and its versions here,
    /// but not the journal's row. The row follows, and its description on the remote is
    /// rewritten, so that every device shows the conflict with the same document.
    ///
    /// - Returns: The conflict version, found at the conflict's new path.
    private func follow(_ conflict: inout SharedConflict, among newFiles: [RemotePath]) throws -> FileVersion?
    {
        for path in newFiles where path != conflict.path {
            guard
                let version = store.version(
                    itemAt: pass.localURL(path), forPersistentIdentifier: conflict.localVersion)
            else { continue }
            if conflict.isUploaded, conflict.describedPath == nil { conflict.describedPath = conflict.path }
            conflict.path = path
            if conflict.describedPath == path { conflict.describedPath = nil }
            let moved = conflict
            try journal.transaction { try $0.upsertConflict(moved) }
            pass.summary.conflictsShared += 1
            return version
        }
        return nil
    }

    /// Whether a conflict's description is gone from the remote, as a read of it says: a
    /// listing that was behind (a stale one) must not resolve a conflict nobody resolved.
    private func isGone(_ id: String) throws -> Bool {
        do {
            _ = try remote.read(conflictsFolder.appending(id + ".json")) { _ in }
            return false
        } catch let error as RemoteError where error.kind == .notFound {
            return true
        }
    }

    /// Shares a conflict version made here: its bytes first, then its description, whose
    /// presence says the conflict is whole.
    private func upload(_ conflict: SharedConflict, _ version: FileVersion) throws {
        try pass.makeRemoteFolder(RemotePath.metadataFolder)
        try pass.makeRemoteFolder(conflictsFolder)
        let data = conflictsFolder.appending(conflict.id + ".data")
        let bytes = try Data(contentsOf: version.url)
        try pass.checkpoint(.beforeRemoteWrite)
        try writeIfAbsent(data, bytes)
        try describe(conflict, version, replacing: false)
        try pass.checkpoint(.afterRemoteWrite)
        var shared = conflict
        shared.isUploaded = true
        shared.describedPath = nil
        try journal.transaction { try $0.upsertConflict(shared) }
        pass.summary.conflictsShared += 1
    }

    /// Writes the description of a conflict, whose presence says the conflict is whole; with
    /// `replacing`, over the one there (its item moved), on that one's tag.
    private func describe(_ conflict: SharedConflict, _ version: FileVersion, replacing: Bool) throws {
        let path = conflictsFolder.appending(conflict.id + ".json")
        let description = try JSONEncoder().encode(
            SharedConflictDescription(
                path: conflict.path.string, computer: version.localizedNameOfSavingComputer,
                modified: version.modificationDate?.timeIntervalSince1970,
                device: version.savingDeviceIdentifier, base: version.mergeBase))
        guard replacing else { return try writeIfAbsent(path, description) }
        // Gone meanwhile: resolved on another device, which the next pass sees.
        guard let entry = try remote.entry(at: path), let tag = entry.tag else { return }
        do {
            try remote.write(path, from: UploadSource(description), condition: .matches(tag))
        } catch let error as RemoteError where error.leavesOutcomeUnknown {
            // Another device rewrote it (it moved the item too), or this write went through.
            var bytes = Data()
            _ = try remote.read(path) { bytes.append($0) }
            if bytes != description { throw error }
        }
    }

    /// Writes a file that only this device names (a conflict's identifier): one already
    /// there is an earlier attempt of the same write.
    ///
    /// The file there is read back all the same: bytes another client put there (not an
    /// earlier attempt) are written over, on their tag, rather than shared as the conflict.
    private func writeIfAbsent(_ path: RemotePath, _ bytes: Data) throws {
        do {
            try remote.write(path, from: UploadSource(bytes), condition: .absent)
        } catch let error as RemoteError where error.kind == .preconditionFailed || error.kind == .exists {
            var found = Data()
            let tag = try remote.read(path) { found.append($0) }
            guard found != bytes else { return }
            try remote.write(path, from: UploadSource(bytes), condition: .matches(tag))
        }
    }

    private func removeFromRemote(_ id: String) throws {
        for name in [id + ".json", id + ".data"] {
            let path = conflictsFolder.appending(name)
            do {
                let condition: WriteCondition
                if let entry = try remote.entry(at: path) {
                    condition = entry.tag.map(WriteCondition.matches) ?? .absent
                } else {
                    // A lookup may be behind (a stale listing): one that finds nothing is read
                    // to be sure, or a description would outlive its bytes, and the devices that
                    // still list it would keep the conflict unresolved.
                    condition = .matches(try remote.read(path) { _ in })
                }
                try remote.delete(path, condition: condition)
            } catch let error as RemoteError where error.kind == .notFound {}
        }
    }

    /// Takes a conflict another device shared: a conflict version of the item here, made
    /// once (the journal remembers it by its identifier).
    ///
    /// - Parameter movedFrom: For a conflict taken before, the path it was taken at: it is
    ///   taken again only if its description names another path now (its document moved).
    /// - Returns: Whether it was taken, or waits for a document at the path its description
    ///   names.
    @discardableResult
    private func take(_ id: String, movedFrom: RemotePath? = nil) throws -> Taking {
        var descriptionBytes = Data()
        let descriptionTag: RemoteTag
        do {
            descriptionTag = try remote.read(conflictsFolder.appending(id + ".json")) {
                descriptionBytes.append($0)
            }
        } catch let error as RemoteError where error.kind == .notFound {
            return .notTaken  // resolved meanwhile, or a listing that was behind named it
        }
        guard
            let description = try? JSONDecoder().decode(
                SharedConflictDescription.self, from: descriptionBytes)
        else {
            // Not what a device writes (another client wrote there): not shared yet, as far as this
            // device can tell; the device that made it writes it over when it shares it.
            pass.summary.notes.append(
                "conflict \(id): its description on \(remote.displayName) is not readable")
            return .notTaken
        }
        let path = RemotePath(description.path)
        // The path is a server's word like a listed name: one that is not a document's path
        // ("..", NUL, the metadata folder) would put the conflict version's bytes elsewhere.
        guard !path.isRoot, !path.isMetadata, path.components.allSatisfy(RemotePath.isValidComponent) else {
            pass.summary.notes.append(
                "conflict \(id): its description on \(remote.displayName) names \(RemotePath.shown(description.path)), which is not a document's path; left alone"
            )
            return .notTaken
        }
        if let movedFrom, path == movedFrom { return .notTaken }
        let url = pass.localURL(path)
        // The item comes first: a conflict version of nothing waits for the item to arrive. A
        // path that is not inside the container names no item here, ever.
        let item: FileStatus?
        do {
            item = try pass.containerFolder().status(
                of: path.components, operation: "take a conflict version of")
        } catch {
            pass.summary.notes.append("conflict \(id): \(error)")
            return .notTaken
        }
        guard item?.isRegularFile == true else { return .waiting(at: path) }
        let fetched: SyncPass.FetchedFile
        do {
            fetched = try pass.fetch(conflictsFolder.appending(id + ".data"), besides: path)
        } catch let error as RemoteError where error.kind == .notFound {
            // A description without its bytes: being resolved (the bytes go last), or damaged
            // by another client; nothing to take, and nothing to fail on in every pass.
            pass.summary.notes.append("conflict \(id): its bytes are not on \(remote.displayName)")
            return .notTaken
        }
        defer { fetched.temporary.remove() }
        let version = try store.addConflictOfItem(
            at: url, withContentsOf: fetched.url, origin: description.origin,
            modificationDate: description.modified.map(Date.init(timeIntervalSince1970:)),
            mergeBase: description.base, options: .byMoving)
        try journal.transaction { journal in
            try journal.upsertConflict(
                SharedConflict(
                    id: id, path: path, localVersion: version.persistentIdentifier, isUploaded: true,
                    descriptionTag: descriptionTag))
        }
        pass.summary.conflictsShared += 1
        pass.summary.notes.append("\(path): a conflict version from \(description.maker)")
        return .taken
    }

    /// What became of a conflict another device shared, when this device looked for it.
    enum Taking: Equatable {
        case taken, notTaken
        /// Its description names a path with no document here.
        case waiting(at: RemotePath)
    }
}
