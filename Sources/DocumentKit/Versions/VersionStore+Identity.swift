import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Who an item is, whatever its name: the UUID that ties it to its versions.
struct ItemIdentity: Sendable, Equatable {
    var id: String
    var path: String
    var device: UInt64
    var inode: UInt64
    /// Whether the identity was just made (a UUID never given before): the item has no
    /// versions yet, and nothing need be looked up to know it.
    var isNew = false
}

extension VersionStore {
    /// The extended attribute holding an item's identity.
    static let identityAttribute = "user.documentkit.id"

    /// The identity of the item at `url`, from its extended attribute or else the store's
    /// table; with `creating`, a new one is given to an item that has none.
    func identity(ofItemAt url: URL, creating: Bool) throws -> ItemIdentity? {
        let path = url.standardizedFileURL.path
        let fd: CInt
        switch Syscall.openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) {
        case .success(let opened): fd = opened
        case .failure(.noSuchFileOrDirectory) where !creating: return nil
        case .failure(let error): throw DocumentKitError(error, operation: "identify the item", url: url)
        }
        defer { Syscall.close(fd) }
        let info = try Syscall.fstat(fd).get("identify the item", url)
        return identity(ofOpenItem: fd, path: path, info: info, creating: creating)
    }

    /// ``identity(ofItemAt:creating:)`` of the item open as `fd`, at `path` (standardized),
    /// whose status is `info`.
    func identity(ofOpenItem fd: CInt, path: String, info: stat, creating: Bool) -> ItemIdentity? {
        let device = UInt64(info.st_dev)
        let inode = UInt64(info.st_ino)
        var attributesSupported = true
        switch Syscall.getExtendedAttribute(fd, Self.identityAttribute) {
        case .success(let bytes):
            if let id = UUID(uuidString: String(decoding: bytes, as: UTF8.self))?.uuidString {
                guard isSecondHolder(of: id, path: path, device: device, inode: inode) else {
                    if creating { identitiesGiven.withLock { $0[path] = id } }
                    return ItemIdentity(id: id, path: path, device: device, inode: inode)
                }
                // Another file is the item: this one is a copy that kept the attribute
                // (`cp -a`), or the item moved without coordination and a new file at its old
                // path took its history. Either way it is an item of its own.
                guard creating else { return nil }
                let fresh = UUID().uuidString
                give(fresh, to: fd, at: path)
                return ItemIdentity(id: fresh, path: path, device: device, inode: inode, isNew: true)
            }
        case .failure(.notSupported), .failure(.notImplemented):
            attributesSupported = false
        case .failure:
            break
        }
        // Inode numbers are reused once a file is deleted: where attributes work, an item
        // without one is matched by its path only (a writer that dropped the attribute).
        let indexed = withIndex { index in
            try (attributesSupported ? nil : index.itemID(device: device, inode: inode))
                ?? index.itemID(path: path)
        }
        let known = indexed ?? identitiesGiven.withLock { $0[path] }
        if let id = known {
            // Put the attribute back where it was lost, but only when about to save: a lookup
            // must not touch the file (its status-change time tells presenters of changes).
            if creating { give(id, to: fd, at: path) }
            return ItemIdentity(id: id, path: path, device: device, inode: inode)
        }
        guard creating else { return nil }
        let id = UUID().uuidString
        give(id, to: fd, at: path)
        return ItemIdentity(id: id, path: path, device: device, inode: inode, isNew: true)
    }

    /// Whether the index places item `id` in another file than the one at `path` (device,
    /// inode), and that file still holds the identity: two files claim one item, and the one
    /// the index knows keeps it. Costs nothing more than the cached index where the index
    /// agrees, as it does unless the item moved or was copied.
    private func isSecondHolder(of id: String, path: String, device: UInt64, inode: UInt64) -> Bool {
        guard let entry = withIndex({ try $0.entry(of: id) }), !entry.path.isEmpty, entry.path != path,
            entry.device != device || entry.inode != inode,
            case .success(let other) = Syscall.fstatat(AT_FDCWD, entry.path, followLinks: false),
            UInt64(other.st_dev) == entry.device, UInt64(other.st_ino) == entry.inode,
            case .success(let fd) = Syscall.openat(AT_FDCWD, entry.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        else { return false }
        defer { Syscall.close(fd) }
        guard case .success(let bytes) = Syscall.getExtendedAttribute(fd, Self.identityAttribute) else {
            return false
        }
        return String(decoding: bytes, as: UTF8.self) == id
    }

    /// Writes `id` into the attribute of the file open as `fd` (where that fails, the index
    /// entry written with the version is the fallback), and lets the path stand for the item
    /// until the index records it: ``noteLocations(_:durably:)`` then forgets it here.
    private func give(_ id: String, to fd: CInt, at path: String) {
        identitiesGiven.withLock { $0[path] = id }
        _ = Syscall.setExtendedAttribute(fd, Self.identityAttribute, Array(id.utf8))
    }

    /// Gives the item at `url` the identity `id` if it lacks it (a package folder that a
    /// safe save exchanged), and returns where it is now.
    func stampIdentity(_ id: String, onItemAt url: URL) -> (device: UInt64, inode: UInt64)? {
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        else { return nil }
        defer { Syscall.close(fd) }
        guard case .success(let info) = Syscall.fstat(fd) else { return nil }
        let current = try? Syscall.getExtendedAttribute(fd, Self.identityAttribute).get()
        if current.map({ String(decoding: $0, as: UTF8.self) }) != id {
            _ = Syscall.setExtendedAttribute(fd, Self.identityAttribute, Array(id.utf8))
        }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }
}

