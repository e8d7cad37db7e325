import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A plain-text document: the text is its file's bytes.
class PlainNotes: NSDocument {
    var text = ""

    override func data(ofType typeName: String) throws -> Data { Data(text.utf8) }

    override func read(from data: Data, ofType typeName: String) throws {
        let text = String(decoding: data, as: UTF8.self)
        MainActor.assumeIsolated { self.text = text }
    }

    /// The user types `newText`.
    func type(_ newText: String) {
        text = newText
        updateChangeCount(.changeDone)
    }
}

/// A text document that records what AppKit's further members saw while it worked.
final class MemberNotes: PlainNotes {
    var cancellableWhileWriting: [Bool] = []
    var writes: [(url: URL, original: URL?, operation: SaveOperationType)] = []
    var errorsPresented: [String] = []
    var safetyError: (any Error)?

    override func data(ofType typeName: String) throws -> Data {
        cancellableWhileWriting.append(autosavingIsImplicitlyCancellable)
        return try super.data(ofType: typeName)
    }

    override func write(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType,
        originalContentsURL absoluteOriginalContentsURL: URL?
    ) throws {
        MainActor.assumeIsolated { writes.append((url, absoluteOriginalContentsURL, saveOperation)) }
        try super.write(
            to: url, ofType: typeName, for: saveOperation, originalContentsURL: absoluteOriginalContentsURL)
    }

    override func fileAttributesToWrite(
        to url: URL, ofType typeName: String, for saveOperation: SaveOperationType,
        originalContentsURL absoluteOriginalContentsURL: URL?
    ) throws -> [String: Any] {
        [FileAttributeKey.posixPermissions.rawValue: 0o640]
    }

    override func willPresentError(_ error: any Error) -> any Error {
        errorsPresented.append("\(error)")
        return super.willPresentError(error)
    }

    override func checkAutosavingSafety() throws {
        if let safetyError { throw safetyError }
        try super.checkAutosavingSafety()
    }
}

/// A text document that notes the presenter calls it is given, each passed on to AppKit's.
final class PresentingNotes: PlainNotes {
    let calls = Mutex<[String]>([])

    override func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        calls.withLock { $0.append("save") }
        super.savePresentedItemChanges(completionHandler: completionHandler)
    }

    override func relinquishPresentedItem(
        toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void
    ) {
        calls.withLock { $0.append("relinquish to writer") }
        super.relinquishPresentedItem(toWriter: writer)
    }

    override func presentedItemDidChange() {
        calls.withLock { $0.append("did change") }
        super.presentedItemDidChange()
    }
}

/// A class whose documents are never autosaved: its autosaving type is nil.
final class NeverAutosavedNotes: PlainNotes {
    override var autosavingFileType: String? { nil }
}

/// A class that keeps no versions of what its saves replace.
final class UnversionedNotes: PlainNotes {
    override class var preservesVersions: Bool { false }
}

/// A class that declares its types in code, as apps without an `Info.plist` do.
final class TypedNotes: NSDocument {
    override class var readableTypes: [String] { ["public.plain-text", "public.html"] }
    override class var writableTypes: [String] { ["public.plain-text", "public.json"] }
    override func defaultDraftName() -> String { "New Note" }
}

/// Waits until `condition` holds, for up to 300 turns of 100 ms; false if it never does. Counted
/// in turns, not by the clock as `eventually` is: a test running beside these may hold the main
/// actor for longer than a clock-bounded wait lasts.
@MainActor
func inTurns(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<300 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return condition()
}

