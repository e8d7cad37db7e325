import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Names a file system accepts but a terminal or a one-line listing does not: control
/// characters, escape sequences, 4-byte characters and long grapheme clusters.
@Suite("docs: odd names")
struct DocsNameTests {
    /// File names (without “.txt”) and how `docs list` shows them.
    static let controlNames: [(name: String, listed: String)] = [
        ("ctl\u{1B}[31mred", "ctl\\033[31mred"),
        ("two\nlines", "two\\nlines"),
        ("tab\there", "tab\\there"),
        ("back\\slash", "back\\\\slash"),
        ("bell\u{07}del\u{7F}", "bell\\adel\\177"),
        ("c1\u{9B}31m", "c1\\302\\23331m"),
        ("cr\r", "cr\\r"),
    ]

    /// A 255-byte file name in 4-byte characters (62 × 4 + 3 + 4), one grapheme cluster of
    /// 251 bytes (255 with “.txt”), and ten 25-byte family emoji (254 with “.txt”).
    static let longNames = [
        String(repeating: "\u{1F600}", count: 62) + "abc",
        "Z" + String(repeating: "\u{0301}", count: 125),
        String(repeating: "👨‍👩‍👧‍👦", count: 10),
    ]

    @Test func longNamesAreAsLongAsAFileNameCanBe() {
        #expect(Self.longNames.map { ($0 + ".txt").utf8.count } == [255, 255, 254])
        #expect(Self.longNames[1].count == 1)
    }

    @Test func listEscapesControlCharactersAndEscapeSequencesInNames() throws {
        let folder = try DocsFolder()
        for (name, _) in Self.controlNames { try folder.write(name + ".txt", "x") }
        let result = try folder.run(["list"])
        #expect(result.status == 0, "\(result.error)")
        let bytes = [UInt8](result.outputData)
        // Only the line ends: no other control byte, DEL, or C1 control (0xC2 0x80...0x9F).
        #expect(bytes.filter { $0 < 0x20 && $0 != 0x0A }.isEmpty, "\(bytes)")
        #expect(!bytes.contains(0x7F))
        #expect(!zip(bytes, bytes.dropFirst()).contains { $0 == 0xC2 && (0x80...0x9F).contains($1) })
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == Self.controlNames.count, "\(result.output)")
        for (_, listed) in Self.controlNames {
            #expect(lines.contains { $0.hasSuffix("  " + listed) }, "\(listed) not in \(result.output)")
        }

        let json = try folder.run(["list", "--json"])
        let jsonBytes = [UInt8](json.outputData)
        #expect(jsonBytes.filter { $0 < 0x20 && $0 != 0x0A }.isEmpty)
        #expect(!jsonBytes.contains(0x7F))
        #expect(!zip(jsonBytes, jsonBytes.dropFirst()).contains { $0 == 0xC2 && (0x80...0x9F).contains($1) })
        let listing = try JSONDecoder().decode(DocsListing.self, from: json.outputData)
        #expect(Set(listing.documents.map(\.name)) == Set(Self.controlNames.map(\.name)))
    }

    @Test func documentWithControlCharactersInItsNameCanBeNamedToEveryCommand() throws {
        let folder = try DocsFolder()
        for (index, (name, _)) in Self.controlNames.enumerated() {
            try folder.write(name + ".txt", "text \(index)\n")
            let shown = try folder.run(["show", name])
            #expect(shown.status == 0, "\(name.debugDescription): \(shown.error)")
            #expect(shown.output == "text \(index)\n")
            #expect(try folder.run(["show", name + ".txt"]).output == "text \(index)\n")
        }
        // White space at either end is part of an existing name.
        try folder.write(" padded .txt", "padded\n")
        try folder.write("padded.txt", "not this one\n")
        #expect(try folder.run(["show", " padded "]).output == "padded\n")

        let renamed = try folder.run(["rename", "two\nlines", "Two lines"])
        #expect(renamed.status == 0, "\(renamed.error)")
        #expect(try folder.contents("Two lines.txt") == "text 1\n")
        #expect(!folder.exists("two\nlines.txt"))
        let deleted = try folder.run(["delete", "ctl\u{1B}[31mred"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(!folder.exists("ctl\u{1B}[31mred.txt"))
        #expect(deleted.output.hasSuffix("/ctl\\033[31mred.txt\n"), "\(deleted.output)")
        // A new name still may not hold one.
        let refused = try folder.run(["new", "new\u{1B}name"])
        #expect(refused.status == 2)
        #expect(!folder.exists("new\u{1B}name.txt"))
    }

    @Test func longNamesListAndShow() throws {
        let folder = try DocsFolder()
        for (index, name) in Self.longNames.enumerated() { try folder.write(name + ".txt", "long \(index)") }
        let listing = try JSONDecoder().decode(
            DocsListing.self, from: try folder.run(["list", "--json"]).outputData)
        #expect(Set(listing.documents.map(\.name)) == Set(Self.longNames))
        let lines = try folder.run(["list"]).output.split(separator: "\n")
        #expect(lines.count == Self.longNames.count)
        for (index, name) in Self.longNames.enumerated() {
            #expect(lines.contains { $0.hasSuffix("  " + name) })
            for given in [name, name + ".txt"] {
                let shown = try folder.run(["show", given])
                #expect(shown.status == 0, "\(shown.error)")
                #expect(shown.output == "long \(index)")
            }
        }
    }

    /// Needs SafeSave to shorten its temporary names by bytes (issue 10, item 5).
    @Test func newSavesNamesOf255BytesAndLongClusters() throws {
        let folder = try DocsFolder()
        for (index, name) in Self.longNames.enumerated() {
            let created = try folder.run(["new", name, "--from", "-"], input: Data("new \(index)".utf8))
            #expect(created.status == 0, "\(created.error)")
            #expect(created.output == folder.url(name + ".txt").path + "\n")
            #expect(try folder.run(["show", name]).output == "new \(index)")
        }
        let lines = try folder.run(["list"]).output.split(separator: "\n")
        #expect(lines.count == Self.longNames.count)
        for name in Self.longNames { #expect(lines.contains { $0.hasSuffix("  " + name) }) }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.container.path)
        #expect(Set(left) == Set(Self.longNames.map { $0 + ".txt" }))
    }
}
