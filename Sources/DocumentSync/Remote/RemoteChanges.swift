import DocumentKit
import Foundation

/// A remote's watch for changes (``Remote/watchChanges(_:)``): it stops when cancelled or
/// released.
public final class RemoteWatch: Sendable {
    private let stop: @Sendable () -> Void

    /// A watch that `stop` ends; `stop` may be called more than once.
    public init(stop: @escaping @Sendable () -> Void) { self.stop = stop }

    /// Stops the watch: no change is told after this returns.
    public func cancel() { stop() }

    deinit { stop() }
}

extension RemotePath {
    /// The file every device rewrites after a pass that changed the remote,
    /// `.documentsync/changed`: its tag is the change marker of a remote that has no better
    /// one (``Remote/changeMarker()``), so that one cheap request tells another device to
    /// pass.
    public static let changeMarker = metadataFolder.appending("changed")
}

extension Remote {
    /// The tag of ``RemotePath/changeMarker``, nil when there is none: one request (a `stat`,
    /// a `PROPFIND` of `Depth: 0`, a `HEAD`).
    public func changeMarker() throws -> RemoteTag? {
        try entry(at: .changeMarker)?.tag
    }

    /// None: the remote can only be asked (``changeMarker()``).
    public func watchChanges(_ changed: @escaping @Sendable () -> Void) throws -> RemoteWatch? { nil }
}

extension LocalFolderRemote {
    /// Watches the folder with inotify (DocumentKit's ``DirectoryWatcher``): any program's
    /// change inside it is told at once, without a poll. The remote's own bookkeeping (its
    /// lock, the temporary files of writes in progress) is not a change.
    ///
    /// - Throws: ``DocumentKitError`` when the folder cannot be watched.
    public func watchChanges(_ changed: @escaping @Sendable () -> Void) throws -> RemoteWatch? {
        let lock = Self.lockPath.name
        let watcher = try DirectoryWatcher { events in
            let told = events.contains { event in
                let name = event.url.lastPathComponent
                return !name.hasPrefix(".") && name != lock
            }
            if told { changed() }
        }
        try watcher.watch(root, recursive: true)
        return RemoteWatch { watcher.cancel() }
    }
}
