// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Apple's global names (NSMetadataQuery…, NSUbiquity…, NSUndoManager…) are the porting contract.

import Foundation
import Synchronization

/// Small settings synced across devices, as `NSUbiquitousKeyValueStore` keeps them: keys with
/// property-list values, stored on this device at once, and merged with the other devices'
/// by the container's sync agent through the remote, key by key, the last writer winning.
///
/// ``default`` is the store of the first ubiquity container (``UbiquityConfiguration``).
/// With none configured it keeps its values on this device, and they join the first
/// container's store when one is added. Apple's limits hold: at most 1,024 keys, keys of at
/// most 64 bytes in UTF-8, 1 MB in all; a write past them changes nothing and is reported
/// with ``didChangeExternallyNotification`` and the reason
/// `NSUbiquitousKeyValueStoreQuotaViolationChange`, as Apple reports it.
///
/// Values another device or process wrote arrive while the store is in use (the store
/// watches its file) and are announced with ``didChangeExternallyNotification``, whose
/// `userInfo` holds the reason (`NSUbiquitousKeyValueStoreServerChange`) and the changed
/// keys, posted on a queue of the store's own.
///
/// ```swift
/// let store = NSUbiquitousKeyValueStore.default
/// NotificationCenter.default.addObserver(
///     forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: .main
/// ) { note in
///     let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
///     if keys.contains("fontSize") { applyFontSize(store.double(forKey: "fontSize")) }
/// }
/// store.set(14.0, forKey: "fontSize")
/// store.synchronize()
/// ```
open class UbiquitousKeyValueStore: NSObject, @unchecked Sendable {
    // Unchecked: all state is behind `state`; the watcher and queue are thread-safe.

    /// Posted when values changed that this store did not write: another device's, through
    /// sync, or another process's on this device; and when a write was refused for a quota.
    public static let didChangeExternallyNotification = Notification.Name(
        "NSUbiquitousKeyValueStoreDidChangeExternallyNotification")

    /// The most keys a store holds.
    public static let maximumKeyCount = 1024
    /// The most bytes a key has, in UTF-8.
    public static let maximumKeyLength = 64
    /// The most bytes of keys and values a store holds.
    public static let maximumTotalBytes = 1_000_000

    private struct State {
        var records = KeyValueRecords()
        /// Keys written here and not yet in the file.
        var pending = KeyValueRecords()
        var writeScheduled = false
        /// The bytes of each key with a value (key and encoded value), and their sum.
        var sizes: [String: Int] = [:]
        var total = 0

        mutating func setSize(_ size: Int?, of key: String) {
            total -= sizes[key] ?? 0
            sizes[key] = size
            total += size ?? 0
        }

        /// Sets the size of `key` from its record's value.
        mutating func measure(_ key: String) {
            setSize(
                records.records[key]?.value.map {
                    UbiquitousKeyValueStore.encodedSize(of: $0) + key.utf8.count
                },
                of: key)
        }
    }

