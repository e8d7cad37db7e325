import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// Apple's `FileWrapper(url:options:)` gives "a directory, file, or symbolic link, depending
/// on what is located at the URL": a link that leads nowhere is read as a symbolic-link file
/// wrapper, not refused.
@Suite struct FileWrapperSymbolicLinkTests {
    @Test(arguments: ["nowhere/none.txt", "/nonexistent-dk-root/none", "plain.txt/below"])
    func danglingLinkAsRootIsReadAsSymbolicLink(destination: String) throws {
        let tree = try TemporaryTree()
        try tree.write("plain", to: "plain.txt")
        let url = tree.file("dangling")
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination)

        let wrapper = try FileWrapper(url: url)
        #expect(wrapper.isSymbolicLink)
        #expect(!wrapper.isRegularFile && !wrapper.isDirectory)
        #expect(wrapper.symbolicLinkDestinationURL?.relativePath == destination)
        #expect(wrapper.regularFileContents == nil && wrapper.fileWrappers == nil)
        #expect(wrapper.filename == "dangling")
        #expect(wrapper.preferredFilename == "dangling")
        #expect(
            wrapper.fileAttributes[FileAttributeKey.type.rawValue] as? FileAttributeType == .typeSymbolicLink)
        #expect(wrapper.matchesContents(of: url))
        #expect(!wrapper.needsToBeUpdated(from: url))

        // It writes back as the same link, and a reread wrapper becomes one.
        let copy = tree.file("copy")
        try wrapper.write(to: copy, options: .atomic, originalContentsURL: nil)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: copy.path) == destination)
        let reread = FileWrapper(regularFileWithContents: Data("x".utf8))
        try reread.read(from: url)
        #expect(reread.isSymbolicLink)
        #expect(reread.symbolicLinkDestinationURL?.relativePath == destination)
    }

    @Test func loopingLinkAsRootIsReadAsSymbolicLink() throws {
        let tree = try TemporaryTree()
        let a = tree.file("a")
        try FileManager.default.createSymbolicLink(atPath: a.path, withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: tree.file("b").path, withDestinationPath: "a")
        let wrapper = try FileWrapper(url: a)
        #expect(wrapper.isSymbolicLink)
        #expect(wrapper.symbolicLinkDestinationURL?.relativePath == "b")
        #expect(wrapper.matchesContents(of: a))
    }

    @Test func danglingLinkThatIsRepointedNoLongerMatches() throws {
        let tree = try TemporaryTree()
        let url = tree.file("dangling")
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "nowhere")
        let wrapper = try FileWrapper(url: url)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "elsewhere")
        #expect(!wrapper.matchesContents(of: url))
        #expect(wrapper.needsToBeUpdated(from: url))
    }

    @Test func danglingLinksInsidePackageAreSymbolicLinks() throws {
        let tree = try TemporaryTree()
        let package = try tree.makePackage()
        let links = [
            "dangling": "missing.txt", "into-missing-folder": "../nowhere/none",
            "through-file": "top.txt/below", "loop": "loop",
        ]
        for (name, destination) in links {
            try FileManager.default.createSymbolicLink(
                atPath: package.appendingPathComponent("images/\(name)").path,
                withDestinationPath: destination)
        }

        let wrapper = try FileWrapper(url: package, options: .immediate)
        let images = try #require(wrapper.fileWrappers?["images"]?.fileWrappers)
        for (name, destination) in links {
            let child = try #require(images[name], "\(name)")
            #expect(child.isSymbolicLink, "\(name)")
            #expect(child.symbolicLinkDestinationURL?.relativePath == destination, "\(name)")
            #expect(child.filename == name)
        }
        #expect(text(images["middle.txt"]) == "middle")
        #expect(wrapper.matchesContents(of: package))

        // The links survive a write and a serialized round trip.
        let copy = tree.file("Copy.package")
        try wrapper.write(to: copy, options: .atomic, originalContentsURL: nil)
        for (name, destination) in links {
            #expect(
                try FileManager.default.destinationOfSymbolicLink(atPath: copy.path + "/images/\(name)")
                    == destination)
        }
        let decoded = try #require(
            wrapper.serializedRepresentation.flatMap(FileWrapper.init(serializedRepresentation:)))
        #expect(sameTree(decoded, wrapper))
    }
}
