import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// The presenter registry's record of a presenter is the one place that says which file it
/// shows and what it last saw of it: a document checks that record before it saves, and
/// coordination moves it.
@MainActor
@Suite struct PresentedItemTests {
    /// The record the registry holds for `presenter`, or nil while it is not registered.
    func registeredItem(of presenter: any FilePresenter) -> PresentedItem? {
        let path = presenter.presentedItemURL.map(CanonicalPath.of)
        guard let path,
            PresenterRegistry.shared.presenters(of: path).contains(where: { $0 === presenter })
        else { return nil }
        let document = presenter as? Document
        return document?.presentedItem.path == path ? document?.presentedItem : nil
    }

    @Test func anOpenDocumentIsRegisteredWithTheRecordItReadAndClosingUnregistersIt() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("read", to: "notes.txt")
        let document = versionedDocument(file, store: makeStore(in: tree))
        #expect(document.presentedItem.path == nil, "not presenting before it is open")
        #expect(await document.open())
        let item = try #require(registeredItem(of: document))
        #expect(item === document.presentedItem)
        #expect(item.seenState == FileStatus(path: file.path), "what the document read")
        #expect(item.url == file.standardizedFileURL)
        _ = await document.close()
        #expect(document.presentedItem.path == nil)
        #expect(PresenterRegistry.shared.presenters(of: CanonicalPath.of(file)).isEmpty)
    }

    /// The registry's news of a change (what the presenter was told) is not what the
    /// document saw: a save between the news and the reload must still find another writer's
    /// file and keep the typing as a conflict, never write over theirs.
    @Test func aChangeTheRegistryNotedDoesNotLetASaveOverwriteIt() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("original", to: "notes.txt")
        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        let seen = document.presentedItem.seenState
        document.text = "typed here"
        document.updateChangeCount(.done)

        try "theirs".write(toFile: file.path, atomically: false, encoding: .utf8)
        let now = FileStatus(path: file.path)
        // What inotify's delivery does first: the registry notes the state it reports.
        _ = PresenterRegistry.shared.presentersSeeingChange(atPath: CanonicalPath.of(file), state: now)
        #expect(document.presentedItem.seenState == seen, "the news is not the document's reading")
        #expect(document.presentedItem.state.withLock(\.reportedState) == now)

        _ = await document.save(to: file, for: .forOverwriting)
        #expect(await waitUntil { document.text == "theirs" && document.documentState.contains(.inConflict) })
        #expect(try String(contentsOf: file, encoding: .utf8) == "theirs")
        let conflicts = store.unresolvedConflictVersionsOfItem(at: file)
        #expect(conflicts.count == 1)
        #expect(conflicts.first.map(contents) == "typed here")
        _ = await document.close()
    }

    /// A coordinated move by another coordinator moves the one record: the document's URL,
    /// the registry's path, and the next save lands at the new place, with the document's
    /// reading of the file still valid (a rename is no content change).
    @Test func aCoordinatedMoveMovesTheRecordAndTheNextSaveFollowsIt() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("before the move", to: "a/notes.txt")
        try FileManager.default.createDirectory(at: tree.file("b"), withIntermediateDirectories: true)
        let destination = tree.file("b/moved.txt")
        let document = versionedDocument(file, store: makeStore(in: tree))
        #expect(await document.open())

        try await Task.detached {
            let coordinator = FileCoordinator()
            try coordinator.coordinate(
                writingItemAt: file, options: .forMoving, writingItemAt: destination, options: .forReplacing
            ) { from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
        }.value
        #expect(await waitUntil { document.fileURL == destination.standardizedFileURL })
        #expect(document.presentedItem.path == CanonicalPath.of(destination))
        #expect(registeredItem(of: document) === document.presentedItem)

        document.text = "after the move"
        document.updateChangeCount(.done)
        #expect(await document.save(to: document.fileURL, for: .forOverwriting))
        #expect(try String(contentsOf: destination, encoding: .utf8) == "after the move")
        #expect(!FileManager.default.fileExists(atPath: file.path), "the old name did not come back")
        #expect(!document.documentState.contains(.inConflict))
        _ = await document.close()
    }

    /// Opened through a link to its folder: the record keeps the name the document was
    /// given, and the registry matches it by the canonical path that coordinators use.
    @Test func aDocumentOpenedThroughALinkKeepsItsNameAndIsFoundByItsRealPath() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("linked", to: "real/notes.txt")
        try FileManager.default.createSymbolicLink(
            at: tree.file("link"), withDestinationURL: tree.file("real"))
        let throughLink = tree.file("link/notes.txt")
        let document = versionedDocument(throughLink, store: makeStore(in: tree))
        #expect(await document.open())
        #expect(document.presentedItem.url == throughLink.standardizedFileURL)
        #expect(document.presentedItem.path == CanonicalPath.of(file))
        #expect(
            PresenterRegistry.shared.presenters(of: CanonicalPath.of(file)).contains { $0 === document })
        _ = await document.close()
    }
}
