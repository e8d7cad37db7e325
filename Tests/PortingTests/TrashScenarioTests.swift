import DocumentKit
import Foundation
import PortingSwift5
import PortingSwift6
import Testing

/// `FileManager.trashItem(at:resultingItemURL:)` called as Apple code calls it, in Swift 5 and
/// Swift 6 mode: the item goes to the process's home trash (scripts/test gives the run a data
/// home of its own), each test removing what it put there.
@MainActor
@Suite struct TrashScenarioTests {
    /// The info file of `trashed`, removed with it when the test ends.
    static func takeBack(_ trashed: URL) throws -> String {
        let info = trashed.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("info/\(trashed.lastPathComponent).trashinfo")
        defer {
            try? FileManager.default.removeItem(at: trashed)
            try? FileManager.default.removeItem(at: info)
        }
        return try String(contentsOf: info, encoding: .utf8)
    }

    @Test func swift5ListMovesAnOpenDocumentToTheTrashAndItsPresenterFollows() async throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Trip.journal")
        let journal = JournalDocument(fileURL: url)
        #expect(await journal.save(to: url, for: .forCreating))

        let list = DocumentTrash()
        try list.moveToTrash(url)
        let trashed = try #require(list.trashedLocations[url])
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(FileManager.default.fileExists(atPath: trashed.path))
        #expect(trashed.deletingLastPathComponent().path.hasSuffix("/Trash/files"))
        // Presenters hear the move, as from any coordinated move: the open document follows.
        let followed = await PortingScenarioTests.waitUntil { journal.fileURL.path == trashed.path }
        #expect(followed, "\(journal.fileURL)")
        #expect(await journal.close())
        let record = try Self.takeBack(trashed)
        #expect(record.hasPrefix("[Trash Info]\nPath=\(url.path)\nDeletionDate="), "\(record)")
    }

    @Test func swift6RemoverTrashesADocumentAndReportsAMissingOne() throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes 100%.txt")
        try Data("notes".utf8).write(to: url)
        let remover = DocumentRemover()
        #expect(remover.remove(url) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))

        // The error names the file and what was being done; nothing is left in the trash.
        let failure = try #require(remover.remove(url))
        #expect(failure.contains(url.path), "\(failure)")
        #expect(failure.contains("trash"), "\(failure)")

        let trash = StandardDirectories.current.applicationSupport.appendingPathComponent("Trash/files")
        // Another run may have left one of this name: ours is the one with this folder's path.
        let names = try FileManager.default.contentsOfDirectory(atPath: trash.path)
        var found = false
        for name in names where name.hasPrefix("Notes 100%") {
            let candidate = trash.appendingPathComponent(name)
            let info = trash.deletingLastPathComponent().appendingPathComponent("info/\(name).trashinfo")
            if let record = try? String(contentsOf: info, encoding: .utf8),
                record.contains("Path=\(folder.path)/Notes%20100%25.txt\n")
            {
                found = true
                _ = try Self.takeBack(candidate)
            }
        }
        #expect(found, "\(names)")
    }

    @Test func errorsAreCocoaErrorsAsApplesAre() throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("Gone.txt")
        var result: NSURL?
        let error = try #require(throws: CocoaError.self) {
            try FileManager.default.trashItem(at: missing, resultingItemURL: &result)
        }
        #expect(error.code == .fileNoSuchFile)
        #expect(error.userInfo[NSFilePathErrorKey] as? String == missing.path)
        #expect(result == nil)
    }
}
