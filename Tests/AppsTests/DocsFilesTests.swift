import DocumentKit
import Foundation
import Testing

/// Files sync brings that are not text documents (a photo, a PDF in a folder): docs shows
/// them with their kind, lists their versions, and prunes their history to free space.
@Suite("docs: files of any kind, and pruning their history")
struct DocsFilesTests {
    let remoteRoot: URL

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-files-remote-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    struct Status: Decodable {
        struct Document: Decodable, Equatable {
            var name: String
            var file: String
            var kind: String
            var state: String
        }
        struct Store: Decodable {
            var path: String
            var bytes: Int64
        }
        var documents: [Document]
        var versionStore: Store
    }

    struct Pruned: Decodable {
        var removed: Int
        var kept: Int
        var conflicts: Int
        var mergeBases: Int
        var freedBytes: Int64
        var storeBytes: Int64
    }

    struct Versions: Decodable {
        struct Version: Decodable {
            var id: String
            var conflict: Bool
        }
        var document: String
        var kind: String
        var versions: [Version]
    }

    @Test func everySyncedFileShowsWithItsKindAndItsHistoryCanBePruned() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try DocsSyncTests.Device(remote: remoteRoot)
        let b = try DocsSyncTests.Device(remote: remoteRoot)
        let remote = "file://" + remoteRoot.path
        try a.folder.write("Notes.txt", "text\n")
        try FileManager.default.createDirectory(
            at: a.folder.url("Trips"), withIntermediateDirectories: true)
        try a.folder.write("Trips/map.pdf", "%PDF-1.4\n")
        func photo(_ seed: UInt8) -> Data {
            Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) &+ seed })
        }
        try photo(0).write(to: a.folder.url("photo.jpg"))
        #expect(try a.docs(["sync", "--remote", remote]).status == 0)
        #expect(try b.docs(["sync", "--remote", remote]).status == 0)
        // Each new photo downloaded makes history on b: what it replaced, and the merge base.
        for seed in UInt8(1)...3 {
            try photo(seed).write(to: a.folder.url("photo.jpg"))
            #expect(try a.docs(["sync"]).status == 0)
            let down = try b.docs(["sync"])
            #expect(down.status == 0 && down.output.contains("1 downloaded"), "\(down.output) \(down.error)")
        }

        let list = try b.docs(["list"]).output.split(separator: "\n")
        #expect(list.count == 3, "\(list)")
        #expect(list.contains { $0.hasSuffix("  Notes") }, "\(list)")
        #expect(list.contains { $0.hasSuffix("  Trips/map.pdf  (file)") }, "\(list)")
        #expect(list.contains { $0.hasPrefix("200000  ") && $0.hasSuffix("  photo.jpg  (file)") }, "\(list)")
        let listed = try JSONDecoder().decode(
            DocsListing.self, from: try b.docs(["list", "--json"]).outputData)
        #expect(listed.documents.map(\.name) == ["Notes", "Trips/map.pdf", "photo.jpg"])

        let text = try b.docs(["status"]).output
        #expect(
            text.hasPrefix("synced\tNotes\nsynced\tTrips/map.pdf\tfile\nsynced\tphoto.jpg\tfile\nversions\t"),
            "\(text)")
        let before = try JSONDecoder().decode(Status.self, from: try b.docs(["status", "--json"]).outputData)
        #expect(
            before.documents == [
                .init(name: "Notes", file: "Notes.txt", kind: "document", state: "synced"),
                .init(name: "Trips/map.pdf", file: "Trips/map.pdf", kind: "file", state: "synced"),
                .init(name: "photo.jpg", file: "photo.jpg", kind: "file", state: "synced"),
            ])
        #expect(before.versionStore.bytes > 600_000, "three photos replaced, and their bases")

        // An unresolved conflict of the photo stays through pruning.
        let store = VersionStore(root: URL(fileURLWithPath: before.versionStore.path))
        let theirs = b.folder.root.appendingPathComponent("theirs.jpg")
        try photo(9).write(to: theirs)
        let conflict = try store.addConflictOfItem(
            at: b.folder.url("photo.jpg"), withContentsOf: theirs, savingComputer: "laptop",
            modificationDate: Date())

        let history = try JSONDecoder().decode(
            Versions.self, from: try b.docs(["versions", "photo.jpg", "--json"]).outputData)
        #expect(history.document == "photo.jpg" && history.kind == "file")
        #expect(history.versions.count >= 4, "\(history.versions.map(\.id))")

        let pruning = try b.docs(["versions", "photo.jpg", "--prune", "--json"])
        #expect(pruning.status == 0, "\(pruning.error)")
        let pruned = try JSONDecoder().decode(Pruned.self, from: pruning.outputData)
        #expect(pruned.removed == history.versions.count - 2, "\(pruning.output)")
        #expect(pruned.kept == 2 && pruned.conflicts == 1 && pruned.mergeBases == 1, "\(pruning.output)")
        #expect(pruned.freedBytes >= 400_000, "\(pruning.output)")
        let after = try JSONDecoder().decode(
            Versions.self, from: try b.docs(["versions", "photo.jpg", "--json"]).outputData)
        #expect(after.versions.map(\.conflict).sorted { !$0 && $1 } == [false, true])
        #expect(after.versions.contains { $0.id == conflict.persistentIdentifier })
        let shrunk = try JSONDecoder().decode(Status.self, from: try b.docs(["status", "--json"]).outputData)
        #expect(shrunk.versionStore.bytes == pruned.storeBytes)
        #expect(
            shrunk.versionStore.bytes < before.versionStore.bytes,
            "the conflict added is smaller than what went")

        // The base kept is the one sync merges from: a photo changed on the remote still
        // downloads, with nothing in conflict but the one added above.
        try photo(4).write(to: a.folder.url("photo.jpg"))
        #expect(try a.docs(["sync"]).status == 0)
        let down = try b.docs(["sync"])
        #expect(down.status == 0 && down.output.contains("1 downloaded"), "\(down.output) \(down.error)")
        #expect(try Data(contentsOf: b.folder.url("photo.jpg")) == photo(4))

        // Pruned in words; a name that is no file is refused.
        let words = try b.docs(["versions", "photo.jpg", "--prune"])
        #expect(words.status == 0 && words.output.hasPrefix("removed "), "\(words.output)")
        #expect(words.output.contains("freed ") && words.output.contains("\nversion store: "))
        #expect(try b.docs(["versions", "../photo.jpg"]).status != 0)
        #expect(try b.docs(["list", "--prune"]).status == 2)
    }

    @Test func versionsHelpSaysHowHistoryIsThinned() throws {
        let folder = try DocsFolder()
        let help = try folder.run(["versions", "--help"]).output
        #expect(help.contains("a version of each minute for the last hour"), "\(help)")
        #expect(help.contains("--prune"))
    }
}
