import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// SplitMix64: random choices a seed replays.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A document with unsaved edits of every age (typing an editor still holds, edits counted
/// but unsaved, edits being saved) against another process that writes in place, replaces
/// by rename, appends, writes under coordination, deletes, recreates and moves the file at
/// random instants. Every word typed must end in the file, a conflict version or the version
/// store; the user must have been told of every conflict; no conflict version may repeat
/// another or the file.
@MainActor
@Suite struct AdversarialWriterTests {
    static let kinds: [Character] = ["i", "r", "a", "c", "d", "n", "m"]

    @Test(arguments: 1...24)
    func everyWordTypedSurvivesAnotherWriterAtRandomInstants(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let tree = try TemporaryTree()
        let name = "Adversary\(seed)-\(UUID().uuidString.prefix(6))"
        let file = try tree.write("start\n", to: "\(name).txt")
        let store = VersionStore(root: tree.file("store/Versions"))
        let quiet = Int.random(in: 15...150, using: &random)

        func openDocument() async throws -> (PresentedTextDocument, PendingTypingEditor) {
            let document = PresentedTextDocument(fileURL: file)
            document.versionStore = store
            document.autosaveConfiguration.quietDelay = .milliseconds(quiet)
            document.autosaveConfiguration.maximumDelay = .milliseconds(quiet * 3)
            if FileManager.default.fileExists(atPath: file.path), await document.open() {
                return (document, PendingTypingEditor(document))
            }
            #expect(
                await document.save(to: file, for: .forCreating) || document.errorCodes.contains(.fileExists))
            return (document, PendingTypingEditor(document))
        }

        let script = (0..<40).map { _ in
            "\(Self.kinds.randomElement(using: &random)!):\(Int.random(in: 0...25, using: &random))"
        }
        let child = try CoordinationChild(["adversary", file.path, script.joined(separator: ",")])
        var (document, editor) = try await openDocument()
        var documents = [document]
        var typed: [String] = []
        var step = 0
        while !child.lines.contains("done") || step < 30 {
            step += 1
            if step > 2000 { break }
            if document.documentState.contains(.closed) {
                // Closed by a deletion it could not undo: its text was kept aside; go on in a
                // document on whatever is at the path now (opening or creating it may lose a
                // race with the other writer: try again).
                (document, editor) = try await openDocument()
                documents.append(document)
                continue
            }
            // The dot ends the word, so no word is the start of another.
            let word = " w\(seed)x\(step)."
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                editor.type(word)
                typed.append(word)
            case 40..<65:
                _ = editor.commitEditing()
                document.text += word
                typed.append(word)
            case 65..<75:
                _ = editor.commitEditing()
            case 75..<85:
                _ = await document.autosave()
            default:
                break
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...12, using: &random)))
        }
        #expect(child.waitForLine("done") != nil, "\(child.lines) \(child.standardError)")
        // The other writer's last step is news the document may not have had yet: quitting
        // before it arrives would be the other program overwriting a saved file after the
        // editor quit. Wait until the document is dirty or shows what the file holds.
        _ = await waitUntil(timeout: .seconds(10)) {
            documents.allSatisfy {
                $0.documentState.contains(.closed) || $0.hasUnsavedChanges || fileText(file) == $0.text
            }
        }
        // Quit as a user does: close, and when a save fails (the other writer's last step
        // raced it), close again once that news has arrived.
        for open in documents {
            var attempts = 0
            while !(await open.close()) && attempts < 50 {
                attempts += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(open.documentState.contains(.closed), "seed \(seed): \(open.errorMessages)")
        }
        store.waitUntilIdle()

        // Everywhere a word can be: the file, every version of the item (a file put back at
        // the path finds them), what was kept beside the file, and where a move left it.
        if !FileManager.default.fileExists(atPath: file.path) {
            _ = FileManager.default.createFile(atPath: file.path, contents: Data())
        }
        let finalText = fileText(file) ?? ""
        let versions = store.otherVersionsOfItem(at: file)
        // And every other item of the store: a file the other writer moved away and back may
        // have been another item for a while.
        let everyVersion = store.itemIDs().flatMap { store.records(ofItem: $0) }.map {
            FileVersion(record: $0, store: store)
        }
        var places = [finalText] + everyVersion.compactMap(contents(of:))
        let beside = try FileManager.default.contentsOfDirectory(atPath: tree.url.path)
            .filter { $0.hasPrefix(name) && $0 != file.lastPathComponent }
        places += beside.compactMap { fileText(tree.file($0)) }
        let lost = typed.filter { word in !places.contains { $0.contains(word) } }
        if let first = lost.first,
            let holder = documents.first(where: { $0.history.contains { $0.contains(first) } })
        {
            print(
                "seed \(seed) history of the document that had \(first):\n"
                    + holder.history.joined(separator: "\n"))
        }
        #expect(
            lost.isEmpty,
            "seed \(seed): \(lost.count) of \(typed.count) words lost: \(lost.prefix(5)); \(everyVersion.count) versions, \(everyVersion.filter { contents(of: $0) == nil }.count) unreadable, items \(store.itemIDs()); script \(script.joined(separator: ",")); places \(places); errors \(documents.map(\.errorMessages))"
        )

        let conflicts = versions.filter { $0.isConflict && !$0.isResolved }.compactMap(contents(of:))
        #expect(
            Set(conflicts).count == conflicts.count, "seed \(seed): a conflict version repeated: \(conflicts)"
        )
        #expect(!conflicts.contains(finalText), "seed \(seed): a conflict version equal to the file")
        // Kept aside by a document (not what the other writer left, like a file moved away).
        let keptBeside = beside.filter { $0.contains("(unsaved changes from ") }
        if !conflicts.isEmpty || !keptBeside.isEmpty {
            let told = documents.flatMap(\.errorCodes).contains {
                $0 == .editedElsewhere || $0 == .deletedElsewhere
            }
            #expect(
                told, "seed \(seed): text was kept aside and the user never heard: \(keptBeside) \(conflicts)"
            )
        }
        child.kill()
    }
}
