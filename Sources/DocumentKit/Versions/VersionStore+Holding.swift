import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The contents an item had before something replaced it, held in the store by a hard link
/// until ``VersionStore/storeHeldVersions()`` stores them as a history version.
///
/// Holding costs a link and three small flushes whatever the file's size; storing cuts,
/// hashes and writes every byte. Sync holds what a download replaces, puts the download in
/// place, and stores the held bytes at the end of its pass, so that a download's time does
/// not include the store's.
package struct HeldVersion: Sendable, Equatable {
    /// Its folder in `held/`: `ITEM.VERSION`.
    let name: String
    /// The persistent identifier the version has once stored (unless the item's newest
    /// history version already holds the same bytes: then that one is the version).
    package let persistentIdentifier: String
    /// The device and inode of the file held: the caller checks that they are those of the
    /// file it means to replace.
    package let device: UInt64
    package let inode: UInt64
}

/// What `held/ITEM.VERSION/record.json` says of the held contents beside it, `contents`: the
/// version's record but for its chunks, which storing makes.
struct HeldRecord: Codable, Equatable {
    var itemID: String
    var versionID: String
    /// Where the item was and which file it was: the version's record keeps them, and the
    /// identity index learns the item's location from it.
    var path: String
    var device: UInt64
    var inode: UInt64
    var name: String
    /// The held file's modification time.
    var modified: Date
    /// When it was held: the version's age for thinning counts from here.
    var captured: Date

    /// A record file is a few hundred bytes; one larger is not one.
    static let mostBytes = 64 << 10
}

extension VersionStore {
    /// Holds the file `name` in `folder`, the item at `url`, before the caller replaces it:
    /// a hard link to it and its record go into `held/` together, flushed, so that from the
    /// moment this returns until the held contents are stored, a crash at any instant leaves
    /// them either here, where the next ``storeHeldVersions()`` (the next pass, or any listing
    /// of versions) stores them, or in the store.
    ///
    /// Crash order: the link and the record are made in a folder of `incoming/` (swept once
    /// this process is gone) and flushed with it, then the folder is renamed into `held/`
    /// whole and `held/` flushed. `held/` holds only whole holds.
    ///
    /// The caller must replace the file by a rename (a new inode), never write into it: the
    /// link keeps the old inode's bytes only then.
    ///
    /// - Returns: The hold; nil where the file cannot be linked into the store (it is not a
    ///   regular file, or is on another volume, or the volume has no hard links): the caller
    ///   stores it at once instead (``addOfItem(at:withContentsOf:options:)``).
    /// - Throws: ``DocumentKitError`` naming the file or folder that could not be made or
    ///   flushed; nothing is held then.
    package func hold(itemAt url: URL, in folder: FileDescriptor, named name: String) throws -> HeldVersion? {
        let operation = "hold the replaced contents of"
        guard case .success(let info) = Syscall.fstatat(folder.rawValue, name, followLinks: false),
            info.isRegularFile
        else { return nil }
        guard let identity = try identity(ofItemAt: url, creating: true) else { return nil }
        try makeFolder(heldURL)
        let staging = try stagingURL()
        _ = try Syscall.mkdirat(AT_FDCWD, staging.path, 0o700).get(operation, staging)
        do {
            let holding = try FileDescriptor.openDirectory(staging, operation: operation)
            switch Syscall.linkat(folder.rawValue, name, holding.rawValue, "contents") {
            case .success: break
            case .failure(let error) where Self.linkIsUnsupported(error):
                removeStaged(staging)
                return nil
            case .failure(let error): throw DocumentKitError(error, operation: operation, url: url)
            }
            let held = try Syscall.fstatat(holding.rawValue, "contents", followLinks: false).get(
                operation, url)
            // Storing reads it later: one this process cannot read fails now, as storing it at
            // once would, not after it was replaced.
            Syscall.close(
                try Syscall.openat(holding.rawValue, "contents", O_RDONLY | O_NONBLOCK).get(operation, url))
            let record = HeldRecord(
                itemID: identity.id, versionID: UUID().uuidString, path: identity.path,
                device: UInt64(held.st_dev), inode: UInt64(held.st_ino), name: url.lastPathComponent,
                modified: held.modificationDate, captured: now())
            let bytes = try VersionRecord.encoder.encode(record)
            let file = try FileDescriptor(
                rawValue: Syscall.openat(
                    holding.rawValue, "record.json", O_WRONLY | O_CREAT | O_EXCL, 0o600
                ).get(operation, staging), url: staging.appendingPathComponent("record.json"))
            try bytes.withUnsafeBytes {
                try file.writeAll($0, operation: "write the record of a held version")
            }
            try file.sync(operation: "flush (fsync) the record of a held version")
            try holding.sync(operation: "flush (fsync) a held version's folder")
            let heldName = "\(record.itemID).\(record.versionID)"
            _ = try Syscall.renameat(
                AT_FDCWD, staging.path, AT_FDCWD, heldURL.appendingPathComponent(heldName).path
            )
            .get(operation, heldURL)
            try FileDescriptor.openDirectory(heldURL, operation: operation).sync(
                operation: "flush (fsync) the folder of held versions")
            reachedStep(.held)
            return HeldVersion(
                name: heldName, persistentIdentifier: record.versionID, device: record.device,
                inode: record.inode)
        } catch {
            removeStaged(staging)
            throw error
        }
    }

    /// Lets go of a hold whose file was not replaced after all: its contents are still the
    /// item's, and need no version.
    package func release(_ held: HeldVersion) {
        queue.sync { discardHold(named: held.name) }
    }

