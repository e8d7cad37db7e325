import DocumentKit
import Foundation

/// Syncs the container's ubiquitous key-value store (``SyncConfiguration/keyValueStore``)
/// with the other devices' through the remote, once a pass.
///
/// The devices' stores meet in `.documentsync/keyvalue`, one file per device (`DEVICE.plist`),
/// each holding every record that device has seen. Other devices' files that changed since the
/// last pass (by tag, kept in the journal) are read and merged into the local store key by key,
/// the last writer winning; then this device's file is written when the local store holds
/// records it lacks.
///
/// Only this device writes its file, so its writes cannot meet another's; they are conditional
/// all the same (on the tag last written, or on the file being absent), and a failed condition
/// is put right by the next pass, which reads the file again. A file that is not a key-value
/// store is left alone, and the pass says so.
struct KeyValueSync {
    /// The remote folder the devices' key-value stores meet in: `.documentsync/keyvalue`.
    static let folder = RemotePath.metadataFolder.appending("keyvalue")

    let pass: SyncPass
    private var remote: any Remote { pass.remote }
    private var journal: SyncJournal { pass.journal }
    private var configuration: SyncConfiguration { pass.configuration }

    /// Brings the local store and this device's file on the remote in line with the other
    /// devices', as the type says.
    func sync() throws {
        guard let store = configuration.keyValueStore else { return }
        let own = "\(configuration.deviceIdentifier).plist"
        let listing: RemoteListing
        do {
            listing = try remote.list(Self.folder)
        } catch let error as RemoteError where error.kind == .notFound {
            listing = RemoteListing(folder: Self.folder, entries: [], folderTag: nil)
        }
        var incoming = KeyValueRecords()
        var seen: [(SyncJournal.SettingKey, RemoteTag)] = []
        var ownTag: RemoteTag?
        for entry in listing.entries where entry.kind == .file && entry.name.hasSuffix(".plist") {
            if entry.name == own {
                ownTag = entry.tag
                continue
            }
            let key = SyncJournal.SettingKey(rawValue: "keyValueTag:\(entry.name)")
            if let tag = entry.tag, try journal.setting(key) == tag.rawValue { continue }
            var data = Data()
            let tag = try remote.read(Self.folder.appending(entry.name)) { data.append($0) }
            guard let records = KeyValueRecords(decoding: data) else {
                pass.summary.notes.append(
                    "\(remote.displayName): \(Self.folder.appending(entry.name)) is not a key-value store; left alone"
                )
                continue
            }
            incoming.merge(records)
            seen.append((key, tag))
        }
        try pass.checkpoint(.beforeLocalWrite)
        let local = try KeyValueRecords.merge(incoming, into: store)
        try pass.checkpoint(.afterLocalWrite)
        // Recorded once the records are in the local file: a crash before reads them again.
        for (key, tag) in seen { try journal.setSetting(key, tag.rawValue) }

        let uploadedKey = SyncJournal.SettingKey(rawValue: "keyValueUploaded")
        let signature = Self.signature(of: local)
        let uploaded = try journal.setting(uploadedKey)
        if ownTag == nil ? local.records.isEmpty : uploaded == signature { return }
        try pass.makeRemoteFolder(RemotePath.metadataFolder)
        try pass.makeRemoteFolder(Self.folder)
        try pass.checkpoint(.beforeRemoteWrite)
        do {
            try remote.write(
                Self.folder.appending(own), from: UploadSource(try local.encoded()),
                condition: ownTag.map { .matches($0) } ?? .absent)
        } catch let error as RemoteError where error.kind == .preconditionFailed || error.kind == .exists {
            // Someone wrote this device's file (a copy of its state home on another computer):
            // the next pass reads it and writes again.
            try journal.setSetting(uploadedKey, nil)
            return
        }
        try pass.checkpoint(.afterRemoteWrite)
        try journal.setSetting(uploadedKey, signature)
        try pass.checkpoint(.afterJournal)
    }

    /// What identifies a store's records (each key's write), whatever order a property list
    /// encodes them in: equal for equal records.
    static func signature(of records: KeyValueRecords) -> String {
        var text = ""
        for key in records.records.keys.sorted() {
            let record = records.records[key]!
            text +=
                "\(key)\u{0}\(record.time)\u{0}\(record.device)\u{0}\(record.value == nil ? "-" : "+")\u{1}"
        }
        return ContentHash(of: Data(text.utf8)).hex
    }
}
