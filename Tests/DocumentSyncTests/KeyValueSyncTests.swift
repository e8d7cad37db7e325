import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// The ubiquitous key-value store across devices: each device's store file merged with the
/// others' through the remote by its engine, key by key, the last writer winning.
@Suite struct KeyValueSyncTests {
    let folder: TemporaryFolder
    let remoteFolder: URL

    init() throws {
        folder = try TemporaryFolder()
        remoteFolder = try folder.folder("remote")
    }

    func devices(_ names: String...) throws -> [SyncDevice] {
        let remote = LocalFolderRemote(root: remoteFolder)
        return try names.map {
            let device = try SyncDevice($0, remote: remote, in: folder)
            device.syncsKeyValues = true
            return device
        }
    }

    func store(_ device: SyncDevice) -> UbiquitousKeyValueStore {
        UbiquitousKeyValueStore(fileURL: device.keyValueStore, device: device.name)
    }

    /// The notifications `store` posts, as (reason, keys).
    final class Heard: @unchecked Sendable {
        final class Log: Sendable {
            let entries = Mutex<[(Int, [String])]>([])
            func withLock<R>(_ body: (inout [(Int, [String])]) -> R) -> R { entries.withLock { body(&$0) } }
        }
        let events = Log()
        var observer: (any NSObjectProtocol)?
        init(_ store: UbiquitousKeyValueStore) {
            let events = events
            observer = NotificationCenter.default.addObserver(
                forName: UbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
            ) { note in
                let reason =
                    (note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue ?? -1
                let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
                events.withLock { $0.append((reason, keys)) }
            }
        }
        deinit { observer.map(NotificationCenter.default.removeObserver) }
        func waitFor(_ key: String) -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if events.withLock({ $0.contains { $0.1.contains(key) } }) { return true }
                usleep(5000)
            }
            return false
        }
    }

    @Test func aValueSetOnOneDeviceArrivesOnTheOtherWithTheNotification() throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        let storeA = store(a)
        let storeB = store(b)
        let heard = Heard(storeB)
        storeA.set("Menlo", forKey: "font")
        storeA.set(14.5, forKey: "size")
        storeA.set(["one", "two"], forKey: "recent")
        #expect(storeA.synchronize())
        try a.sync()
        try b.sync()
        #expect(heard.waitFor("font"))
        #expect(storeB.string(forKey: "font") == "Menlo")
        #expect(storeB.double(forKey: "size") == 14.5)
        #expect(storeB.array(forKey: "recent") as? [String] == ["one", "two"])
        #expect(heard.events.withLock { $0.allSatisfy { $0.0 == NSUbiquitousKeyValueStoreServerChange } })
        // Nothing to do after: no device writes its file again.
        let remoteFile = remoteFolder.appendingPathComponent(".documentsync/keyvalue/a.plist")
        let before =
            try FileManager.default.attributesOfItem(atPath: remoteFile.path)[.modificationDate] as? Date
        try a.sync()
        try b.sync()
        try a.sync()
        let after =
            try FileManager.default.attributesOfItem(atPath: remoteFile.path)[.modificationDate] as? Date
        #expect(before == after)
    }

    @Test func theLastWriterWinsKeyByKeyAndARemovalTravelsToo() throws {
        let devices = try devices("a", "b", "c")
        let stores = devices.map(store)
        stores[0].set("from a", forKey: "shared")
        stores[0].set("only a", forKey: "a")
        #expect(stores[0].synchronize())
        usleep(2000)
        stores[1].set("from b, later", forKey: "shared")
        stores[1].set("only b", forKey: "b")
        #expect(stores[1].synchronize())
        // Whatever order the devices sync in, they agree.
        for device in [devices[1], devices[0], devices[2], devices[1], devices[0]] { try device.sync() }
        for store in stores {
            #expect(store.synchronize())
            #expect(store.string(forKey: "shared") == "from b, later")
            #expect(store.string(forKey: "a") == "only a")
            #expect(store.string(forKey: "b") == "only b")
        }
        stores[2].removeObject(forKey: "a")
        #expect(stores[2].synchronize())
        for device in [devices[2], devices[0], devices[1]] { try device.sync() }
        for store in stores {
            #expect(store.synchronize())
            #expect(store.object(forKey: "a") == nil)
            #expect(store.dictionaryRepresentation.keys.sorted() == ["b", "shared"])
        }
    }

    @Test(arguments: SyncStep.allCases)
    func aCrashAtAnyStepConvergesWithNoValueLost(_ step: SyncStep) throws {
        let devices = try devices("a", "b")
        let (a, b) = (devices[0], devices[1])
        let storeA = store(a)
        storeA.set(Int64(42), forKey: "answer")
        #expect(storeA.synchronize())
        let storeB = store(b)
        storeB.set(true, forKey: "dark")
        #expect(storeB.synchronize())
        try b.sync()
        var crashed = false
        try a.opened().checkpoint = { current in
            if current == step && !crashed {
                crashed = true
                throw SyncInterruption()
            }
        }
        #expect(throws: SyncInterruption.self) { try a.opened().pass() }
        #expect(crashed)
        a.crash()
        try a.sync()
        try b.sync()
        for store in [storeA, storeB] {
            #expect(store.synchronize())
            #expect(store.longLong(forKey: "answer") == 42)
            #expect(store.bool(forKey: "dark"))
        }
    }

    @Test func aDamagedStoreOnTheRemoteIsLeftAloneAndSaidSo() throws {
        let devices = try devices("a")
        let storeA = store(devices[0])
        storeA.set("kept", forKey: "k")
        #expect(storeA.synchronize())
        let folder = remoteFolder.appendingPathComponent(".documentsync/keyvalue")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("garbage".utf8).write(to: folder.appendingPathComponent("x.plist"))
        let summary = try devices[0].sync()
        #expect(summary.failures.isEmpty)
        #expect(
            summary.notes.contains { $0.contains("x.plist is not a key-value store") }, "\(summary.notes)")
        #expect(storeA.synchronize())
        #expect(storeA.string(forKey: "k") == "kept")
    }
}
