import Foundation
import Testing

@Suite("docs: versions, restore, resolve")
struct DocsVersionsTests {
    @Test(
        .disabled(if: DocsBinary.hasVersionHistory, "this build has version history"),
        arguments: [
            ["versions", "Notes"], ["versions", "Notes", "--json"], ["restore", "Notes", "v1"],
            ["resolve", "Notes", "--keep", "mine"],
        ])
    func withoutVersionHistoryEachCommandSaysSo(arguments: [String]) throws {
        let folder = try DocsFolder()
        try folder.write("Notes.txt", "text")
        let result = try folder.run(arguments)
        #expect(result.status == 1)
        #expect(result.error.hasPrefix("docs: cannot "))
        #expect(
            result.error.contains("“Notes”: version history is not available in this build"),
            "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "text")
    }

    @Test(
        .enabled(
            if: DocsBinary.hasVersionHistory, "FileVersion's class methods have not landed in this build"))
    func versionsListsSavedVersionsAndRestoreBringsOneBack() throws {
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
        if DocsBinary.hasVersionHistory {
            #expect(result.status == 1)
            #expect(result.error.contains("cannot resolve “Notes”: it has no unresolved conflicts"))
        } else {
            #expect(result.error.contains("version history is not available"))
        }
        #expect(try folder.contents("Notes.txt") == "text")
    }
}
