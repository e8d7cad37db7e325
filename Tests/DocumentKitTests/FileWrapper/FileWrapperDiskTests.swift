import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FileWrapperDiskTests {
    @Test func readsNestedPackageWithNamesAndAttributes() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url, options: [.immediate, .withoutMapping])
        #expect(wrapper.isDirectory)
        #expect(wrapper.filename == "Doc.package")
        #expect(wrapper.preferredFilename == "Doc.package")
        #expect(Set(wrapper.fileWrappers!.keys) == ["top.txt", "images"])
        let deep = try #require(
            wrapper.fileWrappers?["images"]?.fileWrappers?["thumbs"]?.fileWrappers?["deep.txt"])
        #expect(text(deep) == "deep")
        #expect(deep.filename == "deep.txt")
        #expect(deep.fileAttributes[FileAttributeKey.type.rawValue] as? FileAttributeType == .typeRegular)
        #expect((deep.fileAttributes[FileAttributeKey.size.rawValue] as? NSNumber)?.intValue == 4)
        #expect(deep.fileAttributes[FileAttributeKey.modificationDate.rawValue] is Date)
    }

    @Test func roundTripsNestedPackage() throws {
        let tree = try TemporaryTree()
        let package = FileWrapper(directoryWithFileWrappers: [:])
        package.addRegularFile(withContents: Data("root".utf8), preferredFilename: "root.txt")
        package.addRegularFile(withContents: Data(), preferredFilename: "empty")
        var level = package
        for depth in 1...4 {
            let sub = FileWrapper(directoryWithFileWrappers: [:])
            sub.preferredFilename = "level\(depth)"
            sub.addRegularFile(
                withContents: Data((0..<(depth * 1000)).map { UInt8($0 % 251) }),
                preferredFilename: "data.bin")
            level.addFileWrapper(sub)
            level = sub
        }
        let url = tree.file("Nested.package")
        try package.write(to: url, options: .atomic, originalContentsURL: nil)

        let reread = try FileWrapper(url: url)
        #expect(sameTree(package, reread))
        #expect(
            reread.fileWrappers?["level1"]?.fileWrappers?["level2"]?.fileWrappers?["level3"]?.fileWrappers?[
                "level4"]?
                .fileWrappers?["data.bin"]?.regularFileContents?.count == 4000)

        // Writing the reread tree again elsewhere gives the same tree once more.
        let copy = tree.file("Copy.package")
        try reread.write(to: copy, options: [], originalContentsURL: nil)
        #expect(sameTree(package, try FileWrapper(url: copy)))
    }

    @Test func roundTripsSymbolicLinksRelativeAbsoluteAndDangling() throws {
        let tree = try TemporaryTree()
        try tree.write("target", to: "Links.package/target.txt")
        let url = tree.file("Links.package")
        try FileManager.default.createSymbolicLink(
            atPath: url.path + "/relative", withDestinationPath: "target.txt")
        try FileManager.default.createSymbolicLink(
            atPath: url.path + "/absolute", withDestinationPath: "/etc/hostname")
        try FileManager.default.createSymbolicLink(
            atPath: url.path + "/dangling", withDestinationPath: "../nowhere/none")

        let wrapper = try FileWrapper(url: url)
        let links = try #require(wrapper.fileWrappers)
        #expect(links["relative"]?.isSymbolicLink == true)
        #expect(links["relative"]?.symbolicLinkDestinationURL?.relativePath == "target.txt")
        #expect(links["absolute"]?.symbolicLinkDestinationURL?.path == "/etc/hostname")
        #expect(links["dangling"]?.symbolicLinkDestinationURL?.relativePath == "../nowhere/none")

        let copy = tree.file("Copy.package")
        try wrapper.write(to: copy, options: .atomic, originalContentsURL: nil)
        let manager = FileManager.default
        #expect(try manager.destinationOfSymbolicLink(atPath: copy.path + "/relative") == "target.txt")
        #expect(try manager.destinationOfSymbolicLink(atPath: copy.path + "/absolute") == "/etc/hostname")
        #expect(try manager.destinationOfSymbolicLink(atPath: copy.path + "/dangling") == "../nowhere/none")
        #expect(try NodeInfo(copy.appendingPathComponent("dangling")).isSymbolicLink)
    }

    @Test func writesCollidingChildrenAsSeparateFiles() throws {
        let tree = try TemporaryTree()
        let package = FileWrapper(directoryWithFileWrappers: [:])
        let first = package.addRegularFile(withContents: Data("1".utf8), preferredFilename: "same.txt")
        let second = package.addRegularFile(withContents: Data("2".utf8), preferredFilename: "same.txt")
        let url = tree.file("Collide.package")
        try package.write(to: url, options: [.atomic, .withNameUpdating], originalContentsURL: nil)
        #expect(try String(contentsOf: url.appendingPathComponent(first), encoding: .utf8) == "1")
        #expect(try String(contentsOf: url.appendingPathComponent(second), encoding: .utf8) == "2")
        #expect(package.fileWrappers?[second]?.filename == second)
    }

    @Test func renamedChildIsWrittenUnderItsNewKey() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        let top = try #require(wrapper.fileWrappers?["top.txt"])
        top.preferredFilename = "renamed.txt"
        try wrapper.write(to: url, options: [.atomic, .withNameUpdating], originalContentsURL: url)
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        #expect(Set(names) == ["renamed.txt", "images"])
        #expect(try String(contentsOf: url.appendingPathComponent("renamed.txt"), encoding: .utf8) == "top")
        #expect(top.filename == "renamed.txt")
    }

    @Test func updatesFilenamesOnlyWithNameUpdating() throws {
        let tree = try TemporaryTree()
        let package = FileWrapper(directoryWithFileWrappers: [:])
        let key = package.addRegularFile(withContents: Data("x".utf8), preferredFilename: "x.txt")
        let child = try #require(package.fileWrappers?[key])

        try package.write(to: tree.file("A.package"), options: .atomic, originalContentsURL: nil)
        #expect(package.filename == nil)
        #expect(child.filename == nil)

        try package.write(
            to: tree.file("B.package"), options: [.atomic, .withNameUpdating], originalContentsURL: nil)
        #expect(package.filename == "B.package")
        #expect(child.filename == "x.txt")
    }

    @Test func reusesUnchangedChildrenByHardLink() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let before = (
            top: try NodeInfo(url.appendingPathComponent("top.txt")),
            deep: try NodeInfo(url.appendingPathComponent("images/thumbs/deep.txt")),
            other: try NodeInfo(url.appendingPathComponent("images/thumbs/other.txt"))
        )
        let wrapper = try FileWrapper(url: url)
        let thumbs = try #require(wrapper.fileWrappers?["images"]?.fileWrappers?["thumbs"])
        thumbs.removeFileWrapper(try #require(thumbs.fileWrappers?["other.txt"]))
        thumbs.addRegularFile(withContents: Data("changed".utf8), preferredFilename: "other.txt")

        let copy = tree.file("Copy.package")
        try wrapper.write(to: copy, options: [.atomic, .withNameUpdating], originalContentsURL: url)

        let top = try NodeInfo(copy.appendingPathComponent("top.txt"))
        let deep = try NodeInfo(copy.appendingPathComponent("images/thumbs/deep.txt"))
        let other = try NodeInfo(copy.appendingPathComponent("images/thumbs/other.txt"))
        #expect(top.inode == before.top.inode)
        #expect(top.links == 2)
        #expect(deep.inode == before.deep.inode)
        #expect(other.inode != before.other.inode)
        #expect(other.links == 1)
        #expect(
            try String(contentsOf: copy.appendingPathComponent("images/thumbs/other.txt"), encoding: .utf8)
                == "changed")
        // The original keeps its own bytes for the replaced child.
        #expect(
            try String(contentsOf: url.appendingPathComponent("images/thumbs/other.txt"), encoding: .utf8)
                == "other deep")
    }

    @Test func savingOverTheOriginalLinksUnchangedAndLaterAddedChildren() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let topInode = try NodeInfo(url.appendingPathComponent("top.txt")).inode
        let wrapper = try FileWrapper(url: url)
        wrapper.addRegularFile(withContents: Data("new".utf8), preferredFilename: "new.txt")

        try wrapper.write(to: url, options: [.atomic, .withNameUpdating], originalContentsURL: url)
        #expect(try NodeInfo(url.appendingPathComponent("top.txt")).inode == topInode)
        let newInode = try NodeInfo(url.appendingPathComponent("new.txt")).inode

        // The second save links the file the first save wrote, too.
        try wrapper.write(to: url, options: [.atomic, .withNameUpdating], originalContentsURL: url)
        #expect(try NodeInfo(url.appendingPathComponent("top.txt")).inode == topInode)
        #expect(try NodeInfo(url.appendingPathComponent("new.txt")).inode == newInode)
        // No staging or old package is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.url.path) == ["Doc.package"])
    }

    @Test func doesNotLinkChildChangedOnDiskSinceRead() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        // Another program rewrites the file in place after we read it.
        try Data("someone else's longer bytes".utf8).write(to: url.appendingPathComponent("top.txt"))

        let copy = tree.file("Copy.package")
        try wrapper.write(to: copy, options: .atomic, originalContentsURL: url)
        let written = copy.appendingPathComponent("top.txt")
        #expect(try String(contentsOf: written, encoding: .utf8) == "top")
        #expect(try NodeInfo(written).inode != NodeInfo(url.appendingPathComponent("top.txt")).inode)
    }

    @Test func doesNotLinkChildWhosePermissionsChange() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        let top = try #require(wrapper.fileWrappers?["top.txt"])
        top.fileAttributes[FileAttributeKey.posixPermissions.rawValue] = NSNumber(value: 0o600)

        let copy = tree.file("Copy.package")
        try wrapper.write(to: copy, options: .atomic, originalContentsURL: url)
        let original = try NodeInfo(url.appendingPathComponent("top.txt"))
        let written = try NodeInfo(copy.appendingPathComponent("top.txt"))
        // A shared inode would have changed the original's permissions too.
        #expect(written.inode != original.inode)
        #expect(written.mode == 0o600)
        #expect(original.mode != 0o600)
    }

    @Test func roundTripsPermissionsAndModificationDate() throws {
        let tree = try TemporaryTree()
        let date = Date(timeIntervalSince1970: 1_600_000_000.25)
        let file = FileWrapper(regularFileWithContents: Data("secret".utf8))
        file.preferredFilename = "secret.txt"
        file.fileAttributes = [
            FileAttributeKey.posixPermissions.rawValue: NSNumber(value: 0o640),
            FileAttributeKey.modificationDate.rawValue: date,
        ]
        let folder = FileWrapper(directoryWithFileWrappers: ["secret.txt": file])
        folder.fileAttributes[FileAttributeKey.posixPermissions.rawValue] = NSNumber(value: 0o750)
        folder.preferredFilename = "private"
        let package = FileWrapper(directoryWithFileWrappers: ["private": folder])
        package.fileAttributes[FileAttributeKey.posixPermissions.rawValue] = NSNumber(value: 0o705)

        let url = tree.file("Perm.package")
        try package.write(to: url, options: .atomic, originalContentsURL: nil)
        #expect(try NodeInfo(url).mode == 0o705)
        #expect(try NodeInfo(url.appendingPathComponent("private")).mode == 0o750)
        #expect(try NodeInfo(url.appendingPathComponent("private/secret.txt")).mode == 0o640)

        let reread = try FileWrapper(url: url)
        let secret = try #require(reread.fileWrappers?["private"]?.fileWrappers?["secret.txt"])
        #expect(
            (secret.fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? NSNumber)?.intValue
                == 0o640)
        let readDate = try #require(
            secret.fileAttributes[FileAttributeKey.modificationDate.rawValue] as? Date)
        #expect(abs(readDate.timeIntervalSince(date)) < 0.000_001)
        #expect(
            (reread.fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? NSNumber)?.intValue
                == 0o705)
    }

    @Test func writesRegularFileAtomicallyWithAttributes() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "note.txt")
        let wrapper = FileWrapper(regularFileWithContents: Data("new".utf8))
        wrapper.fileAttributes[FileAttributeKey.posixPermissions.rawValue] = NSNumber(value: 0o604)
        try wrapper.write(to: url, options: [.atomic, .withNameUpdating], originalContentsURL: nil)
        #expect(try String(contentsOf: url, encoding: .utf8) == "new")
        #expect(try NodeInfo(url).mode == 0o604)
        #expect(wrapper.filename == "note.txt")
        #expect(wrapper.matchesContents(of: url))
    }

    @Test func writesIntoSafeSaveStagingFolder() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        wrapper.addRegularFile(withContents: Data("added".utf8), preferredFilename: "added.txt")
        let topInode = try NodeInfo(url.appendingPathComponent("top.txt")).inode
        // The pattern a document uses: SafeSave owns the swap, the wrapper fills the folder.
        try SafeSave.writeDirectory(at: url) { staging in
            try wrapper.write(to: staging, options: [], originalContentsURL: url)
        }
        #expect(try NodeInfo(url.appendingPathComponent("top.txt")).inode == topInode)
        #expect(try String(contentsOf: url.appendingPathComponent("added.txt"), encoding: .utf8) == "added")
    }

    @Test func writesInPlaceRemovingStaleItemsWithoutTouchingLinkedFiles() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        // A copy made by hard links, as a previous save would have made.
        let copy = tree.file("Copy.package")
        try wrapper.write(to: copy, options: .atomic, originalContentsURL: url)
        try tree.write("stale", to: "Copy.package/stale.txt")

        let images = try #require(wrapper.fileWrappers?["images"])
        wrapper.removeFileWrapper(images)
        wrapper.removeFileWrapper(try #require(wrapper.fileWrappers?["top.txt"]))
        wrapper.addRegularFile(withContents: Data("replaced".utf8), preferredFilename: "top.txt")
        try wrapper.write(to: copy, options: [], originalContentsURL: nil)

        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: copy.path)) == ["top.txt"])
        #expect(try String(contentsOf: copy.appendingPathComponent("top.txt"), encoding: .utf8) == "replaced")
        // The file was unlinked and recreated, not truncated: the original's twin is intact.
        #expect(try String(contentsOf: url.appendingPathComponent("top.txt"), encoding: .utf8) == "top")
    }

    @Test func writingInPlaceOverTheOriginalLeavesUnchangedFilesAlone() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let deep = url.appendingPathComponent("images/thumbs/deep.txt")
        let deepInode = try NodeInfo(deep).inode
        let wrapper = try FileWrapper(url: url)
        let top = try #require(wrapper.fileWrappers?["top.txt"])
        wrapper.removeFileWrapper(top)
        wrapper.addRegularFile(withContents: Data("top v2".utf8), preferredFilename: "top.txt")

        try wrapper.write(to: url, options: .withNameUpdating, originalContentsURL: url)
        #expect(try NodeInfo(deep).inode == deepInode)
        #expect(try NodeInfo(deep).links == 1)
        #expect(try String(contentsOf: url.appendingPathComponent("top.txt"), encoding: .utf8) == "top v2")
        #expect(wrapper.matchesContents(of: url))
    }

    @Test func matchesContentsUntilChangedOnDisk() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        #expect(wrapper.matchesContents(of: url))
        #expect(!wrapper.needsToBeUpdated(from: url))
        #expect(!wrapper.needsToBeUpdated(fromPath: url.path))

        try tree.write("a new file", to: "Doc.package/images/added.txt")
        #expect(!wrapper.matchesContents(of: url))
        #expect(wrapper.needsToBeUpdated(from: url))
        #expect(
            wrapper.fileWrappers?["top.txt"]?.matchesContents(of: url.appendingPathComponent("top.txt"))
                == true)
    }

    @Test func needsToBeUpdatedAfterExternalWriteOrPermissionChange() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        let top = url.appendingPathComponent("top.txt")
        let child = try #require(wrapper.fileWrappers?["top.txt"])

        #expect(chmod(top.path, 0o600) == 0)
        #expect(child.needsToBeUpdated(from: top))
        #expect(child.matchesContents(of: top))  // permissions are not part of matching

        try Data("rewritten by another program".utf8).write(to: top)
        #expect(!child.matchesContents(of: top))
        #expect(wrapper.needsToBeUpdated(from: url))
    }

    @Test func symbolicLinkMatchesByDestination() throws {
        let tree = try TemporaryTree()
        try tree.write("x", to: "P.package/x")
        let url = tree.file("P.package")
        try FileManager.default.createSymbolicLink(atPath: url.path + "/link", withDestinationPath: "x")
        let wrapper = try FileWrapper(url: url)
        #expect(wrapper.matchesContents(of: url))
        try FileManager.default.removeItem(atPath: url.path + "/link")
        try FileManager.default.createSymbolicLink(atPath: url.path + "/link", withDestinationPath: "y")
        #expect(!wrapper.matchesContents(of: url))
    }

    @Test func rereadingUpdatesChildrenInPlace() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        let images = try #require(wrapper.fileWrappers?["images"])
        try tree.write("brand new", to: "Doc.package/added.txt")
        try tree.write("top v2", to: "Doc.package/top.txt")
        try FileManager.default.removeItem(at: url.appendingPathComponent("images/middle.txt"))

        try wrapper.read(from: url)
        #expect(wrapper.fileWrappers?["images"] === images)
        #expect(images.fileWrappers?["middle.txt"] == nil)
        #expect(text(wrapper.fileWrappers?["added.txt"]) == "brand new")
        #expect(text(wrapper.fileWrappers?["top.txt"]) == "top v2")
        #expect(wrapper.matchesContents(of: url))
        // A reread child still rekeys in its parent.
        images.preferredFilename = "pictures"
        #expect(wrapper.keyForChildFileWrapper(images) == "pictures")
    }

    @Test(arguments: ["..", ".", "", "a/b"])
    func refusesInvalidChildNamesAndLeavesOriginal(name: String) throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let child = FileWrapper(regularFileWithContents: Data("evil".utf8))
        let package = FileWrapper(directoryWithFileWrappers: [
            name: child, "ok.txt": FileWrapper(regularFileWithContents: Data()),
        ])
        #expect {
            try package.write(to: url, options: .atomic, originalContentsURL: nil)
        } throws: { error in
            (error as? DocumentKitError)?.code == .invalidArgument
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.url.path) == ["Doc.package"])
        #expect(try String(contentsOf: url.appendingPathComponent("top.txt"), encoding: .utf8) == "top")
    }

    @Test func refusesDirectoryThatContainsItself() throws {
        let tree = try TemporaryTree()
        let package = FileWrapper(directoryWithFileWrappers: [:])
        package.preferredFilename = "loop"
        package.addFileWrapper(package)
        #expect {
            try package.write(to: tree.file("Loop.package"), options: .atomic, originalContentsURL: nil)
        } throws: { error in
            (error as? DocumentKitError)?.code == .invalidArgument
        }
    }
}
