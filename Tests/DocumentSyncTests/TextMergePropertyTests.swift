import Foundation
import Testing

@testable import DocumentSync

/// Merges of texts edited at random, and of a big text: the merge must equal applying every
/// edit, whichever lines the diff happens to pair up.
@Suite struct TextMergePropertyTests {
    private func merged(_ text: String) -> TextMerge.Outcome { .merged(Data(text.utf8)) }

    @Test func twentyThousandLinesWithScatteredEditsMerge() {
        let base = (0..<20_000).map { "line \($0): " + String(repeating: "lorem ipsum ", count: 4) + "\n" }
        #expect(base.joined().utf8.count > 1 << 20)
        var mine: [Int: Edit] = [:]
        var theirs: [Int: Edit] = [:]
        for index in 0..<10 {
            mine[index * 2_000 + 7 * index] =
                [.replace(["mine \(index)\n"]), .delete, .insert(["new \(index)\n"])][index % 3]
            theirs[index * 2_000 + 1_000] =
                [.insert(["theirs \(index)\n", "more\n"]), .replace(["theirs \(index)\n"]), .delete][
                    index % 3]
        }
        let edits = mine.merging(theirs) { first, _ in first }
        #expect(edits.count == 20)
        let outcome = TextMerge.merge(
            base: Data(base.joined().utf8), mine: Data(apply(mine, to: base).joined().utf8),
            theirs: Data(apply(theirs, to: base).joined().utf8))
        #expect(outcome == merged(apply(edits, to: base).joined()))
    }

    /// One edit of the base at a line: replace the line, delete it, or insert lines before it.
    enum Edit: Equatable {
        case replace([String])
        case delete
        case insert([String])
    }

    /// `base` with `edits` (by the index of the line each is at; `base.count` for an insertion at
    /// the end) applied.
    private func apply(_ edits: [Int: Edit], to base: [String]) -> [String] {
        var lines: [String] = []
        for index in 0...base.count {
            let edit = edits[index]
            if case .insert(let new) = edit { lines += new }
            guard index < base.count else { break }
            switch edit {
            case .replace(let new): lines += new
            case .delete: break
            case .insert, nil: lines.append(base[index])
            }
        }
        return lines
    }

    /// Lines that differ from each other and from every base line, so that the diff of the base
    /// to an edited version has one answer; in a mix of terminators and scripts.
    private struct LineMaker {
        var generator: SeededGenerator
        private var count = 0
        private let words = ["plain", "caf\u{E9}", "cafe\u{301}", "日本語", "🙂", "tab\there", "x\ry"]

        init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

        mutating func line(terminated: Bool = true) -> String {
            count += 1
            let word = words.randomElement(using: &generator)!
            let terminator = terminated ? (Bool.random(using: &generator) ? "\n" : "\r\n") : ""
            return "\(count) \(word)\(terminator)"
        }

        mutating func lines(_ range: ClosedRange<Int>, lastTerminated: Bool = true) -> [String] {
            let count = Int.random(in: range, using: &generator)
            return (0..<count).map { line(terminated: lastTerminated || $0 < count - 1) }
        }
    }

    @Test func editsAtLeastTwoLinesApartMergeToAllTheEdits() {
        for seed in UInt64(0)..<500 {
            var maker = LineMaker(seed: seed)
            let endsWithNewline = Int.random(in: 0..<4, using: &maker.generator) != 0
            let base = maker.lines(40...60, lastTerminated: endsWithNewline)
            var all: [Int: Edit] = [:]
            var mine: [Int: Edit] = [:]
            var theirs: [Int: Edit] = [:]
            var index = Int.random(in: 0...2, using: &maker.generator)
            while index <= base.count {
                let isLast = index == base.count - 1
                let edit: Edit
                if index == base.count {
                    guard endsWithNewline else { break }
                    edit = .insert(maker.lines(1...3))
                } else {
                    switch Int.random(in: 0..<3, using: &maker.generator) {
                    case 0: edit = .replace(maker.lines(1...3, lastTerminated: !isLast || endsWithNewline))
                    case 1: edit = .delete
                    default: edit = .insert(maker.lines(1...3))
                    }
                }
                all[index] = edit
                switch Int.random(in: 0..<5, using: &maker.generator) {
                case 0, 1: mine[index] = edit
                case 2, 3: theirs[index] = edit
                default:
                    mine[index] = edit
                    theirs[index] = edit
                }
                index += Int.random(in: 2...6, using: &maker.generator)
            }
            let outcome = TextMerge.mergeLines(
                base: Data(base.joined().utf8), mine: Data(apply(mine, to: base).joined().utf8),
                theirs: Data(apply(theirs, to: base).joined().utf8))
            let expected = TextMerge.Outcome.merged(Data(apply(all, to: base).joined().utf8))
            #expect(outcome == expected, "seed \(seed)")
        }
    }

    @Test func editsOnOneSideMergeToThatSide() {
        // Few distinct lines, so that the diff has many equally short answers to choose from.
        let alphabet = ["a\n", "b\n", "\n", "}\n", "a\r\n", "\u{E9}\n"]
        for seed in UInt64(0)..<500 {
            var generator = SeededGenerator(seed: seed)
            func lines(_ range: ClosedRange<Int>) -> [String] {
                (0..<Int.random(in: range, using: &generator)).map { _ in
                    alphabet.randomElement(using: &generator)!
                }
            }
            var base = lines(0...60)
            if Bool.random(using: &generator) { base.append("no newline") }
            var edits: [Int: Edit] = [:]
            for index in 0...base.count where Int.random(in: 0..<4, using: &generator) == 0 {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where index < base.count: edits[index] = .replace(lines(0...3))
                case 1 where index < base.count: edits[index] = .delete
                default: edits[index] = .insert(lines(1...3))
                }
            }
            let baseData = Data(base.joined().utf8)
            let side = Data(apply(edits, to: base).joined().utf8)
            #expect(
                TextMerge.mergeLines(base: baseData, mine: side, theirs: baseData) == .merged(side),
                "seed \(seed)")
            #expect(
                TextMerge.mergeLines(base: baseData, mine: baseData, theirs: side) == .merged(side),
                "seed \(seed)")
            #expect(
                TextMerge.mergeLines(base: baseData, mine: side, theirs: side) == .merged(side),
                "seed \(seed)")
        }
    }
}
