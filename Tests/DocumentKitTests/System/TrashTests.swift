import DocumentKit
import Foundation
import Testing

/// The freedesktop.org trash: layout, names, hostile names and folders, other file systems.
@Suite struct TrashTests {
    /// A tree with a home trash of its own (`data/Trash`) and a folder of items (`items`).
    final class Fixture {
        let tree: TemporaryTree
        let trash: Trash
        var items: URL { tree.url.appendingPathComponent("items", isDirectory: true) }
        var files: URL { trash.home.appendingPathComponent("files", isDirectory: true) }
        var info: URL { trash.home.appendingPathComponent("info", isDirectory: true) }

        init(_ name: String = #function) throws {
            tree = try TemporaryTree(name)
            trash = Trash(home: tree.url.appendingPathComponent("data/Trash", isDirectory: true))
            try FileManager.default.createDirectory(at: items, withIntermediateDirectories: true)
        }

        func item(_ name: String, _ text: String = "text") throws -> URL {
            let url = items.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url
        }

        func record(of trashed: URL, in infoFolder: URL? = nil) throws -> String {
            let folder =
                infoFolder
                ?? trashed.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("info")
            return try String(
                contentsOf: folder.appendingPathComponent(trashed.lastPathComponent + ".trashinfo"),
                encoding: .utf8)
        }

