import DocumentKit
import Foundation

/// One version of a document as the history and conflict screens show it.
struct VersionRecord: Sendable {
    /// Where the version's contents are.
    var url: URL
    var modificationDate: Date?
    var savingComputer: String?
    var isConflict: Bool
    /// The `FileVersion` behind the record, for restoring and resolving.
    var version: FileVersion?
}

/// What ste needs from the versions layer, in one place: the only file that names
/// `FileVersion`'s listing and restoring calls, so that wiring them in is a few lines here.
@MainActor
protocol VersionSource {
    /// Whether versions can be listed at all; when false the screens say so.
    var isAvailable: Bool { get }
    /// The earlier versions of the document at `url`, newest first.
    func history(of url: URL) throws -> [VersionRecord]
    /// The conflict versions of the document at `url` not yet resolved.
    func unresolvedConflicts(of url: URL) throws -> [VersionRecord]
    /// Puts `record`'s contents in place of the file at `url`.
    func restore(_ record: VersionRecord, over url: URL) throws
    /// Marks `records` resolved and removes the versions other than the current one.
    func resolve(_ records: [VersionRecord], of url: URL) throws
}

extension VersionSource {
    /// The text of `record`, or nil when it is not UTF-8 text.
    func text(of record: VersionRecord) throws -> String? {
        let data = try Data(contentsOf: record.url)
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
        (FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? []).map(record)
    }

    func restore(_ record: VersionRecord, over url: URL) throws {
        guard let version = record.version else { return }
        _ = try version.replaceItem(at: url, options: [])
    }

    func resolve(_ records: [VersionRecord], of url: URL) throws {
        // Only the conflict versions go: the document's history stays.
        for record in records {
            record.version?.isResolved = true
            try record.version?.remove()
        }
    }

    private func record(_ version: FileVersion) -> VersionRecord {
        VersionRecord(
            url: version.url, modificationDate: version.modificationDate,
            savingComputer: version.localizedNameOfSavingComputer, isConflict: version.isConflict,
            version: version)
    }
}

/// The version source the app uses.
@MainActor
func currentVersionSource() -> any VersionSource {
    FileVersionSource()
}
