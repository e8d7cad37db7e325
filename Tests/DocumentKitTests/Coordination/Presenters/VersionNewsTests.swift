import Foundation
import Synchronization
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// News of versions, carried by coordination: to presenters and queries in this process and
/// in others, with nothing written to the item itself.
@Suite struct VersionNewsTests {
    /// The item's bytes, inode and modification time: what news of a version must not touch.
    func fingerprint(_ url: URL) throws -> String {
        var info = stat()
        #expect(stat(url.path, &info) == 0)
        let data = try Data(contentsOf: url)
        return "\(data.base64EncodedString()) \(info.st_ino) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// Waits for the child to have printed `line` `count` times.
    func waitForLine(_ child: CoordinationChild, _ line: String, count: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if child.lines.filter({ $0 == line }).count >= count { return true }
            usleep(2000)
        }
        return false
    }

    // MARK: - Listing

    /// A query stopped and started again over the same folders (a browser refreshing) costs
    /// no index writes: the folders stay listed a moment after the last listener stops, then
    /// go.
    @Test func aStoppedListenerStaysListedAMomentThenIsUnlisted() throws {
        let tree = try TemporaryTree()
        try tree.write("x", to: "docs/a.txt")
        let folder = CanonicalPath.of(tree.file("docs"))
        let first = VersionNewsListeners.shared.add(folders: [folder]) { _, _ in }
        let listed = try #require(PresenterIndex.ownListing(of: folder, asListener: true))
        VersionNewsListeners.shared.remove(first)
        #expect(PresenterIndex.ownListing(of: folder, asListener: true) == listed, "still listed, unwritten")
        let second = VersionNewsListeners.shared.add(folders: [folder]) { _, _ in }
        #expect(PresenterIndex.ownListing(of: folder, asListener: true) == listed, "restarting wrote nothing")
        VersionNewsListeners.shared.remove(second)
        let deadline = ContinuousClock.now + .seconds(10)
        while PresenterIndex.ownListing(of: folder, asListener: true) != nil, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        #expect(PresenterIndex.ownListing(of: folder, asListener: true) == nil, "unlisted once no query runs")
    }

    // MARK: - Across processes

