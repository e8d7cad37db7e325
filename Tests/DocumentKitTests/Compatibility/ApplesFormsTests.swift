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

/// A document that asks for its file's mode the way UIKit code does: `[AnyHashable: Any]`,
/// keyed by a `FileAttributeKey` or by its raw value.
final class PrivateModeDocument: UIDocument {
    var text = ""
    var keyedByRawValue = false

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        text = String(decoding: contents as? Data ?? Data(), as: UTF8.self)
    }

    override func fileAttributesToWrite(to url: URL, for saveOperation: UIDocument.SaveOperation) throws
        -> [AnyHashable: Any]
    {
        keyedByRawValue
            ? [FileAttributeKey.posixPermissions.rawValue: NSNumber(value: 0o600)]
            : [FileAttributeKey.posixPermissions: NSNumber(value: 0o640)]
    }
}

@MainActor
@Suite struct DocumentFileAttributesTests {
    @Test func fileAttributesToWriteAppliesTheModeByKeyOrRawValue() async throws {
        let tree = try TemporaryTree()
        let url = tree.file("private.txt")
        let document = PrivateModeDocument(fileURL: url)
        document.text = "secret"
        #expect(await document.save(to: url, for: .forCreating))
        let mode = {
            (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?
                .intValue
        }
        #expect(try mode() == 0o640)
        document.keyedByRawValue = true
        document.text = "more secret"
        document.updateChangeCount(.done)
        #expect(await document.save(to: url, for: .forOverwriting))
        #expect(try mode() == 0o600)
        #expect(fileText(url) == "more secret")
        #expect(await document.close())
    }
}

/// Names that code written for Apple's SDKs reaches through `import Cocoa` and Foundation on
/// Linux lacks: found by the porting corpus (docs/Porting.md).
@Suite struct CocoaNamesTests {
    @Test func xcodesDocumentTemplateErrorAndAtomicWriteHaveApplesValues() throws {
        let error = NSError(domain: NSOSStatusErrorDomain, code: unimpErr, userInfo: nil)
        #expect(error.code == -4)
        #expect(Data.WritingOptions.atomicWrite == .atomic)

        let tree = try TemporaryTree()
        let url = try tree.write("old", to: "a.txt")
        try Data("new".utf8).write(to: url, options: Data.WritingOptions.atomicWrite)
        #expect(fileText(url) == "new")
    }

    @Test func groupContainerIsAPrivateFolderOfTheUsersDataNamedByTheGroup() throws {
        let group = "group.org.documentkit.tests.\(UUID().uuidString)"
        let expected = StandardDirectories.current.applicationSupport
            .appendingPathComponent("group-containers/\(group)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: expected) }

        let container = try #require(
            FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: group))
        #expect(container.standardizedFileURL.path == expected.standardizedFileURL.path)
        let attributes = try FileManager.default.attributesOfItem(atPath: container.path)
        #expect(attributes[.type] as? FileAttributeType == .typeDirectory)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        // Asked again, the same folder, with what was put in it.
        try Data("shared".utf8).write(to: container.appendingPathComponent("settings"))
        let again = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: group)
        #expect(again.map { fileText($0.appendingPathComponent("settings")) } == "shared")

        for invalid in ["", ".", "..", "../escape", "a/b"] {
            #expect(FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: invalid) == nil)
        }
    }
}
