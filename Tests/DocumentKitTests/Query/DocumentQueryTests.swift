import Foundation
import Synchronization
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// Records a query's notifications for a test to wait on.
final class QueryRecorder: Sendable {
    struct Update: Sendable {
        var added: [DocumentQuery.Item]
        var changed: [DocumentQuery.Item]
        var removed: [DocumentQuery.Item]
    }

    let names = Mutex<[Notification.Name]>([])
    let updates = Mutex<[Update]>([])
    /// Observer tokens are only kept to be removed; they are never used across threads.
    struct Tokens: @unchecked Sendable { var values: [NSObjectProtocol] = [] }
    private let tokens = Mutex(Tokens())

    init(_ query: DocumentQuery) {
        var observers: [NSObjectProtocol] = []
        for name in [
            Notification.Name.NSMetadataQueryDidStartGathering, .NSMetadataQueryDidFinishGathering,
            .NSMetadataQueryDidUpdate,
        ] {
            observers.append(
                NotificationCenter.default.addObserver(forName: name, object: query, queue: nil) {
                    [self] note in
                    if name == .NSMetadataQueryDidUpdate {
                        let info = note.userInfo ?? [:]
                        let update = Update(
                            added: info[NSMetadataQueryUpdateAddedItemsKey] as? [DocumentQuery.Item] ?? [],
                            changed: info[NSMetadataQueryUpdateChangedItemsKey] as? [DocumentQuery.Item]
                                ?? [],
                            removed: info[NSMetadataQueryUpdateRemovedItemsKey] as? [DocumentQuery.Item] ?? []
                        )
                        updates.withLock { $0.append(update) }
                    }
                    names.withLock { $0.append(name) }
                })
        }
        let kept = Tokens(values: observers)
        tokens.withLock { $0 = kept }
    }

    deinit {
        for token in tokens.withLock({ $0.values }) { NotificationCenter.default.removeObserver(token) }
    }

    var finishedGathering: Bool { names.withLock { $0.contains(.NSMetadataQueryDidFinishGathering) } }
    var allUpdates: [Update] { updates.withLock { $0 } }

    func count(_ keyPath: KeyPath<Update, [DocumentQuery.Item]>, named name: String) -> Int {
        allUpdates.reduce(0) { $0 + $1[keyPath: keyPath].filter { $0.fileName == name }.count }
    }
}

/// Waits, at most 60 s, for `condition`; the bound only keeps a broken test from hanging.
func queryEventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<6000 {  // 60 s: a failure bound, long because the whole suite runs in parallel
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Runs a shell command in another process, as a user's other programs would.
func runElsewhere(_ command: String, in folder: URL) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.currentDirectoryURL = folder
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(command)")
}

/// Creates a file whose name is any bytes.
func createRawNamedFile(in folder: URL, name: [UInt8]) {
    let path = DirectoryWatcher.fileSystemPath(of: folder) + [UInt8(ascii: "/")] + name
    let fd = Syscall.withCString(path) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
    if fd >= 0 { close(fd) }
}

