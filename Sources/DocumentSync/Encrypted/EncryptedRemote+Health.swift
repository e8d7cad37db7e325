import Foundation

/// What a health check of a vault found: the directories under `d/` that no folder reaches,
/// the folders whose directory is not there, and the folders that cannot be followed.
///
/// A folder is made (``EncryptedRemote/makeFolder(_:)``) by writing its own directory first
/// and its `dir.c9r` last, and deleted by removing its `dir.c9r` first and its directory last:
/// either stopped midway leaves a directory no `dir.c9r` reaches. Such a *leftover* holds
/// nothing, or only its ID backup (`dirid.c9r`), and costs only space;
/// ``EncryptedRemote/repairHealth(_:settle:)`` removes it. A directory no folder reaches that
/// holds items is encrypted data lost to the tree: it is reported, never removed.
///
/// For example:
///
/// ```swift
/// let report = try remote.checkHealth()
/// for line in report.lines { print(line) }
/// if !report.leftovers.isEmpty { _ = try remote.repairHealth(report, settle: .seconds(30)) }
/// ```
public struct VaultHealthReport: Equatable, Sendable {
    /// A directory under `d/` that no folder's `dir.c9r` reaches.
    public struct UnreachableDirectory: Hashable, Sendable {
        /// What such a directory holds.
        public enum Contents: Hashable, Sendable {
            /// Nothing, or only its ID backup: what a folder's making or deleting stopped midway
            /// leaves.
            case leftover
            /// This many items (`.c9r` and `.c9s` entries): encrypted data no folder reaches.
            case items(Int)
            /// This many names that are not of the vault (and no items).
            case other(Int)
        }

        /// The directory in the inner remote: `d/XX/YYYY...`.
        public var path: RemotePath
        public var contents: Contents
    }

    /// A folder of the vault that the walk could not follow into its directory.
    public struct DamagedFolder: Hashable, Sendable {
        /// Why the folder could not be followed.
        public enum Damage: Hashable, Sendable {
            /// Its `dir.c9r` names a directory that is not there (or is a file).
            case missingDirectory(RemotePath)
            /// Its `dir.c9r` names a directory another folder reaches too.
            case sharedDirectory(RemotePath)
            /// Its `dir.c9r` cannot be read as a directory ID; the detail says why.
            case unreadableDirectoryID(String)
        }

        /// The folder: its plain path, with `(stored name)` for a name that does not decrypt.
        public var folder: String
        public var damage: Damage
    }

    /// When the walk was made: a repair waits for a settling time after it.
    public var checked: ContinuousClock.Instant
    /// How many directories the walk reached, the root's included.
    public var reachedCount: Int
    /// The directories under `d/` no folder reaches, by path.
    public var unreachable: [UnreachableDirectory]
    /// The folders whose directory is not there, is shared, or cannot be told.
    public var damaged: [DamagedFolder]
    /// What was skipped as no part of a vault (odd names and files in `d/`), at most
    /// ``mostNotes`` of them, then how many more.
    public var notes: [String]

    /// The most notes a report keeps: a `d/` of a million odd names makes a report of a page.
    public static let mostNotes = 50

    /// The unreachable directories a repair may remove.
    public var leftovers: [UnreachableDirectory] { unreachable.filter { $0.contents == .leftover } }

    /// Whether the vault has no problem: every directory reached, every folder followed.
    public var isHealthy: Bool { unreachable.isEmpty && damaged.isEmpty }

    /// One line for each problem, then each note.
    public var lines: [String] {
        var lines: [String] = []
        for directory in unreachable {
            switch directory.contents {
            case .leftover:
                lines.append("leftover: \(directory.path) (no folder reaches it; it holds no items)")
            case .items(let count):
                lines.append(
                    "orphaned items: \(directory.path) holds \(count) encrypted item\(count == 1 ? "" : "s") "
                        + "no folder reaches (kept)")
            case .other(let count):
                lines.append(
                    "unreachable: \(directory.path) holds \(count) name\(count == 1 ? "" : "s") "
                        + "not of the vault (kept)")
            }
        }
        for folder in damaged {
            switch folder.damage {
            case .missingDirectory(let path):
                lines.append(
                    "missing directory: folder \"\(folder.folder)\" points at \(path), which is not there")
            case .sharedDirectory(let path):
                lines.append(
                    "shared directory: folder \"\(folder.folder)\" points at \(path), another folder's too")
            case .unreadableDirectoryID(let detail):
                lines.append("unreadable folder: \"\(folder.folder)\": \(detail)")
            }
        }
        return lines + notes.map { "note: \($0)" }
    }
}

