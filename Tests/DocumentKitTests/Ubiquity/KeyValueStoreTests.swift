import DocumentKit
import Foundation
import Synchronization
import Testing

/// `NSUbiquitousKeyValueStore` on one device: Apple's API, limits and notification.
@Suite("Ubiquitous key-value store") struct KeyValueStoreTests {
    /// The notifications a store posts, as (reason, keys).
    final class Heard: @unchecked Sendable {
        // Unchecked: `entries` is behind its lock; `observer` is set once, in init.
        private let entries = Mutex<[(Int, [String])]>([])
        private var observer: (any NSObjectProtocol)?
        init(_ store: NSUbiquitousKeyValueStore) {
            observer = NotificationCenter.default.addObserver(
                forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
            ) { [weak self] note in
                let reason =
                    (note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue ?? -1
                let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
                self?.entries.withLock { $0.append((reason, keys)) }
            }
        }
        deinit { observer.map(NotificationCenter.default.removeObserver) }
        var all: [(Int, [String])] { entries.withLock { $0 } }
        func wait(until condition: ([(Int, [String])]) -> Bool) -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if condition(all) { return true }
                usleep(5000)
            }
            return false
        }
    }

    @Test func typedValuesAreKeptReadBackAndPersisted() throws {
        let tree = try TemporaryTree()
        let file = tree.file("state/store.plist")
        let store = NSUbiquitousKeyValueStore(fileURL: file, device: "here")
        store.set("Menlo", forKey: "font")
        store.set(Int64(12), forKey: "count")
        store.set(0.75, forKey: "ratio")
        store.set(true, forKey: "dark")
        store.set(Data([1, 2, 3]), forKey: "blob")
        store.set(["a", "b"], forKey: "list")
        store.set(["x": 1], forKey: "map")
        store.set(Date(timeIntervalSince1970: 1000) as Any?, forKey: "when")
        #expect(store.string(forKey: "font") == "Menlo")
        #expect(store.longLong(forKey: "count") == 12)
        #expect(store.double(forKey: "ratio") == 0.75)
        #expect(store.bool(forKey: "dark"))
        #expect(store.data(forKey: "blob") == Data([1, 2, 3]))
        #expect(store.array(forKey: "list") as? [String] == ["a", "b"])
        #expect((store.dictionary(forKey: "map")?["x"] as? NSNumber)?.intValue == 1)
        #expect(store.object(forKey: "when") as? Date == Date(timeIntervalSince1970: 1000))
        // Absent keys read as Apple's defaults.
        #expect(store.string(forKey: "none") == nil && store.longLong(forKey: "none") == 0)
        #expect(store.double(forKey: "none") == 0 && !store.bool(forKey: "none"))
        store.removeObject(forKey: "blob")
        store.set(nil as String?, forKey: "font")
        #expect(store.object(forKey: "blob") == nil && store.object(forKey: "font") == nil)
        #expect(store.synchronize())
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let reopened = NSUbiquitousKeyValueStore(fileURL: file, device: "here")
        #expect(
            reopened.dictionaryRepresentation.keys.sorted() == [
                "count", "dark", "list", "map", "ratio", "when",
            ])
        #expect(reopened.double(forKey: "ratio") == 0.75)
    }

    @Test func anotherWriterOfTheStoreIsAnnouncedWithTheKeysItChanged() throws {
        let tree = try TemporaryTree()
        let file = tree.file("store.plist")
        let mine = NSUbiquitousKeyValueStore(fileURL: file, device: "a")
        let heard = Heard(mine)
        mine.set("mine", forKey: "own")
        #expect(mine.synchronize())
        // Another process (or the sync agent) writes the file.
        let other = NSUbiquitousKeyValueStore(fileURL: file, device: "b")
        other.set("theirs", forKey: "theirs")
        other.set("later", forKey: "own")
        #expect(other.synchronize())
        #expect(heard.wait { $0.contains { $0.1 == ["own", "theirs"] } || $0.flatMap(\.1).count >= 2 })
        #expect(mine.string(forKey: "theirs") == "theirs")
        #expect(mine.string(forKey: "own") == "later")
        #expect(heard.all.allSatisfy { $0.0 == NSUbiquitousKeyValueStoreServerChange })
        // Its own writes are never announced to itself.
        #expect(!heard.all.flatMap(\.1).contains("mine-only"))
        mine.set(1.0, forKey: "mine-only")
        #expect(mine.synchronize())
        usleep(100_000)
        #expect(!heard.all.flatMap(\.1).contains("mine-only"))
    }

    @Test func writesPastApplesLimitsChangeNothingAndAreReportedAsQuotaViolations() throws {
        let tree = try TemporaryTree()
        let store = NSUbiquitousKeyValueStore(fileURL: tree.file("store.plist"), device: "a")
        let heard = Heard(store)
        for index in 0..<NSUbiquitousKeyValueStore.maximumKeyCount {
            store.set(Int64(index), forKey: "k\(index)")
        }
        store.set(Int64(1), forKey: "one too many")
        #expect(store.object(forKey: "one too many") == nil)
        // Replacing a key within the limits still works, and so does removing one.
        store.set(Int64(-1), forKey: "k0")
        #expect(store.longLong(forKey: "k0") == -1)
        let long = String(repeating: "x", count: 65)
        store.set("v", forKey: long)
        store.removeObject(forKey: "k1")
        store.set(Data(count: 1_000_001), forKey: "huge")
        #expect(store.object(forKey: long) == nil && store.object(forKey: "huge") == nil)
        #expect(store.dictionaryRepresentation.count == NSUbiquitousKeyValueStore.maximumKeyCount - 1)
        #expect(
            heard.wait {
                Set($0.filter { $0.0 == NSUbiquitousKeyValueStoreQuotaViolationChange }.flatMap(\.1))
                    == ["one too many", long, "huge"]
            })
        // Not a property list: not stored.
        store.set(NSObject() as Any?, forKey: "object")
        #expect(store.object(forKey: "object") == nil)
    }

    @Test func theRecordsOfAnyDevicesMergeToTheSameStoreInAnyOrder() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let devices = ["a", "b", "c"].map { device in
                var records = KeyValueRecords()
                for _ in 0..<8 {
                    let removed = Bool.random(using: &generator)
                    records.records["k\(Int.random(in: 0..<6, using: &generator))"] = KeyValueRecords.Record(
                        value: removed ? nil : "\(device)",
                        time: Double(Int.random(in: 0..<4, using: &generator)),
                        device: device)
                }
                return records
            }
            func merged(_ order: [Int]) -> [String: String] {
                var result = KeyValueRecords()
                for index in order { result.merge(devices[index]) }
                return result.records.mapValues { "\($0.time) \($0.device) \($0.value ?? "-")" }
            }
            let orders = [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1], [1, 0, 2, 1], [2, 2, 0, 1]]
            let results = orders.map(merged)
            #expect(results.allSatisfy { $0 == results[0] })
            // Encoded and decoded, a store is the same store.
            var all = KeyValueRecords()
            for records in devices { all.merge(records) }
            let decoded = try #require(KeyValueRecords(decoding: try all.encoded()))
            #expect(
                decoded.records.mapValues { "\($0.time) \($0.device) \($0.value ?? "-")" }
                    == merged([0, 1, 2]))
        }
    }
}

