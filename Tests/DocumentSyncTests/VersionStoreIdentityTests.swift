import DocumentKit
import Foundation
import Testing

/// What sync needs of DocumentKit's version store and does not get yet, found by the sync
/// simulation: kept here as known issues, so that they are seen, and so that the day the
/// store is fixed these tests say so.
@Suite struct VersionStoreIdentityTests {
    /// A new file at the path a document was moved away from is taken for that document: it
    /// shows the document's versions and conflicts, which then show at two paths. The store
    /// notes a coordinated move in its index, but not in the identities it gave in this
    /// process; an uncoordinated move (`mv`) it cannot see at all.
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
        withKnownIssue("DocumentKit: the version store binds a new file at a moved document's path to it") {
            #expect(store.unresolvedConflictVersionsOfItem(at: old).isEmpty)
        }
    }
}
