import DocumentKit
import Foundation
import Testing

@Suite("docs: versions, restore, resolve")
struct DocsVersionsTests {
    @Test func versionsListsSavedVersionsAndRestoreBringsOneBack() throws {
        let folder = try DocsFolder()
        #expect(try folder.run(["new", "Notes", "--from", "-"], input: Data("first".utf8)).status == 0)
        let edit = try folder.run(
            ["edit", "Notes"], environment: ["EDITOR": DocsEditTests.editor("printf \" second\" >> \"$1\"")])
        #expect(edit.status == 0, "\(edit.error)")
        #expect(try folder.contents("Notes.txt") == "first second")

        let listed = try folder.run(["versions", "Notes", "--json"])
        #expect(listed.status == 0, "\(listed.error)")
        struct Listing: Decodable {
            struct Version: Decodable {
                var id: String
                var modified: String?
                var computer: String?
                var conflict: Bool
                var resolved: Bool
            }
            var document: String
            var path: String
            var versions: [Version]
        }
        let listing = try JSONDecoder().decode(Listing.self, from: listed.outputData)
        #expect(listing.document == "Notes")
        #expect(listing.path == folder.url("Notes.txt").path)
        let first = try #require(listing.versions.first)
        #expect(!first.conflict)

        let text = try folder.run(["versions", "Notes"])
        #expect(text.output.contains(first.id))

        #expect(try folder.run(["restore", "Notes", first.id]).status == 0)
        #expect(try folder.contents("Notes.txt") == "first")

        let unknown = try folder.run(["restore", "Notes", "no-such-version"])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no version “no-such-version”"))
    }

    @Test func resolveWithoutConflictsChangesNothing() throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "text")
        let result = try folder.run(["resolve", "Notes", "--keep", "both"])
        #expect(result.status == 1)
        #expect(result.error.contains("cannot resolve “Notes”: it has no unresolved conflicts"))
        #expect(try folder.contents("Notes.txt") == "text")
    }

    /// A document with one unresolved conflict version holding "theirs", made in the store the
    /// `docs` child uses (its XDG_DATA_HOME).
    private func folderWithConflict() throws -> DocsFolder {
        let folder = try DocsFolder()
        #expect(try folder.run(["new", "Notes", "--from", "-"], input: Data("mine".utf8)).status == 0)
        let store = VersionStore(root: folder.dataHome.appendingPathComponent("DocumentKit/Versions"))
        let incoming = folder.dataHome.appendingPathComponent("theirs.txt")
        try Data("theirs".utf8).write(to: incoming)
        try store.addConflictOfItem(
            at: folder.url("Notes.txt"), withContentsOf: incoming, savingComputer: "laptop",
            modificationDate: Date())
        return folder
    }

    @Test func listCountsConflictsAndResolveKeepTheirsReplacesTheFile() throws {
        let folder = try folderWithConflict()
        try folder.write("Other.txt", "plain")
        let listed = try folder.run(["list"])
        #expect(listed.status == 0)
        #expect(
            listed.output.split(separator: "\n").filter { $0.contains("(1 conflict)") }.map {
                $0.contains("Notes")
            } == [true], "\(listed.output)")
        let json = try JSONDecoder().decode(
            DocsListing.self, from: try folder.run(["list", "--json"]).outputData)
        #expect(
            Dictionary(uniqueKeysWithValues: json.documents.map { ($0.name, $0.conflicts) }) == [
                "Notes": 1, "Other": 0,
            ])
        // Renamed by another program: still found by its identity.
        try FileManager.default.moveItem(at: folder.url("Notes.txt"), to: folder.url("Renamed.txt"))
        let renamed = try JSONDecoder().decode(
            DocsListing.self, from: try folder.run(["list", "--json"]).outputData)
        #expect(
            Dictionary(uniqueKeysWithValues: renamed.documents.map { ($0.name, $0.conflicts) }) == [
                "Renamed": 1, "Other": 0,
            ])
        try FileManager.default.moveItem(at: folder.url("Renamed.txt"), to: folder.url("Notes.txt"))
        let versions = try folder.run(["versions", "Notes"])
        #expect(versions.output.contains("laptop"), "\(versions.output)")

        let result = try folder.run(["resolve", "Notes", "--keep", "theirs"])
        #expect(result.status == 0, "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "theirs")
        let again = try folder.run(["resolve", "Notes", "--keep", "mine"])
        #expect(again.status == 1, "the conflict is gone once resolved")
        let after = try JSONDecoder().decode(
            DocsListing.self, from: try folder.run(["list", "--json"]).outputData)
        #expect(after.documents.allSatisfy { $0.conflicts == 0 })
    }

    @Test func resolveKeepMineLeavesTheFileAndClearsTheConflict() throws {
        let folder = try folderWithConflict()
        let result = try folder.run(["resolve", "Notes", "--keep", "mine"])
        #expect(result.status == 0, "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "mine")
        #expect(try folder.run(["resolve", "Notes", "--keep", "mine"]).status == 1)
    }

    @Test func resolveKeepBothSavesTheirsAsANewDocument() throws {
        let folder = try folderWithConflict()
        let result = try folder.run(["resolve", "Notes", "--keep", "both"])
        #expect(result.status == 0, "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "mine")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url("").path)
        let kept = try #require(names.first { $0.hasPrefix("Notes (conflict from laptop") }, "\(names)")
        #expect(try folder.contents(kept) == "theirs")
    }
}
