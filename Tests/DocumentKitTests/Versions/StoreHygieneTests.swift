import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 10's storage rules: the store is private, listing writes nothing, killed processes
/// leave no debris that outlives the next open or save, stored bytes are verified, any name
/// the file system takes saves, and links are followed only where that is safe.
@Suite struct StoreHygieneTests {
    /// Every folder and file under `root` with its mode, except the lock file's folder entries.
    static func modes(under root: URL) -> [(path: String, mode: mode_t, isDirectory: Bool)] {
        var result: [(String, mode_t, Bool)] = []
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        while let relative = enumerator.nextObject() as? String {
            var info = stat()
            guard lstat(root.appendingPathComponent(relative).path, &info) == 0 else { continue }
            result.append((relative, info.st_mode & 0o777, info.isDirectory))
        }
        return result
    }

    // MARK: 1. Private

    @MainActor
    @Test func everythingTheStoreWritesIsTheUsersAloneWhateverTheUmask() async throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let tree = try TemporaryTree()
        let root = tree.file("data/DocumentKit/Versions")
        let store = VersionStore(root: root)
        let file = try tree.write("top secret\n", to: "private.txt")
        chmod(file.path, 0o600)
        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        document.text = "public now\n"
        await endOfTurn()
        #expect(await document.autosave())
        store.waitUntilIdle()
        let version = try #require(store.otherVersionsOfItem(at: file).first)
        #expect(contents(of: version) == "top secret\n", "reading it rebuilds a private copy")

