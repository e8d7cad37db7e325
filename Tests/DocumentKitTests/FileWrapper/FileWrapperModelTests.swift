import Foundation
import Testing

@testable import DocumentKit

@Suite struct FileWrapperModelTests {
    @Test func directoryInitializerKeysChildrenAndGivesThemPreferredNames() {
        let child = FileWrapper(regularFileWithContents: Data("a".utf8))
        let directory = FileWrapper(directoryWithFileWrappers: ["a.txt": child])
        #expect(directory.isDirectory && !directory.isRegularFile && !directory.isSymbolicLink)
        #expect(directory.fileWrappers?["a.txt"] === child)
        #expect(child.preferredFilename == "a.txt")
        #expect(directory.keyForChildFileWrapper(child) == "a.txt")
        #expect(directory.regularFileContents == nil)
        #expect(child.fileWrappers == nil)
    }

    @Test func makesUniqueKeysForCollidingNames() {
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        let first = directory.addRegularFile(withContents: Data("1".utf8), preferredFilename: "name.txt")
        let second = directory.addRegularFile(withContents: Data("2".utf8), preferredFilename: "name.txt")
        let third = directory.addRegularFile(withContents: Data("3".utf8), preferredFilename: "name.txt")
        #expect(first == "name.txt")
        #expect(second == "1__#$!@%!#__name.txt")
        #expect(third == "2__#$!@%!#__name.txt")
        #expect(Set(directory.fileWrappers!.keys).count == 3)
        #expect(text(directory.fileWrappers?[second]) == "2")
        // Every child keeps the name it asked for; only its key differs.
        #expect(directory.fileWrappers?[third]?.preferredFilename == "name.txt")
    }

    @Test func addingAChildTwiceKeepsOneKey() {
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        let child = FileWrapper(regularFileWithContents: Data())
        child.preferredFilename = "x"
        #expect(directory.addFileWrapper(child) == "x")
        #expect(directory.addFileWrapper(child) == "x")
        #expect(directory.fileWrappers?.count == 1)
    }

    @Test func changingPreferredFilenameRekeysChildInEveryParent() {
        let child = FileWrapper(regularFileWithContents: Data("c".utf8))
        child.preferredFilename = "old.txt"
        let first = FileWrapper(directoryWithFileWrappers: [:])
        let second = FileWrapper(directoryWithFileWrappers: [:])
        second.addRegularFile(withContents: Data(), preferredFilename: "new.txt")
        first.addFileWrapper(child)
        second.addFileWrapper(child)

        child.preferredFilename = "new.txt"

        #expect(first.keyForChildFileWrapper(child) == "new.txt")
        #expect(first.fileWrappers?["old.txt"] == nil)
        // "new.txt" is taken in the second parent, so the child gets a unique key there.
        #expect(second.keyForChildFileWrapper(child) == "1__#$!@%!#__new.txt")
        #expect(second.fileWrappers?.count == 2)
    }

    @Test func removedChildIsNoLongerRekeyed() {
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        let child = FileWrapper(regularFileWithContents: Data())
        child.preferredFilename = "a"
        directory.addFileWrapper(child)
        directory.removeFileWrapper(child)
        child.preferredFilename = "b"
        #expect(directory.fileWrappers?.isEmpty == true)
        #expect(directory.keyForChildFileWrapper(child) == nil)
        // Removing something that is not a child changes nothing.
        directory.removeFileWrapper(FileWrapper(regularFileWithContents: Data()))
        #expect(directory.fileWrappers?.isEmpty == true)
    }

    @Test func symbolicLinkKeepsRelativeDestinationAsWritten() {
        let relative = FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "../shared/a.png"))
        #expect(relative.isSymbolicLink)
        #expect(relative.symbolicLinkDestinationURL?.relativePath == "../shared/a.png")
        let absolute = FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "/etc/hosts"))
        #expect(absolute.symbolicLinkDestinationURL?.path == "/etc/hosts")
    }

    @Test func serializedRepresentationRoundTripsTree() throws {
        let root = FileWrapper(directoryWithFileWrappers: [:])
        root.addRegularFile(withContents: Data([0, 1, 2, 255]), preferredFilename: "bytes.bin")
        let sub = FileWrapper(directoryWithFileWrappers: [:])
        sub.preferredFilename = "sub"
        let link = FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "../bytes.bin"))
        link.preferredFilename = "link"
        sub.addFileWrapper(link)
        root.addFileWrapper(sub)
        let data = try #require(root.serializedRepresentation)
        let decoded = try #require(FileWrapper(serializedRepresentation: data))
        #expect(sameTree(root, decoded))
        #expect(FileWrapper(serializedRepresentation: Data("not a wrapper".utf8)) == nil)
    }
}
