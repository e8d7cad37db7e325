import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The pause: what stops a pass that would delete too much, and the user's way out of it.
///
/// A pass pauses, before it changes anything, when it would delete more than half of the
/// documents the journal knows, and more than 10, on one side, or when the container or the
/// remote's folder is gone. The pause is kept in the journal with every document it would
/// delete, by name and side (``SyncPause``), and every later pass stops at it until the user
/// answers:
///
/// - "delete them" (``SyncPause/Decision/delete``): the deletions named go ahead, and only
///   those. A later pass whose deletions are not all among them (the user deleted more, or
///   the remote lost others since) pauses again, naming the new set; a pass that needs no
///   approval any more ends it. For a vanished folder it is taken only once the folder is
///   back: then the documents missing from it are deleted on the other side.
/// - "keep them" (``SyncPause/Decision/keep``): each document named is brought back from the
///   side that still has it: downloaded again when it is gone from here, uploaded again
///   (on the condition that nothing is there) when it is gone from the remote, with the
///   folders that held it. A document kept on the server only that the remote lost cannot
///   be brought back from here: it stays a deletion, which a later pass may pause for again.
///   A vanished container is made again (mode 0700, only in a parent folder that exists,
///   since a parent gone too is more likely a disk not mounted than a deletion), and every
///   document downloaded into it; a vanished remote folder is made again the same way and
///   every document uploaded, as to a new remote.
///
/// An answer names the pause it answers (``SyncPause/identifier``): one that arrives for
/// another pause is dropped, so that nothing the user was not shown is deleted.
extension SyncEngine {
    /// The pause in force, with every document it names; nil when sync is not paused.
    public var pause: SyncPause? {
        get throws { try journal.pause() }
    }

    /// Why sync is paused, in words, or nil.
    public var pauseReason: String? {
        get throws { try journal.setting(.pauseReason) }
    }

    /// The pause in force for `container`, read from its journal without taking the
    /// container: usable while its agent syncs it. Nil when it is not paused or has no journal.
    ///
    /// - Throws: ``SyncJournalError`` when the journal cannot be read.
    public static func pause(
        ofContainer container: URL, configuration: SyncConfiguration = SyncConfiguration()
    ) throws -> SyncPause? {
        let url = SyncJournal.url(
            forContainer: URL(fileURLWithPath: CanonicalPath.of(container)),
            stateHome: configuration.stateHome)
        guard FileStatus(path: url.path) != nil else { return nil }
        return try SyncJournal(url: url).pause()
    }

    /// Lets a paused sync go on, deleting what the pause named: ``resume(_:pause:)`` with
    /// ``SyncPause/Decision/delete``.
    public func resume() throws {
        try resume(.delete)
    }

    /// Answers the pause in force: the next pass goes on, having deleted only what the pause
    /// named (`.delete`) or bringing it all back (`.keep`), as ``SyncEngine`` describes.
    ///
    /// For example:
    ///
    /// ```swift
    /// if let pause = try engine.pause {
    ///     print(pause.message, pause.deletionsOnRemote)
    ///     try engine.resume(.keep)
    ///     try engine.sync()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - decision: Delete them, or keep them.
    ///   - identifier: The ``SyncPause/identifier`` of the pause the user was shown; nil for
    ///     whichever pause is in force.
    /// - Returns: What the answer does, in words; nil when sync was not paused.
    /// - Throws: ``SyncError`` (``SyncError/Kind/paused``, the pause kept) when the answer is
    ///   for another pause or cannot be acted on yet: "delete" while a vanished folder is
    ///   still gone, "keep" when the folder cannot be made again. ``SyncError/Kind/failed``
    ///   when the remote cannot be reached to tell.
    @discardableResult
    public func resume(_ decision: SyncPause.Decision, pause identifier: String? = nil) throws -> String? {
        guard let message = try journal.setting(.pauseReason) else { return nil }
        guard let pause = try pause else {
            // A pause recorded by an older version, naming nothing: the next pass checks again.
            try lift()
            return "sync resumed; the next pass checks again what it would delete"
        }
        if let identifier, identifier != pause.identifier {
            throw SyncError(
                .paused, "that answer was for an earlier pause, not this one; \(message)")
        }
        switch decision {
        case .delete:
            if pause.isRootGone, try !rootIsBack(pause) {
                let folder = pause.reason == .containerGone ? "the container" : "the remote's folder"
                throw SyncError(
                    .paused,
                    "cannot delete them while \(folder) is still gone: put it back first, or keep them to make it again; \(message)"
                )
            }
            try journal.transaction { journal in
                try journal.setSetting(.pauseReason, nil)
                try journal.setSetting(.pauseRecord, nil)
                // The rows stay: they are now the deletions approved.
                try journal.setSetting(.approvedDeletions, pause.identifier)
            }
            return "sync resumed: \(pause.outcome(of: .delete))"
        case .keep:
            if pause.isRootGone, try !rootIsBack(pause) { try makeRootAgain(pause, message: message) }
            let left = try restore(pause)
            var outcome = "sync resumed: \(pause.outcome(of: .keep))"
            if left > 0 {
                outcome +=
                    "; \(left) of them, kept on the server only, cannot be brought back from this device"
            }
            return outcome
        }
    }