extension EncryptedRemote {
    /// Walks the vault from its root through every folder's `dir.c9r`, and lists `d/` two levels
    /// down: each directory there that the walk did not reach is reported, as a leftover or as
    /// holding items; each folder the walk could not follow is reported too.
    ///
    /// Nothing is written. Names in `d/` that are no directory of a vault (odd names, files) are
    /// skipped with a note.
    ///
    /// - Throws: ``RemoteError`` of the inner remote naming the path it could not list or read.
    public func checkHealth() throws -> VaultHealthReport {
        let checked = ContinuousClock.now
        let walk = try walkFolders()
        var notes: [String] = []
        var unreachable: [VaultHealthReport.UnreachableDirectory] = []
        for directory in try storedDirectories(notes: &notes) where !walk.reached.contains(directory) {
            guard let contents = try contents(of: directory) else { continue }
            unreachable.append(.init(path: directory, contents: contents))
        }
        let shown = Array(notes.prefix(VaultHealthReport.mostNotes))
        return VaultHealthReport(
            checked: checked, reachedCount: walk.reached.count, unreachable: unreachable,
            damaged: walk.damaged,
            notes: notes.count > shown.count ? shown + ["and \(notes.count - shown.count) more"] : shown)
    }

    /// Removes the leftovers of `report` that are leftovers still: unreachable in a walk made
    /// at least `settle` after the report's, and holding nothing or only their ID backup right
    /// before their removal (the backup first, then the directory).
    ///
    /// Another device making a folder writes its directory a moment before its `dir.c9r`:
    /// `settle` gives it time to finish (the command line waits 30 seconds). A directory that a
    /// folder reaches by then, or that gained anything, is kept; so is everything when the
    /// second walk meets a folder it cannot follow (the directory it names cannot be told).
    /// Orphaned items are never removed.
    ///
    /// - Returns: The directories removed.
    /// - Throws: ``RemoteError`` of the inner remote naming the path it could not list or remove.
    public func repairHealth(_ report: VaultHealthReport, settle: Duration) throws -> [RemotePath] {
        let leftovers = report.leftovers
        guard !leftovers.isEmpty else { return [] }
        let wait = report.checked + settle - ContinuousClock.now
        if wait > .zero {
            let (seconds, attoseconds) = wait.components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        }
        let walk = try walkFolders()
        guard
            !walk.damaged.contains(where: {
                if case .unreadableDirectoryID = $0.damage { true } else { false }
            })
        else { return [] }
        var removed: [RemotePath] = []
        for leftover in leftovers where !walk.reached.contains(leftover.path) {
            guard try contents(of: leftover.path) == .leftover else { continue }
            do {
                let backup = leftover.path.appending(VaultNameCipher.directoryIDBackupFileName)
                try deleteInner(backup)
                try deleteInner(leftover.path)
                removed.append(leftover.path)
            } catch let error as RemoteError
                where [.preconditionFailed, .notEmpty, .notFound].contains(error.kind)
            {
                // Changed since it was looked at: not a leftover to remove now.
                continue
            }
        }
        return removed
    }

    /// What a walk of the vault's folders found.
    private struct FolderWalk {
        /// The directories reached.
        var reached: Set<RemotePath> = []
        var damaged: [VaultHealthReport.DamagedFolder] = []
    }

    /// Every directory reached from the root through the folders' `dir.c9r` files.
    private func walkFolders() throws -> FolderWalk {
        var walk = FolderWalk()
        let root = RemotePath(try vault.names.directoryPath(of: VaultNameCipher.rootDirectoryID))
        walk.reached.insert(root)
        var pending: [(folder: String, id: String, directory: RemotePath)] = [
            ("/", VaultNameCipher.rootDirectoryID, root)
        ]
        while let (folder, id, directory) = pending.popLast() {
            let listing: RemoteListing
            do {
                listing = try inner.list(directory)
            } catch let error as RemoteError where error.kind == .notFound || error.kind == .notAFolder {
                walk.damaged.append(.init(folder: folder, damage: .missingDirectory(directory)))
                continue
            }
            for stored in listing.entries where stored.kind == .folder {
                guard stored.name.hasSuffix(".c9r") || stored.name.hasSuffix(".c9s") else { continue }
                let entry = directory.appending(stored.name)
                let contents: Data
                do {
                    contents = try Self.readSmall(
                        inner, entry.appending(VaultNameCipher.directoryIDFileName),
                        limit: Self.smallFileLimit)
                } catch let error as RemoteError where error.kind == .notFound {
                    // A file with a long name, a link, or a folder whose making stopped before its
                    // `dir.c9r`: no directory reached from here.
                    continue
                } catch let error as RemoteError where error.kind == .badAnswer || error.kind == .notAFile {
                    let child = try plainName(of: stored.name, at: entry, in: folder, parentID: id)
                    let detail =
                        "its \(VaultNameCipher.directoryIDFileName) is " + (error.detail ?? "not a file")
                    walk.damaged.append(.init(folder: child, damage: .unreadableDirectoryID(detail)))
                    continue
                }
                let child = try plainName(of: stored.name, at: entry, in: folder, parentID: id)
                let childID: String
                do {
                    childID = try VaultNameCipher.directoryID(contents: contents, item: child)
                } catch let error as VaultError {
                    walk.damaged.append(
                        .init(folder: child, damage: .unreadableDirectoryID(error.description)))
                    continue
                }
                let childDirectory = RemotePath(try vault.names.directoryPath(of: childID))
                guard walk.reached.insert(childDirectory).inserted else {
                    walk.damaged.append(.init(folder: child, damage: .sharedDirectory(childDirectory)))
                    continue
                }
                pending.append((child, childID, childDirectory))
            }
        }
        return walk
    }

