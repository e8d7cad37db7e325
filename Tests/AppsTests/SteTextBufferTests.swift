import Foundation
import Testing
import TextContainer

@Suite("ste text buffer")
struct SteTextBufferTests {
    @Test func roundTripsLineFeedsAndCarriageReturns() {
        for text in ["", "one", "one\n", "a\r\nb\r\n", "\n\n", "日本語\nx"] {
            #expect(TextBuffer(text: text).text == text)
            #expect(TextBuffer(text: text).utf8Count == text.utf8.count)
        }
    }

    @Test func insertsAndSplitsLines() {
        var buffer = TextBuffer(text: "helloworld")
        buffer.move(to: .init(line: 0, offset: 5))
        buffer.insert(", ")
        #expect(buffer.text == "hello, world")
        buffer.insert("\n")
        #expect(buffer.lines == ["hello, ", "world"])
        #expect(buffer.cursor == .init(line: 1, offset: 0))
        buffer.insert("a\nb\nc")
        #expect(buffer.lines == ["hello, ", "a", "b", "cworld"])
        #expect(buffer.cursor == .init(line: 3, offset: 1))
    }

    @Test func deletesAcrossLineBoundaries() {
        var buffer = TextBuffer(text: "ab\ncd")
        buffer.move(to: .init(line: 1, offset: 0))
        let changed1 = buffer.deleteBackward()
        #expect(changed1)
        #expect(buffer.text == "abcd")
        #expect(buffer.cursor == .init(line: 0, offset: 2))
        buffer.moveToLineEnd()
        let changed2 = buffer.deleteForward()
        #expect(!changed2)
        buffer.move(to: .init(line: 0, offset: 0))
        let changed3 = buffer.deleteBackward()
        #expect(!changed3)
        let changed4 = buffer.deleteForward()
        #expect(changed4)
        #expect(buffer.text == "bcd")
    }

    @Test func wideCharactersTakeTwoColumnsAndMoveAsOne() {
        var buffer = TextBuffer(text: "日本語abc")
        buffer.moveRight()
        #expect(buffer.displayColumn(of: buffer.cursor) == 2)
        buffer.insert("x")
        #expect(buffer.text == "日x本語abc")
        // A grapheme of several scalars is one step of the cursor.
        var flags = TextBuffer(text: "e\u{301}z")
        flags.moveRight()
        #expect(flags.cursor.offset == 1)
        #expect(flags.displayColumn(of: flags.cursor) == 1)
        let changed5 = flags.deleteBackward()
        #expect(changed5)
        #expect(flags.text == "z")
    }

    @Test func verticalMovementKeepsTheDisplayColumn() {
        var buffer = TextBuffer(text: "abcdef\n日本\nabcdef")
        buffer.move(to: .init(line: 0, offset: 4))
        buffer.moveVertically(by: 1)
        #expect(buffer.cursor == .init(line: 1, offset: 2))  // column 4 is after 日本
        buffer.moveVertically(by: 1)
        #expect(buffer.cursor == .init(line: 2, offset: 4))
        buffer.move(to: .init(line: 0, offset: 3))
        buffer.moveVertically(by: 1)
        #expect(buffer.cursor == .init(line: 1, offset: 1))  // column 3 falls inside 本
    }

    @Test func findWrapsAroundAndIgnoresCase() {
        let buffer = TextBuffer(text: "Alpha\nbeta\nALPHA beta")
        #expect(buffer.find("beta", from: .init(line: 0, offset: 0)) == .init(line: 1, offset: 0))
        #expect(buffer.find("alpha", from: .init(line: 0, offset: 1)) == .init(line: 2, offset: 0))
        #expect(buffer.find("alpha", from: .init(line: 2, offset: 1)) == .init(line: 0, offset: 0))
        #expect(buffer.find("gamma", from: .init(line: 0, offset: 0)) == nil)
    }

    @Test func replacingTheTextKeepsTheCursorClamped() {
        var buffer = TextBuffer(text: "one\ntwo\nthree")
        buffer.move(to: .init(line: 2, offset: 4))
        buffer.replaceText("one\ntwo")
        #expect(buffer.cursor == .init(line: 1, offset: 3))
        buffer.replaceText("a much longer line\nsecond line here")
        #expect(buffer.cursor == .init(line: 1, offset: 3))
    }

    @Test func splitsLargeTextsQuickly() {
        let line = String(repeating: "x", count: 79) + "\n"
        let text = String(repeating: line, count: 100_000)  // 8 MB
        let clock = ContinuousClock()
        let elapsed = clock.measure { _ = TextBuffer(text: text) }
        #expect(TextBuffer(text: text).lines.count == 100_001)
        #expect(elapsed < .seconds(5))
    }
}
