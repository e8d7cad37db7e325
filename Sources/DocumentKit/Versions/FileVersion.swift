import Foundation
import Synchronization

/// A version of a file: an earlier state kept in its history, or a conflict version holding
/// another writer's contents, with `NSFileVersion`'s API.
///
/// Versions live in a ``VersionStore`` outside the user's folder. A version's ``url`` points
/// at its contents there, rebuilt from the store's chunks on first use; the current version
/// (``currentVersionOfItem(at:)``) points at the item itself. The class methods use
/// ``VersionStore/shared``; a store's own methods of the same names use that store.
///
/// For example:
///
/// ```swift
/// for version in FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
///     print("\(version.localizedNameOfSavingComputer ?? "?") at \(version.modificationDate!)")
///     version.isResolved = true
/// }
/// if let old = FileVersion.otherVersionsOfItem(at: url)?.first {
///     try old.replaceItem(at: url)
/// }
/// try FileVersion.removeOtherVersionsOfItem(at: url)
/// ```
public final class FileVersion: Sendable, CustomStringConvertible {
    /// The name of the item when this version was saved.
    public let localizedName: String?
    /// The name of the computer that saved this version. Not unique: two devices may share
    /// a name, which ``savingDeviceIdentifier`` tells apart.
    public let localizedNameOfSavingComputer: String?
    /// The identifier of the device that made this version's contents (``DeviceIdentity``),
    /// when the store knows it. A DocumentKit addition: it, not the computer's name, says
    /// whether a conflict version is this device's (``isFromThisComputer``). Nil for versions
    /// stored before it was kept.
    public let savingDeviceIdentifier: String?
    /// The program that made this version's contents, such as "ste", when the store knows it.
    /// A DocumentKit addition: it tells a conflict version kept by one program on this
    /// computer from another's.
    public let savingProgram: String?
    /// For a conflict version sync made, the SHA-256 (``ContentHash``, hexadecimal) of the
    /// contents both sides started from: how the base of a three-way merge is found among the
    /// item's versions. Nil when not known.
    package let mergeBase: String?
    /// When this version's contents were saved.
    public let modificationDate: Date?
    /// An identifier that finds this version again, across launches, with
    /// ``version(itemAt:forPersistentIdentifier:)``.
    public let persistentIdentifier: String
    /// Whether this version conflicts with the current one: another writer's contents that
    /// were not merged.
    public let isConflict: Bool

    let state: Mutex<MutableState>
    let store: VersionStore?
    /// The item this version belongs to in the store; nil for the current version.
    let itemID: String?
    /// The item itself, for the current version.
    let currentURL: URL?
    let storedName: String

    struct MutableState {
        var isResolved: Bool
        var isDiscardable: Bool
    }

    init(record: VersionRecord, store: VersionStore) {
        localizedName = record.name
        localizedNameOfSavingComputer = record.savingComputer.isEmpty ? nil : record.savingComputer
        savingDeviceIdentifier = record.savingDevice
        savingProgram = record.savingProgram
        mergeBase = record.mergeBase
        modificationDate = record.modified
        persistentIdentifier = record.id
        isConflict = record.isConflict
        state = Mutex(MutableState(isResolved: record.isResolved, isDiscardable: record.isDiscardable))
        self.store = store
        itemID = record.itemID
        currentURL = nil
        storedName = Self.safeName(record.name)
    }

    init(currentItemAt url: URL, modificationDate: Date?) {
        localizedName = url.lastPathComponent
        localizedNameOfSavingComputer = ProcessInfo.processInfo.hostName
        savingDeviceIdentifier = nil
        savingProgram = nil
        mergeBase = nil
        self.modificationDate = modificationDate
        persistentIdentifier = "current"
        isConflict = false
        state = Mutex(MutableState(isResolved: true, isDiscardable: false))
        store = nil
        itemID = nil
        currentURL = url
        storedName = url.lastPathComponent
    }

    /// A name that stays one path component, whatever a record says.
    private static func safeName(_ name: String) -> String {
        let cleaned = name.replacingOccurrences(of: "/", with: "_")
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? "contents" : cleaned
    }

    /// Where the version's contents are: in the store for a stored version, the item itself
    /// for the current version.
    ///
    /// A stored version's contents are rebuilt from the store's chunks the first time this
    /// is read; if that fails, the URL names where they would be and ``hasLocalContents`` is
    /// false.
    public var url: URL {
        if let currentURL { return currentURL }
        guard let store else { return URL(fileURLWithPath: "/") }
        do {
            return try store.materializedURL(of: self)
        } catch {
            store.report(error, operation: "open a version")
            return store.contentsURL.appendingPathComponent(itemID ?? "", isDirectory: true)
                .appendingPathComponent(persistentIdentifier, isDirectory: true).appendingPathComponent(
                    storedName)
        }
    }