    /// The plain path of the item stored as `storedName` (at `entry`) in the folder `folder`
    /// whose directory ID is `parentID`, or the folder and the stored name in parentheses when
    /// it does not decrypt.
    private func plainName(of storedName: String, at entry: RemotePath, in folder: String, parentID: String)
        throws
        -> String
    {
        let prefix = folder == "/" ? "" : folder + "/"
        do {
            var longName: Data?
            if storedName.hasSuffix(".c9s") {
                longName = try Self.readSmall(
                    inner, entry.appending(VaultNameCipher.longNameFileName), limit: Self.smallFileLimit)
            }
            return prefix
                + (try vault.names.decryptedName(
                    storedName: storedName, longName: longName, parentDirectoryID: parentID, item: storedName))
        } catch let error as RemoteError where [.notFound, .notAFile, .badAnswer].contains(error.kind) {
            return prefix + "(\(storedName))"
        } catch is VaultError {
            return prefix + "(\(storedName))"
        }
    }

    /// The directories `d/XX/YYYY...` of the inner remote, with a note for each name there that
    /// is no such directory.
    private func storedDirectories(notes: inout [String]) throws -> [RemotePath] {
        let top = RemotePath("d")
        var found: [RemotePath] = []
        for first in try folders(in: top, nameLength: 2, notes: &notes) {
            found += try folders(in: top.appending(first), nameLength: 30, notes: &notes).map {
                top.appending(first).appending($0)
            }
        }
        return found
    }

    /// The names of the folders in `folder` of the inner remote that are `nameLength` characters
    /// of base32, sorted; a note for anything else there. A folder that is not there has none.
    private func folders(in folder: RemotePath, nameLength: Int, notes: inout [String]) throws -> [String] {
        let listing: RemoteListing
        do {
            listing = try inner.list(folder)
        } catch let error as RemoteError where error.kind == .notFound {
            return []
        } catch let error as RemoteError where error.kind == .notAFolder {
            notes.append("\(folder) is a file, not a folder of directories: skipped")
            return []
        }
        var names: [String] = []
        for entry in listing.entries {
            let path = folder.appending(entry.name)
            guard entry.kind == .folder else {
                notes.append("\(path) is a file, not a vault directory: skipped")
                continue
            }
            guard entry.name.utf8.count == nameLength, entry.name.utf8.allSatisfy(Self.isBase32) else {
                notes.append("\(path) is not named as a vault directory: skipped")
                continue
            }
            names.append(entry.name)
        }
        return names.sorted()
    }

    private static func isBase32(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(byte)
    }

    /// What the directory `directory` of the inner remote holds now; nil when it is gone.
    private func contents(of directory: RemotePath) throws -> VaultHealthReport.UnreachableDirectory.Contents?
    {
        let entries: [RemoteEntry]
        do {
            entries = try inner.list(directory).entries
        } catch let error as RemoteError where error.kind == .notFound {
            return nil
        }
        let items = entries.filter {
            $0.name != VaultNameCipher.directoryIDBackupFileName
                && ($0.name.hasSuffix(".c9r") || $0.name.hasSuffix(".c9s"))
        }.count
        if items > 0 { return .items(items) }
        let others = entries.filter {
            !($0.name == VaultNameCipher.directoryIDBackupFileName && $0.kind == .file)
        }.count
        return others > 0 ? .other(others) : .leftover
    }
}
