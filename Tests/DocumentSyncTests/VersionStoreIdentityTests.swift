import DocumentKit
import Foundation
import Testing

/// What sync needs of DocumentKit's version store and does not get yet, found by the sync
/// simulation: kept here as known issues, so that they are seen, and so that the day the
/// store is fixed these tests say so.
@Suite struct VersionStoreIdentityTests {
    /// A new file at the path a document was moved away from is taken for that document: it
    /// shows the document's versions and conflicts, which then show at two paths. A
    /// coordinated move is followed (the index and the identities the store gave); an
    /// uncoordinated move (`mv`) the store cannot see, and it still binds the new file.
    @Test(arguments: [true, false])
    func aNewFileWhereADocumentWasMovedFromIsANewItem(coordinated: Bool) throws {
        let folder = try TemporaryFolder()
        let store = VersionStore(root: try folder.folder("Versions"))
        let old = try folder.write(Data("first\n".utf8), to: "Documents/old.txt")
        let conflict = try folder.write(Data("theirs\n".utf8), to: "theirs.txt")
        _ = try store.addConflictOfItem(at: old, withContentsOf: conflict, savingComputer: "elsewhere")
        store.waitUntilIdle()
        let new = folder.file("Documents/new.txt")
        if coordinated {
            let coordinator = FileCoordinator()
            try coordinator.coordinate(writingItemAt: old, options: .forMoving, writingItemAt: new) {
                from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
        } else {
            try FileManager.default.moveItem(at: old, to: new)
        }
        try Data("another document\n".utf8).write(to: old)
        #expect(store.unresolvedConflictVersionsOfItem(at: new).count == 1, "the moved document keeps it")
        if coordinated {
            // Fixed: a coordinated move takes the identity the store gave at the old path along.
            #expect(store.unresolvedConflictVersionsOfItem(at: old).isEmpty)
        } else {
            withKnownIssue(
                "DocumentKit: the version store binds a new file at a document's path after `mv` to it"
            ) {
                #expect(store.unresolvedConflictVersionsOfItem(at: old).isEmpty)
            }
        }
    }
}
