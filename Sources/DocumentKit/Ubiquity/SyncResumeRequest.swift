import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A user's answer to a paused sync (``SyncPause``), left for the container's sync agent in a
/// small file beside its journal (`HASH.resume.json`): the agent holds the container's sync
/// lock for as long as it runs, so another process (the editor, `docs sync --resume` while the
/// agent runs) cannot resume through the journal itself.
///
/// The agent takes the request at its next pass (a wake starts one at once) and acts on it
/// only if it answers the pause in force (by ``SyncPause/identifier``): an answer to a pause
/// that has since been lifted, or replaced by one naming other documents, is dropped.
/// Written and taken under the file's lock, so a request written while the agent takes the
/// last one is never lost.
package struct SyncResumeRequest: Codable, Sendable, Equatable {
    package var decision: SyncPause.Decision
    /// The ``SyncPause/identifier`` of the pause answered.
    package var pause: String

    package init(decision: SyncPause.Decision, pause: String) {
        self.decision = decision
        self.pause = pause
    }

    /// The largest request file read: a request is a few dozen bytes.
    private static let largest = 4096

    /// Leaves the request for the agent of `container`, replacing any earlier one.
    ///
    /// - Throws: ``DocumentKitError`` naming the file when it cannot be written.
    package func write(forContainer container: URL, stateHome: URL? = nil) throws {
        let file = SyncStateFiles.resumeRequest(forContainer: container, stateHome: stateHome)
        let lock = try SettingsFile.lock(file, operation: "ask the sync agent to resume")
        defer { _ = lock }
        try SafeSave.write(try JSONEncoder().encode(self), to: file, permissions: 0o600)
    }

    /// The request left for `container`, removed from its file; nil when there is none. A file
    /// that is not a request (damaged, or too large to be one) is removed too, and `damaged`
    /// is told why.
    package static func take(
        forContainer container: URL, stateHome: URL? = nil, damaged: (String) -> Void = { _ in }
    ) -> SyncResumeRequest? {
        let file = SyncStateFiles.resumeRequest(forContainer: container, stateHome: stateHome)
        guard FileStatus(path: file.path, followingLinks: false) != nil else { return nil }
        guard let lock = try? SettingsFile.lock(file, operation: "take the request to resume sync") else {
            return nil
        }
        defer { _ = lock }
        guard let status = FileStatus(path: file.path, followingLinks: false) else { return nil }
        defer { _ = Syscall.unlinkat(AT_FDCWD, file.path) }
        let data: Data?
        do {
            data =
                status.isRegularFile && status.size <= largest
                ? try SettingsFile.contents(of: file, operation: "read the request to resume sync") : nil
        } catch {
            damaged("\(error); it was removed")
            return nil
        }
        guard let data, let request = try? JSONDecoder().decode(Self.self, from: data) else {
            damaged(
                "the request to resume sync \(file.path) was not one (\(status.size) bytes); it was removed")
            return nil
        }
        return request
    }
}
