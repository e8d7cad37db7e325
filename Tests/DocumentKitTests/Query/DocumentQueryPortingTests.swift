import Foundation
import Synchronization
import Testing

@testable import DocumentKit

/// Apple's NSMetadataQuery and NSMetadataItem forms: item identity, search scopes, and the
/// query's Apple-named members.
@Suite("NSMetadataQuery and NSMetadataItem")
struct DocumentQueryPortingTests {
    private func finishedGatherings(_ recorder: QueryRecorder) -> Int {
        recorder.names.withLock { $0.filter { $0 == .NSMetadataQueryDidFinishGathering }.count }
    }

    // MARK: Items

    @Test func theSameFileFromTwoGatheringsIsTheSameItem() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let (first, firstRecorder) = try await MetadataFixture.gatheredQuery(of: [folder.url])
        let before = first.items
        first.stop()
        #expect(first.start())
        #expect(await queryEventually { finishedGatherings(firstRecorder) == 2 })
        let restarted = first.items
        first.stop()
        let (second, _) = try await MetadataFixture.gatheredQuery(of: [folder.url.path])
        defer { second.stop() }
        let other = second.items
        try #require(before.count == 5 && restarted.count == 5 && other.count == 5)
        for item in before {
            for again in [restarted, other].map({ $0.first { $0.fileName == item.fileName }! }) {
                #expect(item == again)
                #expect(item.isEqual(again))
                #expect(item.hash == again.hash)
                #expect(item.id == again.id)
                #expect(item !== again)
            }
        }
        #expect(Set(before + restarted + other).count == 5)
        for a in before {
            for b in before where a.fileName != b.fileName {
                #expect(a != b)
                #expect(!a.isEqual(b))
            }
        }
        #expect(!before[0].isEqual(before[0].fileName))
        #expect(!before[0].isEqual(nil))

