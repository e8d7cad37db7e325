import Foundation

/// Why the sync of a container stopped to ask its user, and what it would have deleted: the
/// question a user answers with a ``Decision``.
///
/// A pass pauses before it changes anything when it would delete more than half of the
/// documents it knows, and more than 10, on one side (a user who deleted most documents on
/// purpose, or a remote whose listing lied or was cut short: both look the same from here),
/// or when the container or the remote's folder is gone. The pause names every document that
/// would be deleted, on each side, and stays until the user decides; every later pass stops at
/// it with ``message``. The sync engine keeps it in the container's journal; its agent
/// publishes it in ``UbiquityStatus/pause`` (with at most ``publishedNames`` names a side),
/// where an app reads it and answers with ``UbiquityAgent/resume(forContainerAt:pause:decision:)``.
///
/// For example:
///
/// ```swift
/// if let pause = UbiquityStatus.read(forContainer: container)?.pause {
///     print(pause.message)                        // "15 of 20 documents would be deleted on the remote"
///     for name in pause.deletionsOnRemote { print("  \(name)") }
///     UbiquityAgent.resume(forContainerAt: container, pause: pause.identifier, decision: .keep)
/// }
/// ```
public struct SyncPause: Codable, Sendable, Equatable {
    /// What made the pass stop.
    public enum Reason: String, Codable, Sendable {
        /// Most documents are gone from the remote: the pass would delete them here.
        case deletingHere
        /// Most documents are gone from here: the pass would delete them on the remote.
        case deletingOnRemote
        /// The container folder is gone: every document would be deleted on the remote.
        case containerGone
        /// The remote's folder is gone: every document would be deleted here.
        case remoteGone
    }

    /// The user's answer.
    public enum Decision: String, Codable, Sendable, CaseIterable {
        /// Delete them: the deletions the pause named go ahead, and only those. A pass that
        /// would delete others pauses again, naming them.
        case delete
        /// Keep them: every document the pause named is brought back from the side that still
        /// has it (downloaded again when it is gone from here, uploaded again when it is gone
        /// from the remote), with the folders that hold it; a folder that is gone is made
        /// again.
        case keep
    }

    public var reason: Reason
    /// The reason in words, naming the container: what every paused pass says.
    public var message: String
    /// Names this pause: an answer given for another pause (an older one, or one whose list
    /// changed since it was shown) is not taken for this one.
    public var identifier: String
    /// When the pass paused.
    public var since: Date
    /// The documents the journal knew when the pass paused.
    public var documentCount: Int
    /// The paths (relative to the container) of the documents that would be deleted here,
    /// sorted; at most ``publishedNames`` in a published status.
    public var deletionsHere: [String]
    /// The paths of the documents that would be deleted on the remote, sorted.
    public var deletionsOnRemote: [String]
    /// How many documents would be deleted here, whether or not all are named.
    public var deletionCountHere: Int
    /// How many documents would be deleted on the remote.
    public var deletionCountOnRemote: Int

    /// A pause naming every deletion: the counts are those of the lists.
    public init(
        reason: Reason, message: String, identifier: String = UUID().uuidString, since: Date = Date(),
        documentCount: Int, deletionsHere: [String], deletionsOnRemote: [String]
    ) {
        self.reason = reason
        self.message = message
        self.identifier = identifier
        self.since = since
        self.documentCount = documentCount
        self.deletionsHere = deletionsHere.sorted()
        self.deletionsOnRemote = deletionsOnRemote.sorted()
        deletionCountHere = deletionsHere.count
        deletionCountOnRemote = deletionsOnRemote.count
    }

    /// How many names of each side a published status carries: enough for a screen, while a
    /// pause of 100,000 documents does not make the status file 100,000 names longer.
    public static let publishedNames = 200

    /// The pause with at most `limit` names a side; the counts stay whole.
    public func limited(to limit: Int = publishedNames) -> SyncPause {
        var limited = self
        limited.deletionsHere = Array(deletionsHere.prefix(limit))
        limited.deletionsOnRemote = Array(deletionsOnRemote.prefix(limit))
        return limited
    }

    /// Whether a root folder is gone (``Reason/containerGone``, ``Reason/remoteGone``) rather
    /// than many documents in it.
    public var isRootGone: Bool { reason == .containerGone || reason == .remoteGone }

    /// What each answer does here, in words: "delete them" and "keep them" finished for this
    /// pause ("delete the 15 documents on the remote", "download the 15 documents again").
    public func outcome(of decision: Decision) -> String {
        func documents(_ count: Int) -> String { count == 1 ? "1 document" : "\(count) documents" }
        switch (decision, reason) {
        case (.delete, .containerGone):
            return "delete \(documents(deletionCountOnRemote)) on the remote (once the container is back)"
        case (.delete, .remoteGone):
            return "delete \(documents(deletionCountHere)) here (once the remote's folder is back)"
        case (.delete, _):
            return [
                deletionCountOnRemote > 0 ? "delete \(documents(deletionCountOnRemote)) on the remote" : nil,
                deletionCountHere > 0 ? "delete \(documents(deletionCountHere)) here" : nil,
            ].compactMap { $0 }.joined(separator: " and ")
        case (.keep, .containerGone):
            return "make the container again and download \(documents(deletionCountOnRemote))"
        case (.keep, .remoteGone):
            return "make the remote's folder again and upload \(documents(deletionCountHere))"
        case (.keep, _):
            return [
                deletionCountOnRemote > 0 ? "download \(documents(deletionCountOnRemote)) again" : nil,
                deletionCountHere > 0 ? "upload \(documents(deletionCountHere)) again" : nil,
            ].compactMap { $0 }.joined(separator: " and ")
        }
    }
}
