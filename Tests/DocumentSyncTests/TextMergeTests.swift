import Foundation
import Testing

@testable import DocumentSync

@Suite struct TextMergeTests {
    /// Merges `mine` and `theirs`, and checks that swapping them gives the same outcome: the
    /// merge has no favourite side.
    private func merge(
        _ base: String, _ mine: String, _ theirs: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> TextMerge.Outcome {
        let outcome = TextMerge.merge(base: Data(base.utf8), mine: Data(mine.utf8), theirs: Data(theirs.utf8))
        let swapped = TextMerge.merge(base: Data(base.utf8), mine: Data(theirs.utf8), theirs: Data(mine.utf8))
        switch (outcome, swapped) {
        case (.merged(let a), .merged(let b)):
            #expect(a == b, "swapping mine and theirs merged differently", sourceLocation: sourceLocation)
        case (.conflict, .conflict):
            break
        default:
            Issue.record("swapping mine and theirs changed the outcome", sourceLocation: sourceLocation)
        }
        return outcome
    }

    private func merged(_ text: String) -> TextMerge.Outcome { .merged(Data(text.utf8)) }

    private func reason(of outcome: TextMerge.Outcome) -> String? {
        if case .conflict(let reason) = outcome { return reason }
        return nil
    }

    // MARK: Equal versions

    @Test func equalSidesMergeToThem() {
        #expect(merge("a\nb\n", "a\nB\n", "a\nB\n") == merged("a\nB\n"))
        let binary = Data([0, 1, 2, 0xFF])
        #expect(TextMerge.merge(base: Data("x".utf8), mine: binary, theirs: binary) == .merged(binary))
    }

    @Test func anUnchangedSideGivesTheOtherSide() {
        #expect(merge("a\nb\n", "a\nb\n", "a\nb\nc\n") == merged("a\nb\nc\n"))
        #expect(merge("a\nb\n", "", "a\nb\n") == merged(""))
        // Nothing needs reading as text when one side did not change, so this is no conflict.
        let binary = Data([0, 1, 2])
        #expect(TextMerge.merge(base: binary, mine: binary, theirs: Data([9])) == .merged(Data([9])))
        #expect(TextMerge.merge(base: binary, mine: Data([8]), theirs: binary) == .merged(Data([8])))
    }

    // MARK: Combining changes

    @Test func changesApartCombine() {
        let base = "1\n2\n3\n4\n5\n6\n"
        #expect(
            merge(base, "one\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n5\nsix\n") == merged("one\n2\n3\n4\n5\nsix\n"))
        // One unchanged line between the two changes is enough.
        #expect(
            merge(base, "1\n2\nthree\n4\n5\n6\n", "1\n2\n3\n4\nfive\n6\n")
                == merged("1\n2\nthree\n4\nfive\n6\n"))
        // Several changes on each side, interleaved: an insertion, a deletion, a replacement.
        #expect(
            merge(base, "0\n1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n5\nsix\nseven\n")
                == merged("0\n1\n2\n3\n4\n5\nsix\nseven\n"))
        #expect(
            merge(base, "1\n3\n4\n5\n6\n", "1\n2\n3\n4\nfive\nFIVE\n6\n")
                == merged("1\n3\n4\nfive\nFIVE\n6\n"))
    }

    @Test func theSameChangeOnBothSidesCountsOnce() {
        let base = "1\n2\n3\n4\n5\n6\n7\n"
        let mine = "one\n2\n3\nfour\nFOUR\n5\n6\n7\n"
        let theirs = "1\n2\n3\nfour\nFOUR\n5\n6\nseven\n"
        #expect(merge(base, mine, theirs) == merged("one\n2\n3\nfour\nFOUR\n5\n6\nseven\n"))
    }

    @Test func overlappingChangesConflict() {
        let outcome = merge("1\n2\n3\n4\n5\n", "1\nTWO\nTHREE\n4\n5\n", "1\n2\nthree\nfour\n5\n")
        #expect(reason(of: outcome) == "mine and theirs both changed lines 2-4 of the base")
        #expect(
            reason(of: merge("1\n2\n3\n", "1\nb\n3\n", "1\nB\n3\n"))
                == "mine and theirs both changed line 2 of the base")
    }

    /// Only the very same change counts once: a side that made the other's change and more
    /// changed the same lines differently.
    @Test func aChangeThatContainsTheOtherSidesChangeConflicts() {
        let base = "1\n2\n3\n4\n5\n6\n"
        #expect(reason(of: merge(base, "1\n2\nX\n4\n5\n6\n", "1\n2\nX\n5\n6\n")) != nil)
        #expect(reason(of: merge(base, "1\n2\n3\nX\n5\n6\n", "1\n2\nX\n5\n6\n")) != nil)
        #expect(reason(of: merge(base, "1\n2\nX\n4\n5\n6\n", "1\n2\nX\nY\n4\n5\n6\n")) != nil)
    }

    /// diff3 and git do the same: neighbouring changes may not make sense together.
    @Test func changesToNeighbouringLinesConflict() {
        let base = "1\n2\n3\n4\n5\n"
        #expect(reason(of: merge(base, "1\n2\nthree\n4\n5\n", "1\n2\n3\nfour\n5\n")) != nil)
        // An insertion right after or right before a line the other side changed touches it.
        #expect(reason(of: merge(base, "1\n2\nthree\n4\n5\n", "1\n2\n3\nnew\n4\n5\n")) != nil)
        #expect(reason(of: merge(base, "1\n2\nthree\n4\n5\n", "1\nnew\n2\n3\n4\n5\n")) == nil)
        #expect(reason(of: merge(base, "1\n2\nthree\n4\n5\n", "1\n2\nnew\n3\n4\n5\n")) != nil)
        // A deletion next to an edit too.
        #expect(reason(of: merge(base, "1\n2\nthree\n4\n5\n", "1\n2\n3\n5\n")) != nil)
    }

    @Test func reasonCountsTheOverlaps() {
        let outcome = merge("1\n2\n3\n4\n5\n", "a\n2\n3\n4\ne\n", "A\n2\n3\n4\nE\n")
        #expect(
            reason(of: outcome)
                == "mine and theirs both changed line 1 of the base (and 1 more overlapping changes)")
    }

    // MARK: Deletions and insertions

    @Test func bothDeletingTheSameLinesMerges() {
        let base = "1\n2\n3\n4\n5\n6\n"
        #expect(merge(base, "1\n4\n5\n6\n", "1\n4\n5\nsix\n") == merged("1\n4\n5\nsix\n"))
    }

    @Test func bothDeletingDifferentOverlappingLinesConflicts() {
        #expect(reason(of: merge("1\n2\n3\n4\n5\n", "1\n4\n5\n", "1\n2\n5\n")) != nil)
    }

    @Test func deletingLinesTheOtherEditedConflicts() {
        let base = "1\n2\n3\n4\n5\n"
        #expect(
            reason(of: merge(base, "1\n5\n", "1\n2\nTHREE\n4\n5\n"))
                == "mine and theirs both changed lines 2-4 of the base")
        #expect(reason(of: merge(base, "1\n2\n4\n5\n", "1\n2\nthree\n4\n5\n")) != nil)
    }

    @Test func differentInsertionsAtOnePlaceConflict() {
        let outcome = merge("1\n2\n3\n", "1\nmine\n2\n3\n", "1\ntheirs\n2\n3\n")
        #expect(
            reason(of: outcome) == "mine and theirs both inserted different lines after line 1 of the base")
        #expect(
            reason(of: merge("1\n", "mine\n1\n", "theirs\n1\n"))
                == "mine and theirs both inserted different lines at the start of the base")
        // Both appended, different lines.
        #expect(reason(of: merge("1\n2\n", "1\n2\nmine\n", "1\n2\ntheirs\n")) != nil)
        // One inserted lines that begin with the other's: still different insertions.
        #expect(reason(of: merge("1\n2\n", "1\nx\n2\n", "1\nx\ny\n2\n")) != nil)
    }

    @Test func theSameInsertionAtOnePlaceMergesOnce() {
        #expect(
            merge("1\n2\n3\n4\n", "1\nnew\n2\n3\n4\n", "1\nnew\n2\n3\nfour\n")
                == merged("1\nnew\n2\n3\nfour\n"))
    }

    @Test func insertionsAtDifferentPlacesCombine() {
        #expect(
            merge("1\n2\n3\n", "1\nmine\n2\n3\n", "1\n2\ntheirs\n3\n") == merged("1\nmine\n2\ntheirs\n3\n"))
    }

    // MARK: Bytes

    @Test func crlfLinesKeepTheirTerminators() {
        let base = "1\r\n2\r\n3\r\n4\r\n"
        #expect(
            merge(base, "one\r\n2\r\n3\r\n4\r\n", "1\r\n2\r\n3\r\nfour\r\n")
                == merged("one\r\n2\r\n3\r\nfour\r\n"))
        // A line whose terminator alone changed is a changed line.
        #expect(merge(base, "1\n2\r\n3\r\n4\r\n", "1\r\n2\r\n3\r\n4\n") == merged("1\n2\r\n3\r\n4\n"))
        #expect(reason(of: merge(base, "1\n2\r\n3\r\n4\r\n", "one\r\n2\r\n3\r\n4\r\n")) != nil)
        // Mixed terminators in one file, and a lone "\r" inside a line.
        #expect(
            merge("a\r\nb\nc\rd\ne\r\n", "A\r\nb\nc\rd\ne\r\n", "a\r\nb\nc\rd\nE\n")
                == merged("A\r\nb\nc\rd\nE\n"))
    }

    @Test func aMissingFinalNewlineStaysMissing() {
        #expect(merge("1\n2\n3\n4", "one\n2\n3\n4", "1\n2\nthree\n4") == merged("one\n2\nthree\n4"))
        #expect(merge("1\n2\n3\n4", "one\n2\n3\n4", "1\n2\n3\nfour") == merged("one\n2\n3\nfour"))
    }

    @Test func anAppendAfterALastLineWithoutNewlineCombinesWithEditsAbove() {
        // Appending gives the old last line its "\n": that line changed.
        #expect(merge("a\nb\nc", "A\nb\nc", "a\nb\nc\nd") == merged("A\nb\nc\nd"))
        #expect(merge("a\nb\nc", "A\nb\nc", "a\nb\nc\nd\n") == merged("A\nb\nc\nd\n"))
        #expect(merge("a\nb\nc", "A\nb\nc", "a\nb\nc\n") == merged("A\nb\nc\n"))
        // ...so it touches an edit of the line before the last one.
        #expect(reason(of: merge("a\nb\nc", "a\nB\nc", "a\nb\nc\nd")) != nil)
        // Both sides appended the same: once.
        #expect(merge("a\nb\nc", "A\nb\nc\nd", "a\nb\nc\nd") == merged("A\nb\nc\nd"))
    }

    @Test func linesAreComparedAsBytesNeverNormalised() {
        let nfc = "caf\u{E9}\n"
        let nfd = "cafe\u{301}\n"
        #expect(nfc == nfd)  // as Strings they are equal; as bytes they are not
        let base = "title\n\(nfc)x\ny\n"
        // One side rewrote the line in NFD: its bytes win over the other side's far edit.
        let outcome = merge(base, "title\n\(nfd)x\ny\n", "title\n\(nfc)x\nY\n")
        #expect(outcome == merged("title\n\(nfd)x\nY\n"))
        if case .merged(let data) = outcome { #expect(Array(data) == Array("title\n\(nfd)x\nY\n".utf8)) }
        // Both rewrote the line, one in NFC and one in NFD: different bytes, a conflict.
        #expect(reason(of: merge("title\ncafe\nx\n", "title\n\(nfc)x\n", "title\n\(nfd)x\n")) != nil)
        // Other scripts and emoji, several bytes per character.
        #expect(
            merge("日本\n🙂\nΩ\nend\n", "日本語\n🙂\nΩ\nend\n", "日本\n🙂\nΩ\n🎉\n") == merged("日本語\n🙂\nΩ\n🎉\n"))
    }

    // MARK: Edge cases

    @Test func bothCreatingFromAnEmptyBase() {
        #expect(merge("", "new\n", "new\n") == merged("new\n"))
        #expect(
            reason(of: merge("", "mine\n", "theirs\n"))
                == "mine and theirs both inserted different lines at the start of the base")
        // Equal first lines do not make the rest mergeable: both inserted at the one place.
        #expect(reason(of: merge("", "title\nmine\n", "title\ntheirs\n")) != nil)
        #expect(
            reason(of: TextMerge.mergeLines(base: Data(), mine: Data("a".utf8), theirs: Data("b".utf8)))
                != nil)
    }

    @Test func aSideThatDeletedEverything() {
        let base = "1\n2\n3\n"
        #expect(
            reason(of: merge(base, "", "1\nTWO\n3\n")) == "mine and theirs both changed lines 1-3 of the base"
        )
        #expect(merge(base, "", "") == merged(""))
        #expect(TextMerge.mergeLines(base: Data(base.utf8), mine: Data(), theirs: Data()) == merged(""))
        #expect(
            TextMerge.mergeLines(base: Data(base.utf8), mine: Data(), theirs: Data(base.utf8)) == merged(""))
    }

    enum NotText: String, CaseIterable, Sendable {
        case nul, loneContinuationByte, truncatedSequence, overlongEncoding, surrogate, invalidByte

        var bytes: [UInt8] {
            switch self {
            case .nul: [0x61, 0x00, 0x0A]
            case .loneContinuationByte: [0x61, 0x80, 0x0A]
            case .truncatedSequence: [0x61, 0xE6, 0x97, 0x0A]
            case .overlongEncoding: [0xC0, 0xAF, 0x0A]
            case .surrogate: [0xED, 0xA0, 0x80, 0x0A]
            case .invalidByte: [0xFF, 0x0A]
            }
        }
    }

    @Test(arguments: NotText.allCases, ["base", "mine", "theirs"])
    func aVersionThatIsNotTextConflicts(_ kind: NotText, _ version: String) throws {
        let text = Array("1\n2\n3\n".utf8)
        var versions = [
            "base": text, "mine": Array("one\n2\n3\n".utf8), "theirs": Array("1\n2\nthree\n".utf8),
        ]
        versions[version] = text + kind.bytes
        let outcome = TextMerge.merge(
            base: Data(versions["base"]!), mine: Data(versions["mine"]!), theirs: Data(versions["theirs"]!))
        let why = try #require(reason(of: outcome))
        #expect(why.hasPrefix(version + " "))
        #expect(why.contains(kind == .nul ? "NUL" : "UTF-8"))
    }

    @Test func aVersionOverTheSizeCapConflicts() throws {
        #expect(TextMerge.mostBytes == 4 * 1024 * 1024)
        let line = String(repeating: "x", count: 63) + "\n"
        let lines = Array(repeating: line, count: TextMerge.mostBytes / 64)
        var mine = lines
        mine[0] = "first" + String(repeating: "y", count: 58) + "\n"
        var theirs = lines
        theirs[lines.count - 1] = "last" + String(repeating: "z", count: 59) + "\n"
        let base = Data(lines.joined().utf8)
        #expect(base.count == TextMerge.mostBytes)
        let atTheCap = TextMerge.merge(
            base: base, mine: Data(mine.joined().utf8), theirs: Data(theirs.joined().utf8))
        var expected = mine
        expected[lines.count - 1] = theirs[lines.count - 1]
        #expect(atTheCap == merged(expected.joined()))

        theirs.append("one byte too many")
        let overTheCap = TextMerge.merge(
            base: base, mine: Data(mine.joined().utf8), theirs: Data(theirs.joined().utf8))
        let why = try #require(reason(of: overTheCap))
        #expect(why.hasPrefix("theirs is \(TextMerge.mostBytes + 17) bytes"))
    }
}
