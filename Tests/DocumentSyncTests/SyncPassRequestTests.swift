import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A pass asked of the process that holds a container (its agent) by another
/// (``SyncEngine/passThroughAgent(ofContainer:configuration:takenWithin:)``), and the record
/// the holder keeps in its lock (``SyncLockHolder``).
@Suite struct SyncPassRequestTests {
    func device() throws -> (SyncDevice, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        return (try SyncDevice("a", remote: remote, in: folder), folder)
    }

    func lock(of device: SyncDevice) -> URL {
        SyncStateFiles.lock(forContainer: device.container, stateHome: device.stateHome)
    }

    /// Runs `body` while `engine` keeps syncing on a thread of its own, as an agent does;
    /// returns once the loop has ended.
    func keepSyncing(_ engine: SyncEngine, body: () throws -> Void) rethrows {
        final class Flag: Sendable { let stop = Atomic(false) }
        let flag = Flag()
        let ended = DispatchSemaphore(value: 0)
        let box = UncheckedBox(engine)
        Thread.detachNewThread {
            _ = try? box.value.keepSyncing(
                every: .seconds(600), until: { flag.stop.load(ordering: .relaxed) }
            ) {
                _ in
            }
            ended.signal()
        }
        defer {
            flag.stop.store(true, ordering: .relaxed)
            ended.wait()
        }
        try body()
    }

    @Test func theAgentRunsTheAskedPassAfterTheRequestAndAnswersWithWhatItDid() throws {
        let (device, folder) = try device()
        _ = folder
        let engine = try device.opened()
        #expect(
            SyncLockHolder.of(lock: lock(of: device))
                == SyncLockHolder(
                    pid: getpid(), container: device.container.path, isAgent: false))
        try keepSyncing(engine) {
            try device.write("written.txt", "written before the request")
            let summary = try SyncEngine.passThroughAgent(
                ofContainer: device.container, configuration: device.configuration)
            #expect(summary?.failures == [])
            // The pass that answered began after the write: it is up.
            #expect(try device.remote.entry(at: RemotePath("written.txt")) != nil)
            #expect(SyncLockHolder.of(lock: lock(of: device))?.isAgent == true)
            let requests = SyncPassRequests(forContainer: device.container, stateHome: device.stateHome)
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: requests.folder.path)) == [],
                "nothing is left of the request")
        }
    }

    /// A holder that never takes the request (a one-shot sync of an older version, a stuck
    /// process) and publishes nothing is given up on, and the request withdrawn.
    @Test func aHolderThatNeitherTakesTheRequestNorMovesIsGivenUpOn() throws {
        let (device, folder) = try device()
        _ = folder
        _ = try device.opened()
        let started = ContinuousClock.now
        #expect {
            _ = try SyncEngine.passThroughAgent(
                ofContainer: device.container, configuration: device.configuration,
                takenWithin: .milliseconds(300))
        } throws: { ($0 as? SyncError)?.kind == .busy && "\($0)".contains("process \(getpid())") }
        #expect(ContinuousClock.now - started < .seconds(30))
        let requests = SyncPassRequests(forContainer: device.container, stateHome: device.stateHome)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: requests.folder.path)) == [])
    }

    /// The holder ends (killed, or a one-shot sync done) while the request waits: the asker
    /// is told to sync itself, and its request is withdrawn.
    @Test func whenTheHolderLetsGoTheAskerSyncsItself() throws {
        let (device, folder) = try device()
        _ = folder
        _ = try device.opened()
        let box = UncheckedBox(device)
        Thread.detachNewThread {
            usleep(300_000)
            box.value.crash()
        }
        let summary = try SyncEngine.passThroughAgent(
            ofContainer: device.container, configuration: device.configuration)
        #expect(summary == nil)
        #expect(SyncLockHolder.of(lock: lock(of: device)) == nil)
        let requests = SyncPassRequests(forContainer: device.container, stateHome: device.stateHome)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: requests.folder.path)) == [])
    }

    /// Names in the requests' folder that are not requests are left alone, and leftovers a day
    /// old are removed.
    @Test func onlyRequestsAreTakenAndOldLeftoversGo() throws {
        let folder = try TemporaryFolder()
        let requests = SyncPassRequests(
            forContainer: try folder.folder("c"), stateHome: try folder.folder("s"))
        let id = try requests.ask()
        let stranger = requests.folder.appendingPathComponent("../../escape.request")
        let odd = requests.folder.appendingPathComponent("not-an-id.request")
        try Data().write(to: odd)
        let old = requests.folder.appendingPathComponent(String(repeating: "a", count: 32) + ".answer")
        try Data("{}".utf8).write(to: old)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -2 * 86_400)], ofItemAtPath: old.path)
        #expect(requests.take() == [id])
        #expect(!FileManager.default.fileExists(atPath: stranger.path))
        #expect(FileManager.default.fileExists(atPath: odd.path))
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(try requests.progress(of: id) == .taken)
        requests.answer(id, with: Data("answer".utf8))
        #expect(try requests.progress(of: id) == .answered(Data("answer".utf8)))
        #expect(try requests.progress(of: id) == .lost)
    }
}

/// A value handed to another thread by a test that knows it is used by one thread at a time.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
