import Foundation

/// The error a ``Remote`` throws: what went wrong, in which operation, on which path, on
/// which remote.
///
/// The kind is what the engine acts on (a failed condition means "look again and
/// reconcile"; a timeout means "the write may or may not have happened: read back and compare
/// hashes"); its ``category`` groups the kinds as a caller that keeps many requests in flight
/// switches over them (fewer in flight after a timeout, a throttle or a broken connection;
/// stop after a refusal). The rest makes the message, and ``description`` is the one place
/// the sentence shown to the user is made. The description names the remote by its display
/// name, which never carries credentials.
///
/// For example:
///
/// ```swift
/// do {
///     try remote.write(path, from: source, condition: .matches(tag))
/// } catch let error as RemoteError where error.kind == .preconditionFailed {
///     // someone else wrote it since: reconcile
/// }
/// ```
public struct RemoteError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of failure this is.
    public enum Kind: Hashable, Sendable {
        /// A write condition did not hold: the item changed, appeared or vanished since the
        /// caller looked. Nothing was written.
        case preconditionFailed
        /// Nothing is at the path.
        case notFound
        /// Something is already where a move or a new folder was to go.
        case exists
        /// The folder to hold the item is not there (or is a file).
        case parentMissing
        /// The item is a file where a folder was needed.
        case notAFolder
        /// The item is a folder where a file was needed.
        case notAFile
        /// The folder to delete still holds items.
        case notEmpty
        /// A name the remote cannot hold: empty, "." or "..", with "/" or NUL, too long, or
        /// reserved for the remote's own use.
        case invalidName
        /// A folder cannot move into itself.
        case invalidMove
        /// The file changed while it was read; the bytes given are not one version.
        case changedDuringRead
        /// The upload source gave more or fewer bytes than it said (the local file changed).
        case sourceChanged
        /// No answer in time: the operation may or may not have been applied.
        case timedOut
        /// The connection broke: a read gave part of the bytes, a write applied nothing.
        case connectionLost
        /// The server answered with an error status (5xx) and applied nothing.
        case server(status: Int)
        /// The server asks for fewer requests (429 Too Many Requests, 503 Service Unavailable,
        /// S3's SlowDown) and applied nothing.
        case throttled(status: Int)
        /// The answer came whole but cannot be taken: not the XML it should be, a header
        /// missing, a listing with names no file system holds.
        case badAnswer
        /// The remote is not there: the folder is missing (an unmounted disk), the server
        /// unreachable.
        case unavailable
        /// The server's identity did not verify (its TLS certificate), so nothing was sent.
        case insecure
        /// The remote refuses this user.
        case permissionDenied
        /// The remote is full.
        case outOfSpace
        /// The remote cannot do what was asked (a share link of a folder remote); the detail
        /// says why.
        case unsupported
        /// Any other failure; the detail says what.
        case other
    }

    /// The kinds grouped by what a caller running many requests at once does about them.
    public enum Category: Hashable, Sendable, CaseIterable {
        /// No answer in time; the request may or may not have been applied: fewer requests in
        /// flight, and a write is read back before anything else is done to it.
        case timedOut
        /// The remote asked for fewer requests and applied nothing: fewer in flight.
        case throttled
        /// The connection broke: fewer in flight; a write's outcome is read back.
        case connectionLost
        /// The remote refuses (credentials, permission, certificate) or is not there: no other
        /// request will pass either.
        case refused
        /// A condition failed or the item is not as the caller saw it (changed, appeared, its
        /// folder gone): look again and reconcile.
        case conflict
        /// Nothing is at the path.
        case notFound
        /// The remote's answer cannot be taken.
        case badAnswer
        /// This request failed for a reason of its own (a name the remote cannot hold, no
        /// space, a server error): the others go on.
        case failed
    }

    /// The remote operation that failed.
    public enum Operation: String, Hashable, Sendable, CaseIterable {
        case list
        case entry
        case read
        case write
        case delete
        case move
        case makeFolder
        /// Making a share link (``Remote/publishedLink(of:lifetime:)``).
        case publish
    }

    /// What went wrong: what the engine acts on.
    public var kind: Kind
    /// The call that failed.
    public var operation: Operation
    /// The item the operation was on (the source of a move).
    public var path: RemotePath
    /// Where a move was to put the item.
    public var destination: RemotePath?
    /// The remote's ``Remote/displayName``.
    public var remote: String
    /// More in words: the system's or the server's message.
    public var detail: String?

    /// An error of `kind` in `operation` on `path` of the remote named `remote`.
    public init(
        _ kind: Kind, operation: Operation, path: RemotePath, destination: RemotePath? = nil,
        remote: String, detail: String? = nil
    ) {
        self.kind = kind
        self.operation = operation
        self.path = path
        self.destination = destination
        self.remote = remote
        self.detail = detail
    }

    /// What a caller running many requests at once does about this failure.
    public var category: Category {
        switch kind {
        case .timedOut: return .timedOut
        case .throttled: return .throttled
        case .connectionLost: return .connectionLost
        case .permissionDenied, .unavailable, .insecure: return .refused
        case .preconditionFailed, .exists, .parentMissing, .notAFolder, .notAFile, .notEmpty,
            .changedDuringRead, .sourceChanged:
            return .conflict
        case .notFound: return .notFound
        case .badAnswer: return .badAnswer
        case .invalidName, .invalidMove, .server, .outOfSpace, .unsupported, .other: return .failed
        }
    }

    /// Whether the failure says the remote has more requests than it can take (no answer in
    /// time, a throttle, a broken connection): a caller keeping many in flight keeps fewer.
    public var asksForFewerRequests: Bool {
        switch category {
        case .timedOut, .throttled, .connectionLost: return true
        case .refused, .conflict, .notFound, .badAnswer, .failed: return false
        }
    }

    /// Whether the failure was one of getting an answer (none in time, a broken connection, a
    /// server not there or answering 5xx): it says nothing of what the remote can do, and the
    /// same request may pass later.
    public var isTransient: Bool {
        switch kind {
        case .timedOut, .connectionLost, .unavailable, .throttled: return true
        case .server(let status): return status >= 500
        default: return false
        }
    }

    /// Whether a write may have happened though the call failed (no answer in time, a broken
    /// connection, a refused condition, a server error): the caller reads the remote back and
    /// compares hashes, never writes again blindly.
    var leavesOutcomeUnknown: Bool {
        switch kind {
        case .timedOut, .connectionLost, .preconditionFailed: return true
        case .server(let status), .throttled(let status): return status >= 500
        default: return false
        }
    }

    /// One sentence naming the operation, the path, the remote and the reason, such as
    /// `Could not write “Notes/plan.txt” on /mnt/backup: it changed since it was read`.
    public var description: String {
        var text = "Could not \(verb) “\(path)”"
        if let destination { text += " to “\(destination)”" }
        text += " on \(remote): \(reason)"
        if let detail { text += " (\(detail))" }
        return text
    }

    private var verb: String {
        switch operation {
        case .list: return "list"
        case .entry: return "look up"
        case .read: return "read"
        case .write: return "write"
        case .delete: return "delete"
        case .move: return "move"
        case .makeFolder: return "make the folder"
        case .publish: return "make a share link of"
        }
    }

    private var reason: String {
        switch kind {
        case .preconditionFailed: return "it changed since it was last seen"
        case .notFound: return "there is no such item"
        case .exists: return "an item is already there"
        case .parentMissing: return "its folder is not there"
        case .notAFolder: return "it is a file, not a folder"
        case .notAFile: return "it is a folder, not a file"
        case .notEmpty: return "the folder is not empty"
        case .invalidName: return "the remote cannot hold this name"
        case .invalidMove: return "a folder cannot move into itself"
        case .changedDuringRead: return "it changed while it was read"
        case .sourceChanged: return "the local file changed while it was uploaded"
        case .timedOut: return "no answer in time; it may or may not have been done"
        case .connectionLost: return "the connection broke"
        case .server(let status): return "the server answered \(status)"
        case .throttled(let status):
            return "the server answered \(status): it is busy and asks for fewer requests"
        case .badAnswer: return "the answer cannot be read"
        case .unavailable: return "the remote is not there"
        case .insecure: return "the server's certificate did not verify"
        case .permissionDenied: return "permission denied"
        case .outOfSpace: return "no space left"
        case .unsupported: return "the remote cannot do this"
        case .other: return "it failed"
        }
    }
}

extension RemoteError.Kind {
    /// The kind an HTTP error status (5xx, 429) means where the operation gives it no meaning
    /// of its own: 429 and 503 ask for fewer requests, any other 5xx is a server error.
    static func status(_ status: Int) -> RemoteError.Kind {
        status == 429 || status == 503 ? .throttled(status: status) : .server(status: status)
    }
}