        let entries = Self.modes(under: tree.file("data"))
        // Small contents are inline in a pack: the pack holds the secret.
        #expect(entries.contains { $0.path.hasPrefix("DocumentKit/Versions/packs/") && !$0.isDirectory })
        #expect(entries.contains { $0.path.hasPrefix("DocumentKit/Versions/contents/") && !$0.isDirectory })
        for entry in entries {
            #expect(
                entry.mode == (entry.isDirectory ? 0o700 : 0o600),
                "\(entry.path) is \(String(entry.mode, radix: 8))")
        }
        var info = stat()
        lstat(tree.file("data").path, &info)
        #expect(info.st_mode & 0o777 == 0o700, "a parent the store made is private too")
        _ = await document.close()
    }

    @Test func aStoreAnOlderVersionLeftReadableIsMadePrivate() throws {
        let tree = try TemporaryTree()
        let root = tree.file("Versions")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        chmod(root.path, 0o755)
        let store = VersionStore(root: root)
        let file = try tree.write("x", to: "a.txt")
        _ = try store.addOfItem(at: file, withContentsOf: try tree.write("y", to: "y.txt"))
        var info = stat()
        lstat(root.path, &info)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    // MARK: 2. Listing writes nothing; rebuilt copies are bounded

    @MainActor
    @Test func listingVersionsRebuildsNothingAndRebuiltCopiesAreBounded() async throws {
        let tree = try TemporaryTree()
        let store = VersionStore(root: tree.file("store"), thinningPolicy: .keepingTheFirstHour)
        let file = try tree.write(String(repeating: "line\n", count: 40_000), to: "big.txt")
        let document = versionedDocument(file, store: store)
        #expect(await document.open())
        for edit in 0..<12 {
            document.text += "edit \(edit)\n"
            await endOfTurn()
            #expect(await document.autosave())
        }
        store.waitUntilIdle()
        let contentsFolder = tree.file("store/contents")
        for _ in 0..<3 {
            let versions = store.otherVersionsOfItem(at: file)
            #expect(versions.count >= 12)
            #expect(versions.allSatisfy { $0.hasLocalContents })
            _ = versions.map { ($0.modificationDate, $0.localizedNameOfSavingComputer, $0.isConflict) }
        }
        #expect(StoreHygieneTests.bytes(under: contentsFolder) == 0, "listing wrote copies")

        // Read them all with a bound of one copy and no grace: only the newest stays.
        store.rebuiltVersionsCache.withLock { $0 = .init(bytes: 1, grace: -1) }
        let versions = store.otherVersionsOfItem(at: file)
        for version in versions { #expect(contents(of: version)?.hasPrefix("line\n") == true) }
        let copies =
            (try? FileManager.default.subpathsOfDirectory(atPath: contentsFolder.path))?
            .filter { $0.hasSuffix("big.txt") } ?? []
        #expect(copies.count == 1, "\(copies)")
        _ = await document.close()
    }

    static func bytes(under url: URL) -> Int { bytesUnder(url) }

    // MARK: 3. No debris after a crash

    /// A document saving again and again with versions, killed at random instants: its
    /// temporary files beside the document and its staged versions are swept by the next
    /// save in the folder and the next use of the store.
    @Test func savesKilledAtRandomInstantsLeaveNoDebrisAfterTheNextSave() throws {
        var random = SeededGenerator(seed: 10)
        var debrisSeen = 0
        for round in 0..<3 {
            let tree = try TemporaryTree()
            let file = try tree.write(String(repeating: "x", count: 1 << 20), to: "doc-\(round).bin")
            let storeRoot = tree.file("store")
            for _ in 0..<10 {
                let child = try TestChild.start([
                    "versioned-save-loop", file.path, storeRoot.path, "\(1 << 20)",
                ])
                usleep(UInt32.random(in: 20_000...120_000, using: &random))
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
            let besides = try FileManager.default.contentsOfDirectory(atPath: tree.url.path)
            let staged =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: storeRoot.appendingPathComponent("incoming").path)) ?? []
            debrisSeen += besides.filter { $0.contains(".dk-") }.count + staged.count

            // The next save in the folder, and the next use of the store, in a new process.
            try SafeSave.write(Data("next".utf8), to: tree.file("other.txt"))
            _ = try VersionStore(root: storeRoot).addOfItem(at: file, withContentsOf: tree.file("other.txt"))
            let left = try FileManager.default.contentsOfDirectory(atPath: tree.url.path).filter {
                $0.contains(".dk-")
            }
            #expect(left.isEmpty, "round \(round): \(left)")
            let stillStaged =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: storeRoot.appendingPathComponent("incoming").path)) ?? []
            #expect(stillStaged.isEmpty, "round \(round): \(stillStaged)")
            var info = stat()
            #expect(stat(file.path, &info) == 0 && info.st_size == 1 << 20, "the document is whole")
        }
        #expect(debrisSeen > 0, "no kill landed in the middle of a save: the test proved nothing")
    }

    @Test func aLiveProcessesTemporaryFileIsNotSwept() throws {
        let tree = try TemporaryTree()
        let mine = tree.file(SafeSave.temporaryName(for: "a.txt", kind: "tmp"))
        try Data("in progress".utf8).write(to: mine)
        // A name another live process (init, pid 1) owns.
        let theirs = tree.file(".a.txt.dk-tmp-1-abc")
        try Data("theirs".utf8).write(to: theirs)
        try SafeSave.write(Data("x".utf8), to: tree.file("b.txt"))
        #expect(FileManager.default.fileExists(atPath: mine.path))
        #expect(FileManager.default.fileExists(atPath: theirs.path))
    }

    // MARK: 4. Damaged chunks are repaired

    @Test func aFlippedBitInAChunkIsRepairedByTheNextSaveOfTheSameBytesAndReported() throws {
        let tree = try TemporaryTree()
        let store = VersionStore(root: tree.file("store"))
        let file = try tree.write("current", to: "a.txt")
        let bytes = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let source = tree.file("source.bin")
        try bytes.write(to: source)
        let first = try store.addOfItem(at: file, withContentsOf: source)
        // The same bytes once more: the store object has now compared its chunks with them,
        // and trusts them while their files stay untouched.
        _ = try store.addOfItem(at: file, withContentsOf: source)
        #expect(store.lastRecoveryError == nil)
        // Flip one bit of one stored chunk.
        let chunksRoot = tree.file("store/chunks")
        let chunk = try #require(
            FileManager.default.enumerator(atPath: chunksRoot.path)?.compactMap { $0 as? String }
                .first { !$0.contains("/.") && $0.count > 3 })
        let chunkURL = chunksRoot.appendingPathComponent(chunk)
        var damaged = try Data(contentsOf: chunkURL)
        damaged[damaged.count / 2] ^= 0x10
        chmod(chunkURL.path, 0o600)
        try damaged.write(to: chunkURL)

        // The same bytes again, as the next save of an unchanged document would bring them.
        _ = try store.addOfItem(at: file, withContentsOf: source)
        #expect(store.lastRecoveryError?.code == .corruptFile, "the damage was reported")
        #expect(store.lastRecoveryError?.description.contains("chunk") == true)
        #expect(try Data(contentsOf: first.url) == bytes, "the first version is whole again")
    }

    // MARK: 5. Names

    @Test(arguments: [
        String(repeating: "\u{1F600}", count: 62),  // 248 bytes + ".txt" = 252
        "e" + String(repeating: "\u{0301}", count: 125),  // one grapheme cluster, 251 bytes
        String(repeating: "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", count: 13),  // 234 bytes of families
    ])
    func everyNameTheFileSystemTakesSaves(_ stem: String) throws {
        let tree = try TemporaryTree()
        let url = tree.url.appendingPathComponent(stem + ".txt")
        #expect((stem + ".txt").utf8.count <= 255)
        try SafeSave.write(Data("named".utf8), to: url)
        try SafeSave.write(Data("named again".utf8), to: url)
        #expect(fileText(url) == "named again")
        let temporary = SafeSave.temporaryName(for: url.lastPathComponent, kind: "tmp")
        #expect(temporary.utf8.count <= 255, "\(temporary.utf8.count) bytes")
    }

    // MARK: 7. Links

    @MainActor
    @Test func aDocumentThatIsALinkKeepsHistory() async throws {
        let tree = try TemporaryTree()
        let store = VersionStore(root: tree.file("store"))
        let target = try tree.write("first", to: "real.txt")
        let link = tree.file("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let document = versionedDocument(link, store: store)
        #expect(await document.open())
        document.text = "second"
        await endOfTurn()
        #expect(await document.autosave())
        store.waitUntilIdle()
        #expect(store.lastError == nil, "\(store.lastError.map { "\($0)" } ?? "")")
        let history = store.otherVersionsOfItem(at: link).compactMap(contents(of:))
        #expect(history == ["first"], "\(history)")
        var info = stat()
        lstat(link.path, &info)
        #expect(info.isSymbolicLink, "the link stays a link")
        #expect(fileText(target) == "second")
        _ = await document.close()
    }

    @Test func aLinkAnotherUserPlantedInAStickyFolderIsNotFollowed() throws {
        try #require(getuid() == 0, "needs root to plant a link owned by another user")
        let tree = try TemporaryTree()
        let shared = tree.file("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        chmod(shared.path, 0o1777)
        let victim = try tree.write("root's file", to: "victim.txt")
        let planted = shared.appendingPathComponent("report.txt")
        try FileManager.default.createSymbolicLink(at: planted, withDestinationURL: victim)
        lchown(planted.path, 65534, 65534)
        #expect(throws: DocumentKitError.self) {
            try SafeSave.write(Data("overwritten".utf8), to: planted)
        }
        #expect(fileText(victim) == "root's file", "the file outside the folder is untouched")

        // A link of one's own there is followed, as the kernel's rule allows.
        let own = shared.appendingPathComponent("mine.txt")
        try FileManager.default.createSymbolicLink(at: own, withDestinationURL: victim)
        try SafeSave.write(Data("mine".utf8), to: own)
        #expect(fileText(victim) == "mine")
    }

    // MARK: 8. One change, one conflict; damaged records keep their chunks

    @Test func oneOutsideChangeMakesOneConflictVersion() async throws {
        let tree = try TemporaryTree()
        let file = try tree.write("original\n", to: "n.txt")
        let child = try CoordinationChild(["coord-document", file.path, "MINE"], dataHome: tree.file("data"))
        let ready = try await onBackground { child.waitForLine("ready") != nil }
        #expect(ready, "\(child.lines)")
        try shell("echo theirs > '\(file.path)'")
        // Up to a minute: a machine loaded by a whole test run took longer than 20 s.
        let loaded = try await onBackground {
            child.waitForLine("loaded theirs\\n", timeout: .seconds(60)) != nil
        }
        #expect(loaded, "\(child.lines)")
        // Any second conflict version would come within a few hundred milliseconds.
        try await Task.sleep(for: .milliseconds(500))
        child.kill()
        let store = VersionStore(root: tree.file("data/DocumentKit/Versions"))
        let conflicts = store.unresolvedConflictVersionsOfItem(at: file).compactMap(contents(of:))
        #expect(conflicts == ["MINE"], "\(conflicts)")
    }

    @Test func anEmptiedRecordIsReportedAndItsChunksAreKept() throws {
        let tree = try TemporaryTree()
        let store = VersionStore(root: tree.file("store"))
        let file = try tree.write("current", to: "a.txt")
        let kept = try store.addOfItem(at: file, withContentsOf: try tree.write("kept text", to: "k.txt"))
        let other = try store.addOfItem(at: file, withContentsOf: try tree.write("other text", to: "o.txt"))
        let record = try #require(
            FileManager.default.enumerator(atPath: tree.file("store/items").path)?.compactMap {
                $0 as? String
            }
            .first { $0.hasSuffix("\(kept.persistentIdentifier).json") })
        try Data().write(to: tree.file("store/items").appendingPathComponent(record))
        let chunksBefore = bytesUnder(tree.file("store/chunks"))

        #expect(
            store.otherVersionsOfItem(at: file).map(\.persistentIdentifier) == [other.persistentIdentifier])
        #expect(store.lastRecoveryError?.code == .corruptFile, "the damaged record was reported")
        // Removing the other version collects unused chunks: the damaged record's stay.
        try other.remove()
        #expect(
            bytesUnder(tree.file("store/chunks")) == chunksBefore, "chunks of the damaged record were kept")
    }
}