extension UbiquitySettingsTests {
    @Suite("Ubiquitous key-value store: the default store") struct DefaultKeyValueStoreTests {
        @Test func valuesKeptBeforeAnyContainerJoinTheFirstContainersStore() throws {
            let tree = try TemporaryTree()
            try UbiquitySettingsTests.withSettings(in: tree) {
                // No container: the unsynced file, which gets moved once a container exists.
                let state = tree.file("state")
                let unsynced = NSUbiquitousKeyValueStore.defaultFileURL(stateHome: state)
                #expect(unsynced.lastPathComponent == "keyvalue-unsynced.plist")
                let early = NSUbiquitousKeyValueStore(fileURL: unsynced, device: "here")
                early.set("kept", forKey: "early")
                #expect(early.synchronize())
                try UbiquityConfiguration.update {
                    try $0.add(
                        UbiquityContainer(
                            name: "n", identifier: "iCloud.n", folder: tree.file("N").path,
                            remote: "file:///srv/n"))
                }
                let file = NSUbiquitousKeyValueStore.defaultFileURL(stateHome: state)
                #expect(file.lastPathComponent.hasSuffix(".keyvalue.plist"))
                #expect(!FileManager.default.fileExists(atPath: unsynced.path))
                #expect(
                    NSUbiquitousKeyValueStore(fileURL: file, device: "here").string(forKey: "early") == "kept"
                )
            }
        }
    }

}
