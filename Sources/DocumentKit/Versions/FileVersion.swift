import Foundation
import Synchronization

/// A version of a file: an earlier state kept in its history, or a conflict version holding
/// another writer's contents, with `NSFileVersion`'s API.
///
/// Versions live in the version store outside the user's folder; ``url`` points there.
public final class FileVersion: Sendable, CustomStringConvertible {
    /// Where the version's contents are.
    public let url: URL
    /// The name of the item when this version was saved.
    public let localizedName: String?
    /// The name of the computer that saved this version.
    public let localizedNameOfSavingComputer: String?
    /// When this version's contents were saved.
    public let modificationDate: Date?
    /// An identifier that finds this version again, across launches.
    public let persistentIdentifier: String
    /// Whether this version conflicts with the current one: another writer's contents that
    /// were not merged.
    public let isConflict: Bool

    let state: Mutex<MutableState>
    let store: (any FileVersionStoring)?

    struct MutableState {
        var isResolved: Bool
        var isDiscardable: Bool
    }

    init(
        url: URL, localizedName: String?, savingComputer: String?, modificationDate: Date?,
        persistentIdentifier: String, isConflict: Bool, isResolved: Bool, isDiscardable: Bool,
        store: (any FileVersionStoring)?
    ) {
        self.url = url
        self.localizedName = localizedName
        self.localizedNameOfSavingComputer = savingComputer
        self.modificationDate = modificationDate
        self.persistentIdentifier = persistentIdentifier
        self.isConflict = isConflict
        self.state = Mutex(MutableState(isResolved: isResolved, isDiscardable: isDiscardable))
        self.store = store
    }

    /// Whether the conflict has been dealt with. Setting it to true resolves the conflict;
    /// the version stays until it is removed.
    public var isResolved: Bool {
        get { state.withLock { $0.isResolved } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.isResolved = newValue }
                return state.isResolved != newValue
            }
            if changed { store?.versionDidChangeResolution(self) }
        }
    }

    /// Whether the system may remove this version to reclaim space.
    public var isDiscardable: Bool {
        get { state.withLock { $0.isDiscardable } }
        set {
            state.withLock { $0.isDiscardable = newValue }
            store?.versionDidChangeDiscardability(self)
        }
    }

    /// Whether the version's contents are on this computer. Always true: DocumentKit keeps
    /// every version it lists locally.
    public var hasLocalContents: Bool { FileManager.default.fileExists(atPath: url.path) }

    public var description: String {
        "FileVersion(\(persistentIdentifier)\(isConflict ? ", conflict" : ""), \(modificationDate.map { "\($0)" } ?? "no date"))"
    }
}

/// What a ``FileVersion`` tells the store that made it.
protocol FileVersionStoring: Sendable {
    func versionDidChangeResolution(_ version: FileVersion)
    func versionDidChangeDiscardability(_ version: FileVersion)
}
