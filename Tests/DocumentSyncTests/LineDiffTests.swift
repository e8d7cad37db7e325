import Foundation
import Testing

@testable import DocumentSync

@Suite struct LineDiffTests {
    /// `old` with `hunks` applied: what the diff says `new` is.
    private func apply(_ hunks: [LineDiff.Hunk], _ old: [Int], _ new: [Int]) -> [Int] {
        var result: [Int] = []
        var kept = 0
        for hunk in hunks {
            result += old[kept..<hunk.old.lowerBound]
            result += new[hunk.new]
            kept = hunk.old.upperBound
        }
        return result + old[kept...]
    }

    /// How many lines the hunks remove and insert.
    private func edits(_ hunks: [LineDiff.Hunk]) -> Int {
        hunks.reduce(0) { $0 + $1.old.count + $1.new.count }
    }

    @Test func findsTheFewestChangedLines() {
        let hunks = LineDiff.hunks(from: ["a", "b", "c", "d"], to: ["a", "B", "c", "d", "e"])
        #expect(
            hunks == [LineDiff.Hunk(old: 1..<2, new: 1..<2), LineDiff.Hunk(old: 4..<4, new: 4..<5)])
        // A line moved from the end to the start: one deletion and one insertion, not three of each.
        let moved = LineDiff.hunks(from: ["1", "2", "3", "4"], to: ["4", "1", "2", "3"])
        #expect(edits(moved) == 2, "\(moved)")
        #expect(LineDiff.hunks(from: ["same"], to: ["same"]).isEmpty)
        #expect(LineDiff.hunks(from: [String](), to: ["new"]) == [LineDiff.Hunk(old: 0..<0, new: 0..<1)])
        // Lines are their bytes, as the merge compares them: NFC and NFD "café" differ.
        #expect(
            LineDiff.hunks(from: ["caf\u{E9}"], to: ["cafe\u{301}"]) == [
                LineDiff.Hunk(old: 0..<1, new: 0..<1)
            ])
    }

    @Test(arguments: 0..<40) func randomEditsAreMinimalAndRebuildTheNewText(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed))
        let old = (0..<Int(generator.next() % 60)).map { _ in Int(generator.next() % 8) }
        var new = old
        for _ in 0..<Int(generator.next() % 10) {
            let at = new.isEmpty ? 0 : Int(generator.next() % UInt64(new.count))
            switch generator.next() % 3 {
            case 0: new.insert(Int(generator.next() % 8), at: at)
            case 1: if !new.isEmpty { new.remove(at: at) }
            default: if !new.isEmpty { new[at] = Int(generator.next() % 8) }
            }
        }
        let hunks = LineDiff.hunks(from: old, to: new, mostEdits: LineDiff.mostEdits)
        #expect(apply(hunks, old, new) == new)
        // As few changed lines as Swift's own (unbounded) diff finds.
        #expect(edits(hunks) == new.difference(from: old).count, "\(old) → \(new)")
        for (first, second) in zip(hunks, hunks.dropFirst()) {
            #expect(first.old.upperBound < second.old.lowerBound, "hunks touch: \(hunks)")
        }
    }

    /// Past the bound the diff is no longer minimal but still right, and lines found once in
    /// each text keep their place: a block of shared lines between two rewritten halves is
    /// kept.
    @Test func pastItsBoundTheDiffStaysRightAndKeepsUniqueLines() {
        let shared = (0..<50).map { 1_000_000 + $0 }
        let old = (0..<300).map { $0 % 7 } + shared + (0..<300).map { $0 % 5 }
        let new = (0..<300).map { 10 + $0 % 3 } + shared + (0..<300).map { 20 + $0 % 4 }
        let hunks = LineDiff.hunks(from: old, to: new, mostEdits: 100)
        #expect(apply(hunks, old, new) == new)
        #expect(hunks.count == 2, "\(hunks)")
        #expect(hunks.first?.old == 0..<300)
    }

    /// Two unrelated texts of 200,000 lines: the bound keeps this to a few passes over them.
    @Test func twoUnrelatedBigTextsDiffQuickly() {
        let old = (0..<200_000).map { $0 }
        let new = (0..<200_000).map { -1 - $0 }
        let hunks = LineDiff.hunks(from: old, to: new, mostEdits: LineDiff.mostEdits)
        #expect(hunks == [LineDiff.Hunk(old: 0..<200_000, new: 0..<200_000)])
    }
}

