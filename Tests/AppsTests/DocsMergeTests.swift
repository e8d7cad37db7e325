import DocumentKit
import Foundation
import Testing

/// `docs resolve NAME --merge`: the three-way merge of a sync conflict, with the parts both
/// sides changed marked in the text.
@Suite("docs: resolve --merge")
struct DocsMergeTests {
    static let device = "1F0C29A3-5B7E-4C11-9D2A-6E8F00112233"

    /// A document whose file holds `mine` and whose history holds `base`, with one unresolved
    /// conflict version holding `theirs` from another device (laptop), recorded as sync records
    /// it: with the hash of the base, unless `recordsBase` is false.
    private func folder(
        base: String, mine: String, theirs: String, theirsBytes: Data? = nil, recordsBase: Bool = true
    ) throws
        -> (DocsFolder, VersionStore)
    {
        let folder = try DocsFolder()
        #expect(try folder.run(["new", "Notes", "--from", "-"], input: Data(base.utf8)).status == 0)
        let store = VersionStore(root: folder.dataHome.appendingPathComponent("DocumentKit/Versions"))
        let url = folder.url("Notes.txt")
        // Saved over the base: the base goes to the history, as a save of an editor puts it.
        try store.addOfItem(at: url, withContentsOf: url)
        try folder.write("Notes.txt", mine)
        let incoming = folder.dataHome.appendingPathComponent("theirs.txt")
        try (theirsBytes ?? Data(theirs.utf8)).write(to: incoming)
        try store.addConflictOfItem(
            at: url, withContentsOf: incoming, origin: VersionOrigin(computer: "laptop", device: Self.device),
            modificationDate: Date(timeIntervalSince1970: 1_765_000_000),
            mergeBase: recordsBase ? ContentHash(of: Data(base.utf8)).hex : nil)
        return (folder, store)
    }

    @Test func aCleanMergeTakesBothSidesChangesAndResolvesKeepingBothVersions() throws {
        let (folder, store) = try folder(
            base: "one\ntwo\nthree\nfour\n", mine: "ONE\ntwo\nthree\nfour\n",
            theirs: "one\ntwo\nthree\nFOUR\n")
        let result = try folder.run(["resolve", "Notes", "--merge"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("Merged cleanly"), "\(result.output)")
        #expect(try folder.contents("Notes.txt") == "ONE\ntwo\nthree\nFOUR\n")
        // Resolved, and nothing lost: the file before the merge and their version are kept.
        let url = folder.url("Notes.txt")
        #expect(store.unresolvedConflictVersionsOfItem(at: url).isEmpty)
        let kept = Set(store.otherVersionsOfItem(at: url).compactMap { try? Data(contentsOf: $0.url) })
        #expect(kept.contains(Data("ONE\ntwo\nthree\nfour\n".utf8)))
        #expect(kept.contains(Data("one\ntwo\nthree\nFOUR\n".utf8)))
        #expect(try folder.run(["resolve", "Notes", "--merge"]).status == 1, "the conflict is gone")
    }

    @Test func aPartBothSidesChangedIsMarkedNamingTheOtherDevice() throws {
        let (folder, _) = try folder(
            base: "title\nsame\nend\n", mine: "title here\nsame\nend\n", theirs: "title there\nsame\nEND\n")
        let result = try folder.run(["resolve", "Notes", "--merge"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("1 part both sides changed marked"), "\(result.output)")
        let text = try folder.contents("Notes.txt")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(4)) == ["<<<<<<< this device", "title here", "=======", "title there"])
        #expect(lines[4].hasPrefix(">>>>>>> laptop (device 1F0C29A3), "), "\(text)")
        #expect(Array(lines.suffix(3)) == ["same", "END", ""], "their change apart from mine is merged")
    }

    @Test func withoutTheBaseEveryDifferenceIsMarked() throws {
        let (folder, _) = try folder(
            base: "one\ntwo\n", mine: "ONE\ntwo\n", theirs: "one\ntwo\nthree\n", recordsBase: false)
        let result = try folder.run(["resolve", "Notes", "--merge"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("No version both sides started from"), "\(result.output)")
        let text = try folder.contents("Notes.txt")
        #expect(text.components(separatedBy: "<<<<<<< this device\n").count == 3, "\(text)")
        #expect(text.hasPrefix("<<<<<<< this device\nONE\n=======\none\n>>>>>>> laptop"), "\(text)")
    }

    /// Bytes that are not text (a server's, or another program's) are not merged: the
    /// document and the conflict stay as they are.
    @Test func aSideThatIsNotTextIsNotMerged() throws {
        let (folder, store) = try folder(
            base: "a\n", mine: "b\n", theirs: "", theirsBytes: Data([0x63, 0xFF, 0x0A]))
        let url = folder.url("Notes.txt")
        let result = try folder.run(["resolve", "Notes", "--merge"])
        #expect(result.status == 1)
        #expect(result.error.contains("cannot be merged: theirs is not valid UTF-8 text"), "\(result.error)")
        #expect(try folder.contents("Notes.txt") == "b\n")
        #expect(store.unresolvedConflictVersionsOfItem(at: url).count == 1)
    }

    @Test func mergeAndKeepTogetherAreAUsageError() throws {
        let (folder, _) = try folder(base: "a\n", mine: "b\n", theirs: "c\n")
        let result = try folder.run(["resolve", "Notes", "--merge", "--keep", "mine"])
        #expect(result.status == 2)
        #expect(result.error.contains("--merge and --keep"), "\(result.error)")
        #expect(try folder.run(["list", "--merge"]).status == 2)
        #expect(try folder.run(["resolve", "--help"]).output.contains("--merge"))
        #expect(try folder.contents("Notes.txt") == "b\n")
    }
}