    /// Stores every held version (see ``hold(itemAt:in:named:)``), this process's and those
    /// other processes, or a crash, left: each becomes the history version its hold names,
    /// and its hold goes once the version is flushed. A crash meanwhile leaves the hold, and
    /// storing it again finds the version already there.
    ///
    /// - Throws: ``DocumentKitError`` when the store cannot be written; the holds stay for the
    ///   next call.
    package func storeHeldVersions() throws {
        let stored = try queue.sync { try storeHeld { _ in true } }
        notifyStored(stored)
    }

    /// Stores the held versions `wanted` picks (by `ITEM.VERSION` name), on the store's queue,
    /// and returns the new versions with their items' paths, for the news.
    func storeHeld(_ wanted: (String) -> Bool) throws -> [(FileVersion, URL)] {
        let names = heldNames().filter(wanted)
        guard !names.isEmpty else { return [] }
        return try withStoreLock {
            var stored: [(FileVersion, URL)] = []
            // Another process may have stored some since they were listed.
            let present = Set(heldNames())
            let chosen = names.filter(present.contains)
            for start in stride(from: 0, to: chosen.count, by: Self.mostCommitsTogether) {
                var holds: [(name: String, record: HeldRecord)] = []
                for name in chosen[start..<min(start + Self.mostCommitsTogether, chosen.count)] {
                    guard let record = heldRecord(named: name) else { continue }
                    if self.record(ofItem: record.itemID, id: record.versionID) != nil {
                        // Stored before a crash came between the flush and letting go.
                        discardHold(named: name)
                    } else {
                        holds.append((name, record))
                    }
                }
                guard !holds.isEmpty else { continue }
                let kept = try store(
                    holds.map { hold in
                        VersionSource(
                            itemID: hold.record.itemID,
                            location: IdentityIndex.Entry(
                                path: hold.record.path, device: hold.record.device, inode: hold.record.inode),
                            name: hold.record.name, modified: hold.record.modified,
                            captured: hold.record.captured,
                            contents: .staged(
                                heldURL.appendingPathComponent(hold.name).appendingPathComponent("contents")),
                            versionID: hold.record.versionID, isOnPurpose: true)
                    })
                for (hold, id) in zip(holds, kept) {
                    // One that failed (reported) stays held for the next call.
                    guard let id else { continue }
                    discardHold(named: hold.name)
                    if id == hold.record.versionID,
                        let record = self.record(ofItem: hold.record.itemID, id: id)
                    {
                        stored.append(
                            (FileVersion(record: record, store: self), URL(fileURLWithPath: hold.record.path))
                        )
                    }
                }
            }
            reachedStep(.heldStored)
            return stored
        }
    }

    /// Tells of versions ``storeHeld(_:)`` added, off the store's queue.
    func notifyStored(_ stored: [(FileVersion, URL)]) {
        for (version, url) in stored { notify(.gained, version, itemURL: url) }
    }

    /// The names of the holds in `held/` (`ITEM.VERSION`, two UUIDs); anything else there is
    /// not a hold and is left alone.
    func heldNames() -> [String] {
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, heldURL.path, O_RDONLY | O_DIRECTORY) else {
            return []
        }
        defer { Syscall.close(fd) }
        guard case .success(let names) = Syscall.directoryNames(in: fd) else { return [] }
        return names.filter { name in
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 2 && parts.allSatisfy { UUID(uuidString: String($0)) != nil }
        }.sorted()
    }

    /// The record of the hold `name`, checked against its name and its contents; a hold
    /// without contents is let go (nothing is held), one whose record is damaged is set aside
    /// in `damaged/` with its contents, reported.
    private func heldRecord(named name: String) -> HeldRecord? {
        let folder = heldURL.appendingPathComponent(name, isDirectory: true)
        let contents = folder.appendingPathComponent("contents")
        guard case .success(let info) = Syscall.fstatat(AT_FDCWD, contents.path, followLinks: false),
            info.isRegularFile
        else {
            discardHold(named: name)
            return nil
        }
        let recordURL = folder.appendingPathComponent("record.json")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard
            let file = try? FileDescriptor.open(
                recordURL, O_RDONLY, operation: "read the record of a held version"),
            let data = try? file.readToEnd(sizeHint: 1024), data.count <= HeldRecord.mostBytes,
            let record = try? decoder.decode(HeldRecord.self, from: data),
            "\(record.itemID).\(record.versionID)" == name, record.path.hasPrefix("/"),
            !record.name.isEmpty, !record.name.contains("/")
        else {
            quarantine(
                folder, reason: "the record of a held version is damaged", operation: "store a held version")
            return nil
        }
        return record
    }

    /// Takes a hold out of `held/` by one rename (into `incoming/`, where what a crash leaves
    /// is swept), then removes it.
    private func discardHold(named name: String) {
        guard let aside = try? stagingURL() else { return }
        let held = heldURL.appendingPathComponent(name).path
        guard case .success = Syscall.renameat(AT_FDCWD, held, AT_FDCWD, aside.path) else { return }
        try? FileManager.default.removeItem(at: aside)
    }

    /// Whether a link failed because the volumes or the file system do not allow it, rather
    /// than for a reason storing the file would fail for too.
    private static func linkIsUnsupported(_ error: Errno) -> Bool {
        [Errno.crossDeviceLink, .notPermitted, .notSupported, Errno(rawValue: EMLINK)].contains(error)
    }
}
