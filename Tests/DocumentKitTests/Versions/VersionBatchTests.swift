import DocumentKit
import Foundation
import Testing

/// Saves quicker than the store are stored together, cut and hashed only where they changed:
/// every one of them must still come back byte for byte, in order.
@Suite struct VersionBatchTests {
    /// A 300 KiB text with line `index` of every tenth line changed to say `edit`.
    static func text(edit: Int) -> String {
        (0..<5000).map { line in
            line % 10 == edit % 10 && line / 10 == edit
                ? "line \(line) edited at save \(edit), a little longer than before\n"
                : "line \(line): the quick brown fox jumps over the lazy dog\n"
        }.joined()
    }

    @MainActor
    @Test func rapidSavesAreEachKeptWhole() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("rapid.txt")
        let texts = (0..<40).map { Self.text(edit: $0) }
        // No waiting between saves: the store's queue falls behind and takes them in batches.
        let document = await documentSaved(texts, at: file, store: store)
        store.waitUntilIdle()
        let versions = store.otherVersionsOfItem(at: file)
        #expect(versions.count == texts.count - 1)
        for (index, version) in versions.enumerated() {
            #expect(contents(of: version) == texts[index], "version \(index)")
        }
        // Shared chunks were stored once: far less than 39 copies of 300 KiB.
        #expect(bytesUnder(store.root.appendingPathComponent("chunks")) < 10 * texts[0].utf8.count)
        _ = await document.close()
    }

    /// The next use of the store, by another store object (another process's view), finds
    /// every record and chunk in place, with nothing left in `incoming/`.
    @MainActor
    @Test func batchedVersionsAreWholeForAFreshReader() async throws {
        let tree = try TemporaryTree()
        let store = makeStore(in: tree)
        let file = tree.file("fresh.txt")
        let texts = (0..<12).map { Self.text(edit: $0 * 3) }
        let document = await documentSaved(texts, at: file, store: store)
        _ = await document.close()
        let incoming =
            (try? FileManager.default.contentsOfDirectory(
                atPath: store.root.appendingPathComponent("incoming").path)) ?? []
        #expect(incoming.isEmpty, "\(incoming)")
        let reader = makeStore(in: tree)
        let versions = reader.otherVersionsOfItem(at: file)
        #expect(versions.map(contents) == texts.dropLast().map(Optional.some))
        #expect(reader.lastRecoveryError == nil)
    }
}