    /// The file the store keeps its values in.
    package let fileURL: URL
    /// This device's name in the records it writes.
    package let device: String
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "DocumentKit.UbiquitousKeyValueStore")
    private var watcher: DirectoryWatcher?

    private static let shared = Mutex<UbiquitousKeyValueStore?>(nil)

    /// The store of the first ubiquity container, made on first use.
    open class var `default`: UbiquitousKeyValueStore {
        shared.withLock { store in
            if let store { return store }
            let made = UbiquitousKeyValueStore(
                fileURL: defaultFileURL(), device: DeviceIdentity.current.identifier)
            store = made
            return made
        }
    }

    /// The file of ``default``: the first container's store, into which the values kept while
    /// none was configured move when it is first used.
    package static func defaultFileURL(stateHome: URL? = nil) -> URL {
        let unsynced = SyncStateFiles.unsyncedKeyValueStore(stateHome: stateHome)
        guard let container = (try? UbiquityConfiguration.load())?.containers.first else { return unsynced }
        let file = SyncStateFiles.keyValueStore(forContainer: container.url, stateHome: stateHome)
        if FileManager.default.fileExists(atPath: unsynced.path),
            let kept = try? KeyValueRecords.read(unsynced),
            (try? KeyValueRecords.merge(kept, into: file)) != nil
        {
            try? FileManager.default.removeItem(at: unsynced)
        }
        return file
    }

    /// A store kept in `fileURL`, writing records as `device`: for tests and tools that keep
    /// more than one; apps use ``default``.
    package init(fileURL: URL, device: String) {
        self.fileURL = fileURL
        self.device = device
        super.init()
        do {
            try FileManager.default.createDirectory(
                at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            let records = try KeyValueRecords.read(fileURL)
            state.withLock { state in
                state.records = records
                for key in records.records.keys { state.measure(key) }
            }
        } catch {
            DocumentLog.write("\(error); the key-value store starts empty")
        }
        let name = fileURL.lastPathComponent
        watcher = try? DirectoryWatcher(queue: queue) { [weak self] events in
            if events.contains(where: { $0.url.lastPathComponent == name }) { self?.reload() }
        }
        try? watcher?.watch(fileURL.deletingLastPathComponent(), recursive: false)
    }

    deinit {
        watcher?.cancel()
    }

    // MARK: Reading

    /// The value of `key`, or nil.
    open func object(forKey key: String) -> Any? {
        state.withLock { $0.records.records[key]?.value }
    }

    open func string(forKey key: String) -> String? { object(forKey: key) as? String }
    open func array(forKey key: String) -> [Any]? { object(forKey: key) as? [Any] }
    open func dictionary(forKey key: String) -> [String: Any]? { object(forKey: key) as? [String: Any] }
    open func data(forKey key: String) -> Data? { object(forKey: key) as? Data }
    /// The value of `key` as a number, 0 when it has none.
    open func longLong(forKey key: String) -> Int64 { (object(forKey: key) as? NSNumber)?.int64Value ?? 0 }
    open func double(forKey key: String) -> Double { (object(forKey: key) as? NSNumber)?.doubleValue ?? 0 }
    open func bool(forKey key: String) -> Bool { (object(forKey: key) as? NSNumber)?.boolValue ?? false }

    /// Every key with its value.
    open var dictionaryRepresentation: [String: Any] { state.withLock { $0.records.values } }

    // MARK: Writing

    /// Sets `key` to `value`, a property-list object (a string, number, date, data, or an
    /// array or dictionary of them); nil removes the key.
    ///
    /// A value that is not a property list, or a write past the store's limits, changes
    /// nothing: the first is logged, the second reported as a quota violation.
    open func set(_ value: Any?, forKey key: String) {
        guard let value else {
            removeObject(forKey: key)
            return
        }
        guard
            let encoded = try? PropertyListSerialization.data(
                fromPropertyList: value, format: .binary, options: 0)
        else {
            DocumentLog.write(
                "NSUbiquitousKeyValueStore: the value for “\(key)” is a \(type(of: value)), not a property list; not stored"
            )
            return
        }
        // Stored as it reads back, so that a mutable value changed later does not change it.
        let stored =
            (try? PropertyListSerialization.propertyList(from: encoded, options: [], format: nil)) ?? value
        write(key, Record(value: stored, size: encoded.count))
    }

    open func set(_ value: String?, forKey key: String) { set(value as Any?, forKey: key) }
    open func set(_ value: Data?, forKey key: String) { set(value as Any?, forKey: key) }
    open func set(_ value: [Any]?, forKey key: String) { set(value as Any?, forKey: key) }
    open func set(_ value: [String: Any]?, forKey key: String) { set(value as Any?, forKey: key) }
    open func set(_ value: Int64, forKey key: String) { set(NSNumber(value: value) as Any?, forKey: key) }
    open func set(_ value: Double, forKey key: String) { set(NSNumber(value: value) as Any?, forKey: key) }
    open func set(_ value: Bool, forKey key: String) { set(NSNumber(value: value) as Any?, forKey: key) }

    /// Removes `key`; other devices remove it too.
    open func removeObject(forKey key: String) {
        write(key, Record(value: nil, size: 0))
    }

    /// Writes what was set to the store's file now, and takes in what other devices and
    /// processes wrote. True unless the file could not be written.
    @discardableResult
    open func synchronize() -> Bool {
        queue.sync { flush() }
    }

    private struct Record {
        var value: Any?
        var size: Int
    }

    private func write(_ key: String, _ new: Record) {
        guard key.utf8.count <= Self.maximumKeyLength, !key.isEmpty else {
            postQuotaViolation(key)
            return
        }
        let accepted = state.withLock { state -> Bool in
            let size = new.value == nil ? nil : new.size + key.utf8.count
            let keys = state.sizes.count + (size != nil && state.sizes[key] == nil ? 1 : 0)
            let total = state.total - (state.sizes[key] ?? 0) + (size ?? 0)
            if size != nil && (keys > Self.maximumKeyCount || total > Self.maximumTotalBytes) { return false }
            let time = max(Date().timeIntervalSince1970, (state.records.records[key]?.time ?? 0).nextUp)
            let record = KeyValueRecords.Record(value: new.value, time: time, device: device)
            state.records.records[key] = record
            state.setSize(size, of: key)
            state.pending.records[key] = record
            if !state.writeScheduled {
                state.writeScheduled = true
                queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in _ = self?.flush() }
            }
            return true
        }
        if !accepted { postQuotaViolation(key) }
    }

    static func encodedSize(of value: Any) -> Int {
        (try? PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0).count) ?? 0
    }

    private func postQuotaViolation(_ key: String) {
        queue.async {
            NotificationCenter.default.post(
                name: Self.didChangeExternallyNotification, object: self,
                userInfo: [
                    NSUbiquitousKeyValueStoreChangeReasonKey: NSNumber(
                        value: NSUbiquitousKeyValueStoreQuotaViolationChange),
                    NSUbiquitousKeyValueStoreChangedKeysKey: [key],
                ])
        }
    }

    /// On the store's queue: merges the pending writes into the file and takes in the rest.
    private func flush() -> Bool {
        let pending = state.withLock { state -> KeyValueRecords in
            state.writeScheduled = false
            defer { state.pending = KeyValueRecords() }
            return state.pending
        }
        do {
            let stored = try KeyValueRecords.merge(pending, into: fileURL)
            take(stored)
            return true
        } catch {
            DocumentLog.write(
                "\(error); the values set stay in memory and are written at the next synchronize()")
            state.withLock { state in
                var kept = pending
                kept.merge(state.pending)
                state.pending = kept
            }
            return false
        }
    }

    /// On the store's queue: the file changed; takes in what others wrote.
    private func reload() {
        guard let stored = try? KeyValueRecords.read(fileURL) else { return }
        take(stored)
    }

    /// Takes the records of the file that win over this store's, and announces them.
    private func take(_ stored: KeyValueRecords) {
        let changed = state.withLock { state -> [String] in
            var changed: [String] = []
            for (key, record) in stored.records {
                if let mine = state.records.records[key], !record.wins(over: mine) { continue }
                if let waiting = state.pending.records[key], !record.wins(over: waiting) { continue }
                state.records.records[key] = record
                state.measure(key)
                changed.append(key)
            }
            return changed.sorted()
        }
        guard !changed.isEmpty else { return }
        NotificationCenter.default.post(
            name: Self.didChangeExternallyNotification, object: self,
            userInfo: [
                NSUbiquitousKeyValueStoreChangeReasonKey: NSNumber(
                    value: NSUbiquitousKeyValueStoreServerChange),
                NSUbiquitousKeyValueStoreChangedKeysKey: changed,
            ])
    }
}

/// The `userInfo` key of a key-value store's change notification holding why (an `NSNumber`).
public let NSUbiquitousKeyValueStoreChangeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
/// The `userInfo` key of a key-value store's change notification holding the keys changed.
public let NSUbiquitousKeyValueStoreChangedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
/// Values changed on another device (or by another process here).
public let NSUbiquitousKeyValueStoreServerChange = 0
/// The first values arrived from the server (not posted: a store starts from its file).
public let NSUbiquitousKeyValueStoreInitialSyncChange = 1
/// A write was refused because it would pass the store's limits.
public let NSUbiquitousKeyValueStoreQuotaViolationChange = 2
/// The account changed (not posted yet).
public let NSUbiquitousKeyValueStoreAccountChange = 3

#if !canImport(Darwin)
    /// Foundation's name for ``UbiquitousKeyValueStore``, so that code written for Apple
    /// platforms ports unchanged.
    public typealias NSUbiquitousKeyValueStore = UbiquitousKeyValueStore
#endif
