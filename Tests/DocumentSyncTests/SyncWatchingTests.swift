import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// How an engine that keeps syncing hears the remote's changes: the change marker asked every
/// second while devices are active and less often once quiet (``ChangePolling``), a pass when
/// it changed, a folder remote watched with inotify.
@Suite struct ChangePollingTests {
    /// What a schedule does from 0 to `end`, asking a marker that never changes.
    func run(
        _ polling: inout ChangePolling, until end: Duration, changed: (Duration) -> Bool? = { _ in false }
    )
        -> (asks: [Duration], passes: [Duration])
    {
        var (asks, passes): ([Duration], [Duration]) = ([], [])
        var now = Duration.zero
        while now < end {
            switch polling.next(at: now) {
            case .pass:
                passes.append(now)
                polling.passed(at: now, didWork: false)
            case .ask:
                asks.append(now)
                polling.asked(at: now, changed: changed(now))
            case .wait(let until):
                #expect(until > now)
                now = until
            }
        }
        return (asks, passes)
    }

    @Test func asksEverySecondWhileActiveThenLessAndLessUpToTheInterval() {
        var polling = ChangePolling(interval: .seconds(30), now: .zero)
        let (asks, passes) = run(&polling, until: .seconds(600))
        let early = asks.filter { $0 < .seconds(120) }
        #expect(early.count >= 110, "asked every second while active: \(early.count) asks")
        // Once quiet, the gap doubles, and no ask falls where a pass comes anyway.
        let late = asks.filter { $0 >= .seconds(300) }
        #expect(late.isEmpty, "asks once quiet: \(late)")
        #expect(passes.filter { $0 >= .seconds(300) }.count == 10, "a pass every 30 s: \(passes)")
        // Quiet from 120 s: 2, 4, then 8 s apart; the next would fall on the pass at 150 s.
        #expect(
            asks.filter { $0 > .seconds(120) } == [.seconds(122), .seconds(126), .seconds(134)], "\(asks)")
    }

    @Test func aChangedMarkerMakesItAskEverySecondAgain() {
        var polling = ChangePolling(interval: .seconds(30), now: .zero)
        _ = run(&polling, until: .seconds(400))
        #expect(polling.gap > .seconds(1))
        polling.asked(at: .seconds(400), changed: true)
        #expect(polling.gap == .seconds(1))
        #expect(polling.next(at: .seconds(400.5)) == .wait(until: .seconds(401)))
        let (asks, _) = run(&polling, until: .seconds(400) + .seconds(100))
        #expect(asks.count >= 90, "active again for two minutes: \(asks.count)")
    }

    @Test func aMarkerThatCannotBeAskedIsAskedLessOftenAndPassesStillCome() {
        var polling = ChangePolling(interval: .seconds(30), now: .zero)
        let (asks, passes) = run(&polling, until: .seconds(120), changed: { _ in nil })
        #expect(asks == [.seconds(1), .seconds(3), .seconds(7), .seconds(15), .seconds(46)], "\(asks)")
        #expect(passes == [.seconds(30), .seconds(60), .seconds(90)], "\(passes)")
    }

    @Test func aRemoteThatTellsItsChangesIsNeverAsked() {
        var polling = ChangePolling(interval: .seconds(30), now: .zero, asks: false)
        let (asks, passes) = run(&polling, until: .seconds(100))
        #expect(asks.isEmpty)
        #expect(passes == [.seconds(30), .seconds(60), .seconds(90)])
    }
}

/// A remote that counts how often its change marker is asked, and may fail every ask.
final class MarkerCountingRemote: ForwardingRemote, @unchecked Sendable {
    let asks = Mutex(0)
    let failsAsks: Bool

    init(_ base: any Remote, failsAsks: Bool = false) {
        self.failsAsks = failsAsks
        super.init(base)
    }

    override func changeMarker() throws -> RemoteTag? {
        asks.withLock { $0 += 1 }
        if failsAsks {
            throw RemoteError(.badAnswer, operation: .entry, path: .changeMarker, remote: displayName)
        }
        return try base.changeMarker()
    }
}

extension BlockingSyncTests {
    /// ``SyncEngine/keepSyncing(every:until:report:)`` on a manual clock: what a device sees
    /// of another's changes, by the clock the loop waits on, and what it asks meanwhile.
    @Suite struct KeepSyncingTests {
        let folder: TemporaryFolder

        init() throws { folder = try TemporaryFolder() }

        /// `a` keeps syncing at the default 30 s interval on a manual clock, `act` is called
        /// with the clock's time whenever the loop looks whether to stop; returns the times of
        /// the passes that downloaded.
        func keepSyncing(
            _ a: SyncDevice, clock: ManualSyncClock, until end: Duration,
            act: @escaping @Sendable (Duration) -> Void
        ) throws -> [Duration] {
            var downloads: [Duration] = []
            try a.opened().keepSyncing(
                every: .seconds(30),
                until: {
                    act(clock.elapsed)
                    return clock.elapsed >= end
                },
                report: { result in
                    if case .success(let summary) = result, summary.downloaded > 0 {
                        downloads.append(clock.elapsed)
                    }
                })
            return downloads
        }