        func names(_ folder: URL) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        }
    }

    /// The `Path=` value of an info file, percent-decoded as a reader of the specification does.
    static func recordedPath(_ record: String) -> String? {
        let lines = record.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == "[Trash Info]",
            let line = lines.first(where: { $0.hasPrefix("Path=") })
        else { return nil }
        return String(line.dropFirst(5)).removingPercentEncoding
    }

    @Test func movesTheItemIntoFilesWithAnInfoFileOfItsPathAndLocalDate() throws {
        let fixture = try Fixture()
        let item = try fixture.item("Letter.txt", "dear")
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let trashed = try fixture.trash.moveItem(at: item, date: date)
        #expect(trashed == fixture.files.appendingPathComponent("Letter.txt"))
        #expect(try String(contentsOf: trashed, encoding: .utf8) == "dear")
        #expect(!FileManager.default.fileExists(atPath: item.path))

        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        let record = try fixture.record(of: trashed)
        #expect(
            record == "[Trash Info]\nPath=\(item.path)\nDeletionDate=\(formatter.string(from: date))\n",
            "\(record)")
        for folder in [fixture.trash.home, fixture.files, fixture.info] {
            let mode =
                try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder.path)")
        }
    }

    @Test func anExistingDataHomeKeepsItsModeAndAMissingOneIsMadePrivate() throws {
        let fixture = try Fixture()
        let dataHome = fixture.trash.home.deletingLastPathComponent()
        _ = try fixture.trash.moveItem(at: try fixture.item("One.txt"))
        func mode(_ url: URL) throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        }
        #expect(try mode(dataHome) == 0o700)
        // scripts/test opens its data home to other users (0711) on purpose: not the trash's to undo.
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: dataHome.path)
        _ = try fixture.trash.moveItem(at: try fixture.item("Two.txt"))
        #expect(try mode(dataHome) == 0o711)
    }

    @Test func aNameTakenInFilesOrInInfoMovesOnToTheNextNumber() throws {
        let fixture = try Fixture()
        let first = try fixture.trash.moveItem(at: try fixture.item("Notes.txt", "one"))
        // Left by another program: an item without its info file, and an info file alone.
        try Data().write(to: fixture.files.appendingPathComponent("Notes 2.txt"))
        try Data().write(to: fixture.info.appendingPathComponent("Notes 3.txt.trashinfo"))
        let second = try fixture.trash.moveItem(at: try fixture.item("Notes.txt", "two"))
        #expect(first.lastPathComponent == "Notes.txt")
        #expect(second.lastPathComponent == "Notes 4.txt")
        #expect(try String(contentsOf: second, encoding: .utf8) == "two")
        #expect(
            Self.recordedPath(try fixture.record(of: second))
                == fixture.items.appendingPathComponent("Notes.txt").path)
        // The other programs' entries are as they were, and no info file was left behind.
        #expect(
            fixture.names(fixture.info) == [
                "Notes 3.txt.trashinfo", "Notes 4.txt.trashinfo", "Notes.txt.trashinfo",
            ])
        #expect(try Data(contentsOf: fixture.files.appendingPathComponent("Notes 2.txt")).isEmpty)
    }

    @Test(arguments: [
        "line\nbreak.txt", "100% sure.txt", "%0A.txt", "spaces  and\ttab.txt", "Œuvre 😀.md", ".hidden",
        "[Trash Info]\nPath=%2Fetc%2Fpasswd", "no extension",
    ])
    func aHostileNameIsRecordedSoItReadsBackExactly(_ name: String) throws {
        let fixture = try Fixture()
        let item = try fixture.item(name)
        let trashed = try fixture.trash.moveItem(at: item)
        #expect(trashed.lastPathComponent == name)
        let record = try fixture.record(of: trashed)
        // Three lines whatever the name: nothing in it can start a line of its own.
        #expect(record.split(separator: "\n").count == 3, "\(record)")
        #expect(Self.recordedPath(record) == item.path, "\(record)")
    }

    @Test func aLongNameIsCutToLeaveRoomForItsInfoFileAndItsNumber() throws {
        let fixture = try Fixture()
        // 62 emoji and ".txt": 252 bytes, a legal name whose info file name would not be.
        let name = String(repeating: "\u{1F600}", count: 62) + ".txt"
        let first = try fixture.trash.moveItem(at: try fixture.item(name, "one"))
        let second = try fixture.trash.moveItem(at: try fixture.item(name, "two"))
        for trashed in [first, second] {
            #expect(trashed.lastPathComponent.hasSuffix(".txt"))
            #expect((trashed.lastPathComponent + ".trashinfo").utf8.count <= 255)
            #expect(
                Self.recordedPath(try fixture.record(of: trashed))
                    == fixture.items.appendingPathComponent(name).path)
        }
        #expect(first != second)
        #expect(second.lastPathComponent.hasSuffix(" 2.txt"))
    }

    @Test func aFolderGoesWholeAndALinkGoesAsItself() throws {
        let fixture = try Fixture()
        let folder = fixture.items.appendingPathComponent("Package.pkg", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: folder.appendingPathComponent("contents"))
        let target = try fixture.item("target.txt", "target")
        let link = fixture.items.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)

        let trashedFolder = try fixture.trash.moveItem(at: folder)
        #expect(
            try String(contentsOf: trashedFolder.appendingPathComponent("contents"), encoding: .utf8)
                == "inside")
        let trashedLink = try fixture.trash.moveItem(at: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: trashedLink.path) == target.path)
        #expect(FileManager.default.fileExists(atPath: target.path))
    }

    @Test func aMissingItemIsAnErrorNamingItAndLeavesNoInfoFile() throws {
        let fixture = try Fixture()
        let missing = fixture.items.appendingPathComponent("Gone.txt")
        let error = try #require(throws: DocumentKitError.self) { try fixture.trash.moveItem(at: missing) }
        #expect(error.code == .fileNotFound)
        #expect(error.url == missing)
        #expect(error.description.contains("move the item to the trash"), "\(error)")
        #expect(fixture.names(fixture.info).isEmpty)
    }

    /// Linux Foundation's `URL` cannot hold bytes that are not UTF-8 (it puts U+FFFD in their
    /// place), so such an item cannot be named to the trash: the call fails, and the item stays.
    @Test func aNameThatIsNotUTF8CannotBeNamedAndStaysWhereItIs() throws {
        let fixture = try Fixture()
        let bytes = fixture.items.fileSystemBytes + Array("/caf".utf8) + [0xE9] + Array(".txt".utf8)
        let created = bytes.withUnsafeBufferPointer { buffer -> CInt in
            let path = buffer.map { CChar(bitPattern: $0) } + [0]
            return creat(path, 0o644)
        }
        try #require(created >= 0)
        close(created)
        let url = URL(fileSystemBytes: bytes)
        #expect(throws: DocumentKitError.self) { try fixture.trash.moveItem(at: url) }
        #expect(fixture.names(fixture.items).count == 1)
        #expect(fixture.names(fixture.files).isEmpty)
        #expect(fixture.names(fixture.info).isEmpty)
    }

    @Test(arguments: ["", "files", "info"])
    func aTrashFolderThatIsASymbolicLinkIsRefused(_ linked: String) throws {
        let fixture = try Fixture()
        let elsewhere = fixture.tree.url.appendingPathComponent("elsewhere", isDirectory: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let link = linked.isEmpty ? fixture.trash.home : fixture.trash.home.appendingPathComponent(linked)
        try FileManager.default.createDirectory(
            at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
        let item = try fixture.item("Notes.txt", "stay")
        let error = try #require(throws: DocumentKitError.self) { try fixture.trash.moveItem(at: item) }
        #expect(error.code == .invalidSymbolicLink)
        // The error names the item, what was being done, and the folder at fault.
        #expect(error.url == item)
        #expect(error.description.contains("move the item to the trash"), "\(error)")
        #expect(error.description.contains("“\(link.path)”: it is a symbolic link"), "\(error)")
        #expect(try String(contentsOf: item, encoding: .utf8) == "stay")
        #expect(fixture.names(elsewhere).isEmpty)
    }

    @Test(.enabled(if: getuid() == 0, "only root can hand a folder to another user"))
    func aTrashFolderOfAnotherUserIsRefused() throws {
        let fixture = try Fixture()
        try FileManager.default.createDirectory(at: fixture.info, withIntermediateDirectories: true)
        try #require(chown(fixture.info.path, 65534, 65534) == 0)
        let item = try fixture.item("Notes.txt", "stay")
        let error = try #require(throws: DocumentKitError.self) { try fixture.trash.moveItem(at: item) }
        #expect(error.code == .permissionDenied)
        #expect(error.url == item)
        #expect(error.description.contains("“\(fixture.info.path)”: it belongs to user 65534"), "\(error)")
        #expect(try String(contentsOf: item, encoding: .utf8) == "stay")
        #expect(fixture.names(fixture.files).isEmpty)
    }

    // MARK: - Other file systems

    /// A tmpfs mounted in the fixture's tree: another file system than its home trash.
    final class Volume {
        let url: URL

        init(in fixture: Fixture) throws {
            url = fixture.tree.url.appendingPathComponent("volume", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try #require(Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", url.path]) == 0)
        }

        deinit { _ = Self.run("/bin/umount", ["-l", url.path]) }

        static func run(_ command: String, _ arguments: [String]) -> Int32 {
            guard let process = try? Process.run(URL(fileURLWithPath: command), arguments: arguments) else {
                return -1
            }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs, another file system, needs root (CI runs as root)"))
    func anItemOnAnotherFileSystemGoesToThatFileSystemsTrashWithARelativePath() throws {
        let fixture = try Fixture()
        let volume = try Volume(in: fixture)
        let folder = volume.url.appendingPathComponent("sub dir", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let item = folder.appendingPathComponent("Notes.txt")
        try Data("on the volume".utf8).write(to: item)

        let trashed = try fixture.trash.moveItem(at: item)
        let own = volume.url.appendingPathComponent(".Trash-\(getuid())", isDirectory: true)
        #expect(trashed == own.appendingPathComponent("files/Notes.txt"))
        #expect(try String(contentsOf: trashed, encoding: .utf8) == "on the volume")
        #expect(Self.recordedPath(try fixture.record(of: trashed)) == "sub dir/Notes.txt")
        let mode = try FileManager.default.attributesOfItem(atPath: own.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        // Nothing went to the home trash.
        #expect(fixture.names(fixture.files).isEmpty)
        withExtendedLifetime(volume) {}
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs, another file system, needs root (CI runs as root)"))
    func aStickyDotTrashIsSharedAndANonStickyOneIsPassedBy() throws {
        let fixture = try Fixture()
        let volume = try Volume(in: fixture)
        let shared = volume.url.appendingPathComponent(".Trash", isDirectory: true)
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: shared.path)
        let item = volume.url.appendingPathComponent("Plain.txt")
        try Data("plain".utf8).write(to: item)
        let passedBy = try fixture.trash.moveItem(at: item)
        #expect(passedBy.path.hasPrefix(volume.url.appendingPathComponent(".Trash-\(getuid())").path))

        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: shared.path)
        try Data("sticky".utf8).write(to: item)
        let trashed = try fixture.trash.moveItem(at: item)
        #expect(trashed == shared.appendingPathComponent("\(getuid())/files/Plain.txt"))
        #expect(Self.recordedPath(try fixture.record(of: trashed)) == "Plain.txt")
        withExtendedLifetime(volume) {}
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs, another file system, needs root (CI runs as root)"))
    func anItemWhoseFileSystemHasNoUsableTrashIsNotCopiedButStays() throws {
        let fixture = try Fixture()
        let volume = try Volume(in: fixture)
        // The volume's own trash is a link: refused, and the home trash is on another file system.
        try FileManager.default.createSymbolicLink(
            at: volume.url.appendingPathComponent(".Trash-\(getuid())"), withDestinationURL: fixture.tree.url)
        let item = volume.url.appendingPathComponent("Notes.txt")
        try Data("stay".utf8).write(to: item)
        let error = try #require(throws: DocumentKitError.self) { try fixture.trash.moveItem(at: item) }
        #expect(error.url == item)
        #expect(error.description.contains("does not copy"), "\(error)")
        #expect(error.description.contains("symbolic link"), "\(error)")
        #expect(try String(contentsOf: item, encoding: .utf8) == "stay")
        #expect(fixture.names(fixture.files).isEmpty)
        #expect(fixture.names(fixture.info).isEmpty)
        withExtendedLifetime(volume) {}
    }

    @Test(.enabled(if: getuid() == 0, "a bind mount needs root (CI runs as root)"))
    func aRenameAcrossMountsFailsClearlyAndTakesBackItsInfoFile() throws {
        let fixture = try Fixture()
        // The items folder seen again through a bind mount: the same file system as the home
        // trash, so its trash is the home one, but rename(2) across the mounts fails (EXDEV).
        let bound = fixture.tree.url.appendingPathComponent("bound", isDirectory: true)
        try FileManager.default.createDirectory(at: bound, withIntermediateDirectories: true)
        try #require(Volume.run("/bin/mount", ["--bind", fixture.items.path, bound.path]) == 0)
        defer { _ = Volume.run("/bin/umount", ["-l", bound.path]) }
        _ = try fixture.item("Notes.txt", "stay")
        let item = bound.appendingPathComponent("Notes.txt")
        let error = try #require(throws: DocumentKitError.self) { try fixture.trash.moveItem(at: item) }
        #expect(error.errno == .crossDeviceLink)
        #expect(error.description.contains("does not copy"), "\(error)")
        #expect(try String(contentsOf: item, encoding: .utf8) == "stay")
        #expect(fixture.names(fixture.files).isEmpty)
        #expect(fixture.names(fixture.info).isEmpty)
    }
}
