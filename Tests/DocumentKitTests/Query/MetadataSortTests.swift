import Foundation
import Testing

@testable import DocumentKit

@Suite("NSSortDescriptor(metadataKey:)")
struct MetadataSortTests {
    private func sorted(_ items: [NSMetadataItem], by descriptors: [NSSortDescriptor]) -> [String] {
        items.sorted { a, b in
            for descriptor in descriptors {
                switch descriptor.compare(a, to: b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return false
        }.map(\.fileName)
    }

    @Test func descriptorsByAttributeCompareAsTheQueryDoes() async throws {
        let items = try await MetadataFixture.items.value
        // Names ignore ASCII case, then compare bytes: "notes-" before "notes.".
        #expect(
            sorted(items, by: [NSSortDescriptor(metadataKey: NSMetadataItemFSNameKey, ascending: true)])
                == ["café.md", "deep.txt", "Notes-Old.TXT", "notes.txt", "report.pdf"])
        #expect(
            sorted(items, by: [NSSortDescriptor(metadataKey: NSMetadataItemFSSizeKey, ascending: false)])
                == ["report.pdf", "café.md", "Notes-Old.TXT", "notes.txt", "deep.txt"])
        #expect(
            sorted(
                items,
                by: [NSSortDescriptor(metadataKey: NSMetadataItemFSContentChangeDateKey, ascending: true)])
                == ["notes.txt", "Notes-Old.TXT", "café.md", "report.pdf", "deep.txt"])
        // Any other attribute by its values: display names as Swift orders strings.
        #expect(
            sorted(items, by: [NSSortDescriptor(metadataKey: NSMetadataItemDisplayNameKey, ascending: true)])
                == ["Notes-Old.TXT", "café.md", "deep.txt", "notes.txt", "report.pdf"])
        let byType = NSSortDescriptor(metadataKey: NSMetadataItemContentTypeKey, ascending: true)
        let byName = NSSortDescriptor(metadataKey: NSMetadataItemFSNameKey, ascending: false)
        #expect(
            sorted(items, by: [byType, byName])
                == ["report.pdf", "café.md", "notes.txt", "Notes-Old.TXT", "deep.txt"])
        let reversed = try #require(byType.reversedSortDescriptor as? NSSortDescriptor)
        #expect(sorted(items, by: [reversed, byName]).first == "notes.txt")
    }

    @Test func aComparatorGetsTheAttributeValues() async throws {
        let items = try await MetadataFixture.items.value
        let descriptor = NSSortDescriptor(metadataKey: NSMetadataItemDisplayNameKey, ascending: true) {
            ($0 as! String).caseInsensitiveCompare($1 as! String)
        }
        #expect(
            sorted(items, by: [descriptor]) == [
                "café.md", "deep.txt", "notes.txt", "Notes-Old.TXT", "report.pdf",
            ])
        let missing = NSSortDescriptor(metadataKey: "kMDItemAuthors", ascending: true) { a, b in
            #expect(a is NSNull && b is NSNull)
            return .orderedSame
        }
        _ = sorted(items, by: [missing])
    }

    @Test func aRunningQuerySortsByEveryKindOfDescriptorThroughUpdates() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let descriptors: [[NSSortDescriptor]] = [
            [NSSortDescriptor(metadataKey: NSMetadataItemFSSizeKey, ascending: false)],
            [NSSortDescriptor(keyPath: \NSMetadataItem.fileSize, ascending: false)],
            [
                NSSortDescriptor(metadataKey: NSMetadataItemFSSizeKey, ascending: true).reversedSortDescriptor
                    as! NSSortDescriptor
            ],
            [.init(.fileSize, ascending: false)],
            [NSSortDescriptor(DocumentQuery.SortDescriptor(.fileSize, ascending: false))],
        ]
        for descriptor in descriptors {
            let (query, recorder) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
                $0.sortDescriptors = descriptor
            }
            defer { query.stop() }
            #expect(query.sortDescriptors.count == 1)
            #expect(
                query.items.map(\.fileName) == [
                    "report.pdf", "café.md", "Notes-Old.TXT", "notes.txt", "deep.txt",
                ])
            try folder.write(String(repeating: "y", count: 50), to: "middle.txt")
            #expect(await queryEventually { query.items.map(\.fileSize) == [2000, 100, 50, 20, 5, 1] })
            #expect(await queryEventually { recorder.count(\.added, named: "middle.txt") == 1 })
            try FileManager.default.removeItem(at: folder.file("middle.txt"))
            #expect(await queryEventually { query.resultCount == 5 })
        }
    }

    @Test func displayNamesSortThroughTheGenericPathInAQuery() async throws {
        let folder = try TemporaryTree()
        try MetadataFixture.populate(folder)
        let (query, _) = try await MetadataFixture.gatheredQuery(of: [folder.url]) {
            $0.sortDescriptors = [
                NSSortDescriptor(metadataKey: NSMetadataItemDisplayNameKey, ascending: false),
                NSSortDescriptor(metadataKey: NSMetadataItemFSNameKey, ascending: true),
            ]
        }
        defer { query.stop() }
        #expect(
            query.items.map(\.fileName) == [
                "report.pdf", "notes.txt", "deep.txt", "café.md", "Notes-Old.TXT",
            ])
    }
}