        @Test func anotherDevicesSaveIsDownloadedWithinTwoSecondsWhileActive() throws {
            let clock = ManualSyncClock()
            let remote = SimulatedRemote()
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            (a.clock, b.clock) = (clock, clock)
            try b.write("old.txt", "there before")
            try b.sync()
            let saved = Mutex<Duration?>(nil)
            let downloads = try keepSyncing(a, clock: clock, until: .seconds(90)) { now in
                guard now >= .seconds(47), saved.withLock({ $0 == nil }) else { return }
                try? b.write("notes.txt", "saved on b")
                _ = try? b.sync()
                saved.withLock { $0 = now }
            }
            let when = try #require(saved.withLock { $0 })
            #expect(downloads.first == .zero, "the first pass took the old document")
            let arrival = try #require(downloads.dropFirst().first, "never downloaded")
            #expect(arrival - when <= .seconds(2), "saved at \(when), downloaded at \(arrival)")
            #expect(a.read("notes.txt") == "saved on b")
        }

        @Test func anIdleAgentAsksEverySecondThenAboutOnceAnInterval() throws {
            let clock = ManualSyncClock()
            let remote = MarkerCountingRemote(SimulatedRemote())
            let a = try SyncDevice("a", remote: remote, in: folder)
            a.clock = clock
            let asked = Mutex<[Duration: Int]>([:])
            _ = try keepSyncing(a, clock: clock, until: .seconds(600)) { now in
                let count = remote.asks.withLock { $0 }
                asked.withLock { $0[.seconds(Int(now.seconds))] = count }
            }
            let counts = asked.withLock { $0 }
            let firstMinute = (counts[.seconds(60)] ?? 0) - (counts[.zero] ?? 0)
            let lastFiveMinutes = remote.asks.withLock { $0 } - (counts[.seconds(300)] ?? 0)
            #expect(firstMinute >= 55, "asks in the first minute: \(firstMinute)")
            #expect(lastFiveMinutes <= 12, "asks in the last five minutes: \(lastFiveMinutes)")
        }

        @Test func aMarkerThatFailsNeverStopsTheLoopAndPassesStillCome() throws {
            let clock = ManualSyncClock()
            let remote = MarkerCountingRemote(SimulatedRemote(), failsAsks: true)
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            (a.clock, b.clock) = (clock, clock)
            let saved = Atomic(false)
            let downloads = try keepSyncing(a, clock: clock, until: .seconds(65)) { now in
                guard now >= .seconds(5), !saved.load(ordering: .relaxed) else { return }
                try? b.write("notes.txt", "saved on b")
                _ = try? b.sync()
                saved.store(true, ordering: .relaxed)
            }
            #expect(
                downloads.count == 1 && downloads[0] >= .seconds(30) && downloads[0] <= .seconds(31),
                "\(downloads)")
            #expect(remote.asks.withLock { $0 } <= 10, "\(remote.asks.withLock { $0 }) asks")
        }

        /// A folder remote is watched: the other device's change wakes the agent at once, at the
        /// default 30 s interval, with no marker asked.
        @Test func aFolderRemoteWakesTheAgentAtOnce() throws {
            let remote = MarkerCountingRemote(LocalFolderRemote(root: try folder.folder("remote")))
            let waited = try timeUntilAnotherDevicesSaveArrives(through: remote, in: folder)
            #expect(waited < .seconds(5), "arrived after \(waited)")
            #expect(remote.asks.withLock { $0 } == 0, "a watched folder is never asked")
        }

        @Suite struct WebDAV {
            @Test func anAgentOnApacheHasAnotherDevicesSaveInSeconds() throws {
                let folder = try TemporaryFolder()
                let (remote, _, _) = try WebDAVServers.collection(on: .default)
                let waited = try timeUntilAnotherDevicesSaveArrives(through: remote, in: folder)
                #expect(waited < .seconds(5), "arrived after \(waited)")
            }

            /// Apache's folder ETags change only with the folder's own entries: the marker is
            /// the file every device rewrites after a pass that changed the remote.
            @Test func theMarkerChangesWhenAnotherDeviceWritesAndNotWhenAPassOnlyReads() throws {
                let (remote, _, _) = try WebDAVServers.collection(on: .default)
                try expectTheMarkerFollowsWrites(on: remote, in: try TemporaryFolder())
            }
        }

        @Suite struct S3 {
            @Test func anAgentOnSeaweedFSHasAnotherDevicesSaveInSeconds() throws {
                let waited = try timeUntilAnotherDevicesSaveArrives(
                    through: try S3Servers.remote(), in: try TemporaryFolder())
                #expect(waited < .seconds(5), "arrived after \(waited)")
            }

            @Test func theMarkerChangesWhenAnotherDeviceWritesAndNotWhenAPassOnlyReads() throws {
                try expectTheMarkerFollowsWrites(on: try S3Servers.remote(), in: try TemporaryFolder())
            }
        }
    }
}

