import DocumentKit
import Foundation
import Testing

@Suite struct SafeSaveMoveTests {
    enum Occupant: String, CaseIterable, Sendable {
        case file, folder, symbolicLink, danglingSymbolicLink
    }

    @Test func movesToAFreeNameAsTheSameFile() throws {
        let tree = try TemporaryTree()
        let source = try tree.write("draft", to: "Draft.txt")
        let before = try fileNumber(source)
        let destination = tree.file("Letter.txt")
        try SafeSave.moveItem(at: source, to: destination, operation: "rename the document")
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(try String(contentsOf: destination, encoding: .utf8) == "draft")
        #expect(try fileNumber(destination) == before)
    }

    @Test func movesIntoAnotherFolder() throws {
        let tree = try TemporaryTree()
        let source = try tree.write("gone", to: "Notes.txt")
        try FileManager.default.createDirectory(at: tree.file("Deleted"), withIntermediateDirectories: false)
        let destination = tree.file("Deleted/Notes.txt")
        try SafeSave.moveItem(at: source, to: destination)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(try String(contentsOf: destination, encoding: .utf8) == "gone")
    }

    @Test(arguments: Occupant.allCases)
    func neverReplacesWhatIsAtTheDestination(_ occupant: Occupant) throws {
        let tree = try TemporaryTree()
        let source = try tree.write("mine", to: "Draft.txt")
        let destination = tree.file("Letter.txt")
        try occupy(destination, with: occupant, in: tree)
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.moveItem(at: source, to: destination, operation: "rename the document")
        }
        #expect(error.code == .fileExists)
        #expect(error.errno == .fileExists)
        #expect(error.url == destination, "the error names the name that is taken")
        #expect(error.operation == "rename the document")
        #expect(try String(contentsOf: source, encoding: .utf8) == "mine")
        try expectUntouched(destination, occupant)
    }

    @Test func aMissingSourceIsNamed() throws {
        let tree = try TemporaryTree()
        let source = tree.file("Nothing.txt")
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.moveItem(at: source, to: tree.file("Something.txt"))
        }
        #expect(error.code == .fileNotFound)
        #expect(error.url == source)
    }

    // Across file systems the kernel refuses the rename: the move copies and removes instead.
    @Test(.enabled(if: SharedMemoryTree.isAnotherFileSystem))
    func movesAcrossFileSystemsKeepingModeAndTime() throws {
        let tree = try TemporaryTree()
        let other = try SharedMemoryTree()
        let source = try tree.write("far away", to: "Notes.txt")
        let time = Date(timeIntervalSince1970: 1_600_000_000.25)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o640, .modificationDate: time], ofItemAtPath: source.path)
        let destination = other.url.appendingPathComponent("Notes.txt")
        try SafeSave.moveItem(at: source, to: destination)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(try String(contentsOf: destination, encoding: .utf8) == "far away")
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o640)
        let moved = try #require(attributes[.modificationDate] as? Date)
        #expect(abs(moved.timeIntervalSince(time)) < 0.001)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.url.path) == ["Notes.txt"])
    }

    @Test(.enabled(if: SharedMemoryTree.isAnotherFileSystem), arguments: Occupant.allCases)
    func neverReplacesAcrossFileSystems(_ occupant: Occupant) throws {
        let tree = try TemporaryTree()
        let other = try SharedMemoryTree()
        let source = try tree.write("mine", to: "Notes.txt")
        let destination = other.url.appendingPathComponent("Notes.txt")
        try occupy(destination, with: occupant, in: tree)
        let error = try #require(throws: DocumentKitError.self) {
            try SafeSave.moveItem(at: source, to: destination)
        }
        #expect(error.code == .fileExists)
        #expect(error.url == destination)
        #expect(try String(contentsOf: source, encoding: .utf8) == "mine")
        try expectUntouched(destination, occupant)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.url.path) == ["Notes.txt"])
    }

    @Test(.enabled(if: SharedMemoryTree.isAnotherFileSystem))
    func movesASymbolicLinkAcrossFileSystemsAsALink() throws {
        let tree = try TemporaryTree()
        let other = try SharedMemoryTree()
        let target = try tree.write("pointed at", to: "real.txt")
        let link = tree.file("Link.txt")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        let destination = other.url.appendingPathComponent("Link.txt")
        try SafeSave.moveItem(at: link, to: destination)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: destination.path) == target.path)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == nil)
        #expect(try String(contentsOf: target, encoding: .utf8) == "pointed at")
    }

    private func occupy(_ url: URL, with occupant: Occupant, in tree: TemporaryTree) throws {
        switch occupant {
        case .file:
            try Data("theirs".utf8).write(to: url)
        case .folder:
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        case .symbolicLink:
            let target = try tree.write("theirs", to: "elsewhere.txt")
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target.path)
        case .danglingSymbolicLink:
            try FileManager.default.createSymbolicLink(
                atPath: url.path, withDestinationPath: tree.file("nowhere.txt").path)
        }
    }

    private func expectUntouched(_ url: URL, _ occupant: Occupant) throws {
        switch occupant {
        case .file:
            #expect(try String(contentsOf: url, encoding: .utf8) == "theirs")
        case .folder:
            #expect(try FileManager.default.contentsOfDirectory(atPath: url.path).isEmpty)
        case .symbolicLink:
            #expect(try String(contentsOf: url, encoding: .utf8) == "theirs")
        case .danglingSymbolicLink:
            // Nothing was created where the link points either.
            let destination = try FileManager.default.destinationOfSymbolicLink(atPath: url.path)
            #expect(!FileManager.default.fileExists(atPath: destination))
        }
    }

    private func fileNumber(_ url: URL) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int)
    }
}

/// A temporary folder in `/dev/shm` (tmpfs), which is another file system than the one the
/// ordinary temporary folder is on wherever these tests run on a disk.
final class SharedMemoryTree: @unchecked Sendable {
    let url: URL

    static var isAnotherFileSystem: Bool {
        func device(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.systemNumber] as? Int
        }
        guard let shared = device("/dev/shm"), let temporary = device(NSTemporaryDirectory()) else {
            return false
        }
        return shared != temporary && FileManager.default.isWritableFile(atPath: "/dev/shm")
    }

    init() throws {
        url = URL(fileURLWithPath: "/dev/shm/dk-move-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