    /// At the start of a pass: goes on when sync is not paused, or when the answer left for
    /// the agent (``SyncResumeRequest``) answers the pause in force; otherwise throws the pause.
    ///
    /// - Returns: What the pass should tell: the answer taken, or why one was dropped.
    func checkPause() throws -> [String] {
        var notes: [String] = []
        let request = SyncResumeRequest.take(forContainer: container, stateHome: configuration.stateHome) {
            notes.append($0)
        }
        guard let message = try journal.setting(.pauseReason) else { return notes }
        guard let pause = try pause else {
            // An older version's pause, naming nothing: this pass checks again, and pauses
            // again with the documents' names if it must.
            try lift()
            return notes
        }
        // An answer to another pause (lifted since, or replaced by one naming other
        // documents) is dropped: the pause in force is published for a new answer.
        if let request, request.pause == pause.identifier {
            if let outcome = try resume(request.decision, pause: request.pause) {
                notes.append(outcome)
            }
            return notes
        }
        throw SyncError(.paused, message)
    }

    /// Ends the pause and any approval, with nothing else changed.
    private func lift() throws {
        try journal.transaction { journal in
            try journal.setSetting(.pauseReason, nil)
            try journal.setSetting(.pauseRecord, nil)
            try journal.setSetting(.approvedDeletions, nil)
            try journal.setPauseDeletions(SyncJournal.PauseDeletions())
        }
    }

    /// Pauses sync for `reason`, naming the documents that would be deleted on each side, and
    /// returns the error that says so.
    private func pause(
        _ reason: SyncPause.Reason, _ text: String, documentCount: Int, here: Set<RemotePath>,
        remote: Set<RemotePath>
    ) throws -> SyncError {
        let pause = SyncPause(
            reason: reason, message: "sync of \(container.path) is paused: \(text); check, then resume",
            documentCount: documentCount, deletionsHere: here.map(\.string),
            deletionsOnRemote: remote.map(\.string))
        try journal.transaction { try $0.setPause(pause) }
        return SyncError(.paused, pause.message)
    }

    /// Pauses for a vanished container or remote folder: every document the journal knows
    /// would be deleted on the other side.
    func pauseForVanishedRoot(_ reason: SyncPause.Reason, known: [RemotePath: JournalItem]) throws
        -> SyncError
    {
        let files = Set(known.values.filter { $0.kind == .file }.map(\.path))
        let text =
            reason == .containerGone
            ? "the container \(container.path) is gone: its \(files.count) documents would be deleted on the remote"
            : "the remote \(remote.displayName) is gone (its folder was not found): its \(files.count) documents would be deleted here"
        return try pause(
            reason, text, documentCount: files.count, here: reason == .remoteGone ? files : [],
            remote: reason == .containerGone ? files : [])
    }

    /// More than half of the documents (and more than 10) deleted on one side, in one pass, is
    /// more likely a mistake (an unmounted disk, a wiped folder, a listing that lied) than a
    /// wish: sync pauses, naming them. After "delete them", a pass goes on only if each of its
    /// deletions was among those named; the approval ends with the first pass that needs it
    /// no more.
    ///
    /// - Parameter knownFiles: How many files the journal knows.
    func guardAgainstMassDeletion(_ plan: SyncPlan, knownFiles files: Int) throws {
        let deletions = plan.deletions
        func tooMany(_ paths: Set<RemotePath>) -> Bool { paths.count > 10 && paths.count * 2 > files }
        let reason: SyncPause.Reason? =
            tooMany(deletions.here) ? .deletingHere : tooMany(deletions.remote) ? .deletingOnRemote : nil
        let approval = try journal.setting(.approvedDeletions)
        guard let reason else {
            if approval != nil { try lift() }
            return
        }
        if approval != nil {
            let approved = try journal.transaction { try $0.pauseDeletions() }
            if deletions.here.isSubset(of: approved.here) && deletions.remote.isSubset(of: approved.remote) {
                return
            }
        }
        let count = reason == .deletingHere ? deletions.here.count : deletions.remote.count
        var text =
            "\(count) of \(files) documents would be deleted \(reason == .deletingHere ? "here" : "on the remote")"
        if approval != nil { text += " (the documents to delete changed since you chose to delete them)" }
        throw try pause(reason, text, documentCount: files, here: deletions.here, remote: deletions.remote)
    }

