import DocumentKit
import Foundation

/// How a ``SyncEngine`` keeps its journal, its versions and its pace.
public struct SyncConfiguration: Sendable {
    /// Where journals are kept: `$XDG_STATE_HOME` (by default `~/.local/state`) when nil.
    public var stateHome: URL?
    /// Where replaced, deleted and conflicting contents go, and the merge bases.
    public var versionStore: VersionStore
    /// A file modified more recently than this is left for a later pass: a program that
    /// does not coordinate may still be writing it. Half a second by default, so that a save
    /// is uploaded within a second (a file that changes while it is uploaded is left for the
    /// next pass whatever this is).
    public var settleTime: Duration
    /// The name conflict versions made here carry to other devices, for people. Whose a
    /// conflict version is ("mine" or "theirs") is told by ``versionStore``'s device identity,
    /// which each shared conflict carries too: another device may have the same name.
    public var computerName: String
    /// The most passes ``SyncEngine/sync()`` makes before it returns.
    public var mostPasses: Int
    /// Where documents the remote deleted are moved, when set (an app's Deleted folder);
    /// they are kept in ``versionStore`` either way.
    public var deletedItemsFolder: URL?
    /// The ubiquitous key-value store synced with the container's, when set: the file an
    /// ``UbiquitousKeyValueStore`` keeps (see ``SyncConfiguration/ubiquityContainer(_:)``).
    public var keyValueStore: URL?
    /// This device's name among the key-value stores on the remote: by default the
    /// identifier of its ``DeviceIdentity`` kept in the state folder, made once.
    public var deviceIdentifier: String
    /// Whether the engine publishes the container's status (``UbiquityStatus``) for other
    /// processes, as a sync agent does: at the start and end of every pass, and as
    /// transfers go.
    public var publishesStatus = false
    /// Whether documents new from the remote stay on the server, with a placeholder
    /// (`.NAME.icloud`) here, until an app asks for them (`startDownloadingUbiquitousItem`,
    /// or opening the document); false downloads every document at once.
    public var downloadsOnDemand = false
    /// Where the engine reads the time and waits: the system's clocks, unless a simulation
    /// drives its own.
    public var clock: any SyncClock = SystemSyncClock()

    public init(
        stateHome: URL? = nil, versionStore: VersionStore = .shared,
        settleTime: Duration = .milliseconds(500),
        computerName: String = ProcessInfo.processInfo.hostName, mostPasses: Int = 8,
        deletedItemsFolder: URL? = nil, keyValueStore: URL? = nil, deviceIdentifier: String? = nil
    ) {
        self.deletedItemsFolder = deletedItemsFolder
        self.keyValueStore = keyValueStore
        self.deviceIdentifier = deviceIdentifier ?? DeviceIdentity.kept(inStateFolder: stateHome).identifier
        self.stateHome = stateHome
        self.versionStore = versionStore
        self.settleTime = settleTime
        self.computerName = computerName
        self.mostPasses = mostPasses
    }
}

extension SyncConfiguration {
    /// The settings for the ubiquity container `container`: its key-value store synced with
    /// the container, documents downloaded at once or on demand as it says, and the rest as
    /// given.
    public static func ubiquityContainer(
        _ container: UbiquityContainer, stateHome: URL? = nil, deletedItemsFolder: URL? = nil
    ) -> SyncConfiguration {
        var settings = SyncConfiguration(
            stateHome: stateHome, deletedItemsFolder: deletedItemsFolder,
            keyValueStore: SyncStateFiles.keyValueStore(forContainer: container.url, stateHome: stateHome))
        settings.downloadsOnDemand = !container.downloadsEagerly
        return settings
    }
}