@MainActor
@Suite struct NSDocumentMembersTests {
    private func mode(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]) as? NSNumber)?
            .intValue ?? -1
    }

    private func autosave(_ document: NSDocument, cancellable: Bool = true) async -> (any Error)? {
        await withCheckedContinuation { done in
            document.autosave(withImplicitCancellability: cancellable) { done.resume(returning: $0) }
        }
    }

    @Test func theSavePanelAndLoadingMembersHaveAppKitsDefaults() throws {
        let document = MemberNotes()
        #expect(document.isEntireFileLoaded)
        #expect(!document.fileNameExtensionWasHiddenInLastRunSavePanel)
        #expect(document.fileTypeFromLastRunSavePanel == nil)
        #expect(!document.keepBackupFile)
        #expect(document.backupFileURL == nil)
        #expect(document.autosavedContentsFileURL == nil)
        #expect(!document.isDraft)
        #expect(MemberNotes.autosavesDrafts)
        #expect(MemberNotes.preservesVersions == MemberNotes.autosavesInPlace)
        #expect(!MemberNotes.usesUbiquitousStorage)
        #expect(
            !document.canAsynchronouslyWrite(
                to: URL(fileURLWithPath: "/tmp/x"), ofType: "public.data", for: .saveOperation))
    }

    /// Apple declares the reading and writing methods, `fileURL` and `fileType` nonisolated, and
    /// libraries read documents on background queues: the default `read(from: URL, ofType:)`
    /// reads the file on the calling thread and hands the bytes to `read(from: Data, ofType:)`
    /// on the main thread; `write(to:ofType:)` asks `fileWrapper(ofType:)` there and writes
    /// on the calling thread.
    @Test func aDocumentIsReadAndWrittenFromABackgroundThread() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "open.txt")
        let document = try PlainNotes(contentsOf: url, ofType: "public.plain-text")
        let other = try tree.write("from the background", to: "other.txt")
        let copy = tree.file("copy.txt")
        let seen: (url: URL?, type: String?, error: String?) = await withCheckedContinuation { done in
            Thread.detachNewThread {
                do {
                    try document.read(from: other, ofType: "public.plain-text")
                    try document.write(to: copy, ofType: "public.plain-text")
                    done.resume(returning: (document.fileURL, document.fileType, nil))
                } catch {
                    done.resume(returning: (nil, nil, "\(error)"))
                }
            }
        }
        #expect(seen.error == nil)
        #expect(seen.url?.standardizedFileURL == url.standardizedFileURL, "its file stays the one it opened")
        #expect(seen.type == "public.plain-text")
        #expect(document.text == "from the background")
        #expect(fileText(copy) == "from the background")
        #expect(fileText(url) == "first", "reading other contents writes nothing")
        _ = await document.close()
    }

    /// The document is its file's presenter, as AppKit's: another writer's coordinated write
    /// goes through the subclass's overrides (save first, let the writer in, hear of the
    /// change and reload), and a coordinator made with the document itself, as a subclass
    /// makes one for its own writes, never messages it (the document may still find, on its
    /// own, that the file is not what it last read or wrote).
    @Test func theDocumentPresentsItsFileAndItsOwnCoordinatorLeavesItOut() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "presented.txt")
        let document = try PresentingNotes(contentsOf: url, ofType: "public.plain-text")
        #expect(document.presentedItemURL?.standardizedFileURL == url.standardizedFileURL)
        document.type("typed")

        try await onBackground {
            try FileCoordinator(filePresenter: nil).coordinate(writingItemAt: url, options: []) { url in
                #expect(fileText(url) == "typed", "the unsaved text was saved before the write")
                try Data("theirs".utf8).write(to: url)
            }
        }
        #expect(await waitUntil { document.text == "theirs" }, "\(document.text)")
        // The file was written just before the document opened it: under load the document may
        // hear of that write on its own first (a "did change" before the coordinated write).
        let calls = document.calls.withLock { $0 }
        #expect(
            Array(calls.drop { $0 == "did change" }) == ["save", "relinquish to writer", "did change"],
            "\(calls)")

        document.calls.withLock { $0 = [] }
        let coordinator = FileCoordinator(filePresenter: document)
        #expect(coordinator.filePresenter === document)
        try await onBackground {
            try coordinator.coordinate(writingItemAt: url, options: []) { url in
                try Data("its own".utf8).write(to: url)
            }
        }
        try await Task.sleep(for: .seconds(1))
        #expect(document.calls.withLock { $0 }.isEmpty, "\(document.calls.withLock { $0 })")
        _ = await document.close()
    }

    @Test func typesComeFromTheClassAndExportsMayWriteForeignTypes() {
        #expect(TypedNotes.isNativeType("public.plain-text"))
        #expect(!TypedNotes.isNativeType("public.json"), "written but not read: not native")
        #expect(!TypedNotes.isNativeType("public.html"), "read but not written: not native")
        let document = TypedNotes()
        #expect(document.writableTypes(for: .saveAsOperation) == ["public.plain-text"])
        #expect(document.writableTypes(for: .saveToOperation) == ["public.plain-text", "public.json"])
        #expect(
            document.fileNameExtension(forType: "public.plain-text", saveOperation: .saveOperation) == "txt")
        #expect(document.displayName == "New Note", "an untitled document is named by defaultDraftName()")
    }

    @Test func autosavingTypeFollowsFileTypeAndNilTurnsAutosavingOff() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "never.txt")
        let never = try NeverAutosavedNotes(contentsOf: url, ofType: "public.plain-text")
        never.type("second")
        #expect(await autosave(never) == nil)
        #expect(fileText(url) == "first", "no autosaving type: not autosaved")
        #expect(never.hasUnautosavedChanges)

        let notes = try MemberNotes(
            contentsOf: try tree.write("a", to: "notes.txt"), ofType: "public.plain-text")
        #expect(notes.autosavingFileType == "public.plain-text")
        notes.fileType = "public.html"
        #expect(notes.autosavingFileType == "public.html")
        _ = await never.close()
        _ = await notes.close()
    }

    @Test func anAutosaveSaysWhetherItMayBeCancelledWhileItWrites() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "notes.txt")
        let document = try MemberNotes(contentsOf: url, ofType: "public.plain-text")
        document.type("second")
        #expect(document.hasUnautosavedChanges)
        #expect(await autosave(document, cancellable: true) == nil)
        #expect(fileText(url) == "second")
        #expect(!document.hasUnautosavedChanges)
        document.type("third")
        #expect(await autosave(document, cancellable: false) == nil)
        #expect(document.cancellableWhileWriting == [true, false])
        #expect(!document.autosavingIsImplicitlyCancellable, "false once no autosave runs")
        _ = await document.close()
    }

    @Test func anUnsafeAutosaveIsRefusedWithTheCheckersError() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "notes.txt")
        let document = try MemberNotes(contentsOf: url, ofType: "public.plain-text")
        document.safetyError = CocoaError(.fileWriteNoPermission)
        document.type("second")
        let error = await autosave(document)
        #expect((error as? CocoaError)?.code == .fileWriteNoPermission)
        #expect(fileText(url) == "first")
        document.safetyError = nil
        #expect(await autosave(document) == nil)
        #expect(fileText(url) == "second")
        _ = await document.close()
    }

    @Test func lockingMakesTheFileReadOnlyAndTheDocumentLocked() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "notes.txt")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        let document = try MemberNotes(contentsOf: url, ofType: "public.plain-text")
        document.type("typed before locking")

        let locked: Bool = await withCheckedContinuation { done in
            document.lock { (didLock: Bool) in done.resume(returning: didLock) }
        }
        #expect(locked)
        #expect(document.isLocked)
        #expect(mode(url) & 0o222 == 0, "no one may write a locked file")
        #expect(fileText(url) == "typed before locking", "locking autosaved the document first")

        document.type("typed while locked")
        #expect(await autosave(document) != nil, "a locked document is not safe to autosave")
        #expect(fileText(url) == "typed before locking")

        let unlocked: Bool = await withCheckedContinuation { done in
            document.unlock { (didUnlock: Bool) in done.resume(returning: didUnlock) }
        }
        #expect(unlocked)
        #expect(!document.isLocked)
        #expect(mode(url) & 0o200 != 0, "the owner may write it again")
        #expect(await autosave(document) == nil)
        #expect(fileText(url) == "typed while locked")
        _ = await document.close()
    }

    @Test func anUntitledDocumentCannotBeLocked() async {
        let document = MemberNotes()
        let error: (any Error)? = await withCheckedContinuation { done in
            document.lock { (error: (any Error)?) in done.resume(returning: error) }
        }
        #expect(error != nil)
        #expect(!document.isLocked)
    }

    @Test func movingTakesTheFileAndTheDocumentToTheNewPlaceReplacingWhatIsThere() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("mine", to: "notes.txt")
        let destination = try tree.write("in the way", to: "archive/notes.txt")
        let document = try MemberNotes(contentsOf: url, ofType: "public.plain-text")
        let error: (any Error)? = await withCheckedContinuation { done in
            document.move(to: destination) { done.resume(returning: $0) }
        }
        #expect(error == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(fileText(destination) == "mine")
        #expect(document.fileURL?.standardizedFileURL == destination.standardizedFileURL)
        document.type("after the move")
        #expect(await autosave(document) == nil)
        #expect(fileText(destination) == "after the move")
        #expect(!FileManager.default.fileExists(atPath: url.path), "saved at the new place only")
        _ = await document.close()
    }

    @Test func writeSafelyWritesThroughTheSubclassWithItsAttributes() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "notes.txt")
        let copy = tree.file("copy.txt")
        try "old copy".write(to: copy, atomically: false, encoding: .utf8)
        let document = try MemberNotes(contentsOf: url, ofType: "public.plain-text")
        document.text = "exported"
        let error: (any Error)? = await withCheckedContinuation { done in
            document.save(to: copy, ofType: "public.plain-text", for: .saveToOperation) {
                done.resume(returning: $0)
            }
        }
        #expect(error == nil)
        #expect(fileText(copy) == "exported")
        #expect(mode(copy) & 0o777 == 0o640, "fileAttributesToWrite's permissions")
        #expect(document.writes.count == 1)
        #expect(document.writes.first?.original?.standardizedFileURL == copy.standardizedFileURL)
        #expect(
            document.writes.first?.url.standardizedFileURL != copy.standardizedFileURL,
            "written beside, then renamed")
        #expect(document.writes.first?.operation == .saveToOperation)
        #expect(
            document.fileURL?.standardizedFileURL == url.standardizedFileURL,
            "an export does not move the document")
        #expect(saveLeftovers(in: tree.file("")).isEmpty)
        _ = await document.close()
    }

    @Test func aFailedSaveIsPresentedThroughWillPresentError() async throws {
        let tree = try TemporaryTree()
        let document = MemberNotes()
        document.text = "nowhere"
        let error: (any Error)? = await withCheckedContinuation { done in
            document.save(
                to: tree.file("missing/folder/notes.txt"), ofType: "public.plain-text", for: .saveAsOperation
            ) {
                done.resume(returning: $0)
            }
        }
        #expect(error != nil)
        #expect(document.errorsPresented.count == 1)
    }

    @Test func versionsAreKeptOnlyWhenTheClassPreservesThem() async throws {
        let tree = try TemporaryTree()
        for (versioned, name) in [(true, "kept.txt"), (false, "dropped.txt")] {
            let url = try tree.write("first", to: name)
            let document: NSDocument =
                versioned
                ? try MemberNotes(contentsOf: url, ofType: "public.plain-text")
                : try UnversionedNotes(contentsOf: url, ofType: "public.plain-text")
            (document as? PlainNotes)?.type("second")
            #expect(await autosave(document) == nil)
            #expect(fileText(url) == "second")
            _ = await document.close()
            if versioned {
                #expect(
                    await inTurns { !VersionStore.shared.otherVersionsOfItem(at: url).isEmpty },
                    "the replaced text is a version")
            } else {
                #expect(VersionStore.shared.otherVersionsOfItem(at: url).isEmpty, "no version kept")
            }
        }
    }

    @Test func fileAccessesRunOneAtATimeInOrder() async throws {
        let document = MemberNotes()
        var log: [String] = []
        var finishFirst: (() -> Void)?
        document.performAsynchronousFileAccess { done in
            log.append("first began")
            finishFirst = done
        }
        document.performAsynchronousFileAccess { done in
            log.append("second began")
            done()
        }
        #expect(log == ["first began"], "the second waits for the first's completion handler")
        nonisolated(unsafe) let finish = finishFirst
        DispatchQueue.global().async { finish?() }
        #expect(await inTurns { log == ["first began", "second began"] })
    }

    @Test func aSynchronousAccessWaitsAndRunsMainThreadWorkMeanwhile() async throws {
        let document = MemberNotes()
        let events = Mutex<[String]>([])
        let waitingThread = pthread_self()
        document.performAsynchronousFileAccess { fileAccessCompletionHandler in
            nonisolated(unsafe) let done = fileAccessCompletionHandler
            DispatchQueue.global().async {
                // Work that needs the main thread, which is blocked waiting for this access.
                document.continueAsynchronousWorkOnMainThread {
                    let inTheWait = pthread_equal(pthread_self(), waitingThread) != 0
                    events.withLock { $0.append("main-thread work in the wait: \(inTheWait)") }
                    DispatchQueue.global().async {
                        events.withLock { $0.append("first finished") }
                        done()
                    }
                }
            }
        }
        document.performSynchronousFileAccess {
            events.withLock { $0.append("synchronous access") }
        }
        #expect(
            events.withLock { $0 }
                == ["main-thread work in the wait: true", "first finished", "synchronous access"])
    }

    @Test func anActivityBegunInsideContinueActivityDoesNotWait() async {
        let document = MemberNotes()
        var log: [String] = []
        document.performActivity(withSynchronousWaiting: false) { outerDone in
            log.append("outer")
            document.continueActivity {
                document.performActivity(withSynchronousWaiting: true) { innerDone in
                    log.append("inner")
                    innerDone()
                }
            }
            log.append("outer ends")
            outerDone()
        }
        document.performActivity(withSynchronousWaiting: false) { done in
            log.append("next")
            done()
        }
        #expect(await inTurns { log == ["outer", "inner", "outer ends", "next"] })
    }

    @Test func schedulingAnAutosaveSavesUnautosavedChangesAfterTheQuietDelay() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("first", to: "notes.txt")
        let document = try MemberNotes(contentsOf: url, ofType: "public.plain-text")
        document.type("second")
        document.scheduleAutosaving()
        #expect(await inTurns { fileText(url) == "second" && !document.hasUnautosavedChanges })
        _ = await document.close()
    }
}
