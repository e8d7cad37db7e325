import DocumentKit
import Foundation
import Testing

/// What sync needs of DocumentKit's version store, found by the sync simulation: a document
/// moved away from a path takes its versions and conflicts with it, and a new file that
/// comes to the old path is a new item, with none of them.
@Suite struct VersionStoreIdentityTests {
    /// Keeps the bytes at `url` as a version of it, and waits until the store has them.
    private func keepVersion(of url: URL, in store: VersionStore) throws {
        _ = try store.addOfItem(at: url, withContentsOf: url)
        store.waitUntilIdle()
    }

    enum Move: CaseIterable, Sendable {
        /// Through a file coordinator, which tells the store.
        case coordinated
        /// By a program that does not coordinate (`mv`), which a sync engine then sees and
        /// tells the store of.
        case seenBySync
        /// The folder holding the document, through a file coordinator.
        case coordinatedFolder
    }

    @Test(arguments: Move.allCases)
    func aNewFileWhereADocumentWasMovedFromIsANewItem(move: Move) throws {
        let folder = try TemporaryFolder()
        let store = VersionStore(root: try folder.folder("Versions"))
        let old = try folder.write(Data("first\n".utf8), to: "Documents/A/old.txt")
        let conflict = try folder.write(Data("theirs\n".utf8), to: "theirs.txt")
        _ = try store.addConflictOfItem(at: old, withContentsOf: conflict, savingComputer: "elsewhere")
        store.waitUntilIdle()
        let coordinator = FileCoordinator()
        let new: URL
        switch move {
        case .coordinated, .seenBySync:
            new = folder.file("Documents/A/new.txt")
            if move == .coordinated {
                try coordinator.coordinate(writingItemAt: old, options: .forMoving, writingItemAt: new) {
                    from, to in
                    try FileManager.default.moveItem(at: from, to: to)
                    coordinator.item(at: from, didMoveTo: to)
                }
            } else {
                try FileManager.default.moveItem(at: old, to: new)
                store.itemDidMove(from: old, to: new)
            }
        case .coordinatedFolder:
            let oldFolder = folder.file("Documents/A")
            let newFolder = folder.file("Documents/B")
            new = newFolder.appendingPathComponent("old.txt")
            try coordinator.coordinate(
                writingItemAt: oldFolder, options: .forMoving, writingItemAt: newFolder
            ) { from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
            try FileManager.default.createDirectory(at: oldFolder, withIntermediateDirectories: true)
        }
        try Data("another document\n".utf8).write(to: old)
        #expect(store.unresolvedConflictVersionsOfItem(at: new).count == 1, "the moved document keeps it")
        #expect(store.unresolvedConflictVersionsOfItem(at: old).isEmpty)
        #expect(store.otherVersionsOfItem(at: old).isEmpty)
        // Saved, the new file starts a history of its own.
        try keepVersion(of: old, in: store)
        #expect(store.otherVersionsOfItem(at: old).count == 1)
        #expect(store.unresolvedConflictVersionsOfItem(at: new).count == 1)
    }

    /// A copy that kept the identity attribute (`cp -a`) is a document of its own: the one
    /// the store knows keeps the history, and the copy starts its own when it is saved.
    @Test func aCopyThatKeptTheAttributeIsANewItem() throws {
        let folder = try TemporaryFolder()
        let store = VersionStore(root: try folder.folder("Versions"))
        let original = try folder.write(Data("first\n".utf8), to: "Documents/original.txt")
        try keepVersion(of: original, in: store)
        let copy = folder.file("Documents/copy.txt")
        let cp = try Process.run(
            URL(fileURLWithPath: "/bin/cp"), arguments: ["-a", original.path, copy.path])
        cp.waitUntilExit()
        try #require(cp.terminationStatus == 0)
        #expect(store.otherVersionsOfItem(at: copy).isEmpty)
        try keepVersion(of: copy, in: store)
        #expect(store.otherVersionsOfItem(at: copy).count == 1)
        #expect(store.otherVersionsOfItem(at: original).count == 1)
    }

    /// Seed 20908: a document moved with `mv`, then saved with bytes the store already held
    /// (a sync engine keeping its merge base): the store found the same version and did not
    /// note where the item is now, so a new file at the old path still took its history.
    @Test func aSaveOfBytesTheStoreHoldsNotesWhereTheItemIsNow() throws {
        let folder = try TemporaryFolder()
        let store = VersionStore(root: try folder.folder("Versions"))
        let old = try folder.write(Data("same\n".utf8), to: "Documents/old.txt")
        try keepVersion(of: old, in: store)
        let new = folder.file("Documents/new.txt")
        try FileManager.default.moveItem(at: old, to: new)
        try keepVersion(of: new, in: store)
        #expect(store.otherVersionsOfItem(at: new).count == 1, "one version: the same bytes")
        try Data("another document\n".utf8).write(to: old)
        #expect(store.otherVersionsOfItem(at: old).isEmpty)
    }
}
