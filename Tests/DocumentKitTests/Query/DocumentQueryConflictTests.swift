import Foundation
import Testing

@testable import DocumentKit

/// Items' `hasUnresolvedConflicts` as the query gathers and as conflicts come and go, in
/// this process and in another one, with nothing written to the items themselves.
@Suite("DocumentQuery conflict flags")
struct DocumentQueryConflictTests {
    func conflicted(_ query: DocumentQuery) -> Set<String> {
        Set(query.items.filter(\.hasUnresolvedConflicts).map(\.fileName))
    }

    /// A tree whose `docs/notes.txt` has one unresolved conflict version in the tree's store.
    func treeWithAConflict() throws -> (TemporaryTree, VersionStore) {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "docs/notes.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        _ = try store.addConflictOfItem(
            at: file, withContentsOf: theirs, savingComputer: "elsewhere", modificationDate: Date(),
            options: [])
        return (tree, store)
    }

    func startedQuery(over folder: URL, store: VersionStore?) async throws -> (DocumentQuery, QueryRecorder) {
        let query = DocumentQuery(searchScopes: [folder])
        query.versionStore = store
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await queryEventually { recorder.finishedGathering })
        return (query, recorder)
    }

    @Test func gatheringFlagsOnlyTheConflictedItem() async throws {
        let (tree, store) = try treeWithAConflict()
        try tree.write("plain", to: "docs/other.txt")
        let (query, _) = try await startedQuery(over: tree.file("docs"), store: store)
        defer { query.stop() }
        #expect(query.resultCount == 2)
        #expect(conflicted(query) == ["notes.txt"])
    }

    @Test func conflictsAddedAndResolvedInThisProcessUpdateTheItem() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "docs/notes.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        let (query, recorder) = try await startedQuery(over: tree.file("docs"), store: store)
        defer { query.stop() }
        #expect(conflicted(query).isEmpty)
        let before = try Data(contentsOf: file)

        let version = try store.addConflictOfItem(
            at: file, withContentsOf: theirs, savingComputer: "elsewhere", modificationDate: Date(),
            options: [])
        #expect(await queryEventually { conflicted(query) == ["notes.txt"] })
        #expect(
            recorder.allUpdates.flatMap(\.changed).contains {
                $0.fileName == "notes.txt" && $0.hasUnresolvedConflicts
            })
        #expect(try Data(contentsOf: file) == before)

        version.isResolved = true
        #expect(await queryEventually { conflicted(query).isEmpty })
        #expect(recorder.allUpdates.allSatisfy { $0.added.isEmpty && $0.removed.isEmpty })
    }

    /// The shared store's root is a folder URL, with a trailing slash; news names the store
    /// by its path.
    @Test func aStoreWhoseRootIsAFolderURLStillUpdatesItems() async throws {
        let tree = try TemporaryTree()
        let store = VersionStore(
            root: URL(fileURLWithPath: tree.file("store/Versions").path, isDirectory: true))
        let file = try tree.write("mine", to: "docs/notes.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        let (query, _) = try await startedQuery(over: tree.file("docs"), store: store)
        defer { query.stop() }
        let version = try store.addConflictOfItem(at: file, withContentsOf: theirs, options: [])
        #expect(await queryEventually { conflicted(query) == ["notes.txt"] })
        version.isResolved = true
        #expect(await queryEventually { conflicted(query).isEmpty })
    }

    @Test func conflictsFromAnotherProcessReachTheQuery() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "docs/notes.txt")
        try tree.write("plain", to: "docs/other.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        let (query, _) = try await startedQuery(over: tree.file("docs"), store: store)
        defer { query.stop() }

        let added = try TestChild.run(["add-conflict", store.root.path, file.path, theirs.path])
        #expect(added.status == 0, "\(added.standardError)")
        #expect(await queryEventually { conflicted(query) == ["notes.txt"] })

        let resolved = try TestChild.run(["resolve-conflicts", store.root.path, file.path])
        #expect(resolved.status == 0, "\(resolved.standardError)")
        #expect(await queryEventually { conflicted(query).isEmpty })
        #expect(query.resultCount == 2)
    }

    @Test func aConflictedItemRenamedElsewhereKeepsItsFlag() async throws {
        let (tree, store) = try treeWithAConflict()
        let (query, recorder) = try await startedQuery(over: tree.file("docs"), store: store)
        defer { query.stop() }
        try runElsewhere("mv notes.txt renamed.txt", in: tree.file("docs"))
        #expect(
            await queryEventually {
                recorder.count(\.added, named: "renamed.txt")
                    + recorder.count(\.changed, named: "renamed.txt") > 0
            })
        #expect(conflicted(query) == ["renamed.txt"])
    }

    @Test func withoutAVersionStoreNoItemIsFlagged() async throws {
        let (tree, _) = try treeWithAConflict()
        let (query, _) = try await startedQuery(over: tree.file("docs"), store: nil)
        defer { query.stop() }
        #expect(query.versionStore == nil)
        #expect(query.resultCount == 1)
        #expect(conflicted(query).isEmpty)
    }
}