extension BlockingSyncTests {
    /// What a hostile or broken server answers a change marker's request (``Remote/changeMarker()``):
    /// a failure the loop asks again later, never a marker made of it, never a hang.
    @Suite struct HostileChangeMarkerTests {
        @Test(arguments: HostileStores.names)
        func anAnswerThatIsNotAWholeDocumentFailsTheAsk(_ name: String) throws {
            let store = try HostileStores.make(name)
            store.server.intercept { _ in
                .xml(name == "S3" ? 200 : 207, "<D:multistatus xmlns:D=\"DAV:\"><D:response>")
            }
            let remote = try store.anyRemote(deadline: RequestDeadline())
            #expect(throws: RemoteError.self) { try remote.changeMarker() }
        }

        /// A server that holds its answer back fails the ask within the marker's own deadline
        /// (10 s), though the remote's other requests may take a minute.
        @Test func anAnswerHeldBackFailsTheAskWithinItsDeadline() throws {
            let store = try HostileDAV()
            let body = HostileServer.multistatus([
                HostileServer.Item(HostileDAV.base + ".documentsync/changed", etag: "m1")
            ])
            store.server.intercept { _ in .xml(207, body, delivery: .trickle(bytes: 1, seconds: 1)) }
            let remote = try store.remote(deadline: RequestDeadline(allowance: 60))
            let start = ContinuousClock.now
            #expect(throws: RemoteError.self) { try remote.changeMarker() }
            #expect(ContinuousClock.now - start < .seconds(20))
        }

        /// Where folder ETags propagate, the root's ETag is the marker, one request an ask; a
        /// root that gives none sends the asks to the marker file.
        @Test func theRootsETagIsTheMarkerWhereFolderETagsPropagate() throws {
            let store = try HostileDAV()
            let root = Mutex<String?>("r1")
            let asked = Mutex<[String]>([])
            store.server.intercept { request in
                guard request.method == "PROPFIND", request.headers["depth"] == "0" else { return nil }
                asked.withLock { $0.append(request.path) }
                guard request.path == HostileDAV.base else { return nil }
                let etag = root.withLock { $0 }
                return .xml(207, HostileServer.multistatus([HostileServer.Item(HostileDAV.base, etag: etag)]))
            }
            var configuration = WebDAVRemote.Configuration(url: store.url, writeProtocol: .conditional)
            configuration.folderTagsPropagate = true
            let remote = try WebDAVRemote(configuration)
            let first = try remote.changeMarker()
            #expect(try remote.changeMarker() == first)
            root.withLock { $0 = "r2" }
            #expect(try remote.changeMarker() != first)
            #expect(asked.withLock { $0 } == Array(repeating: HostileDAV.base, count: 3))
            root.withLock { $0 = nil }
            store.put(".documentsync/changed", "from a device\n")
            let marker = try remote.changeMarker()
            #expect(marker != nil && marker != first)
            #expect(
                asked.withLock { $0.suffix(2) } == [
                    HostileDAV.base, HostileDAV.base + ".documentsync/changed",
                ])
        }
    }
}

/// Another device's writes change `remote`'s change marker, in the root and deeper; a pass that
/// only downloads leaves it.
func expectTheMarkerFollowsWrites(on remote: any Remote, in folder: TemporaryFolder) throws {
    let a = try SyncDevice("a", remote: remote, in: folder)
    let b = try SyncDevice("b", remote: remote, in: folder)
    let empty = try remote.changeMarker()
    try b.write("notes.txt", "saved on b")
    #expect(try b.sync().uploaded == 1)
    let saved = try #require(try remote.changeMarker())
    #expect(saved != empty)
    #expect(try a.sync().downloaded == 1)
    #expect(try remote.changeMarker() == saved, "a pass that only downloads leaves it")
    try b.write("Projects/plan.txt", "deeper")
    try b.sync()
    #expect(try remote.changeMarker() != saved)
}

/// `a` keeps syncing through `remote` at the default 30 s interval on the system's clock,
/// and a second device saves a document after `a`'s first pass: how long after that save
/// (uploaded) the document is in `a`'s container.
func timeUntilAnotherDevicesSaveArrives(through remote: any Remote, in folder: TemporaryFolder) throws
    -> Duration
{
    let a = try SyncDevice("a", remote: remote, in: folder)
    let b = try SyncDevice("b", remote: remote, in: folder)
    let stop = Atomic(false)
    let passes = Atomic(0)
    let engine = try a.opened()
    let thread = Thread {
        _ = try? engine.keepSyncing(
            every: .seconds(30), until: { stop.load(ordering: .relaxed) },
            report: { _ in passes.add(1, ordering: .relaxed) })
    }
    thread.start()
    defer { stop.store(true, ordering: .relaxed) }
    let start = ContinuousClock.now
    while passes.load(ordering: .relaxed) == 0, ContinuousClock.now - start < .seconds(20) { usleep(20_000) }
    try b.write("notes.txt", "saved on b")
    try b.sync()
    let saved = ContinuousClock.now
    while a.read("notes.txt") == nil, ContinuousClock.now - saved < .seconds(20) { usleep(20_000) }
    #expect(a.read("notes.txt") == "saved on b")
    return ContinuousClock.now - saved
}
