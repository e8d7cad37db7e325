import DocumentSync
import Testing

@Suite struct SeededGeneratorTests {
    @Test func sameSeedGivesSameSequence() {
        var a = SeededGenerator(seed: 7)
        var b = SeededGenerator(seed: 7)
        #expect((0..<100).map { _ in a.next() } == (0..<100).map { _ in b.next() })
    }
}