@Suite("DocumentQuery")
struct DocumentQueryTests {
    func startedQuery(
        _ tree: TemporaryTree, configure: (DocumentQuery) -> Void = { _ in }
    ) async throws -> (DocumentQuery, QueryRecorder) {
        let query = MetadataQuery(searchScopes: [tree.url])
        configure(query)
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await queryEventually { recorder.finishedGathering })
        return (query, recorder)
    }

    @Test func gathersStartsThenFinishesWithSortedResults() async throws {
        let tree = try TemporaryTree()
        try tree.write("b", to: "b.txt")
        try tree.write("a", to: "a.txt")
        try tree.write("c", to: "C.txt")
        try tree.write("d", to: "sub/deeper/d.md")
        try tree.write("hidden", to: ".hidden.txt")
        try tree.write("inside hidden", to: ".git/config")
        try tree.write("page", to: "Notes.rtfd/TXT.rtf")
        try tree.write("temp", to: ".a.txt.dk-tmp-1x2")
        let (query, recorder) = try await startedQuery(tree) { $0.sortDescriptors = [.init(.fileName)] }
        defer { query.stop() }
        #expect(
            recorder.names.withLock { $0 } == [
                .NSMetadataQueryDidStartGathering, .NSMetadataQueryDidFinishGathering,
            ])
        #expect(query.items.map(\.fileName) == ["a.txt", "b.txt", "C.txt", "d.md", "Notes.rtfd"])
        #expect(query.resultCount == 5)
        #expect(!query.isGathering && query.isStarted)
        let package = try #require(query.items.first { $0.fileName == "Notes.rtfd" })
        #expect(package.isPackage && package.contentType == "com.apple.rtfd")
        let a = query.item(at: 0)
        #expect(a.displayName == "a")
        #expect(a.fileSize == 1)
        #expect(a.contentType == "public.plain-text")
        #expect(a.url.standardizedFileURL == tree.file("a.txt").standardizedFileURL)
        #expect(a.value(forAttribute: NSMetadataItemFSNameKey) as? String == "a.txt")
        #expect(a.value(forAttribute: NSMetadataItemURLKey) as? URL == a.url)
        #expect(
            a.value(forAttribute: NSMetadataUbiquitousItemHasUnresolvedConflictsKey) as? NSNumber == false)
    }

    @Test func includesHiddenItemsWhenAsked() async throws {
        let tree = try TemporaryTree()
        try tree.write("hidden", to: ".hidden.txt")
        try tree.write("temp", to: ".a.txt.dk-tmp-1x2")
        let (query, _) = try await startedQuery(tree) { $0.includesHiddenItems = true }
        defer { query.stop() }
        #expect(query.items.map(\.fileName) == [".hidden.txt"])
    }

    @Test func filtersByPatternAndClosure() async throws {
        let tree = try TemporaryTree()
        try tree.write("long enough", to: "keep.txt")
        try tree.write("x", to: "short.txt")
        try tree.write("long enough", to: "other.md")
        let (query, _) = try await startedQuery(tree) {
            $0.fileNamePattern = "*.txt"
            $0.predicate = NSPredicate { $0.fileSize > 3 }
        }
        defer { query.stop() }
        #expect(query.items.map(\.fileName) == ["keep.txt"])
    }

    @Test(arguments: [true, false])
    func sortsByModificationDate(ascending: Bool) async throws {
        let tree = try TemporaryTree()
        for (name, age) in [("new", 10.0), ("old", 1000.0), ("middle", 100.0)] {
            let url = try tree.write(name, to: name)
            try FileManager.default.setAttributes([.modificationDate: Date() - age], ofItemAtPath: url.path)
        }
        let (query, _) = try await startedQuery(tree) {
            $0.sortDescriptors = [.init(.modificationDate, ascending: ascending)]
        }
        defer { query.stop() }
        let expected = ["old", "middle", "new"]
        #expect(query.items.map(\.fileName) == (ascending ? expected : expected.reversed()))
    }

    @Test func reportsCreateModifyRenameDeleteByAnotherProcessOnce() async throws {
        let tree = try TemporaryTree()
        try tree.write("existing", to: "existing.txt")
        let (query, recorder) = try await startedQuery(tree) { $0.sortDescriptors = [.init(.fileName)] }
        defer { query.stop() }

        try runElsewhere("echo x > f.txt", in: tree.url)
        #expect(await queryEventually { recorder.count(\.added, named: "f.txt") == 1 })
        let created = try #require(query.items.first { $0.fileName == "f.txt" })

        try runElsewhere("echo more >> f.txt", in: tree.url)
        #expect(await queryEventually { recorder.count(\.changed, named: "f.txt") == 1 })
        #expect(query.items.first { $0.fileName == "f.txt" }?.fileSize == 7)

        try runElsewhere("mv f.txt g.txt", in: tree.url)
        #expect(await queryEventually { recorder.count(\.changed, named: "g.txt") == 1 })
        let renamed = try #require(query.items.first { $0.fileName == "g.txt" })
        #expect(renamed.id == created.id)
        #expect(!query.items.contains { $0.fileName == "f.txt" })

        try runElsewhere("rm g.txt", in: tree.url)
        #expect(await queryEventually { recorder.count(\.removed, named: "g.txt") == 1 })
        #expect(query.items.map(\.fileName) == ["existing.txt"])

        // Whatever arrives late would be a duplicate: give it the time a batch takes.
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.count(\.added, named: "f.txt") == 1)
        #expect(recorder.count(\.changed, named: "f.txt") == 1)
        #expect(recorder.count(\.changed, named: "g.txt") == 1)
        #expect(recorder.count(\.removed, named: "g.txt") == 1)
        #expect(recorder.count(\.removed, named: "f.txt") == 0)
        #expect(recorder.count(\.added, named: "g.txt") == 0)
        #expect(recorder.allUpdates.allSatisfy { !$0.changed.contains { $0.fileName == "existing.txt" } })
    }

    @Test func renamingAFolderKeepsItsItems() async throws {
        let tree = try TemporaryTree()
        try tree.write("1", to: "folder/one.txt")
        try tree.write("2", to: "folder/inner/two.txt")
        let (query, recorder) = try await startedQuery(tree)
        defer { query.stop() }
        let ids = Set(query.items.map(\.id))
        try runElsewhere("mv folder renamed", in: tree.url)
        #expect(await queryEventually { recorder.allUpdates.flatMap(\.changed).count == 2 })
        #expect(Set(query.items.map(\.id)) == ids)
        #expect(query.items.allSatisfy { $0.path.contains("/renamed/") })
        #expect(recorder.allUpdates.allSatisfy { $0.added.isEmpty && $0.removed.isEmpty })
    }

    @Test func disabledUpdatesAreDeliveredTogetherOnEnable() async throws {
        let tree = try TemporaryTree()
        let (query, recorder) = try await startedQuery(tree)
        defer { query.stop() }
        query.disableUpdates()
        try runElsewhere("echo 1 > one; echo 2 > two; echo 3 > three; rm three", in: tree.url)
        try await Task.sleep(for: .milliseconds(300))
        #expect(query.resultCount == 0)
        #expect(recorder.allUpdates.isEmpty)
        query.enableUpdates()
        #expect(await queryEventually { recorder.allUpdates.count == 1 })
        #expect(Set(recorder.allUpdates.first?.added.map(\.fileName) ?? []) == ["one", "two"])
        #expect(recorder.allUpdates.first?.removed.isEmpty == true)
        #expect(query.resultCount == 2)
    }

    @Test func stopEndsUpdates() async throws {
        let tree = try TemporaryTree()
        let (query, recorder) = try await startedQuery(tree)
        query.stop()
        #expect(query.isStopped && !query.isStarted)
        try runElsewhere("echo 1 > one", in: tree.url)
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.allUpdates.isEmpty)
        #expect(query.resultCount == 0)
    }

    @Test func snapshotsStreamResultsThenUpdates() async throws {
        let tree = try TemporaryTree()
        try tree.write("a", to: "a.txt")
        let query = DocumentQuery(searchScopes: [tree.url])
        let stream = query.snapshots()
        #expect(query.start())
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.results.map(\.fileName) == ["a.txt"])
        #expect(first?.added.map(\.fileName) == ["a.txt"])
        try runElsewhere("echo b > b.txt", in: tree.url)
        let second = await iterator.next()
        #expect(second?.added.map(\.fileName) == ["b.txt"])
        #expect(second?.results.map(\.fileName) == ["a.txt", "b.txt"])
        query.stop()
        #expect(await iterator.next() == nil)
    }

    @Test func missingOrFileScopeFailsToStart() throws {
        let tree = try TemporaryTree()
        let missing = DocumentQuery(searchScopes: [tree.file("nowhere")])
        #expect(!missing.start())
        #expect(missing.lastError?.code == .fileNotFound)
        #expect(!missing.isStarted)
        let file = try tree.write("x", to: "file.txt")
        let notFolder = DocumentQuery(searchScopes: [file])
        #expect(!notFolder.start())
        #expect(notFolder.lastError?.code == .wrongFileType)
        let none = DocumentQuery()
        #expect(!none.start())
        #expect(none.lastError?.code == .invalidArgument)
    }

    @Test func symbolicLinksAreItemsNeverFollowed() async throws {
        let tree = try TemporaryTree()
        let outside = try TemporaryTree("outside")
        try outside.write("secret", to: "secret.txt")
        try tree.write("x", to: "scope/inside.txt")
        try FileManager.default.createSymbolicLink(
            at: tree.file("scope/escape"), withDestinationURL: outside.url)
        try FileManager.default.createSymbolicLink(
            at: tree.file("link-to-scope"), withDestinationURL: tree.file("scope"))
        let query = DocumentQuery(searchScopes: [tree.file("link-to-scope")])
        let recorder = QueryRecorder(query)
        #expect(query.start())
        defer { query.stop() }
        #expect(await queryEventually { recorder.finishedGathering })
        #expect(Set(query.items.map(\.fileName)) == ["inside.txt", "escape"])
        let link = try #require(query.items.first { $0.fileName == "escape" })
        #expect(link.isSymbolicLink && link.contentType == "public.symlink")
        try runElsewhere("echo more > \(outside.url.path)/more.txt", in: outside.url)
        try runElsewhere("echo y > new.txt", in: tree.file("scope"))
        #expect(await queryEventually { recorder.count(\.added, named: "new.txt") == 1 })
        #expect(!query.items.contains { $0.fileName == "more.txt" || $0.fileName == "secret.txt" })
    }

    @Test func aFileCreatedThenWrittenIsAddedOnceWithItsContents() async throws {
        let tree = try TemporaryTree()
        let (query, recorder) = try await startedQuery(tree)
        defer { query.stop() }
        // Created, then written 20 ms later: the query sees an empty file first.
        try runElsewhere("exec 3> f.txt; sleep 0.02; echo hello >&3", in: tree.url)
        #expect(await queryEventually { recorder.count(\.added, named: "f.txt") == 1 })
        try await Task.sleep(for: .milliseconds(300))
        let added = recorder.allUpdates.flatMap(\.added).filter { $0.fileName == "f.txt" }
        #expect(added.map(\.fileSize) == [6])
        #expect(recorder.count(\.changed, named: "f.txt") == 0)
        // A file that stays empty is added all the same.
        try runElsewhere(": > empty.txt", in: tree.url)
        #expect(await queryEventually { recorder.count(\.added, named: "empty.txt") == 1 })
    }

    @Test func withoutSortDescriptorsResultsAreInPathByteOrder() async throws {
        let tree = try TemporaryTree()
        for name in ["b.txt", "a/c.txt", "a.txt", "A.txt", "a b.txt"] { try tree.write(name, to: name) }
        let (query, recorder) = try await startedQuery(tree)
        defer { query.stop() }
        #expect(query.items.map(\.fileName) == ["A.txt", "a b.txt", "a.txt", "c.txt", "b.txt"])
        try runElsewhere("echo x > a-z.txt", in: tree.url)
        #expect(await queryEventually { recorder.count(\.added, named: "a-z.txt") == 1 })
        #expect(query.items.map(\.fileName) == ["A.txt", "a b.txt", "a-z.txt", "a.txt", "c.txt", "b.txt"])
    }

    @Test func gathersTenThousandOddNames() async throws {
        let tree = try TemporaryTree()
        var expected: Set<[UInt8]> = []
        for index in 0..<10_000 {
            var name: [UInt8]
            switch index % 4 {
            case 0: name = Array("-\(index) leading dash".utf8)
            case 1: name = Array("line\nbreak \(index)".utf8)
            case 2: name = Array("bad \(index) ".utf8) + [0xFF, 0xFE]
            default: name = Array("plain \(index).txt".utf8)
            }
            createRawNamedFile(in: tree.url, name: name)
            expected.insert(DirectoryWatcher.fileSystemPath(of: tree.url) + [UInt8(ascii: "/")] + name)
        }
        let (query, recorder) = try await startedQuery(tree) { $0.sortDescriptors = [.init(.fileName)] }
        defer { query.stop() }
        #expect(query.resultCount == 10_000)
        #expect(Set(query.items.map(\.fileSystemPath)) == expected)
        // A file with an invalid UTF-8 name is still found by its exact bytes when it goes.
        try runElsewhere("rm -- 'bad 2 '*", in: tree.url)
        #expect(await queryEventually { recorder.allUpdates.flatMap(\.removed).count == 1 })
        #expect(query.resultCount == 9_999)
    }
}
