import DocumentKit
import Foundation

/// One version of a document as the history and conflict screens show it.
struct VersionRecord: Sendable {
    var modificationDate: Date?
    var savingComputer: String?
    /// The identifier of the device that saved it, when known: what tells two computers of the
    /// same name apart.
    var savingDevice: String? = nil
    /// The program that saved it, when the store knows.
    var savingProgram: String?
    var isConflict: Bool
    var isResolved: Bool
    /// Whether the version was made on this device (by its identifier, not its computer's name):
    /// a conflict version from here holds the user's own unsaved text, "mine".
    var isFromThisComputer: Bool
    /// The `FileVersion` behind the record, for restoring and resolving.
    var version: FileVersion?

    /// The computer that saved it, for people: with the start of its device's identifier when
    /// it is another device's, since another device may share this computer's name.
    var computerLabel: String? {
        guard let savingComputer else { return nil }
        guard !isFromThisComputer, let savingDevice else { return savingComputer }
        return DeviceIdentity(identifier: savingDevice, name: savingComputer).description
    }

    /// The version's identity in the store.
    var id: String? { version?.persistentIdentifier }

    /// Where the version's contents are, made readable on first use (not when listed).
    var url: URL? { version?.url }
}

/// What ste needs from the versions layer, in one place: the only file that names
/// `FileVersion`'s listing and restoring calls, so that wiring them in is a few lines here.
@MainActor
protocol VersionSource {
    /// Whether versions can be listed at all; when false the screens say so.
    var isAvailable: Bool { get }
    /// The earlier versions of the document at `url`, newest first.
    func history(of url: URL) throws -> [VersionRecord]
    /// The conflict versions of the document at `url` not yet resolved, oldest first.
    func unresolvedConflicts(of url: URL) throws -> [VersionRecord]
    /// Puts `record`'s contents in place of the file at `url`, keeping what it replaces. Off
    /// the main actor, which the open document needs to answer the coordinated write.
    func restore(_ record: VersionRecord, over url: URL) async throws
    /// Resolves the one conflict `record` with the document at `url`, keeping `side`; the
    /// other side stays in the history, and the other conflicts stay unresolved.
    func resolve(_ record: VersionRecord, of url: URL, keeping side: ConflictSide) async throws
}

extension VersionSource {
    /// The text of `record`, or nil when it is not UTF-8 text.
    func text(of record: VersionRecord) throws -> String? {
        guard let url = record.url else { return nil }
        let data = try Data(contentsOf: url)
        return String(validating: data, as: UTF8.self)
    }
}

/// The versions `FileVersion` keeps, with `NSFileVersion`'s calls.
struct FileVersionSource: VersionSource {
    var isAvailable: Bool { true }

    func history(of url: URL) throws -> [VersionRecord] {
        (FileVersion.otherVersionsOfItem(at: url) ?? [])
            .sorted { ($0.modificationDate ?? .distantPast) > ($1.modificationDate ?? .distantPast) }
            .map(record)
    }

    func unresolvedConflicts(of url: URL) throws -> [VersionRecord] {
        (FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [])
            .sorted { ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast) }
            .map(record)
    }

    func restore(_ record: VersionRecord, over url: URL) async throws {
        guard let version = record.version else { return }
        try await version.restoreItem(at: url)
    }

    func resolve(_ record: VersionRecord, of url: URL, keeping side: ConflictSide) async throws {
        try await record.version?.resolveConflict(ofItemAt: url, keeping: side)
    }

    private func record(_ version: FileVersion) -> VersionRecord {
        VersionRecord(
            modificationDate: version.modificationDate,
            savingComputer: version.localizedNameOfSavingComputer,
            savingDevice: version.savingDeviceIdentifier,
            savingProgram: version.savingProgram,
            isConflict: version.isConflict, isResolved: version.isResolved,
            isFromThisComputer: version.isFromThisComputer, version: version)
    }
}

/// The version source the app uses.
@MainActor
func currentVersionSource() -> any VersionSource {
    FileVersionSource()
}
