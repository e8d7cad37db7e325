import DocumentKit
import Foundation
import Synchronization
import Testing

@MainActor
@Suite("Document autosave timing, on a manual clock")
struct DocumentAutosaveTests {
    /// An open text document on a manual clock, with one edit made and its undo group closed.
    func editedDocument(_ tree: TemporaryTree, configure: (inout AutosaveConfiguration) -> Void = { _ in })
        async throws -> (TextDocument, ManualClock, URL)
    {
        let url = try tree.write("start", to: "autosave.txt")
        let document = TextDocument(fileURL: url)
        let clock = ManualClock()
        document.useManualClock(clock)
        configure(&document.autosaveConfiguration)
        #expect(await document.open())
        document.text = "edited"
        await endOfTurn()
        #expect(document.hasUnsavedChanges)
        return (document, clock, url)
    }

    @Test func defaultDelaysAreTwoAndTenSeconds() {
        let configuration = AutosaveConfiguration()
        #expect(configuration.quietDelay == .seconds(2))
        #expect(configuration.maximumDelay == .seconds(10))
        #expect(configuration.isEnabled)
    }

    @Test func savesAfterTheQuietDelayAndNotBefore() async throws {
        let tree = try TemporaryTree()
        let (document, clock, url) = try await editedDocument(tree)
        await clock.advance(by: .milliseconds(1900))
        await settle(document)
        #expect(document.savesStarted == 0, "no save before the quiet delay")
        #expect(fileText(url) == "start")
        await clock.advance(by: .milliseconds(100))
        await settle(document)
        #expect(document.saveTimes == [.seconds(2)])
        #expect(fileText(url) == "edited")
        #expect(!document.hasUnsavedChanges)
        await clock.advance(by: .seconds(60))
        await settle(document)
        #expect(document.savesStarted == 1, "a clean document is not saved again")
        _ = await document.close()
    }

    @Test func eachEditRestartsTheQuietDelay() async throws {
        let tree = try TemporaryTree()
        let (document, clock, url) = try await editedDocument(tree)
        await clock.advance(by: .milliseconds(1500))
        document.text = "edited more"
        await endOfTurn()
        await clock.advance(by: .milliseconds(1500))
        await settle(document)
        #expect(document.savesStarted == 0, "3 s after the first edit but 1.5 s after the last")
        await clock.advance(by: .milliseconds(500))
        await settle(document)
        #expect(document.saveTimes == [.milliseconds(3500)])
        #expect(fileText(url) == "edited more")
        _ = await document.close()
    }

    @Test func continuousEditingIsSavedAtLeastEveryMaximumDelay() async throws {
        let tree = try TemporaryTree()
        let (document, clock, url) = try await editedDocument(tree)
        var unsavedSince: Duration? = .zero
        var longestWait: Duration = .zero
        for step in 1...40 {
            await clock.advance(by: .milliseconds(500))
            await settle(document)
            if !document.hasUnsavedChanges { unsavedSince = nil }
            if let since = unsavedSince { longestWait = max(longestWait, clock.now.offset - since) }
            document.text = "edit \(step)"
            await endOfTurn()
            if unsavedSince == nil { unsavedSince = clock.now.offset }
        }
        #expect(document.saveTimes.count >= 2, "20 s of typing saved at least twice: \(document.saveTimes)")
        #expect(document.saveTimes.count <= 4, "but not on every keystroke: \(document.saveTimes)")
        let first = try #require(document.saveTimes.first)
        #expect(first <= .seconds(10))
        #expect(longestWait <= .seconds(10), "no edit waited longer than the maximum delay")
        for (earlier, later) in zip(document.saveTimes, document.saveTimes.dropFirst()) {
            #expect(later - earlier <= .milliseconds(10_500), "saves \(earlier) and \(later) too far apart")
        }
        await clock.advance(by: .seconds(2))
        await settle(document)
        #expect(fileText(url) == "edit 40", "the last edit is saved once typing stops")
        _ = await document.close()
    }