    @MainActor
    @Test func conflictFromAnotherProcessReachesAnOpenDocumentAndAQueryInAThirdProcess() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "docs/notes.txt")
        try tree.write("plain", to: "docs/other.txt")
        let theirs = try tree.write("theirs", to: "incoming/theirs.txt")
        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        let states = StateLog(document)
        #expect(!document.documentState.contains(.inConflict))

        let query = try CoordinationChild(["query-conflicts", store.root.path, tree.file("docs").path])
        #expect(query.waitForLine("conflicts") != nil, "\(query.lines)")
        // The query listens for news; it is no presenter that a writer must ask to save.
        let docs = CanonicalPath.of(tree.file("docs"))
        let others = PresenterIndex.otherProcesses()
        #expect(others.processes(listeningFor: docs + "/notes.txt").contains(query.process.processIdentifier))
        #expect(
            !others.processes(relatedTo: docs + "/notes.txt", includingDescendants: true).contains(
                query.process.processIdentifier))
        let untouched = try fingerprint(file)

        let started = ContinuousClock.now
        let added = try TestChild.run(
            ["add-conflict", store.root.path, file.path, theirs.path],
            environment: CoordinationChild.environment())
        #expect(added.status == 0, "\(added.standardError)")
        #expect(await waitUntil(timeout: .seconds(20)) { document.documentState.contains(.inConflict) })
        #expect(
            await waitUntil(timeout: .seconds(20)) { states.states.contains { $0.contains(.inConflict) } },
            "the state change was posted")
        let reachedDocument = started.duration(to: .now)
        #expect(waitForLine(query, "conflicts notes.txt", count: 1), "\(query.lines)")
        print(
            "VersionNews: a conflict added by a child reached the document \(reachedDocument) after the child "
                + "started, the query child \(started.duration(to: .now)) after")
        #expect(try fingerprint(file) == untouched)

        states.clear()
        let resolved = try TestChild.run(
            ["resolve-conflicts", store.root.path, file.path], environment: CoordinationChild.environment())
        #expect(resolved.status == 0, "\(resolved.standardError)")
        #expect(await waitUntil(timeout: .seconds(20)) { !document.documentState.contains(.inConflict) })
        #expect(
            await waitUntil(timeout: .seconds(20)) { states.states.contains { !$0.contains(.inConflict) } },
            "the state change was posted")
        #expect(waitForLine(query, "conflicts", count: 2), "\(query.lines)")
        #expect(try fingerprint(file) == untouched)
        _ = await document.close()
    }

    @Test func presentersHearEachKindOfNewsFromAnotherProcessWithTheVersion() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "notes.txt")
        let theirs = try tree.write("theirs", to: "incoming.txt")
        let presenter = VersionNewsPresenter(url: file)
        FileCoordinator.addFilePresenter(presenter)
        defer { FileCoordinator.removeFilePresenter(presenter) }
        let heard = Mutex<[URL]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: VersionStore.versionsDidChangeNotification, object: nil, queue: nil
        ) { notification in
            guard let url = notification.userInfo?["url"] as? URL else { return }
            heard.withLock { $0.append(url) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let environment = CoordinationChild.environment()

        let added = try TestChild.run(
            ["add-conflict", store.root.path, file.path, theirs.path], environment: environment)
        #expect(added.status == 0, "\(added.standardError)")
        #expect(presenter.waitFor("gain"))
        let version = try #require(presenter.versions.withLock { $0.last })
        #expect(version.isConflict && !version.isResolved)
        #expect(version.localizedNameOfSavingComputer == "child")
        #expect(version.localizedName == "notes.txt")
        #expect(
            store.unresolvedConflictVersionsOfItem(at: file).map(\.persistentIdentifier) == [
                version.persistentIdentifier
            ])
        #expect(contents(of: version) == "theirs", "the version handed over reads from the store")

        let resolved = try TestChild.run(
            ["resolve-conflicts", store.root.path, file.path], environment: environment)
        #expect(resolved.status == 0, "\(resolved.standardError)")
        #expect(presenter.waitFor("resolve"))
        #expect(presenter.versions.withLock { $0.last?.isResolved } == true)

        let removed = try TestChild.run(
            ["remove-versions", store.root.path, file.path], environment: environment)
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(presenter.waitFor("lose"))
        #expect(presenter.versions.withLock { $0.last?.persistentIdentifier } == version.persistentIdentifier)
        #expect(presenter.events.withLock { $0 } == ["gain", "resolve", "lose"])

        // Posted here too, once the main queue runs.
        let deadline = ContinuousClock.now + .seconds(10)
        while heard.withLock({ $0.filter { $0.lastPathComponent == "notes.txt" }.count }) < 3
            && ContinuousClock.now < deadline
        {
            RunLoop.main.run(until: Date().addingTimeInterval(0.01))
        }
        #expect(heard.withLock { $0.filter { $0.lastPathComponent == "notes.txt" }.count } >= 3)
    }

    // MARK: - The answering side, in process

    @Test func newsMessageReachesOnlyPresentersOfTheItemOnTheirQueue() throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = try tree.write("mine", to: "notes.txt")
        let other = try tree.write("other", to: "other.txt")
        let presenter = VersionNewsPresenter(url: file)
        let bystander = VersionNewsPresenter(url: other)
        FileCoordinator.addFilePresenter(presenter)
        FileCoordinator.addFilePresenter(bystander)
        defer {
            FileCoordinator.removeFilePresenter(presenter)
            FileCoordinator.removeFilePresenter(bystander)
        }
        let change = VersionChange(
            kind: .gained, storeRoot: Message.fileSystemRepresentation(of: store.root),
            itemID: UUID().uuidString,
            versionID: "V1", name: "notes.txt", savingComputer: "far",
            modified: Date(timeIntervalSince1970: 1000),
            isConflict: true, isResolved: false, isDiscardable: false)
        var message = Message(kind: .versionsDidChange, path: Array(CanonicalPath.of(file).utf8))
        message.versionChange = change
        message.senderPID = 1

        let reply = RemotePresenters.shared.handle(message)
        #expect(reply.kind == .ack && reply.error == nil)
        #expect(presenter.waitFor("gain"))
        let version = try #require(presenter.versions.withLock { $0.first })
        #expect(version.persistentIdentifier == "V1" && version.isConflict && !version.isResolved)
        #expect(version.localizedNameOfSavingComputer == "far")
        #expect(version.modificationDate == Date(timeIntervalSince1970: 1000))
        FilePresenterDefaults.queue.waitUntilAllOperationsAreFinished()
        #expect(bystander.events.withLock { $0 }.isEmpty)

        var empty = Message(kind: .versionsDidChange, path: Array(CanonicalPath.of(file).utf8))
        empty.senderPID = 1
        #expect(RemotePresenters.shared.handle(empty).kind == .rejected)
    }

    /// The typed `itemExisted`/`itemExists` fields, as the answering side reads them: a new
    /// item appears for its folder's presenters, an existing one changes, one that never
    /// came is not reported.
    @Test(arguments: [
        (existed: false as Bool?, exists: true as Bool?, heard: "subitemDidAppear notes.txt" as String?),
        (existed: nil, exists: nil, heard: "subitemDidChange notes.txt"),
        (existed: false, exists: false, heard: nil),
    ])
    func remoteWriteFlagsDecideWhatFolderPresentersHear(existed: Bool?, exists: Bool?, heard: String?) throws
    {
        let tree = try TemporaryTree()
        let folder = tree.file("docs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = PresenterLog()
        let recorder = FolderRecorder(url: folder, log: log)
        FileCoordinator.addFilePresenter(recorder)
        defer { FileCoordinator.removeFilePresenter(recorder) }
        let path = Array((CanonicalPath.of(folder) + "/notes.txt").utf8)

        var will = Message(kind: .willWrite, path: path, itemExisted: existed, requestID: 41)
        will.senderPID = 1
        #expect(RemotePresenters.shared.handle(will).kind == .ack)
        var did = Message(kind: .didWrite, path: path, itemExists: exists, requestID: 41)
        did.senderPID = 1
        #expect(RemotePresenters.shared.handle(did).kind == .ack)
        log.queue.waitUntilAllOperationsAreFinished()
        #expect(log.events == (heard.map { [$0] } ?? []))
    }
}
