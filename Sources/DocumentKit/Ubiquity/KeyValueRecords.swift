import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The contents of a ubiquitous key-value store as a file holds them: each key's last write,
/// with when and on which device it was made, and removals as records without a value, so
/// that stores merged in any order agree. The last writer wins, key by key, as Apple's
/// `NSUbiquitousKeyValueStore` resolves them; equal times fall to the larger device name.
///
/// The file is a binary property list, written safely under a lock (`NAME.lock` beside it),
/// and read by the store in apps and by the sync agent, which merges it with the other
/// devices' through the remote.
package struct KeyValueRecords: @unchecked Sendable {
    // Unchecked: values are property-list objects, copied when set and never mutated.

    package struct Record: @unchecked Sendable {
        /// The value, a property-list object; nil for a removal.
        package var value: Any?
        /// When it was written, in seconds since 1970.
        package var time: Double
        /// The device that wrote it.
        package var device: String

        package init(value: Any?, time: Double, device: String) {
            self.value = value
            self.time = time
            self.device = device
        }

        /// Whether this record was made by the same write as `other`.
        package func isSameWrite(as other: Record) -> Bool { time == other.time && device == other.device }

        /// Whether this record wins over `other`.
        package func wins(over other: Record) -> Bool {
            time != other.time ? time > other.time : device > other.device
        }
    }

    package var records: [String: Record] = [:]

    package init(records: [String: Record] = [:]) { self.records = records }

    /// The values of keys that have one.
    package var values: [String: Any] { records.compactMapValues { $0.value } }

    /// Takes every record of `other` that wins over this one's; returns the keys that changed.
    @discardableResult
    package mutating func merge(_ other: KeyValueRecords) -> Set<String> {
        var changed: Set<String> = []
        for (key, record) in other.records {
            if let mine = records[key], !record.wins(over: mine) { continue }
            records[key] = record
            changed.insert(key)
        }
        return changed
    }

    /// The records in `data`, or nil when `data` is not a store's file.
    package init?(decoding data: Data) {
        guard
            let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                as? [String: Any],
            let entries = plist["records"] as? [String: Any]
        else { return nil }
        for (key, entry) in entries {
            guard let entry = entry as? [String: Any], let time = (entry["t"] as? NSNumber)?.doubleValue,
                let device = entry["d"] as? String
            else { return nil }
            records[key] = Record(value: entry["v"], time: time, device: device)
        }
    }

    /// The file's bytes.
    package func encoded() throws -> Data {
        var entries: [String: Any] = [:]
        for (key, record) in records {
            var entry: [String: Any] = ["t": NSNumber(value: record.time), "d": record.device]
            if let value = record.value { entry["v"] = value }
            entries[key] = entry
        }
        return try PropertyListSerialization.data(
            fromPropertyList: ["format": NSNumber(value: 1), "records": entries] as [String: Any],
            format: .binary,
            options: 0)
    }

    /// The records of the file at `url`; empty when there is none.
    ///
    /// - Throws: ``DocumentKitError`` naming the file when it cannot be read or is not a
    ///   store's file.
    package static func read(_ url: URL) throws -> KeyValueRecords {
        guard let data = try SettingsFile.contents(of: url, operation: "read the key-value store") else {
            return KeyValueRecords()
        }
        guard let records = KeyValueRecords(decoding: data) else {
            throw DocumentKitError(
                .invalidArgument, operation: "read the key-value store", url: url,
                detail: "the file is not a key-value store")
        }
        return records
    }

    /// Merges `records` into the file at `url` under its lock, and returns what the file
    /// holds then. The file is rewritten only when something in it changed.
    ///
    /// A file that is not a store's is set aside (`NAME.damaged`) and started again from
    /// `records`: a store is settings, and the other devices still hold them.
    package static func merge(_ records: KeyValueRecords, into url: URL) throws -> KeyValueRecords {
        let lock = try SettingsFile.lock(url, operation: "lock the key-value store")
        defer { withExtendedLifetime(lock) {} }
        var stored: KeyValueRecords
        var rewrite = false
        do {
            stored = try read(url)
        } catch let error as DocumentKitError where error.code == .invalidArgument {
            DocumentLog.write("\(error); it is set aside as \(url.lastPathComponent).damaged")
            _ = Syscall.renameat(AT_FDCWD, url.path, AT_FDCWD, url.path + ".damaged")
            stored = KeyValueRecords()
            rewrite = true
        }
        if !stored.merge(records).isEmpty || rewrite {
            try SafeSave.write(try stored.encoded(), to: url, permissions: 0o600)
        }
        return stored
    }
}