@Suite struct TextMergeMarkingTests {
    private let labels = (mine: "this device", theirs: "laptop (device 1F0C29A3), 2026-12-06 12:01")

    private func marked(_ base: String?, _ mine: String, _ theirs: String) -> TextMerge.MarkedOutcome {
        TextMerge.markedMerge(
            base: base.map { Data($0.utf8) }, mine: Data(mine.utf8), theirs: Data(theirs.utf8), labels: labels
        )
    }

    private func text(_ text: String, _ overlaps: Int) -> TextMerge.MarkedOutcome {
        .merged(Data(text.utf8), overlaps: overlaps)
    }

    @Test func aCleanMergeIsTheSyncMerge() {
        let base = "one\ntwo\nthree\nfour\n"
        let mine = "ONE\ntwo\nthree\nfour\n"
        let theirs = "one\ntwo\nthree\nFOUR\n"
        #expect(marked(base, mine, theirs) == text("ONE\ntwo\nthree\nFOUR\n", 0))
        #expect(
            TextMerge.merge(base: Data(base.utf8), mine: Data(mine.utf8), theirs: Data(theirs.utf8))
                == .merged(Data("ONE\ntwo\nthree\nFOUR\n".utf8)))
    }

    @Test func partsBothChangedAreMarkedWithBothSidesAndTheRestMerged() {
        let base = "title\nsame\nline three\nend\n"
        let mine = "Title\nsame\nline 3 here\nend\n"
        let theirs = "title\nsame\nline three there\nend\n"
        #expect(
            marked(base, mine, theirs)
                == text(
                    "Title\nsame\n<<<<<<< this device\nline 3 here\n=======\nline three there\n"
                        + ">>>>>>> laptop (device 1F0C29A3), 2026-12-06 12:01\nend\n", 1))
    }

    @Test func withoutABaseEveryDifferenceIsMarked() {
        #expect(
            marked(nil, "a\nmine\nb\n", "a\ntheirs\nb\nadded\n")
                == text(
                    "a\n<<<<<<< this device\nmine\n=======\ntheirs\n>>>>>>> \(labels.theirs)\nb\n"
                        + "<<<<<<< this device\n=======\nadded\n>>>>>>> \(labels.theirs)\n", 2))
        #expect(marked(nil, "same\n", "same\n") == text("same\n", 0))
    }

    /// A last line without a newline gains one inside the markers; CRLF texts get CRLF
    /// markers; a label is one line.
    @Test func markersStartAndEndLines() {
        #expect(
            marked("x", "mine", "theirs")
                == text("<<<<<<< this device\nmine\n=======\ntheirs\n>>>>>>> \(labels.theirs)\n", 1))
        let crlf = TextMerge.markedMerge(
            base: Data("a\r\nb\r\n".utf8), mine: Data("a\r\nB\r\n".utf8), theirs: Data("a\r\nbee\r\n".utf8),
            labels: ("me", "evil\nname\u{1B}[2J"))
        #expect(crlf == text("a\r\n<<<<<<< me\r\nB\r\n=======\r\nbee\r\n>>>>>>> evil name [2J\r\n", 1))
    }

    @Test func aSideThatIsNotTextIsRefused() {
        let outcome = TextMerge.markedMerge(
            base: nil, mine: Data("text\n".utf8), theirs: Data([0xFF, 0x00]), labels: labels)
        guard case .notText(let reason) = outcome else {
            Issue.record("merged bytes that are not text: \(outcome)")
            return
        }
        #expect(reason.hasPrefix("theirs "), "\(reason)")
    }
}
