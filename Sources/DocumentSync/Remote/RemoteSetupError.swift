import Foundation

/// Why a remote could not be made from what was given: what ``SyncRemotes`` throws, and what
/// the remotes' addresses (``S3Address``) throw, before any sync begins.
///
/// The kind says what can be done about it: change what was given (the address, the
/// credentials, or the server, which answered and cannot be used), or try again later (the
/// first look at the remote got no answer, or what is kept of it could not be written; nothing
/// of it was kept). The description is the one sentence shown, naming the remote or the address
/// as given, never a password or a key.
///
/// For example:
///
/// ```swift
/// do {
///     remote = try SyncRemotes.remote(for: url)
/// } catch let error as RemoteSetupError where error.isTransient {
///     // no answer this time: try again later
/// }
/// ```
public struct RemoteSetupError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kept the remote from being made.
    public enum Kind: Hashable, Sendable {
        /// The address is not one sync can use: not a URL, a scheme sync does not speak, a
        /// folder that is not there, a setting that is not valid, plain http to another computer.
        case invalidAddress
        /// The credentials could not be read: a password file others can read, no S3 key.
        case credentials
        /// The remote answered and cannot be used: its first look (the probe) found that it
        /// cannot keep one device from overwriting another's edit, or it refused the user.
        case refused
        /// The first look at the remote got no answer (none in time, a connection reset or cut
        /// short, a 5xx): nothing of it is kept, and the next try looks again.
        case unreachable
        /// What is kept of the remote (its settings, under the state folder) could not be
        /// written.
        case settingsNotKept
    }

    /// What kept the remote from being made.
    public var kind: Kind
    /// The sentence shown.
    public var message: String
    /// The remote's own error, when one was behind it.
    public var remoteError: RemoteError?

    /// An error of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String, remoteError: RemoteError? = nil) {
        self.kind = kind
        self.message = message
        self.remoteError = remoteError
    }

    /// Whether trying again later, with nothing changed, may succeed.
    public var isTransient: Bool { kind == .unreachable || kind == .settingsNotKept }

    public var description: String { message }

    /// The error of a first look at a remote (its probe) that failed. A remote that answered
    /// and failed a check cannot be used (`.refused`: something must change); one whose answer
    /// did not come (none in time, a connection reset or cut short, a 5xx) is `.unreachable`
    /// this time, and nothing of it is kept.
    static func probeFailed(_ error: RemoteError, _ remote: String) -> RemoteSetupError {
        guard error.isTransient else {
            return RemoteSetupError(.refused, "\(remote) cannot be used: \(error)", remoteError: error)
        }
        return RemoteSetupError(
            .unreachable, "\(remote) could not be looked at this time (sync tries again): \(error)",
            remoteError: error)
    }
}
