import Foundation

/// One version as the store keeps it on disk: `items/ITEM/VERSION.json`, written once with a
/// safe save and rewritten only when its resolution or discardability changes.
///
/// A record holds everything needed to list the version and rebuild its contents, and the
/// item's path and inode when it was made, so that the identity table can be rebuilt from
/// the records alone.
struct VersionRecord: Codable, Sendable, Equatable {
    static let formatVersion = 1

    var format = Self.formatVersion
    var id: String
    var itemID: String
    /// The item's file name when the version was made.
    var name: String
    var itemPath: String
    var device: UInt64
    var inode: UInt64
    /// The name of the computer that made the contents, for people; empty when unknown.
    var savingComputer: String
    /// The identifier of the device that made the contents (``DeviceIdentity``): what tells
    /// "mine" from "theirs". Nil in records from before it was kept, and for contents of a
    /// device that did not say.
    var savingDevice: String? = nil
    /// The program that made the contents, for a conflict version: what a person sees to tell
    /// "ste on this computer" from another program. Nil in records from before it was kept.
    var savingProgram: String? = nil
    /// For a conflict version sync made: the SHA-256 (``ContentHash``) of the contents both
    /// sides started from, the base of a three-way merge. Nil when not known, and in records
    /// from before it was kept.
    var mergeBase: String? = nil
    /// When the contents were last modified (for history, the replaced file's modification date).
    var modified: Date
    /// When the version entered the store: thinning counts age from here.
    var captured: Date
    var isConflict: Bool
    var isResolved: Bool
    var isDiscardable: Bool
    var manifest: Manifest
    /// Made on purpose, not by an autosave: what an explicit save replaced, a sync's merge
    /// base or what a download replaced, or a version added or replaced by a call of the app
    /// (a restore, a resolve). Thinning keeps it through the
    /// minute tier (``VersionStore/ThinningPolicy``). Nil in records from before it was kept,
    /// and for autosaves.
    var isOnPurpose: Bool? = nil
}

/// What a version's contents are: one file, or a package folder's tree, each file a list of
/// chunks named by their SHA-256.
struct Manifest: Codable, Sendable, Equatable {
    enum Kind: String, Codable, Sendable {
        case file, folder, link
    }

    struct Entry: Codable, Sendable, Equatable {
        /// The path inside the package, empty for the item itself.
        var path: String
        var kind: Kind
        var mode: UInt32
        var size: Int64
        var chunks: [String]
        var target: String?
    }

    var isPackage: Bool
    /// Folders before what they contain.
    var entries: [Entry]

    var chunkNames: some Sequence<String> { entries.lazy.flatMap(\.chunks) }
}

extension VersionRecord {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func decoded(from data: Data) throws -> VersionRecord {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var record = try decoder.decode(VersionRecord.self, from: data)
        guard record.format == formatVersion, UUID(uuidString: record.id) != nil,
            UUID(uuidString: record.itemID) != nil,
            record.manifest.chunkNames.allSatisfy(ContentHash.isValid),
            record.manifest.entries.allSatisfy({ Manifest.isSafe($0.path) })
        else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a version record"))
        }
        // A device no one can be: the contents are of a device unknown, never this one's.
        record.savingDevice = DeviceIdentity.validIdentifier(record.savingDevice)
        if let base = record.mergeBase, !ContentHash.isValid(base) { record.mergeBase = nil }
        return record
    }
}

extension Manifest {
    /// Whether a path read from a record stays inside the package: no `..`, no absolute path.
    static func isSafe(_ path: String) -> Bool {
        if path.isEmpty { return true }
        if path.hasPrefix("/") { return false }
        return !path.split(separator: "/", omittingEmptySubsequences: false).contains {
            $0 == ".." || $0 == "." || $0.isEmpty
        }
    }
}
