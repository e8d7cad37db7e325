import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What sync will rely on: an item keeps its history through every way a file is saved,
/// replaced or moved, by this library, by other programs and by the shell, so that a version
/// or conflict another device adds finds the item wherever it is now.
@Suite struct ItemIdentityTests {
    /// One way the file at `file` is changed or moved; returns where the item is afterwards.
    struct Change: CustomTestStringConvertible, Sendable {
        var name: String
        var perform: @Sendable (_ file: URL, _ tree: TemporaryTree) throws -> URL
        var testDescription: String { name }
    }

    static let changes: [Change] = [
        Change(name: "safe save") { file, _ in
            try SafeSave.write(Data("changed".utf8), to: file)
            return file
        },
        Change(name: "write in place") { file, _ in
            try Data("changed".utf8).write(to: file)
            return file
        },
        Change(name: "Foundation's atomic write (no extended attributes kept)") { file, _ in
            try Data("changed".utf8).write(to: file, options: .atomic)
            return file
        },
        Change(name: "an editor's backup-and-write (a new file at the path)") { file, _ in
            let backup = file.appendingPathExtension("bak")
            try FileManager.default.moveItem(at: file, to: backup)
            try Data("changed".utf8).write(to: file)
            try FileManager.default.removeItem(at: backup)
            return file
        },
        Change(name: "rename(2) in the folder") { file, tree in
            let moved = tree.file("renamed.txt")
            #expect(rename(file.path, moved.path) == 0)
            return moved
        },
        Change(name: "mv to another folder") { file, tree in
            let folder = tree.file("Elsewhere")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let moved = folder.appendingPathComponent("notes.txt")
            try FileManager.default.moveItem(at: file, to: moved)
            return moved
        },
        Change(name: "coordinated move of a file that lost its attribute") { file, tree in
            #expect(dropIdentityAttribute(file))
            let moved = tree.file("coordinated.txt")
            let coordinator = FileCoordinator()
            try coordinator.coordinate(
                writingItemAt: file, options: .forMoving, writingItemAt: moved, options: .forReplacing
            ) { from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
            return moved
        },
        Change(name: "cp over it") { file, tree in
            let other = try tree.write("changed", to: "source.txt")
            let copy = Process()
            copy.executableURL = URL(fileURLWithPath: "/bin/cp")
            copy.arguments = [other.path, file.path]
            try copy.run()
            copy.waitUntilExit()
            #expect(copy.terminationStatus == 0)
            return file
        },
    ]

    @MainActor
    @Test(arguments: changes)
    func anItemKeepsItsHistory(through change: Change) async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("notes.txt")
        let document = await documentSaved(["first", "second"], at: file, store: store)
        _ = await document.close()
        store.waitUntilIdle()
        let before = try #require(store.otherVersionsOfItem(at: file).first)

        let now = try change.perform(file, tree)
        let after = store.otherVersionsOfItem(at: now)
        #expect(
            after.map(\.persistentIdentifier).contains(before.persistentIdentifier), "\(after.map(contents))")

        // The next save there adds to the same history: what it replaces joins the first.
        let replaced = try String(contentsOf: now, encoding: .utf8)
        let reopened = versionedDocument(now, store: store)
        #expect(await reopened.open())
        #expect(await reopened.saveText("third"))
        _ = await reopened.close()
        store.waitUntilIdle()
        let history = store.otherVersionsOfItem(at: now).compactMap(contents)
        #expect(history.contains("first") && history.contains(replaced), "\(history)")
        #expect(try String(contentsOf: now, encoding: .utf8) == "third")
    }
}