    /// Whether the folder a pause found gone is there again.
    private func rootIsBack(_ pause: SyncPause) throws -> Bool {
        if pause.reason == .containerGone { return FileStatus(path: container.path)?.isDirectory == true }
        do {
            _ = try remote.list(.root)
            return true
        } catch let error as RemoteError where error.kind == .notFound && error.path.isRoot {
            return false
        } catch {
            throw SyncError(
                .failed, "cannot tell whether \(remote.displayName) is back: \(error); \(pause.message)")
        }
    }

    /// Makes the vanished container or remote folder again, in a parent folder that exists.
    private func makeRootAgain(_ pause: SyncPause, message: String) throws {
        if pause.reason == .containerGone {
            let parent = container.deletingLastPathComponent()
            guard FileStatus(path: parent.path)?.isDirectory == true else {
                throw SyncError(
                    .paused,
                    "cannot make the container again: the folder that held it, \(parent.path), is gone too (a disk not mounted?); mount it or make that folder, then keep them; \(message)"
                )
            }
            if case .failure(let errno) = Syscall.mkdirat(AT_FDCWD, container.path, 0o700),
                errno != .fileExists
            {
                throw SyncError(
                    .paused, "cannot make the container \(container.path) again: \(errno); \(message)")
            }
            return
        }
        guard let remote = remote as? any RemoteRootMaking else {
            throw SyncError(
                .paused,
                "\(remote.displayName) cannot be made again from here: make it, then keep them; \(message)")
        }
        do {
            try remote.makeRootFolder()
        } catch let error as RemoteError where error.kind == .exists {
            return
        } catch let error as RemoteError where error.kind == .parentMissing {
            throw SyncError(
                .paused,
                "cannot make \(remote.displayName) again: the folder that held it is gone too (a share not mounted?); mount it or make that folder, then keep them; \(message)"
            )
        } catch {
            throw SyncError(.paused, "cannot make \(remote.displayName) again: \(error); \(message)")
        }
    }

    /// "Keep them": the journal forgets, for each document the pause named, the side that lost
    /// it, and the folders above it, so that the next pass finds it new on the side that has
    /// it and copies it to the other; the pause ends in the same transaction.
    ///
    /// - Returns: How many named documents cannot be brought back (kept on the server only,
    ///   and gone from it).
    private func restore(_ pause: SyncPause) throws -> Int {
        try journal.transaction { journal in
            var folders = Set<RemotePath>()
            var left = 0
            func forgetLocalSide(_ item: JournalItem) throws {
                var item = item
                item.local = nil
                try journal.upsert(item)
            }
            func forgetRemoteSide(_ item: JournalItem) throws {
                guard item.local != .evicted else {
                    left += 1
                    return
                }
                var item = item
                item.remoteTag = nil
                item.remoteSize = nil
                item.remoteFileID = nil
                try journal.upsert(item)
            }
            if pause.isRootGone {
                for item in try journal.allItems() {
                    if item.kind == .folder {
                        folders.insert(item.path)
                    } else if pause.reason == .containerGone {
                        try forgetLocalSide(item)
                    } else {
                        try forgetRemoteSide(item)
                    }
                }
            } else {
                for (paths, gone) in [(pause.deletionsOnRemote, true), (pause.deletionsHere, false)] {
                    for path in paths.map(RemotePath.init) {
                        guard let item = try journal.item(at: path), item.kind == .file else { continue }
                        try gone ? forgetLocalSide(item) : forgetRemoteSide(item)
                        var folder = path.parent
                        while !folder.isRoot {
                            folders.insert(folder)
                            folder = folder.parent
                        }
                    }
                }
            }
            for folder in folders { try journal.forgetFolder(folder) }
            try journal.setSetting(.pauseReason, nil)
            try journal.setSetting(.pauseRecord, nil)
            try journal.setSetting(.approvedDeletions, nil)
            try journal.setPauseDeletions(SyncJournal.PauseDeletions())
            return left
        }
    }
}
