import Foundation
import Testing

@testable import DocumentSync

@Suite struct RemotePathTests {
    @Test func componentsAreNormalisedToNFC() {
        let decomposed = RemotePath("Caf\u{65}\u{301}/r\u{e9}sum\u{65}\u{301}.txt")
        let composed = RemotePath("Caf\u{e9}/r\u{e9}sum\u{e9}.txt")
        #expect(decomposed == composed)
        #expect(decomposed.hashValue == composed.hashValue)
        #expect(Array(decomposed.string.utf8) == Array("Caf\u{e9}/r\u{e9}sum\u{e9}.txt".utf8))
        #expect(Array(RemotePath.root.appending("e\u{301}").name.utf8) == Array("\u{e9}".utf8))
        #expect(Array(RemotePath(components: ["e\u{301}"]).string.utf8) == [0xC3, 0xA9])
    }

    @Test func emptyComponentsMeanNothing() {
        #expect(RemotePath("/a//b/") == RemotePath(components: ["a", "b"]))
        #expect(RemotePath("") == .root)
        #expect(RemotePath("///") == .root)
        #expect(RemotePath.root.string == "")
        #expect(RemotePath.root.description == "/")
        #expect(RemotePath.root.isRoot)
    }

    @Test func nameParentAndAppending() {
        let path = RemotePath("a/b/c.txt")
        #expect(path.name == "c.txt")
        #expect(path.parent == RemotePath("a/b"))
        #expect(path.parent.parent.parent == .root)
        #expect(RemotePath.root.parent == .root)
        #expect(RemotePath.root.name == "")
        #expect(RemotePath("a/b").appending("c.txt") == path)
        #expect(path.string == "a/b/c.txt")
    }

    @Test func descendantIsStrictAndByComponent() {
        let folder = RemotePath("Notes")
        #expect(RemotePath("Notes/a.txt").isDescendant(of: folder))
        #expect(RemotePath("Notes/x/y").isDescendant(of: folder))
        #expect(!folder.isDescendant(of: folder))
        #expect(!RemotePath("Notes2/a").isDescendant(of: folder))
        #expect(!RemotePath("Notes.txt").isDescendant(of: folder))
        #expect(folder.isDescendant(of: .root))
        #expect(!RemotePath.root.isDescendant(of: .root))
        #expect(
            RemotePath("Notes/x/y").replacingPrefix(folder, with: RemotePath("A/B")) == RemotePath("A/B/x/y"))
        #expect(RemotePath("Other").replacingPrefix(folder, with: .root) == nil)
    }

    @Test func aFolderSortsRightBeforeItsContents() {
        let paths = ["a.b", "a/z", "a", "a/b", "B", "a0"].map { RemotePath($0) }
        #expect(paths.sorted().map(\.string) == ["B", "a", "a/b", "a/z", "a.b", "a0"])
    }

    /// Paths are kept as one string and sorted by its bytes: the order must be the one of
    /// their components, names with spaces, dots, digits and accents included.
    @Test func theStringOrderIsTheComponentOrder() {
        var generator = SeededGenerator(seed: 7)
        let names = ["a", "a b", "a.b", "a0", "ab", "B", "\u{e9}", "e\u{301}x", "z", "-", "~"]
        for _ in 0..<2000 {
            let make = {
                RemotePath(
                    components: (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                        names.randomElement(using: &generator)!
                    })
            }
            let (left, right) = (make(), make())
            #expect(
                (left < right) == left.components.lexicographicallyPrecedes(right.components),
                "\(left) < \(right)")
            #expect((left == right) == (left.components == right.components))
            #expect(left.depth == left.components.count)
            #expect(
                left.isDescendant(of: right)
                    == (left.components.count > right.components.count
                        && left.components.starts(with: right.components)))
        }
    }

    @Test func aPathWithAnInvalidComponentEqualsNoValidPath() {
        let slashed = RemotePath(components: ["a/b"])
        #expect(slashed != RemotePath("a/b"))
        #expect(slashed.components == ["a/b"])
        #expect(RemotePath(components: [""]) != .root)
        #expect(!RemotePath(components: [""]).isRoot)
        #expect(RemotePath("a").appending("b/c").components == ["a", "b/c"])
        #expect(RemotePath("a").appending("b/c") != RemotePath("a/b/c"))
    }

    @Test func codesAsItsString() throws {
        let path = RemotePath("a/\u{e9}.txt")
        let data = try JSONEncoder().encode([path])
        #expect(try JSONDecoder().decode([String].self, from: data) == ["a/\u{e9}.txt"])
        #expect(try JSONDecoder().decode([RemotePath].self, from: data) == [path])
        #expect(
            try JSONDecoder().decode(RemoteTag.self, from: JSONEncoder().encode(RemoteTag("x")))
                == RemoteTag("x"))
    }

    @Test func validComponents() {
        #expect(RemotePath.isValidComponent("a.txt"))
        #expect(!RemotePath.isValidComponent(""))
        #expect(!RemotePath.isValidComponent("."))
        #expect(!RemotePath.isValidComponent(".."))
        #expect(!RemotePath.isValidComponent("a/b"))
        #expect(!RemotePath.isValidComponent("a\u{0}b"))
        for control in ["\u{1}", "\t", "\n", "\u{1B}", "\u{7F}", "\u{80}", "\u{9B}", "\u{9F}"] {
            #expect(RemotePath.problem(withName: "a\(control)b") == "holds a control character")
        }
        for fine in ["\u{A0}", "\u{C2}", "é", "日本", "a b", ".hidden", "\u{2215}", "\u{FF0F}"] {
            #expect(RemotePath.problem(withName: "a\(fine)b") == nil, "\(fine)")
        }
        #expect(RemotePath.problem(withName: "..")?.contains("its parent") == true)
        #expect(RemotePath.escaped("a\u{1B}[2J\u{9B}b\u{0}") == "a\\u{1B}[2J\\u{9B}b\\u{0}")
        #expect(RemotePath.shown("plain") == "“plain”")
        #expect(RemotePath.isReserved(".documentsync-x.download") && !RemotePath.isReserved(".documentsync"))
        #expect(RemotePath.metadataFolder.string == ".documentsync")
        #expect(RemotePath(".documentsync/conflicts/x").isMetadata)
        #expect(!RemotePath(".documentsync2").isMetadata)
    }
}