    @Test func configuredDelaysAreHonoured() async throws {
        let tree = try TemporaryTree()
        let (document, clock, url) = try await editedDocument(tree) {
            $0.quietDelay = .seconds(5)
            $0.maximumDelay = .seconds(7)
        }
        await clock.advance(by: .milliseconds(4900))
        await settle(document)
        #expect(document.savesStarted == 0)
        await clock.advance(by: .milliseconds(100))
        await settle(document)
        #expect(document.saveTimes == [.seconds(5)])
        #expect(fileText(url) == "edited")

        // Edits every 2 s from 5 s on: the quiet delay never passes, so the 7 s cap decides.
        document.text = "burst 5"
        await endOfTurn()
        for second in 6...13 {
            await clock.advance(by: .seconds(1))
            await settle(document)
            if second % 2 == 1 {
                document.text = "burst \(second)"
                await endOfTurn()
            }
        }
        #expect(document.saveTimes == [.seconds(5), .seconds(12)])
        _ = await document.close()
    }

    @Test func changingTheConfigurationAfterOpeningTakesEffect() async throws {
        let tree = try TemporaryTree()
        let (document, clock, url) = try await editedDocument(tree)
        await clock.advance(by: .seconds(2))
        await settle(document)
        document.autosaveConfiguration.quietDelay = .milliseconds(300)
        document.text = "quick"
        await endOfTurn()
        await clock.advance(by: .milliseconds(300))
        await settle(document)
        #expect(document.saveTimes == [.seconds(2), .milliseconds(2300)])
        #expect(fileText(url) == "quick")
        _ = await document.close()
    }

    @Test func disabledAutosaveNeverSavesByItselfButCloseStillSaves() async throws {
        let tree = try TemporaryTree()
        let (document, clock, url) = try await editedDocument(tree) { $0.isEnabled = false }
        for _ in 0..<10 {
            await clock.advance(by: .seconds(30))
            await settle(document)
        }
        #expect(document.savesStarted == 0)
        #expect(document.hasUnsavedChanges)
        #expect(fileText(url) == "start")
        #expect(await document.close())
        #expect(fileText(url) == "edited")
    }

    @Test func noTimerIsLeftAfterClose() async throws {
        let tree = try TemporaryTree()
        let (document, clock, _) = try await editedDocument(tree)
        #expect(await eventually { clock.sleeperCount == 1 })
        #expect(await document.close())
        #expect(await eventually { clock.sleeperCount == 0 })
        document.updateChangeCount(.done)
        await clock.advance(by: .seconds(60))
        #expect(document.savesStarted == 1, "only close saved; a closed document is not autosaved")
    }
}

/// A manual clock that runs a hook the next time autosave reads the time: the timer reads it
/// when it fires, so the hook can queue work between the timer and the save it starts.
final class HookedClock: Clock, Sendable {
    let inner = ManualClock()
    private let hook = Mutex<(@Sendable () -> Void)?>(nil)

    var now: ManualClock.Instant {
        hook.withLock { hook in
            defer { hook = nil }
            return hook
        }?()
        return inner.now
    }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await inner.sleep(until: deadline, tolerance: tolerance)
    }

    /// Runs `body` at the next read of `now`.
    func onNextRead(_ body: @escaping @Sendable () -> Void) { hook.withLock { $0 = body } }
}

@MainActor
@Suite("Document autosave after races with the timer")
struct DocumentAutosaveRaceTests {
    @Test func autosaveKeepsWorkingAfterAnUndoCleansTheDocumentAsTheTimerFires() async throws {
        let tree = try TemporaryTree()
        let url = try tree.write("a", to: "race.txt")
        let document = TextDocument(fileURL: url)
        let clock = HookedClock()
        document.manualClock = clock.inner
        document.autosaveConfiguration.clock = AutosaveClock(clock)
        #expect(await document.open())
        document.text = "ab"
        await endOfTurn()
        #expect(document.hasUnsavedChanges)

        // The undo lands after the timer fired and before the save it asked for begins.
        clock.onNextRead {
            DispatchQueue.main.async { MainActor.assumeIsolated { document.undoManager.undo() } }
        }
        await clock.inner.advance(by: .seconds(2))
        await settle(document)
        #expect(document.text == "a")
        #expect(!document.hasUnsavedChanges)

        document.text = "abc"
        await endOfTurn()
        await clock.inner.advance(by: .seconds(2))
        await settle(document)
        #expect(fileText(url) == "abc", "the next edit is still autosaved")
        _ = await document.close()
    }
}
