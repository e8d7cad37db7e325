import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DocumentQuery {
    /// The engine's items: live (as the disk is now) and published (as last reported).
    struct Model {
        let configuration: Engine.Configuration
        let patternBytes: [UInt8]?
        /// Which items have unresolved conflicts, taken at gathering and at each batch of
        /// events; nil when none has (or the query has no version store).
        var conflicts: VersionStore.ConflictLookup?
        /// The ubiquity containers and their agents' status, taken at gathering and when a
        /// status changes.
        var ubiquity = UbiquityLookup()

        var isGathered = false
        var isCancelled = false
        var isPublishScheduled = false
        var lastPublish: DispatchTime?
        /// Set when an event brought a new, still empty file: most often a writer that has
        /// created it and not yet written (`echo x > f` is three events, which can arrive in
        /// two reads). Its publication waits one batching interval, so the item is reported
        /// once, added with its contents, rather than added empty and then changed.
        var sawEmptyCreation = false
        var settleUntil: DispatchTime?

        var items = PathTable<Item>()
        var byID: [UInt64: Item] = [:]
        var published: [UInt64: Item] = [:]
        var sorted: [Item] = []
        var dirty: Set<UInt64> = []
        /// Items reported changed even if their attributes are equal: a package whose
        /// contents were written.
        var forced: Set<UInt64> = []
        var packageExtensions: [ArraySlice<UInt8>: Bool] = [:]

        init(configuration: Engine.Configuration) {
            self.configuration = configuration
            self.patternBytes = configuration.fileNamePattern.map { Array($0.utf8) }
        }

        // MARK: Gathering

        mutating func gather() {
            conflicts = configuration.versionStore?.conflictLookup()
            ubiquity = UbiquityLookup.load()
            var found: [Found] = []
            for scope in configuration.scopes { scanFolder(scope, into: &found) }
            // In path order, the order of results without sort descriptors, paths sort faster
            // here than items later.
            let inPathOrder = configuration.orderings.isEmpty
            if inPathOrder { found.sort { Self.comparePaths($0.path, $1.path) < 0 } }
            if patternBytes != nil { found.removeAll { !matchesPattern($0.path) } }
            // One lock for the whole gathering, and none held while the predicate runs.
            let ids = Identities.shared.withLock { identities in
                found.map { identities.identity(forPath: $0.path) }
            }
            items.reserveCapacity(found.count)
            byID.reserveCapacity(found.count)
            var ordered: [Item] = []
            ordered.reserveCapacity(found.count)
            for (entry, id) in zip(found, ids) {
                // Overlapping scopes list an item twice: the first one counts.
                if let item = makeItem(entry, id: id), items.updateValue(item, forKey: entry.path) == nil {
                    byID[item.id] = item
                    ordered.append(item)
                }
            }
            published = byID
            sorted = inPathOrder ? ordered : ordered.sorted(by: precedes)
            isGathered = true
        }

        struct Found {
            var path: [UInt8]
            var status: FileStatus
            var isPackage: Bool
            /// A document kept on the server only: `status` is its placeholder's, with the
            /// document's size.
            var isPlaceholder = false
        }

        /// Lists the folder at `path` and, below it, every plain folder that is not hidden.
        /// The corresponding C functions are `openat(2)`, `readdir(3)` and `statx(2)`.
        mutating func scanFolder(_ path: [UInt8], into found: inout [Found]) {
            let opened = Syscall.withCString(path) {
                Syscall.openat(AT_FDCWD, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            }
            // A folder that is gone or unreadable has nothing to list: its items are not results.
            guard case .success(let fd) = opened else { return }
            scanFolder(fd: fd, path: path, into: &found)
        }

        /// Takes ownership of `fd`.
        mutating func scanFolder(fd directory: CInt, path: [UInt8], into found: inout [Found]) {
            defer { Syscall.close(directory) }
            // A folder that cannot be read lists nothing, as one removed while it was scanned.
            guard case .success(let entries) = Syscall.directoryEntries(in: directory) else { return }
            let all = entries.map(\.fileSystemName)
            let names = all.filter { !isExcludedName($0) }
            let statuses = Self.statuses(of: names, in: directory)
            // Documents kept on the server only, in a ubiquity container: their placeholders.
            if !ubiquity.containers.isEmpty {
                let present = Set(names)
                for name in all {
                    guard let document = Self.placeholderDocumentName(name), !present.contains(document),
                        let placeholder = placeholderFound(DirectoryWatcher.State.join(path, document))
                    else { continue }
                    found.append(placeholder)
                }
            }
            var subfolders: [[UInt8]] = []
            for (name, status) in zip(names, statuses) {
                guard let status else { continue }  // removed since it was listed
                let child = DirectoryWatcher.State.join(path, name)
                if status.isDirectory && !isPackageName(name[...]) {
                    if configuration.includesDirectories {
                        found.append(Found(path: child, status: status, isPackage: false))
                    }
                    subfolders.append(name)
                } else {
                    found.append(Found(path: child, status: status, isPackage: status.isDirectory))
                }
            }
            for name in subfolders
            where !configuration.excludedFolders.contains(DirectoryWatcher.State.join(path, name)) {
                let opened = Syscall.withCString(name) {
                    Syscall.openat(directory, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                }
                // Removed or replaced by a link since it was listed: its own events tell the rest.
                if case .success(let childFD) = opened {
                    scanFolder(fd: childFD, path: DirectoryWatcher.State.join(path, name), into: &found)
                }
            }
        }

        /// The status of each named item of the folder open as `directory`; nil for one that is
        /// gone. A large folder is read by two threads at once: the time goes to the kernel's
        /// `statx`, which runs in parallel, and a folder of thousands of documents is what
        /// a user waits on when an app's document list first appears.
        static func statuses(of names: [[UInt8]], in directory: CInt) -> [FileStatus?] {
            var statuses = [FileStatus?](repeating: nil, count: names.count)
            let parts = names.count >= 2048 ? 2 : 1
            statuses.withUnsafeMutableBufferPointer { results in
                // Each part writes only its own range of slots, and all parts end before
                // concurrentPerform returns.
                nonisolated(unsafe) let results = results
                DispatchQueue.concurrentPerform(iterations: parts) { part in
                    let range = (names.count * part / parts)..<(names.count * (part + 1) / parts)
                    for index in range {
                        if case .success(let status) = Syscall.withCString(
                            names[index], { Syscall.fileStatus(directory, $0, followingLinks: false) })
                        {
                            results[index] = status
                        }
                    }
                }
            }
            return statuses
        }

        /// The item at `path` (already known to be included by its name) and, for a plain
        /// folder, everything below it.
        mutating func scanNode(_ path: [UInt8], into found: inout [Found]) {
            guard
                case .success(let status) = Syscall.withCString(
                    path, { Syscall.fileStatus(AT_FDCWD, $0, followingLinks: false) })
            else {
                return
            }
            let name = path[((path.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1)...]
            if status.isDirectory && !isPackageName(name) {
                if configuration.includesDirectories {
                    found.append(Found(path: path, status: status, isPackage: false))
                }
                scanFolder(path, into: &found)
            } else {
                found.append(Found(path: path, status: status, isPackage: status.isDirectory))
            }
        }

        // MARK: Rules

        func isExcludedName(_ name: some Collection<UInt8>) -> Bool {
            if DirectoryWatcher.isDocumentKitTemporaryName(name) { return true }
            return !configuration.includesHiddenItems && name.first == UInt8(ascii: ".")
        }

        /// Whether a folder with this name is a package, by its extension's registered type.
        mutating func isPackageName(_ name: ArraySlice<UInt8>) -> Bool {
            guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else {
                return false
            }
            let fileExtension = name[(dot + 1)...]
            if let known = packageExtensions[fileExtension] { return known }
            let types = FileTypes.shared
            let identifier = types.typeIdentifier(
                forFilenameExtension: String(decoding: fileExtension, as: UTF8.self))
            let isPackage = types.type(withIdentifier: identifier)?.isPackage ?? false
            packageExtensions[fileExtension] = isPackage
            return isPackage
        }

        enum Location: Equatable {
            case excluded
            case root([UInt8])
            case item([UInt8])
            /// Inside the package at this path: a change here is a change of the package.
            case insidePackage([UInt8])
        }

        mutating func locate(_ path: [UInt8]) -> Location {
            let roots = configuration.scopes.filter { DirectoryWatcher.State.isSameOrInside(path, $0) }
            guard let root = roots.min(by: { $0.count < $1.count }) else { return .excluded }
            if configuration.excludedFolders.contains(where: {
                DirectoryWatcher.State.isSameOrInside(path, $0)
            }) {
                return .excluded
            }
            if path.count == root.count { return .root(root) }
            let components = path[(root.count + 1)...].split(
                separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            var prefix = root
            for (index, component) in components.enumerated() {
                if isExcludedName(component) { return .excluded }
                prefix = DirectoryWatcher.State.join(prefix, Array(component))
                if index < components.count - 1 && isPackageName(component) { return .insidePackage(prefix) }
            }
            return .item(path)
        }

        // MARK: Events

        /// Takes the store's conflicts again and updates the items whose flag changed.
        mutating func recheckConflicts() {
            conflicts = configuration.versionStore?.conflictLookup()
            for (path, item) in items {
                let has = conflicts?.contains(path: path, inode: item.status.inode) ?? false
                guard has != item.hasUnresolvedConflicts else { continue }
                upsert(item.found, reusing: nil, force: false)
            }
        }

        /// Takes the agents' status again and updates the items whose attributes changed.
        mutating func recheckUbiquity() {
            ubiquity = UbiquityLookup.load()
            for (path, item) in items
            where ubiquity.attributes(of: path, status: item.found.isPlaceholder ? nil : item.status)
                != item.ubiquity
            {
                upsert(item.found, reusing: nil, force: false)
            }
        }

        mutating func apply(_ event: DirectoryWatcher.Event) {
            let path = event.fileSystemPath
            if !ubiquity.containers.isEmpty, applyToPlaceholders(event) { return }
            switch event.kind {
            case .overflow:
                reconcile(under: path)
            case .deleted:
                switch locate(path) {
                case .excluded: break
                case .root(let root): removeItems(under: root, includingItself: false)
                case .insidePackage(let package): refresh(package, force: true)
                case .item(let item):
                    if event.isDirectory {
                        removeItems(under: item, includingItself: true)
                    } else if let placeholder = placeholderFound(item) {
                        // Evicted: the document stays, kept on the server only.
                        upsert(placeholder, reusing: nil, force: false)
                    } else {
                        remove(item)
                    }
                }
            case .moved:
                moved(from: event.previousFileSystemPath ?? path, to: path)
            case .created, .modified, .replaced, .attributesChanged:
                switch locate(path) {
                case .excluded, .root: break
                case .insidePackage(let package): refresh(package, force: true)
                case .item(let item):
                    if event.kind == .replaced && event.isDirectory {
                        reconcile(under: item)
                    } else {
                        refresh(item, force: event.kind == .replaced && event.isDirectory)
                        if event.kind == .created, let found = items[item], published[found.id] == nil,
                            found.status.size == 0, !found.status.isDirectory
                        {
                            sawEmptyCreation = true
                        }
                    }
                }
            }
        }

        /// Re-reads one item: the only per-event cost is this one `statx`.
        mutating func refresh(_ path: [UInt8], force: Bool) {
            guard
                case .success(let status) = Syscall.withCString(
                    path, { Syscall.fileStatus(AT_FDCWD, $0, followingLinks: false) })
            else {
                if let placeholder = placeholderFound(path) {
                    upsert(placeholder, reusing: nil, force: false)
                } else {
                    remove(path)
                }
                return
            }
            let name = path[((path.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1)...]
            let isPackage = status.isDirectory && isPackageName(name)
            if status.isDirectory && !isPackage && !configuration.includesDirectories {
                // A plain folder: its items are reported by their own events.
                remove(path)
                return
            }
            upsert(Found(path: path, status: status, isPackage: isPackage), reusing: nil, force: force)
        }

        mutating func upsert(_ found: Found, reusing id: UInt64?, force: Bool) {
            let existing = items[found.path]
            if let existing, let id, existing.id != id { remove(found.path, isGone: false) }
            guard matchesPattern(found.path) else {
                remove(found.path, isGone: false)
                return
            }
            let current = items[found.path]
            let itemID: UInt64
            if let current {
                itemID = current.id
            } else if let id {
                itemID = id
                Identities.shared.withLock { $0.assign(id, toPath: found.path) }
            } else {
                itemID = Identities.shared.withLock { $0.identity(forPath: found.path) }
            }
            guard let item = makeItem(found, id: itemID) else {
                remove(found.path, isGone: false)
                return
            }
            if let current, current.hasSameAttributes(as: item), !force { return }
            items[found.path] = item
            byID[itemID] = item
            dirty.insert(itemID)
            if force { forced.insert(itemID) }
        }

        /// Removes the item at `path` from the results. `isGone` says that the file is no
        /// longer there (deleted, moved, replaced by a folder), so its identity is released;
        /// an item that only stopped passing the filter keeps it.
        mutating func remove(_ path: [UInt8], isGone: Bool = true) {
            guard let item = items.removeValue(forKey: path) else { return }
            byID[item.id] = nil
            dirty.insert(item.id)
            if isGone { Identities.shared.withLock { $0.release(item.id, atPath: path) } }
        }

        /// Removes the items below `path`; returns their identities by path relative to it.
        @discardableResult
        mutating func removeItems(under path: [UInt8], includingItself: Bool) -> [[UInt8]: UInt64] {
            var removed: [[UInt8]: UInt64] = [:]
            for (itemPath, item) in items where DirectoryWatcher.State.isSameOrInside(itemPath, path) {
                if itemPath.count == path.count && !includingItself { continue }
                removed[Array(itemPath[path.count...])] = item.id
                remove(itemPath)
            }
            return removed
        }

        /// A rename: items keep their identity when they stay results.
        mutating func moved(from source: [UInt8], to destination: [UInt8]) {
            var carried: [[UInt8]: UInt64] = [:]
            switch locate(source) {
            case .excluded, .root: break
            case .insidePackage(let package): refresh(package, force: true)
            case .item(let path):
                if let item = items[path] {
                    carried[[]] = item.id
                    remove(path)
                } else {
                    carried = removeItems(under: path, includingItself: true)
                }
            }
            switch locate(destination) {
            case .excluded, .root: break
            case .insidePackage(let package): refresh(package, force: true)
            case .item(let path):
                var found: [Found] = []
                scanNode(path, into: &found)
                // A folder renamed over the destination left nothing there; what is now there is `found`.
                let stale = Set(
                    items.keys.filter { DirectoryWatcher.State.isSameOrInside($0, path) }
                ).subtracting(found.map(\.path))
                for stalePath in stale { remove(stalePath) }
                for entry in found {
                    upsert(entry, reusing: carried[Array(entry.path[path.count...])], force: false)
                }
            }
        }

        /// Lists `path` again and brings the items below it in line (after an overflow, or
        /// when a folder was swapped for another).
        mutating func reconcile(under path: [UInt8]) {
            var found: [Found] = []
            if case .root = locate(path) {
                scanFolder(path, into: &found)
            } else {
                scanNode(path, into: &found)
            }
            let seen = Set(found.map(\.path))
            for itemPath in items.keys
            where DirectoryWatcher.State.isSameOrInside(itemPath, path) && !seen.contains(itemPath) {
                remove(itemPath)
            }
            for entry in found { upsert(entry, reusing: nil, force: false) }
        }

        // MARK: Publishing

        mutating func schedulePublish(now: DispatchTime) -> DispatchTime? {
            if sawEmptyCreation {
                sawEmptyCreation = false
                settleUntil = now + configuration.batchingInterval
            }
            guard !dirty.isEmpty, !isPublishScheduled else { return nil }
            isPublishScheduled = true
            var earliest = lastPublish.map { $0 + configuration.batchingInterval } ?? now
            if let settleUntil, settleUntil > earliest { earliest = settleUntil }
            return earliest > now ? earliest : now
        }

        func difference() -> (added: [Item], changed: [Item], removed: [Item]) {
            var added: [Item] = []
            var changed: [Item] = []
            var removed: [Item] = []
            for id in dirty {
                switch (published[id], byID[id]) {
                case (nil, let new?): added.append(new)
                case (let old?, nil): removed.append(old)
                case (let old?, let new?):
                    if !old.hasSameAttributes(as: new) || forced.contains(id) { changed.append(new) }
                case (nil, nil): break
                }
            }
            let order = precedes
            return (added.sorted(by: order), changed.sorted(by: order), removed.sorted(by: order))
        }

        /// The published results with `update` applied, kept sorted.
        func sortedResults(applying update: (added: [Item], changed: [Item], removed: [Item])) -> [Item] {
            let outgoing = update.removed + update.changed.compactMap { published[$0.id] }
            let incoming = update.added + update.changed
            if outgoing.count + incoming.count > max(32, sorted.count / 8) {
                let leaving = Set(outgoing.map(\.id))
                return (sorted.filter { !leaving.contains($0.id) } + incoming).sorted(by: precedes)
            }
            var results = sorted
            for item in outgoing {
                let index = insertionIndex(of: item, in: results)
                if index < results.count && results[index].id == item.id {
                    results.remove(at: index)
                } else if let index = results.firstIndex(where: { $0.id == item.id }) {
                    results.remove(at: index)
                }
            }
            for item in incoming { results.insert(item, at: insertionIndex(of: item, in: results)) }
            return results
        }

        func insertionIndex(of item: Item, in results: [Item]) -> Int {
            var low = 0
            var high = results.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(results[middle], item) { low = middle + 1 } else { high = middle }
            }
            return low
        }

        mutating func commit(
            _ update: (added: [Item], changed: [Item], removed: [Item]), sorted: [Item], now: DispatchTime
        ) {
            for id in dirty { published[id] = byID[id] }
            self.sorted = sorted
            dirty = []
            forced = []
            settleUntil = nil
            lastPublish = now
        }
    }
}

/// A dictionary keyed by exact path bytes that hashes each key in one pass: an array of bytes
/// as a key feeds the hasher one byte at a time, a cost a 10,000-item gathering notices.
struct PathTable<Value>: Sequence {
    struct Key: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private var storage: [Key: Value] = [:]

    subscript(path: [UInt8]) -> Value? {
        get { storage[Key(bytes: path)] }
        set { storage[Key(bytes: path)] = newValue }
    }

    var keys: LazyMapSequence<Dictionary<Key, Value>.Keys, [UInt8]> { storage.keys.lazy.map(\.bytes) }

    @discardableResult
    mutating func updateValue(_ value: Value, forKey path: [UInt8]) -> Value? {
        storage.updateValue(value, forKey: Key(bytes: path))
    }

    @discardableResult
    mutating func removeValue(forKey path: [UInt8]) -> Value? {
        storage.removeValue(forKey: Key(bytes: path))
    }

    mutating func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }

    var count: Int { storage.count }

    func makeIterator() -> some IteratorProtocol<(path: [UInt8], value: Value)> {
        storage.lazy.map { (path: $0.key.bytes, value: $0.value) }.makeIterator()
    }
}
