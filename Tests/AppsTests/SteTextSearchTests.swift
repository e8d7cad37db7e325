import Foundation
import Testing
import TextContainer

@Suite("ste selection, words, wrap and search")
struct SteTextSearchTests {
    @Test func selectionTextAndReplacementSpanLines() {
        var buffer = TextBuffer(text: "one\ntwo\nthree")
        buffer.select(from: .init(line: 0, offset: 1), to: .init(line: 2, offset: 2))
        #expect(buffer.selection.map { buffer.text(in: $0) } == "ne\ntwo\nth")
        #expect(buffer.deleteSelection() == "ne\ntwo\nth")
        #expect(buffer.text == "oree")
        #expect(buffer.cursor == .init(line: 0, offset: 1))
        #expect(buffer.selection == nil)
        buffer.selectAll()
        buffer.replace(buffer.selection!, with: "a\nb")
        #expect(buffer.text == "a\nb")
        #expect(buffer.cursor == .init(line: 1, offset: 1))
    }

    @Test func cutLineTakesTheLineAndItsLineFeed() {
        var buffer = TextBuffer(text: "a\nb\nc")
        buffer.move(to: .init(line: 1, offset: 1))
        #expect(buffer.cutLine() == "b\n")
        #expect(buffer.text == "a\nc")
        #expect(buffer.cursor == .init(line: 1, offset: 0))
    }

    @Test func wordMovesTreatScriptsAndEmojiByCharacterClass() {
        var buffer = TextBuffer(text: "日本語、テキスト 👍🏽👍 e\u{301}t_é\nnext")
        var stops: [Int] = []
        for _ in 0..<6 {
            buffer.moveWordRight()
            stops.append(buffer.cursor.line == 0 ? buffer.cursor.offset : -1)
        }
        // 日本語 | 、 | テキスト | 👍🏽👍 | ét_é (the accent is part of its e) | next line
        #expect(stops == [3, 4, 8, 11, 16, -1])
        buffer.moveWordLeft()
        #expect(buffer.cursor == .init(line: 0, offset: 16))
        buffer.moveWordLeft()
        #expect(buffer.cursor == .init(line: 0, offset: 12))
        buffer.moveWordLeft()
        #expect(buffer.cursor == .init(line: 0, offset: 9))
    }

    @Test func wrapBreaksBetweenGraphemesCountingCells() {
        // 5 cells a row: a wide character that would straddle the edge starts the next row.
        let rows = TextBuffer.wrap("ab日本語cd👍🏽e", width: 5).map(\.offset)
        #expect(rows == [0, 3, 6])
        #expect(TextBuffer.wrap("", width: 5).map(\.offset) == [0])
        #expect(TextBuffer.wrap("abcde", width: 5).map(\.offset) == [0])
    }

    @Test func searchHonoursCaseWholeWordsAndGraphemeBoundaries() {
        #expect(TextSearch("cat").matches(in: "Cat concatenate CAT") == [0..<3, 7..<10, 16..<19])
        #expect(TextSearch("cat", isCaseSensitive: true).matches(in: "Cat concatenate CAT") == [7..<10])
        #expect(
            TextSearch("cat", matchesWholeWords: true).matches(in: "Cat concatenate CAT") == [0..<3, 16..<19])
        // "e" is not half of "é" written as e and a combining accent.
        #expect(TextSearch("e").matches(in: "e\u{301}e") == [1..<2])
        // Offsets count characters after wide ones and emoji.
        #expect(TextSearch("x").matches(in: "日本👍🏽x") == [3..<4])
        // A line whose case folding changes its length (ẞ folds to ß, a byte shorter) still
        // matches, at the right offset.
        #expect(TextSearch("x").matches(in: "ẞx") == [1..<2])
    }

    @Test func firstMatchGoesBothWaysAndWraps() {
        let lines = ["a cat", "b cat", "c cat"]
        let search = TextSearch("cat")
        #expect(
            search.firstMatch(in: lines, from: .init(line: 0, offset: 3))?.lowerBound
                == .init(line: 1, offset: 2))
        #expect(
            search.firstMatch(in: lines, from: .init(line: 2, offset: 3))?.lowerBound
                == .init(line: 0, offset: 2))
        #expect(
            search.firstMatch(in: lines, from: .init(line: 0, offset: 2), backwards: true)?.lowerBound
                == .init(line: 2, offset: 2))
        #expect(
            search.firstMatch(in: lines, from: .init(line: 2, offset: 2), backwards: true)?.lowerBound
                == .init(line: 1, offset: 2))
        #expect(TextSearch("dog").firstMatch(in: lines, from: .init(line: 1, offset: 0)) == nil)
    }

    @Test func replacingAllCountsAndStopsWhenCancelled() throws {
        let lines = ["cat cat", "no", "CAT concat"]
        let result = try #require(TextSearch("cat").replacingAll(in: lines, with: "dog"))
        #expect(result.count == 4)
        #expect(result.lines == ["dog dog", "no", "dog condog"])
        let many = [String](repeating: "cat", count: 5000)
        #expect(TextSearch("cat").replacingAll(in: many, with: "x") { true } == nil)
    }
}
