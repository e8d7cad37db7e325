import DocumentKit
import Foundation
import Testing

@Suite struct ConflictSummaryTests {
    @Test func itemWithAnUnresolvedConflictIsFlaggedUntilResolved() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "docs/notes.txt")
        let other = try tree.write("plain", to: "docs/other.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        #expect(!store.hasUnresolvedConflicts(itemAt: file))

        let conflict = try store.addConflictOfItem(
            at: file, withContentsOf: theirs, savingComputer: "elsewhere", modificationDate: Date(),
            options: [])
        #expect(store.hasUnresolvedConflicts(itemAt: file))
        #expect(!store.hasUnresolvedConflicts(itemAt: other))

        conflict.isResolved = true
        #expect(!store.hasUnresolvedConflicts(itemAt: file))
    }

    @Test func renamedItemIsStillFoundByItsIdentity() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "docs/notes.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        _ = try store.addConflictOfItem(
            at: file, withContentsOf: theirs, savingComputer: "elsewhere", modificationDate: Date(),
            options: [])
        let renamed = tree.file("docs/renamed.txt")
        try FileManager.default.moveItem(at: file, to: renamed)
        #expect(store.hasUnresolvedConflicts(itemAt: renamed))
    }
}