    /// Whether the conflict has been dealt with. Setting it to true resolves the conflict;
    /// the version stays until it is removed. Presenters of the item hear
    /// `presentedItemDidResolveConflict`, and a document of it leaves its
    /// `inConflict` state when no unresolved conflict is left.
    public var isResolved: Bool {
        get { state.withLock { $0.isResolved } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.isResolved = newValue }
                return state.isResolved != newValue
            }
            if changed { store?.setResolved(self, newValue) }
        }
    }

    /// Whether the system may remove this version to reclaim space.
    public var isDiscardable: Bool {
        get { state.withLock { $0.isDiscardable } }
        set {
            state.withLock { $0.isDiscardable = newValue }
            store?.setDiscardable(self, newValue)
        }
    }

    /// Whether the version's contents are on this computer: always, unless the store lost them.
    public var hasLocalContents: Bool {
        if let currentURL { return FileManager.default.fileExists(atPath: currentURL.path) }
        return store?.hasChunks(of: self) ?? false
    }

    public var description: String {
        "FileVersion(\(persistentIdentifier)\(isConflict ? ", conflict" : ""), \(modificationDate.map { "\($0)" } ?? "no date"))"
    }

    // MARK: - Acting on one version

    /// How a version's contents are taken when adding or restoring it.
    public struct ReplacingOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Restore by moving: the version is removed from the store once restored.
        public static let byMoving = ReplacingOptions(rawValue: 1 << 0)
    }

    /// How contents are taken when adding a version.
    public struct AddingOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The contents are moved into the store: the file at the contents URL is gone after.
        public static let byMoving = AddingOptions(rawValue: 1 << 0)
    }

    /// Puts this version's contents at `url` with a safe save, and returns `url`.
    ///
    /// What was at `url` is kept as a history version first, so a restore can be undone.
    /// Coordinate the write (`coordinate(writingItemAt:options: .forReplacing)`) when others
    /// may present the item.
    ///
    /// - Parameters:
    ///   - url: Where to put the contents, usually the item the version belongs to.
    ///   - options: `.byMoving` removes this version from the store once restored.
    /// - Throws: ``DocumentKitError`` if the version is gone or `url` cannot be written; the
    ///   item at `url` is then untouched.
    @discardableResult
    public func replaceItem(at url: URL, options: ReplacingOptions = []) throws -> URL {
        if let store {
            return try store.replaceItem(at: url, with: self, byMoving: options.contains(.byMoving))
        }
        return try VersionStore.shared.replaceItem(at: url, with: self, byMoving: false)
    }

    /// Removes this version from the store. Presenters of the item hear `presentedItemDidLose`.
    ///
    /// - Throws: ``DocumentKitError``; removing the current version is an
    ///   ``DocumentKitError/Code/invalidArgument`` error.
    public func remove() throws {
        guard let store else {
            throw DocumentKitError(
                .invalidArgument, operation: "remove a version", url: currentURL,
                detail: "it is the current version")
        }
        try store.remove(self)
    }

    // MARK: - Finding versions (the shared store)

    /// The item's current contents as a version.
    public static func currentVersionOfItem(at url: URL) -> FileVersion? {
        guard case .success(let info) = Syscall.fstatat(AT_FDCWD, url.path, followLinks: true) else {
            return nil
        }
        return FileVersion(currentItemAt: url.standardizedFileURL, modificationDate: info.modificationDate)
    }

    /// The item's stored versions, oldest first: history and conflicts. Nil if the item
    /// does not exist.
    public static func otherVersionsOfItem(at url: URL) -> [FileVersion]? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return VersionStore.shared.otherVersionsOfItem(at: url)
    }

    /// The item's conflict versions not yet resolved. Nil if the item does not exist.
    public static func unresolvedConflictVersionsOfItem(at url: URL) -> [FileVersion]? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return VersionStore.shared.unresolvedConflictVersionsOfItem(at: url)
    }

    /// The item's version with `persistentIdentifier`, or nil.
    public static func version(itemAt url: URL, forPersistentIdentifier persistentIdentifier: String)
        -> FileVersion?
    {
        if persistentIdentifier == "current" { return currentVersionOfItem(at: url) }
        return VersionStore.shared.version(itemAt: url, forPersistentIdentifier: persistentIdentifier)
    }

    /// Adds a version of the item at `url` with the contents at `contentsURL`.
    ///
    /// - Parameters:
    ///   - url: The item; it must exist.
    ///   - contentsURL: A file or package folder with the version's contents.
    ///   - options: `.byMoving` removes `contentsURL` once stored.
    /// - Throws: ``DocumentKitError`` if either cannot be read or the store cannot be written.
    @discardableResult
    public static func addOfItem(at url: URL, withContentsOf contentsURL: URL, options: AddingOptions = [])
        throws -> FileVersion
    {
        try VersionStore.shared.addVersion(
            ofItemAt: url, contentsOf: contentsURL, isConflict: false, origin: nil,
            modificationDate: nil,
            byMoving: options.contains(.byMoving))
    }

    /// Adds a conflict version of the item at `url`: another writer's contents, the name of
    /// the computer that wrote them and when. This is how sync and a document that finds
    /// its file changed under unsaved edits record what they could not merge.
    ///
    /// - Parameter savingComputer: The name of the computer whose contents they are; nil for
    ///   this device's own (its ``DeviceIdentity``). A name given is another device's, whose
    ///   identifier is not known: such a version is never "mine" (``isFromThisComputer``).
    /// - Throws: ``DocumentKitError`` if either cannot be read or the store cannot be written.
    @discardableResult
    public static func addConflictOfItem(
        at url: URL, withContentsOf contentsURL: URL, savingComputer: String? = nil,
        modificationDate: Date? = nil,
        options: AddingOptions = []
    ) throws -> FileVersion {
        try VersionStore.shared.addConflictOfItem(
            at: url, withContentsOf: contentsURL, savingComputer: savingComputer,
            modificationDate: modificationDate,
            options: options)
    }

    /// Removes all the item's stored versions, conflicts included.
    ///
    /// - Throws: ``DocumentKitError`` if the store cannot be changed.
    public static func removeOtherVersionsOfItem(at url: URL) throws {
        try VersionStore.shared.removeOtherVersionsOfItem(at: url)
    }
}

