import DocumentKit
import Foundation

extension SyncJournal.SettingKey {
    /// Set with ``pauseReason``: the pause's reason, identifier, time and document count
    /// (``SyncJournal/PauseRecord``, as JSON); the documents it names are rows of the
    /// `pauseDeletions` table.
    package static let pauseRecord = SyncJournal.SettingKey(rawValue: "pauseRecord")
}

extension SyncJournal {
    /// What the journal keeps of a pause beside its message and its documents.
    package struct PauseRecord: Codable, Sendable, Equatable {
        package var reason: SyncPause.Reason
        package var identifier: String
        /// Seconds since 1970.
        package var since: Double
        package var documentCount: Int
    }

    /// The documents of a pause, by the side they would be deleted on.
    package struct PauseDeletions: Sendable, Equatable {
        package var here: Set<RemotePath> = []
        package var remote: Set<RemotePath> = []
    }
}

extension SyncJournal.Transaction {
    /// The pause in force, whole; nil when sync is not paused, or when the pause was recorded
    /// by an older version that kept only its message.
    package func pause() throws -> SyncPause? {
        guard let message = try setting(.pauseReason),
            let text = try setting(.pauseRecord),
            let record = try? JSONDecoder().decode(SyncJournal.PauseRecord.self, from: Data(text.utf8))
        else { return nil }
        let deletions = try pauseDeletions()
        return SyncPause(
            reason: record.reason, message: message, identifier: record.identifier,
            since: Date(timeIntervalSince1970: record.since), documentCount: record.documentCount,
            deletionsHere: deletions.here.map(\.string), deletionsOnRemote: deletions.remote.map(\.string))
    }

    /// Records `pause` (its message, its record and its documents) in place of any other.
    package func setPause(_ pause: SyncPause) throws {
        let record = SyncJournal.PauseRecord(
            reason: pause.reason, identifier: pause.identifier, since: pause.since.timeIntervalSince1970,
            documentCount: pause.documentCount)
        try setSetting(.pauseReason, pause.message)
        try setSetting(.pauseRecord, String(decoding: try JSONEncoder().encode(record), as: UTF8.self))
        try setSetting(.approvedDeletions, nil)
        try setPauseDeletions(
            SyncJournal.PauseDeletions(
                here: Set(pause.deletionsHere.map(RemotePath.init)),
                remote: Set(pause.deletionsOnRemote.map(RemotePath.init))))
    }

    /// The documents the pause names, or, once "delete them" was chosen, the deletions approved.
    package func pauseDeletions() throws -> SyncJournal.PauseDeletions {
        var deletions = SyncJournal.PauseDeletions()
        try connection.query("SELECT path, side FROM pauseDeletions") { row in
            let path = RemotePath(try row.value(at: 0) as String)
            if try row.value(at: 1) as String == "here" {
                deletions.here.insert(path)
            } else {
                deletions.remote.insert(path)
            }
        }
        return deletions
    }

    /// Replaces the documents of the pause (or the deletions approved) with `deletions`.
    package func setPauseDeletions(_ deletions: SyncJournal.PauseDeletions) throws {
        try connection.execute("DELETE FROM pauseDeletions")
        for (paths, side) in [(deletions.here, "here"), (deletions.remote, "remote")] {
            for path in paths {
                try connection.execute(
                    "INSERT INTO pauseDeletions (path, side) VALUES (?, ?)",
                    [.text(path.string), .text(side)])
            }
        }
    }

    /// Forgets the folder row at `path` alone (not what is inside, unlike ``remove(_:)``): the
    /// next pass then finds the folder new on the side that has it and makes it on the other,
    /// rather than deleting it where it is.
    package func forgetFolder(_ path: RemotePath) throws {
        try connection.execute("DELETE FROM items WHERE path = ? AND kind = 'folder'", [.text(path.string)])
    }
}
