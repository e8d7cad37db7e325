import Foundation
import Testing

@testable import DocumentKit

/// Five files with known names, sizes and modification dates, gathered by a real query
/// once for all the tests that only read the items.
enum MetadataFixture {
    struct File: Sendable {
        var path: String
        var size: Int
        var modified: Date
    }

    /// Dated 2020-01-01, 2021-06-01, 2022-03-01, 2023-01-01 and 2024-01-01.
    static let files = [
        File(path: "notes.txt", size: 5, modified: Date(timeIntervalSince1970: 1_577_836_800)),
        File(path: "Notes-Old.TXT", size: 20, modified: Date(timeIntervalSince1970: 1_622_505_600)),
        File(path: "café.md", size: 100, modified: Date(timeIntervalSince1970: 1_646_092_800)),
        File(path: "report.pdf", size: 2000, modified: Date(timeIntervalSince1970: 1_672_531_200)),
        File(path: "sub/deep.txt", size: 1, modified: Date(timeIntervalSince1970: 1_704_067_200)),
    ]

    static var allNames: Set<String> { Set(files.map { String($0.path.split(separator: "/").last!) }) }

    /// Writes the files into `tree`.
    static func populate(_ tree: TemporaryTree) throws {
        for file in files {
            let url = try tree.write(String(repeating: "x", count: file.size), to: file.path)
            try FileManager.default.setAttributes([.modificationDate: file.modified], ofItemAtPath: url.path)
        }
    }

    /// The items of the files, gathered once; the folder is gone by the time they are read:
    /// items are snapshots.
    static let items = Task<[DocumentQuery.Item], any Error> {
        let tree = try TemporaryTree("metadataFixture")
        try populate(tree)
        let (query, _) = try await gatheredQuery(of: [tree.url])
        defer { query.stop() }
        return query.items
    }

    /// A started query of `scopes`, once its gathering finished.
    static func gatheredQuery(
        of scopes: [Any], configure: (DocumentQuery) -> Void = { _ in }
    ) async throws -> (DocumentQuery, QueryRecorder) {
        let query = DocumentQuery(searchScopes: scopes)
        configure(query)
        let recorder = QueryRecorder(query)
        try #require(query.start(), "\(query.lastError.map { "\($0)" } ?? "")")
        try #require(await queryEventually { recorder.finishedGathering })
        return (query, recorder)
    }
}
