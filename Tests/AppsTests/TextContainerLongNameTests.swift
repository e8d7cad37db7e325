import DocumentKit
import Foundation
import Testing
import TextContainer

@Suite struct TextContainerLongNameTests {
    /// 62 emoji: 248 bytes, so "NAME.txt" fits in 255 but "NAME 2.txt" would not.
    static let longName = String(repeating: "\u{1F600}", count: 62)

    @Test func aSecondDeletedDocumentOfALongNameStillFits() throws {
        let folder = try DocsFolder()
        let trash = folder.dataHome.appendingPathComponent("Trash")
        for round in 1...2 {
            try folder.write(Self.longName + ".txt", "round \(round)")
            let result = try folder.run(["delete", Self.longName])
            #expect(result.status == 0, "\(result.error)")
        }
        let names = try FileManager.default.contentsOfDirectory(
            atPath: trash.appendingPathComponent("files").path)
        #expect(names.count == 2, "\(names)")
        #expect(names.allSatisfy { $0.hasSuffix(".txt") })
        // Each trashed name leaves room for its info file's ".trashinfo" in 255 bytes.
        let infos = try FileManager.default.contentsOfDirectory(
            atPath: trash.appendingPathComponent("info").path)
        #expect(Set(infos) == Set(names.map { $0 + ".trashinfo" }), "\(infos)")
        #expect(infos.allSatisfy { $0.utf8.count <= 255 })
    }

    @Test func aConflictCopyOfALongNameFits() {
        let name = TextContainer.conflictCopyName(for: Self.longName, computer: "laptop", date: Date())
        #expect("\(name) 999.txt".utf8.count <= 255)
        #expect(name.hasSuffix(")"))
        #expect(name.hasPrefix("\u{1F600}"))
    }
}
