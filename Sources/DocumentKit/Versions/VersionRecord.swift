import Foundation
import Synchronization

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
    /// When the contents were last modified (for history, the replaced file's modification date).
    var modified: Date
    /// When the version entered the store: thinning counts age from here.
    var captured: Date
    var isConflict: Bool
    var isResolved: Bool
    var isDiscardable: Bool
    var manifest: Manifest
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

/// The store's identity table, `index.json`: where each item was last seen, for finding it
/// on file systems without extended attributes. Rebuilt from the records when damaged.
struct IdentityIndex: Codable, Sendable, Equatable {
    struct Entry: Codable, Sendable, Equatable {
        var path: String
        var device: UInt64
        var inode: UInt64
    }

    var format = 1
    var items: [String: Entry] = [:] {
        // A change makes the lookup tables again, when they are next asked for.
        didSet { tables = Tables() }
    }
    /// The items by path and by file, made once per change of `items` and shared by its
    /// copies: a lookup costs a hash, not a look at every item (identifying each of 100,000
    /// new files one by one was quadratic).
    private var tables = Tables()

    private enum CodingKeys: String, CodingKey { case format, items }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.format == rhs.format && lhs.items == rhs.items }

    /// The index as JSON that `JSONDecoder` reads back as this index, handed to `write` a
    /// piece at a time, in order: the items in order of their ids, encoded by `JSONEncoder`
    /// (sorted keys) a slice of ``encodingSlice`` items at a time, so that neither the
    /// encoder's own tree of values (at 20,000 items larger than the file it made) nor the
    /// file written (13.7 MB at 100,000 items) is ever whole in memory beside the index.
    func encode(_ write: (Data) throws -> Void) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let ids = items.keys.sorted()
        try write(Data("{\"format\":\(format),\"items\":{".utf8))
        var start = ids.startIndex
        while start < ids.endIndex {
            let end = min(start + Self.encodingSlice, ids.endIndex)
            var slice: [String: Entry] = [:]
            slice.reserveCapacity(end - start)
            for id in ids[start..<end] { slice[id] = items[id] }
            // "{...}": its members follow the slice before, a comma in place of the brace.
            var members = try encoder.encode(slice)
            members.removeLast()
            if start == ids.startIndex {
                members.removeFirst()
            } else {
                members[members.startIndex] = UInt8(ascii: ",")
            }
            try write(members)
            start = end
        }
        try write(Data("}}".utf8))
    }

    /// How many items ``encode(_:)`` hands the encoder at once.
    static let encodingSlice = 1024

    /// The item last seen in the file `device`, `inode`; of two, the smaller id.
    func itemID(device: UInt64, inode: UInt64) -> String? {
        tables.byFile(from: items)[Tables.File(device: device, inode: inode)]
    }

    /// The item last seen at `path`; of two, the smaller id.
    func itemID(path: String) -> String? { tables.byPath(from: items)[path] }

    /// Which lookup tables this index has made, for tests.
    var tablesMade: (byPath: Bool, byFile: Bool) { tables.made }

    /// Each table is made when first asked for: where extended attributes work, items are
    /// looked up by path only, and the table by file (8 MB at 100,000 items) is never made.
    private final class Tables: Sendable {
        struct File: Hashable, Sendable {
            var device: UInt64
            var inode: UInt64
        }
        private let pathTable = Mutex<[String: String]?>(nil)
        private let fileTable = Mutex<[File: String]?>(nil)

        /// Which tables are made now, for tests.
        var made: (byPath: Bool, byFile: Bool) {
            (pathTable.withLock { $0 != nil }, fileTable.withLock { $0 != nil })
        }

        func byPath(from items: [String: Entry]) -> [String: String] {
            Self.made(pathTable, from: items, key: \.path)
        }

        func byFile(from items: [String: Entry]) -> [File: String] {
            Self.made(fileTable, from: items) { File(device: $0.device, inode: $0.inode) }
        }

        private static func made<Key: Hashable & Sendable>(
            _ table: borrowing Mutex<[Key: String]?>, from items: [String: Entry], key: (Entry) -> Key
        ) -> [Key: String] {
            table.withLock { made in
                if let made { return made }
                var table: [Key: String] = [:]
                table.reserveCapacity(items.count)
                for (id, entry) in items {
                    let key = key(entry)
                    table[key] = min(id, table[key] ?? id)
                }
                made = table
                return table
            }
        }
    }
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
