import DocumentKit
import Foundation
import PortingCorpusSwift5
import PortingCorpusSwift6
import Testing

/// The porting corpus's files with a natural scenario, run: each checks what its source
/// expects of Apple's API (docs/Porting.md, "The porting corpus").
@MainActor
@Suite struct PortingCorpusTests {
    /// icloud_storage_plus's resolver: of two conflict versions, the newer by modification date
    /// replaces the file, and no conflict is left unresolved.
    @Test func conflictResolverKeepsTheNewestConflictVersion() async throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("notes.txt")
        try Data("mine".utf8).write(to: url)
        for (text, age) in [("older", 7200.0), ("newer", 60.0), ("oldest", 86400.0)] {
            let incoming = folder.appendingPathComponent("\(text).incoming")
            try Data(text.utf8).write(to: incoming)
            try NSFileVersion.addConflictOfItem(
                at: url, withContentsOf: incoming, savingComputer: "laptop",
                modificationDate: Date(timeIntervalSinceNow: -age))
        }
        #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.count == 3)

        try await CorpusConflictResolver.resolveCoordinated(at: url)
        #expect(String(decoding: try Data(contentsOf: url), as: UTF8.self) == "newer")
        #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty != false)
        #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty != false)
    }

    /// icloud_storage_plus's in-place text document: saved for creating and closed, then opened
    /// and read back, through the completion-handler calls; the state read after opening is
    /// normal, with no unsaved changes and no conflicts.
    @Test func textDocumentSavesOpensAndReportsItsState() async throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("note.txt")

        let saved: Bool = await withCheckedContinuation { done in
            CorpusDocumentCalls.writeText("héllo", at: url) { done.resume(returning: $0 == nil) }
        }
        #expect(saved)
        let read: String? = await withCheckedContinuation { done in
            CorpusDocumentCalls.readText(at: url) { text, _ in done.resume(returning: text) }
        }
        #expect(read == "héllo")
        let state: [String: Bool]? = await withCheckedContinuation { done in
            CorpusDocumentCalls.state(at: url) {
                done.resume(returning: $0?.compactMapValues { $0 as? Bool })
            }
        }
        #expect(state?["isNormal"] == true)
        #expect(state?["hasUnsavedChanges"] == false)
        #expect(state?["hasConflicts"] == false)
    }

    /// icloud_storage_plus's macOS document: read on a background queue through its
    /// `read(from:ofType:)` override (nonisolated, as Apple declares it, so the call compiles off
    /// the main actor), and written through the four-argument `write(to:ofType:for:...)`.
    @Test func streamingNSDocumentReadsOffTheMainThreadAndWrites() async throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source.bin")
        let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: source)

        let copy = folder.appendingPathComponent("copies/read.bin")
        let readError: String? = await withCheckedContinuation { done in
            CorpusNSDocumentCalls.read(at: source, into: copy) { done.resume(returning: $0.map { "\($0)" }) }
        }
        #expect(readError == nil)
        #expect(try Data(contentsOf: copy) == bytes)

        let written = folder.appendingPathComponent("written.bin")
        try CorpusNSDocumentCalls.write(from: source, to: written)
        #expect(try Data(contentsOf: written) == bytes)
    }

    /// iCloudDocumentSync's queries filter by path extension with `%K.pathExtension IN { ... }`
    /// and `LIKE`: DocumentKit's metadata predicate grammar takes both, and they select by the
    /// file name's extension as Apple's do.
    @Test func managersPathExtensionPredicatesParseAndSelect() throws {
        let folder = try PortingScenarioTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let among = try NSPredicate(
            validatingMetadataFormat: "(%K.pathExtension IN { 'txt','md' })", NSMetadataItemFSNameKey)
        let like = try NSPredicate(
            validatingMetadataFormat: "(%K.pathExtension LIKE 'jso*')", NSMetadataItemFSNameKey)
        var selected: [String: [String]] = [:]
        for name in ["a.txt", "b.md", "c.json", "d.swift"] {
            let url = folder.appendingPathComponent(name)
            try Data().write(to: url)
            let item = try #require(NSMetadataItem(url: url))
            if among.evaluate(with: item) { selected["among", default: []].append(name) }
            if like.evaluate(with: item) { selected["like", default: []].append(name) }
        }
        #expect(selected == ["among": ["a.txt", "b.md"], "like": ["c.json"]])
    }

    /// Mutabit's NSDocument, as Xcode's template leaves it: its reading and writing methods
    /// throw NSOSStatusErrorDomain's unimpErr (-4).
    @Test func templateDocumentThrowsUnimplementedUntilFilledIn() throws {
        let document = CorpusTemplateDocument()
        #expect(CorpusTemplateDocument.autosavesInPlace)
        #expect(throws: NSError(domain: NSOSStatusErrorDomain, code: -4)) {
            try document.data(ofType: "public.plain-text")
        }
        document.close()
    }
}

/// ICloudDocuments (Swift 6) copies files into an app group's container and lists them, through
/// its async forms (called from a nonisolated context: the class is not Sendable).
@Suite struct PortingCorpusContainerTests {
    @Test func containerFilesSaveAndListInAGroupContainer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "porting-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let group = "group.org.documentkit.corpus.\(UUID().uuidString)"
        let files = CorpusContainerFiles(folder: .hidden, groupName: group)
        let container = try #require(files.containerURL)
        defer { try? FileManager.default.removeItem(at: container.deletingLastPathComponent()) }
        #expect(container.lastPathComponent == "Backup")
        do {
            _ = try await files.listFiles()
            Issue.record("listed a container that is not there")
        } catch {
            #expect(error as? CorpusContainerFiles.ContainerError == .accessDenied)
        }

        let local = folder.appendingPathComponent("backup.json")
        try Data("{}".utf8).write(to: local)
        let saved = try await files.save(localFilePaths: [local.path])
        #expect(saved == ["backup.json"])
        let listed = try await files.listFiles()
        #expect(listed == ["backup.json"])
    }
}
