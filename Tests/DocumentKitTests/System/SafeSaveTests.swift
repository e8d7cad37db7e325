import CDocumentSystem
import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SafeSaveTests {
    @Test func createsNewFileWithUmaskPermissions() throws {
        let tree = try TemporaryTree()
        let url = tree.file("new.txt")
        try SafeSave.write(Data("hello".utf8), to: url)
        #expect(try String(contentsOf: url, encoding: .utf8) == "hello")
        let mask = umask(0o022)
        umask(mask)
        #expect(try permissions(url) == 0o666 & ~mask)
    }

    @Test func replacesContentsAndKeepsMode() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "doc.txt")
        chmod(url.path, 0o640)
        try SafeSave.write(Data("new contents".utf8), to: url)
        #expect(try String(contentsOf: url, encoding: .utf8) == "new contents")
        #expect(try permissions(url) == 0o640)
    }

    @Test func replacesTheFileItselfNotInPlace() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "doc.txt")
        let before = try inode(url)
        try SafeSave.write(Data("new".utf8), to: url)
        #expect(try inode(url) != before)
    }

    @Test func carriesOverExtendedAttributes() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "tagged.txt")
        let value = Array("red, important".utf8)
        let set = cds_lsetxattr(url.path, "user.dk.tags", value, value.count, 0)
        try #require(set == 0, "the test file system must support user xattrs")
        try SafeSave.write(Data("new".utf8), to: url)
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = cds_lgetxattr(url.path, "user.dk.tags", &buffer, buffer.count)
        #expect(length == value.count)
        #expect(Array(buffer.prefix(max(length, 0))) == value)
    }

    @Test func discardingExtendedAttributesLeavesThemBehind() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "tagged.txt")
        let value = Array("x".utf8)
        try #require(cds_lsetxattr(url.path, "user.dk.tag", value, value.count, 0) == 0)
        try SafeSave.write(Data("new".utf8), to: url, options: .discardingExtendedAttributes)
        #expect(cds_lgetxattr(url.path, "user.dk.tag", nil, 0) == -1)
    }

    @Test func keepsSymbolicLinkAndReplacesItsDestination() throws {
        let tree = try TemporaryTree()
        let real = try tree.write("old", to: "real/doc.txt")
        let link = tree.file("link.txt")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "real/doc.txt")
        try SafeSave.write(Data("through the link".utf8), to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "real/doc.txt")
        #expect(try String(contentsOf: real, encoding: .utf8) == "through the link")
    }

    @Test func withoutOverwritingRefusesExistingFile() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("precious", to: "doc.txt")
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.write(Data("intruder".utf8), to: url, options: .withoutOverwriting)
        }
        #expect(error.code == .fileExists)
        #expect(try String(contentsOf: url, encoding: .utf8) == "precious")
        #expect(try leftovers(in: tree.url) == [])
    }

    @Test func refusesToReplaceAFolderWithAFile() throws {
        let tree = try TemporaryTree()
        let folder = tree.file("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.write(Data("x".utf8), to: folder)
        }
        #expect(error.code == .wrongFileType)
        #expect(error.description.contains(folder.path))
    }

    @Test func missingFolderGivesErrorNamingTheFile() throws {
        let tree = try TemporaryTree()
        let url = tree.file("no/such/folder/doc.txt")
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.write(Data("x".utf8), to: url)
        }
        #expect(error.code == .fileNotFound)
        #expect(error.description.contains("no/such/folder"))
    }

    @Test func failureInsideBodyLeavesOriginalAndNoTemporaryFile() throws {
        struct Refused: Error {}
        let tree = try TemporaryTree()
        let url = try tree.write("original", to: "doc.txt")
        #expect(throws: Refused.self) {
            try SafeSave.write(to: url) { file in
                try file.write(Data("partial".utf8))
                throw Refused()
            }
        }
        #expect(try String(contentsOf: url, encoding: .utf8) == "original")
        #expect(try leftovers(in: tree.url) == [])
    }

    @Test func unwritableFolderReportsPermissionDeniedAndLeavesFile() throws {
        let tree = try TemporaryTree()
        let folder = tree.file("locked")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = try tree.write("original", to: "locked/doc.txt")
        chmod(url.path, 0o666)
        chmod(folder.path, 0o555)
        // As root the folder's mode means nothing, so the save runs as nobody in a child.
        chmod(tree.url.path, 0o755)
        let outcome = try TestChild.run(["as-nobody", "save", url.path, "replacement"])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("Permission denied"))
        #expect(outcome.standardError.contains(url.path))
        #expect(try String(contentsOf: url, encoding: .utf8) == "original")
    }

    @Test func writeFailureUnderFileSizeLimitLeavesOriginalIntact() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("the original text", to: "doc.txt")
        let outcome = try TestChild.run(["save-rlimit", url.path, "1000000", "65536"])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("File too large"))
        #expect(outcome.standardError.contains(url.path))
        #expect(outcome.standardError.contains("write"))
        #expect(try String(contentsOf: url, encoding: .utf8) == "the original text")
        #expect(try leftovers(in: tree.url) == [])
    }

    /// A child saves generation after generation; it is killed with SIGKILL at random
    /// moments, and every time the file is one whole generation: the last one the child
    /// reported saved, or the one after it whose rename landed before the report.
    @Test func crashDuringSaveLeavesOldOrNewFile() async throws {
        let tree = try TemporaryTree()
        let url = tree.file("crash.bin")
        let size = 256 * 1024
        var generator = SystemRandomNumberGenerator()
        var previous = 0
        for round in 0..<200 {
            let process = try TestChild.start(["save-loop", url.path, String(size)])
            let delay = UInt32.random(in: 2_000...25_000, using: &generator)
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            let outcome = TestChild.finish(process)
            #expect(outcome.reason == .uncaughtSignal, "round \(round): \(outcome.standardError)")
            let reported =
                outcome.standardOutput.split(separator: "\n").last.flatMap {
                    Int($0.dropFirst("saved ".count))
                } ?? previous
            guard FileManager.default.fileExists(atPath: url.path) else {
                #expect(previous == 0 && reported == 0, "round \(round): the file vanished")
                continue
            }
            let data = try Data(contentsOf: url)
            let generation = try #require(wholeGeneration(data, size: size), "round \(round): torn file")
            #expect(
                generation == reported || generation == reported + 1,
                "round \(round): file holds \(generation), child reported \(reported)")
            previous = generation
        }
        #expect(previous > 0, "the child never completed a save")
    }

    // MARK: - Packages

    @Test func writesNewPackageFolder() throws {
        let tree = try TemporaryTree()
        let package = tree.file("Doc.pkg")
        try SafeSave.writeDirectory(at: package) { staging in
            try Data("a".utf8).write(to: staging.appendingPathComponent("a.txt"))
        }
        #expect(try String(contentsOf: package.appendingPathComponent("a.txt"), encoding: .utf8) == "a")
        #expect(try leftovers(in: tree.url) == [])
    }

    @Test func exchangesPackageAtomicallyAndRemovesOldContents() throws {
        let tree = try TemporaryTree()
        try tree.write("old a", to: "Doc.pkg/a.txt")
        try tree.write("old b", to: "Doc.pkg/sub/b.txt")
        let package = tree.file("Doc.pkg")
        chmod(package.path, 0o750)
        try SafeSave.writeDirectory(at: package) { staging in
            try Data("new c".utf8).write(to: staging.appendingPathComponent("c.txt"))
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: package.path)
        #expect(names == ["c.txt"])
        #expect(try permissions(package) == 0o750)
        #expect(try leftovers(in: tree.url) == [])
    }

    @Test func failingPackageBuildLeavesOriginalPackage() throws {
        struct Refused: Error {}
        let tree = try TemporaryTree()
        try tree.write("keep me", to: "Doc.pkg/a.txt")
        let package = tree.file("Doc.pkg")
        #expect(throws: Refused.self) {
            try SafeSave.writeDirectory(at: package) { staging in
                try Data("half".utf8).write(to: staging.appendingPathComponent("a.txt"))
                throw Refused()
            }
        }
        #expect(try String(contentsOf: package.appendingPathComponent("a.txt"), encoding: .utf8) == "keep me")
        #expect(try leftovers(in: tree.url) == [])
    }

    @Test func packageWithoutOverwritingRefusesExistingItem() throws {
        let tree = try TemporaryTree()
        try tree.write("keep", to: "Doc.pkg/a.txt")
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.writeDirectory(at: tree.file("Doc.pkg"), options: .withoutOverwriting) { _ in }
        }
        #expect(error.code == .fileExists)
        #expect(try leftovers(in: tree.url) == [])
    }

    // MARK: - Helpers

    func permissions(_ url: URL) throws -> mode_t {
        var info = stat()
        try #require(lstat(url.path, &info) == 0)
        return info.st_mode & 0o7777
    }

    func inode(_ url: URL) throws -> ino_t {
        var info = stat()
        try #require(lstat(url.path, &info) == 0)
        return info.st_ino
    }

    /// Hidden temporary or staging items a save left in `folder`.
    func leftovers(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".dk-") }
    }

    /// The generation number if `data` is exactly one whole generation written by the child.
    func wholeGeneration(_ data: Data, size: Int) -> Int? {
        guard data.count == size,
            case let header = String(decoding: data.prefix(while: { $0 != 10 }), as: UTF8.self),
            header.hasPrefix("generation "),
            let generation = Int(header.dropFirst("generation ".count))
        else { return nil }
        let fill = UInt8(truncatingIfNeeded: generation &* 31 &+ 7)
        let headerLength = header.utf8.count + 1
        let body = data[(data.startIndex + headerLength)..<(data.endIndex - 4)]
        guard body.allSatisfy({ $0 == fill }), data.suffix(4) == Data("end\n".utf8) else { return nil }
        return generation
    }
}