        let direct = try #require(NSMetadataItem(url: folder.file("notes.txt")))
        #expect(direct == before.first { $0.fileName == "notes.txt" })
        #expect(direct.hash == before.first { $0.fileName == "notes.txt" }?.hash)
        #expect(direct.fileSize == 5 && direct.modificationDate == MetadataFixture.files[0].modified)
        #expect(NSMetadataItem(url: folder.file("sub/../notes.txt")) == direct)
        #expect(NSMetadataItem(url: folder.file("missing.txt")) == nil)
        #expect(NSMetadataItem(url: URL(string: "https://example.com/notes.txt")!) == nil)
    }

    @Test func anItemStaysEqualThroughChangesSavesAndRenamesButNotARecreation() async throws {
        let folder = try TemporaryTree()
        try folder.write("one", to: "doc.txt")
        let (query, recorder) = try await MetadataFixture.gatheredQuery(of: [folder.url])
        defer { query.stop() }
        let original = try #require(query.items.first)

        try folder.write("one two", to: "doc.txt")
        #expect(await queryEventually { query.items.first?.fileSize == 7 })
        let changed = try #require(query.items.first)
        #expect(changed == original)
        #expect(!changed.hasSameAttributes(as: original))
        #expect(query.index(ofResult: original) == 0)
        #expect(recorder.allUpdates.flatMap(\.changed).allSatisfy { $0 == original })

        // Saved over as editors save: a hidden temporary file renamed over the document.
        try runElsewhere("printf 'saved again' > .doc.txt.tmp && mv .doc.txt.tmp doc.txt", in: folder.url)
        #expect(await queryEventually { query.items.first?.fileSize == 11 })
        #expect(query.items.first == original)

        try FileManager.default.moveItem(at: folder.file("doc.txt"), to: folder.file("renamed.txt"))
        #expect(await queryEventually { query.items.first?.fileName == "renamed.txt" })
        #expect(query.items.first == original)
        #expect(NSMetadataItem(url: folder.file("renamed.txt")) == original)

        try FileManager.default.removeItem(at: folder.file("renamed.txt"))
        #expect(await queryEventually { query.resultCount == 0 })
        try folder.write("new", to: "renamed.txt")
        #expect(await queryEventually { query.resultCount == 1 })
        #expect(query.items.first != original)
        #expect(query.index(ofResult: original) == NSNotFound)
    }

    @Test func itemsAnswerTheirAttributesByName() async throws {
        let items = try await MetadataFixture.items.value
        let notes = try #require(items.first { $0.fileName == "notes.txt" })
        #expect(notes.attributes.contains(NSMetadataItemFSNameKey))
        #expect(notes.attributes.contains(NSMetadataItemFSCreationDateKey) == (notes.creationDate != nil))
        for key in notes.attributes { #expect(notes.value(forAttribute: key) != nil, "\(key)") }
        #expect(notes.value(forAttribute: "kMDItemAuthors") == nil)
        #expect(notes.value(forAttribute: NSMetadataItemIsUbiquitousKey) as? NSNumber == false)
        #expect(notes.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey) == nil)
        #expect(notes.value(forAttribute: NSMetadataItemDisplayNameKey) as? String == "notes")
        #expect(
            notes.value(forAttribute: NSMetadataItemContentTypeTreeKey) as? [String] == [
                "public.plain-text", "public.text",
            ])
        let values = try #require(
            notes.values(forAttributes: [NSMetadataItemFSNameKey, NSMetadataItemFSSizeKey, "kMDItemAuthors"]))
        #expect(values.count == 2)
        #expect(values[NSMetadataItemFSNameKey] as? String == "notes.txt")
        #expect((values[NSMetadataItemFSSizeKey] as? NSNumber)?.intValue == 5)
    }

    // MARK: Scopes

    @Test func searchScopesTakeURLsPathsAndScopeConstants() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let scopeLists: [[Any]] = [
            [folder.url], [folder.url.path], [NSURL(fileURLWithPath: folder.url.path)],
            [NSString(string: folder.url.path)], [NSMetadataQueryUbiquitousDocumentsScope, folder.url.path],
        ]
        for scopes in scopeLists {
            let (query, _) = try await MetadataFixture.gatheredQuery(of: scopes)
            #expect(Set(query.items.map(\.fileName)) == MetadataFixture.allNames, "\(scopes)")
            query.stop()
        }
        let query = DocumentQuery()
        query.searchScopes = [folder.url, folder.url.path, NSMetadataQueryUbiquitousDataScope]
        #expect(query.searchScopes.count == 3)
        #expect(query.searchScopes[0] as? URL == folder.url)
        #expect(query.searchScopes[1] as? String == folder.url.path)
        #expect(query.searchScopes[2] as? String == NSMetadataQueryUbiquitousDataScope)
    }

    @Test func theHomeScopeIsTheHomeFolder() throws {
        #expect(
            try DocumentQuery.folders(of: [.string(NSMetadataQueryUserHomeScope)]).folders
                == [URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true)])
    }

    @Test func scopesLinuxCannotSearchFailToStartAndSayWhy() {
        for scope in [
            NSMetadataQueryLocalComputerScope, NSMetadataQueryNetworkScope,
            NSMetadataQueryIndexedLocalComputerScope, NSMetadataQueryIndexedNetworkScope,
        ] {
            let query = DocumentQuery(searchScopes: [scope])
            #expect(!query.start())
            #expect(query.lastError?.code == .notSupported)
            #expect(
                query.lastError?.description.contains("the search scope \(scope) is not supported") == true)
        }
        let cases: [(scopes: [Any], message: String)] = [
            (
                [42],
                "a search scope must be a file URL, a path or a scope constant such as NSMetadataQueryUserHomeScope, not a Int"
            ),
            (
                [URL(string: "https://example.com/")!],
                "the search scope https://example.com/ is not a file URL"
            ),
            ([""], "a search scope is an empty path"),
            ([], "no search scopes"),
        ]
        for (scopes, message) in cases {
            let query = DocumentQuery(searchScopes: scopes)
            #expect(!query.start())
            #expect(query.lastError?.code == .invalidArgument)
            #expect(
                query.lastError?.description.contains(message) == true,
                "\(query.lastError.map { "\($0)" } ?? "")")
        }
    }

    // MARK: The query

    @Test func aNewPredicateOrSortWhileRunningGathersAgain() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let (query, recorder) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
            $0.sortDescriptors = [.init(.fileName)]
        }
        let snapshots = query.snapshots()
        let seen = Mutex<[[String]]>([])
        let reader = Task {
            for await snapshot in snapshots { seen.withLock { $0.append(snapshot.results.map(\.fileName)) } }
        }

        query.predicate = NSPredicate(metadataFormat: "%K > 50", NSMetadataItemFSSizeKey)
        #expect(await queryEventually { finishedGatherings(recorder) == 2 })
        #expect(query.items.map(\.fileName) == ["café.md", "report.pdf"])
        query.sortDescriptors = [NSSortDescriptor(metadataKey: NSMetadataItemFSSizeKey, ascending: false)]
        #expect(await queryEventually { finishedGatherings(recorder) == 3 })
        #expect(query.items.map(\.fileName) == ["report.pdf", "café.md"])
        #expect(await queryEventually { seen.withLock { $0.last } == ["report.pdf", "café.md"] })
        #expect(seen.withLock { $0.contains(["café.md", "report.pdf"]) })
        #expect(query.isStarted)

        query.stop()
        await reader.value
        query.predicate = nil
        #expect(!query.isStarted && query.isStopped)
        #expect(finishedGatherings(recorder) == 3)
    }

    @Test func aRestartThatCannotStartEndsTheStreamsWithTheReason() async throws {
        let folder = try TemporaryTree()
        let scope = try folder.write("x", to: "scope/a.txt").deletingLastPathComponent()
        let (query, _) = try await MetadataFixture.gatheredQuery(of: [scope])
        let snapshots = query.snapshots()
        let reader = Task { for await _ in snapshots {} }
        try FileManager.default.removeItem(at: scope)
        query.predicate = NSPredicate { _ in true }
        await reader.value
        #expect(query.isStopped)
        #expect(query.lastError?.code == .fileNotFound)
    }

    @Test func resultsEnumerateAndAnswerAttributesByIndex() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let (query, _) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
            $0.sortDescriptors = [NSSortDescriptor(metadataKey: NSMetadataItemFSSizeKey, ascending: true)]
        }
        defer { query.stop() }
        let bySize = ["deep.txt", "notes.txt", "Notes-Old.TXT", "café.md", "report.pdf"]
        var seen: [String] = []
        query.enumerateResults { result, index, stop in
            seen.append((result as! NSMetadataItem).fileName)
            if index == 1 { stop.pointee = true }
        }
        #expect(seen == Array(bySize.prefix(2)))
        seen = []
        query.enumerateResults(options: .reverse) { result, _, _ in
            seen.append((result as! NSMetadataItem).fileName)
        }
        #expect(seen == bySize.reversed())
        #expect(query.value(ofAttribute: NSMetadataItemFSNameKey, forResultAt: 4) as? String == "report.pdf")
        #expect(query.index(ofResult: query.result(at: 2)) == 2)
        #expect(query.index(ofResult: "report.pdf") == NSNotFound)
    }
}
