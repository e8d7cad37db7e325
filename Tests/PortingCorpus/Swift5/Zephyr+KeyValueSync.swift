// Porting corpus. Source: github.com/ArtSabintsev/Zephyr, commit 6a17bcfe, Sources/Zephyr.swift
// (MIT, © 2015 Arthur Ariel Sabintsev): keeps UserDefaults and NSUbiquitousKeyValueStore in
// step. Written anew with its calls: the store's dictionaryRepresentation, set/removeObject and
// synchronize, its external-change notification with the changed keys in userInfo, a sync date
// stored in both, and a watch on the monitored UserDefaults keys. Ported with its import and
// the edits Linux forces: `@objcMembers` and `@objc` dropped, block observers for the
// `#selector` ones, and key-value observing of UserDefaults (which Linux Foundation lacks)
// replaced by UserDefaults.didChangeNotification. Its UIApplication/UIScene foreground
// observers sit behind `#if os(iOS) || os(tvOS)` in the source and are not compiled here.
import DocumentKit
import Foundation

// PORT (Linux): `@objcMembers` dropped (no Objective-C runtime).
public final class CorpusKeyValueSync: NSObject {
    public static let keysDidChangeOnCloudNotification = Notification.Name(
        "CorpusKeysDidChangeOnCloudNotification")
    private let syncKey = "CorpusSyncKey"
    private let userDefaults: UserDefaults
    private let store: NSUbiquitousKeyValueStore
    private let queue = DispatchQueue(label: "corpus.keyvaluesync")
    private var monitoredKeys: [String] = []
    private var observers: [NSObjectProtocol] = []
    // PORT (Linux): the values last seen, for the UserDefaults.didChangeNotification observer
    // that stands in for per-key key-value observing.
    private var observedValues: [String: Any] = [:]

    public init(userDefaults: UserDefaults = .standard, store: NSUbiquitousKeyValueStore = .default) {
        self.userDefaults = userDefaults
        self.store = store
        super.init()
        // PORT (Linux): a block observer in place of `selector: #selector(keysDidChangeOnCloud(notification:))`.
        observers.append(
            NotificationCenter.default.addObserver(
                forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: nil, queue: nil
            ) { [weak self] in
                self?.keysDidChangeOnCloud(notification: $0)
            })
        // PORT (Linux): replaces `userDefaults.addObserver(self, forKeyPath: key, options: .new,
        // context: nil)` for each monitored key.
        observers.append(
            NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: userDefaults, queue: nil
            ) { [weak self] _ in
                self?.defaultsDidChange()
            })
        store.synchronize()
    }

    deinit {
        observers.forEach(NotificationCenter.default.removeObserver)
    }

    /// Copies `keys` to the store now and keeps them in step from then on.
    public func sync(keys: [String]) {
        queue.sync {
            for key in keys {
                store.set(userDefaults.object(forKey: key), forKey: key)
                observedValues[key] = userDefaults.object(forKey: key)
            }
            monitoredKeys.append(contentsOf: keys.filter { !monitoredKeys.contains($0) })
            let now = Date()
            store.set(now, forKey: syncKey)
            userDefaults.set(now, forKey: syncKey)
            store.synchronize()
        }
    }

    /// Which side changed last, by the sync dates stored in both.
    public var remoteIsNewer: Bool {
        guard let remote = store.dictionaryRepresentation[syncKey] as? Date else { return false }
        guard let local = userDefaults.dictionaryRepresentation()[syncKey] as? Date else { return true }
        return remote.timeIntervalSince1970 > local.timeIntervalSince1970
    }

    private func defaultsDidChange() {
        queue.sync {
            for key in monitoredKeys {
                let value = userDefaults.object(forKey: key)
                let old = observedValues[key]
                let same =
                    value == nil
                    ? old == nil
                    : old.map { NSDictionary(dictionary: [key: value!]).isEqual(to: [key: $0]) } ?? false
                guard !same else { continue }
                observedValues[key] = value
                if let value = value {
                    store.set(value, forKey: key)
                } else {
                    store.removeObject(forKey: key)
                }
                store.set(Date(), forKey: syncKey)
            }
        }
    }

    // PORT (Linux): `@objc` dropped.
    func keysDidChangeOnCloud(notification: Notification) {
        guard notification.name == NSUbiquitousKeyValueStore.didChangeExternallyNotification,
            let userInfo = (notification as NSNotification).userInfo,
            let cloudKeys = userInfo[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String]
        else { return }
        queue.sync {
            for key in cloudKeys where monitoredKeys.contains(key) {
                let value = store.object(forKey: key)
                observedValues[key] = value
                userDefaults.set(value, forKey: key)
            }
        }
        NotificationCenter.default.post(name: Self.keysDidChangeOnCloudNotification, object: nil)
    }
}
