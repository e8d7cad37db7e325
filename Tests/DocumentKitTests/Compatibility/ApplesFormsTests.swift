import DocumentKit
import Foundation
import Testing

/// Apple's spellings that ported code uses: the error-pointer forms of NSFileCoordinator and
/// comparing NSFileVersions.
@Suite struct ApplesFormsTests {
    @Test func errorPointerFormsRunTheAccessorOrReportTheError() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("text", to: "a.txt")
        let coordinator = NSFileCoordinator(filePresenter: nil)
        var error: NSError?
        var read: String?
        coordinator.coordinate(readingItemAt: url, options: [], error: &error) { url in
            read = try? String(contentsOf: url, encoding: .utf8)
        }
        #expect(error == nil)
        #expect(read == "text")

        coordinator.coordinate(writingItemAt: url, options: .forReplacing, error: nil) { url in
            try? SafeSave.write(Data("written".utf8), to: url)
        }
        #expect(fileText(url) == "written")

        var moved = false
        let destination = tree.file("b.txt")
        coordinator.coordinate(
            writingItemAt: url, options: .forMoving, writingItemAt: destination, options: .forReplacing,
            error: &error
        ) { from, to in
            moved = (try? FileManager.default.moveItem(at: from, to: to)) != nil
            coordinator.item(at: from, didMoveTo: to)
        }
        #expect(error == nil && moved)

        var batch = false
        coordinator.prepare(
            forReadingItemsAt: [destination], options: [], writingItemsAt: [], options: [], error: &error
        ) { done in
            coordinator.coordinate(readingItemAt: destination, error: nil) { _ in batch = true }
            done()
        }
        #expect(batch)

        // A cancelled coordinator reports its error and runs nothing.
        let cancelled = NSFileCoordinator(filePresenter: nil)
        cancelled.cancel()
        var ran = false
        cancelled.coordinate(readingItemAt: destination, options: [], error: &error) { _ in ran = true }
        #expect(!ran)
        #expect(error != nil)
    }

    @Test func versionsCompareByWhatTheyAre() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("current", to: "a.txt")
        let store = VersionStore(root: tree.file("store"))
        let version = try store.addOfItem(at: url, withContentsOf: try tree.write("old", to: "old.txt"))
        let again = try #require(
            store.version(itemAt: url, forPersistentIdentifier: version.persistentIdentifier))
        #expect(version == again, "two objects for one version are equal")
        #expect(Set([version, again]).count == 1)
        let current = try #require(NSFileVersion.currentVersionOfItem(at: url))
        #expect(current == NSFileVersion.currentVersionOfItem(at: url))
        #expect(version != current)
    }
}