extension VersionStore {
    /// Notes in ``shared`` and in every other store this process uses that the item at
    /// `oldURL` moved to `newURL`, so that its history follows it even where the item lost its
    /// identity attribute (a program that saves without keeping extended attributes) and the
    /// store finds it by path.
    ///
    /// Coordination calls it for every coordinated move; costs a lookup in the index when the
    /// store does not know the item.
    static func itemDidMoveInEveryStore(from oldURL: URL, to newURL: URL) {
        let shared = VersionStore.shared
        var stores = liveStores.filter { $0 !== shared }
        stores.insert(shared, at: 0)
        // Two objects on one folder are one store: note it once.
        var roots: Set<String> = []
        for store in stores where roots.insert(store.root.path).inserted {
            store.itemDidMove(from: oldURL, to: newURL)
        }
    }

    /// Notes that the item at `oldURL` (a document, or a folder of them) is at `newURL` now,
    /// moved by a program that did not coordinate: a sync engine that saw it moved calls
    /// this, so that a new file at the old path is a new item, not the moved one.
    package func itemDidMove(from oldURL: URL, to newURL: URL) {
        queue.sync {
            let oldPath = oldURL.standardizedFileURL.path
            let newPath = newURL.standardizedFileURL.path
            guard case .success(let info) = Syscall.fstatat(AT_FDCWD, newPath, followLinks: false) else {
                return
            }
            identitiesGiven.withLock { given in
                for (path, id) in given where path == oldPath || path.hasPrefix(oldPath + "/") {
                    given[path] = nil
                    given[newPath + path.dropFirst(oldPath.count)] = id
                }
            }
            var moved: [(itemID: String, entry: IdentityIndex.Entry)] = []
            let known =
                (try? identity(ofItemAt: newURL, creating: false))?.id
                ?? withIndex({ try $0.itemID(path: oldPath) })
            // An item the store has no versions of has nothing to follow it.
            if let itemID = known, let entry = withIndex({ try $0.entry(of: itemID) }),
                entry.path != newPath || entry.inode != UInt64(info.st_ino)
            {
                moved.append(
                    (itemID, .init(path: newPath, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))))
            }
            // A folder moved with the documents in it: each follows to the same place inside
            // it, if the file there is still the one the store last saw.
            if info.st_mode & S_IFMT == S_IFDIR {
                let inside = withIndex { try $0.entries(inside: oldPath) } ?? []
                for (itemID, entry) in inside {
                    let path = newPath + entry.path.dropFirst(oldPath.count)
                    guard case .success(let inside) = Syscall.fstatat(AT_FDCWD, path, followLinks: false),
                        UInt64(inside.st_ino) == entry.inode
                    else { continue }
                    moved.append((itemID, .init(path: path, device: entry.device, inode: entry.inode)))
                }
            }
            guard !moved.isEmpty else { return }
            do {
                try withStoreLock { try noteLocations(moved, durably: true) }
            } catch {
                report(error, operation: "note where a document moved")
            }
        }
    }
}
