import Foundation

/// Where sync keeps what it knows of a container, outside the container: read by the sync
/// engine (DocumentSync) and by what DocumentKit shows of sync (the query's ubiquitous
/// attributes, the agent started on demand), so both find the same files.
package enum SyncStateFiles {
    /// `$XDG_STATE_HOME` when it is an absolute path, else `~/.local/state`
    /// (``StandardDirectories/stateHome(environment:)``).
    package static func stateHome(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL
    {
        StandardDirectories.stateHome(environment: environment)
    }

    /// Where the journal of `container` lives: `STATE/DocumentKit/sync/HASH.sqlite3`, HASH
    /// being the SHA-256 of the container's canonical path. The engine's lock is beside it
    /// (`.lock` added), and so is the status it publishes (``status(forContainer:stateHome:)``).
    package static func journal(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("sqlite3")
    }

    /// The lock a running sync engine holds (exclusive `flock`) on `container`.
    package static func lock(forContainer container: URL, stateHome: URL? = nil) -> URL {
        URL(fileURLWithPath: journal(forContainer: container, stateHome: stateHome).path + ".lock")
    }

    /// Where the sync agent of `container` says how each item stands: `HASH.status.json`.
    package static func status(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("status.json")
    }

    /// The file an app writes to ask the agent of `container` to sync now: `HASH.wake`.
    package static func wake(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("wake")
    }

    /// The documents kept on the server only that apps asked the agent of `container` to
    /// download: `HASH.downloads.json` (see ``UbiquityDownloadRequests``).
    package static func downloadRequests(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("downloads.json")
    }

    /// A user's answer to a paused sync, left for the agent of `container`: `HASH.resume.json`
    /// (see ``SyncResumeRequest``).
    package static func resumeRequest(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("resume.json")
    }

    /// The passes other processes asked of the agent of `container`, and its answers:
    /// `HASH.passes/` (see ``SyncPassRequests``).
    package static func passRequests(forContainer container: URL, stateHome: URL? = nil) -> URL {
        URL(
            fileURLWithPath: base(forContainer: container, stateHome: stateHome).appendingPathExtension(
                "passes"
            ).path,
            isDirectory: true)
    }

    /// Where the output of an agent started on demand goes: `HASH.log`.
    package static func log(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("log")
    }

    /// The ubiquitous key-value store of `container`: `HASH.keyvalue.plist`, merged with the
    /// other devices' by the container's sync agent.
    package static func keyValueStore(forContainer container: URL, stateHome: URL? = nil) -> URL {
        base(forContainer: container, stateHome: stateHome).appendingPathExtension("keyvalue.plist")
    }

    /// The key-value store of a device with no container configured: kept here, and taken
    /// into the first container's store when one is added.
    package static func unsyncedKeyValueStore(stateHome: URL? = nil) -> URL {
        (stateHome ?? self.stateHome()).appendingPathComponent("DocumentKit/keyvalue-unsynced.plist")
    }

    /// The folder of every container's sync state: `STATE/DocumentKit/sync`.
    package static func folder(stateHome: URL? = nil) -> URL {
        (stateHome ?? self.stateHome()).appendingPathComponent("DocumentKit/sync", isDirectory: true)
    }

    private static func base(forContainer container: URL, stateHome: URL?) -> URL {
        let hash = ContentHash(of: Data(CanonicalPath.of(container).utf8)).hex
        return folder(stateHome: stateHome).appendingPathComponent(hash)
    }
}