extension VersionStore {
    /// Adds a version of the item at `url` with the contents at `contentsURL`: see
    /// ``FileVersion/addOfItem(at:withContentsOf:options:)``.
    @discardableResult
    public func addOfItem(
        at url: URL, withContentsOf contentsURL: URL, options: FileVersion.AddingOptions = []
    ) throws -> FileVersion {
        try addVersion(
            ofItemAt: url, contentsOf: contentsURL, isConflict: false, origin: nil,
            modificationDate: nil,
            byMoving: options.contains(.byMoving))
    }

    /// Adds a conflict version of the item at `url`: see
    /// ``FileVersion/addConflictOfItem(at:withContentsOf:savingComputer:modificationDate:options:)``.
    @discardableResult
    public func addConflictOfItem(
        at url: URL, withContentsOf contentsURL: URL, savingComputer: String? = nil,
        modificationDate: Date? = nil,
        options: FileVersion.AddingOptions = []
    ) throws -> FileVersion {
        try addVersion(
            ofItemAt: url, contentsOf: contentsURL, isConflict: true,
            origin: savingComputer.map { VersionOrigin(computer: $0, device: nil) },
            modificationDate: modificationDate, byMoving: options.contains(.byMoving))
    }

    /// Adds a conflict version of the item at `url` holding the contents at `contentsURL`,
    /// made by the device `origin` says (nil for this one): what sync records of its own
    /// contents and of another device's.
    @discardableResult
    ///
    /// - Parameter mergeBase: The SHA-256 of the contents both sides started from, when known
    ///   (``FileVersion/mergeBase``).
    package func addConflictOfItem(
        at url: URL, withContentsOf contentsURL: URL, origin: VersionOrigin?, modificationDate: Date?,
        mergeBase: String? = nil, options: FileVersion.AddingOptions = []
    ) throws -> FileVersion {
        try storeVersion(
            ofItemAt: url, contentsOf: contentsURL, isConflict: true, origin: origin, savingProgram: nil,
            modificationDate: modificationDate, mergeBase: mergeBase, byMoving: options.contains(.byMoving)
        ).version
    }
}

/// Two version objects are equal when they stand for the same version of the same item (the
/// current version of an item equals another current version of it), as code that compares
/// `NSFileVersion`s expects: `if version == NSFileVersion.currentVersionOfItem(at: url)`.
extension FileVersion: Hashable {
    public static func == (lhs: FileVersion, rhs: FileVersion) -> Bool {
        lhs === rhs
            || (lhs.persistentIdentifier == rhs.persistentIdentifier && lhs.itemID == rhs.itemID
                && lhs.currentURL?.standardizedFileURL == rhs.currentURL?.standardizedFileURL)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(persistentIdentifier)
        hasher.combine(itemID)
        hasher.combine(currentURL?.standardizedFileURL)
    }
}
