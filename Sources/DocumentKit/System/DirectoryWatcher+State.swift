import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DirectoryWatcher {
    /// A watched folder, keyed by its watch descriptor.
    struct Folder {
        /// The folder's path now; rewritten when it or a parent is renamed in the tree.
        var path: [UInt8]
        /// The watched root whose watch this folder belongs to.
        var root: [UInt8]
        /// Whether subfolders created or moved in get watches.
        var recursive: Bool
        var isRoot: Bool
        /// The folder lies inside a DocumentKit temporary (a package being saved or moved
        /// aside): nothing inside is reported.
        var insideTemporary = false
        /// Renamed over by a folder, or swapped out by an exchange: its new path is unknown
        /// until the other half of the exchange names it, and nothing inside is reported.
        var isDisplaced = false
        /// Names that a scan of this new folder already reported as created; their
        /// `IN_CREATE` or `IN_MOVED_TO`, queued before the scan, must not be reported again.
        var scanned: Set<[UInt8]> = []
        /// The read in which `scanned` was filled; it is emptied once a later read drains the queue.
        var scannedInRead = 0
    }

    /// One raw inotify record.
    struct Record {
        var watch: CInt
        var mask: UInt32
        var cookie: UInt32
        var name: [UInt8]
    }

    /// An event being assembled, with paths as bytes.
    struct PendingEvent {
        enum Kind {
            case created, modified, replaced, attributesChanged, deleted, overflow
            case moved(from: [UInt8])
            /// The first half of a rename, not yet paired.
            case movedFrom(cookie: UInt32)
            /// A real name renamed to a DocumentKit temporary: a deletion, unless the same
            /// batch replaces the name (a package exchange, or a package moved aside).
            case movedAside
            /// Superseded by a later record.
            case dropped
        }
        var kind: Kind
        var path: [UInt8]
        var isDirectory: Bool
    }

    /// The first half of a rename, waiting for its second half.
    struct MoveSource {
        var index: Int
        var path: [UInt8]
        var isDirectory: Bool
        var isTemporary: Bool
        /// The watches of the moved folder and its subfolders, which follow it.
        var watches: [CInt]
    }

    /// The watcher's state: its watches and the batch being assembled.
    ///
    /// Everything here runs under the watcher's lock, on the read queue or in `watch`.
    struct State {
        enum Outcome {
            case nothing
            case deliver([Event])
            case hold(until: DispatchTime, generation: Int)
        }

        static let rootMask: UInt32 =
            UInt32(
                IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO)
            | UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)
        /// A subfolder's symbolic link is an item, not a folder to descend into.
        static let subfolderMask: UInt32 = rootMask | UInt32(IN_DONT_FOLLOW)
        /// Large enough for hundreds of records at once; one record is at most 16 + 256 bytes.
        static let bufferSize = 64 * 1024
        static let maximumReadsPerWake = 16

        let fd: CInt
        var isCancelled = false
        var isClosed = false
        var source: (any DispatchSourceRead)?
        var folders: [CInt: Folder] = [:]
        var pending: [PendingEvent] = []
        var moveSources: [UInt32: MoveSource] = [:]
        /// Displaced folders' watches, by the path they had.
        var displaced: [[UInt8]: [CInt]] = [:]
        /// Files whose write was reported and whose writer has not closed them yet.
        var openWrites: Set<[UInt8]> = []
        var modifiedInBatch: Set<[UInt8]> = []
        var attributesChangedInBatch: Set<[UInt8]> = []
        var holdDeadline: DispatchTime?
        var holdGeneration = 0
        var readCount = 0
        var buffer = [UInt8](repeating: 0, count: bufferSize)

        init(fd: CInt) { self.fd = fd }

        var rootPaths: [[UInt8]] {
            folders.values.filter(\.isRoot).map(\.path).sorted { $0.lexicographicallyPrecedes($1) }
        }

        mutating func closeDescriptor() {
            guard !isClosed else { return }
            isClosed = true
            Syscall.close(fd)
            folders = [:]
            pending = []
        }

        // MARK: Watching

        /// Adds a root; returns the error of the first watch that failed, after removing
        /// the watches this call added.
        mutating func addRoot(_ path: [UInt8], recursive: Bool) -> Errno? {
            let watch: CInt
            switch Syscall.inotifyAddWatch(fd, path, Self.rootMask) {
            case .success(let value): watch = value
            case .failure(let error): return error
            }
            if var existing = folders[watch] {
                existing.isRoot = true
                existing.recursive = existing.recursive || recursive
                folders[watch] = existing
                if !recursive { return nil }
            } else {
                folders[watch] = Folder(path: path, root: path, recursive: recursive, isRoot: true)
            }
            guard recursive else { return nil }
            if let error = watchSubfolders(of: path, root: path, reporting: false), error == .noSpace {
                removeRoot(path)
                return error
            }
            return nil
        }

        mutating func removeRoot(_ path: [UInt8]) {
            let watches = folders.filter {
                $0.value.root == path || ($0.value.isRoot && $0.value.path == path)
            }
            for (watch, folder) in watches where !folder.isRoot || folder.path == path {
                Syscall.inotifyRemoveWatch(fd, watch)
                folders[watch] = nil
            }
        }

        /// Watches `path` as a subfolder of `root` and, below it, every subfolder; with
        /// `reporting`, every item found is reported as created.
        ///
        /// The watch is added before the folder is read: an item created in between is
        /// then both found and reported by the kernel, and `scanned` removes the duplicate.
        /// The other order would lose items created between the read and the watch.
        @discardableResult
        mutating func watchSubtree(_ path: [UInt8], root: [UInt8], reporting: Bool) -> Errno? {
            let watch: CInt
            switch Syscall.inotifyAddWatch(fd, path, Self.subfolderMask) {
            case .success(let value): watch = value
            case .failure(.noSpace): return .noSpace
            // Removed or replaced by a file since the event: its own events tell the rest.
            case .failure(let error): return error
            }
            var folder = Folder(path: path, root: root, recursive: true, isRoot: false)
            if let existing = folders[watch], existing.isRoot { folder.isRoot = true }
            folders[watch] = folder
            guard case .success(let entries) = Syscall.directoryEntries(atPath: path) else { return nil }
            if reporting {
                folders[watch]?.scanned = Set(
                    entries.lazy.map(\.fileSystemName).filter { !isDocumentKitTemporaryName($0) })
                folders[watch]?.scannedInRead = readCount
            }
            for entry in entries where !isDocumentKitTemporaryName(entry.fileSystemName) {
                let child = Self.join(path, entry.fileSystemName)
                if reporting { append(.created, child, isDirectory: entry.isDirectory) }
                if entry.isDirectory, watchSubtree(child, root: root, reporting: reporting) == .noSpace {
                    return .noSpace
                }
            }
            return nil
        }

        /// Watches every subfolder below the folder at `path`, which is itself watched.
        mutating func watchSubfolders(of path: [UInt8], root: [UInt8], reporting: Bool) -> Errno? {
            guard case .success(let entries) = Syscall.directoryEntries(atPath: path, onlyDirectories: true)
            else {
                return nil
            }
            for entry in entries where entry.isDirectory && !isDocumentKitTemporaryName(entry.fileSystemName)
            {
                if watchSubtree(Self.join(path, entry.fileSystemName), root: root, reporting: reporting)
                    == .noSpace
                {
                    return .noSpace
                }
            }
            return nil
        }

        /// The watches of the folder at `path` and of its subfolders.
        func watches(under path: [UInt8]) -> [CInt] {
            folders.compactMap { watch, folder in
                !folder.isDisplaced && !folder.isRoot && Self.isSameOrInside(folder.path, path) ? watch : nil
            }
        }

        mutating func removeWatches(_ watches: [CInt]) {
            for watch in watches where folders[watch] != nil {
                Syscall.inotifyRemoveWatch(fd, watch)
                folders[watch] = nil
            }
        }

        /// Reports that new subfolders of `root` could not be watched.
        mutating func reportWatchLimit(root: [UInt8]) {
            if !pending.contains(where: { if case .overflow = $0.kind { $0.path == root } else { false } }) {
                append(.overflow, root, isDirectory: true)
            }
        }

        // MARK: Reading

        /// Reads what the kernel has queued, translates it, and says what to do with the batch.
        mutating func readAndTranslate(now: DispatchTime) -> Outcome {
            guard !isClosed && !isCancelled else { return .nothing }
            readCount += 1
            var records: [Record] = []
            var drained = false
            for _ in 0..<Self.maximumReadsPerWake {
                let fd = self.fd
                let result = buffer.withUnsafeMutableBytes { Syscall.read(fd, $0) }
                guard case .success(let count) = result, count > 0 else {
                    drained = true
                    break
                }
                buffer.withUnsafeBytes {
                    Self.parse(UnsafeRawBufferPointer(rebasing: $0[..<count]), into: &records)
                }
            }
            for record in records { translate(record) }
            if drained {
                // Every record queued before an earlier scan has now been read.
                for (watch, folder) in folders
                where !folder.scanned.isEmpty && folder.scannedInRead < readCount {
                    folders[watch]?.scanned = []
                }
            }
            return decide(now: now)
        }

        /// Splits a buffer of `struct inotify_event` records: a 16-byte header, then `len`
        /// bytes of NUL-padded name. The kernel pads records, but nothing here relies on
        /// alignment: every field is loaded unaligned.
        static func parse(_ bytes: UnsafeRawBufferPointer, into records: inout [Record]) {
            let headerSize = 16
            var offset = 0
            while offset + headerSize <= bytes.count {
                let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
                let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = offset + headerSize
                guard nameStart + length <= bytes.count else { break }
                let name = Array(bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 })
                records.append(Record(watch: watch, mask: mask, cookie: cookie, name: name))
                offset = nameStart + length
            }
        }

        mutating func decide(now: DispatchTime) -> Outcome {
            if pending.isEmpty && moveSources.isEmpty && displaced.isEmpty {
                holdDeadline = nil
                return .nothing
            }
            if isWaitingForOtherHalf {
                if let holdDeadline {
                    if now < holdDeadline { return .nothing }  // its timer is already set
                } else {
                    let deadline = now + DirectoryWatcher.holdingWindow
                    holdDeadline = deadline
                    holdGeneration += 1
                    return .hold(until: deadline, generation: holdGeneration)
                }
            }
            return .deliver(flush())
        }

        mutating func endHold(generation: Int) -> Outcome {
            guard !isClosed && !isCancelled, holdDeadline != nil, generation == holdGeneration else {
                return .nothing
            }
            return .deliver(flush())
        }

        /// Whether the batch ends with half of a change whose other half may be in the next read.
        var isWaitingForOtherHalf: Bool {
            if !moveSources.isEmpty || !displaced.isEmpty || !modifiedInBatch.isDisjoint(with: openWrites) {
                return true
            }
            let replaced = Set(
                pending.lazy.filter { if case .replaced = $0.kind { true } else { false } }.map(\.path))
            return pending.contains {
                if case .movedAside = $0.kind { !replaced.contains($0.path) } else { false }
            }
        }

        /// Ends the batch: unpaired halves become what they are alone, and paths become URLs.
        mutating func flush() -> [Event] {
            for source in moveSources.values {
                // Moved out of the watched folders: it and its watches are gone from here.
                pending[source.index] = PendingEvent(
                    kind: source.isTemporary ? .dropped : .deleted, path: source.path,
                    isDirectory: source.isDirectory)
                openWrites.remove(source.path)
                removeWatches(source.watches)
            }
            moveSources = [:]
            // Folders renamed over by another folder are deleted.
            removeWatches(displaced.values.flatMap { $0 })
            displaced = [:]
            let replaced = Set(
                pending.lazy.filter { if case .replaced = $0.kind { true } else { false } }.map(\.path))
            var events: [Event] = []
            events.reserveCapacity(pending.count)
            for event in pending {
                let url = DirectoryWatcher.url(for: event.path, isDirectory: event.isDirectory)
                let kind: Kind
                var previous: [UInt8]?
                switch event.kind {
                case .created: kind = .created
                case .modified: kind = .modified
                case .replaced: kind = .replaced
                case .attributesChanged: kind = .attributesChanged
                case .deleted: kind = .deleted
                case .overflow: kind = .overflow
                case .movedAside:
                    if replaced.contains(event.path) { continue }
                    kind = .deleted
                case .moved(let from):
                    kind = .moved(
                        from: DirectoryWatcher.url(for: from, isDirectory: event.isDirectory), to: url)
                    previous = from
                case .movedFrom, .dropped: continue
                }
                events.append(
                    Event(
                        kind: kind, url: url, isDirectory: event.isDirectory, fileSystemPath: event.path,
                        previousFileSystemPath: previous))
            }
            pending = []
            modifiedInBatch = []
            attributesChangedInBatch = []
            holdDeadline = nil
            return events
        }

        // MARK: Translating

        mutating func append(_ kind: PendingEvent.Kind, _ path: [UInt8], isDirectory: Bool) {
            pending.append(PendingEvent(kind: kind, path: path, isDirectory: isDirectory))
        }

        mutating func translate(_ record: Record) {
            let mask = record.mask
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                overflowed()
                return
            }
            // A removed watch's last records may still be queued.
            guard let folder = folders[record.watch] else { return }
            if mask & UInt32(IN_IGNORED) != 0 {
                folders[record.watch] = nil
                return
            }
            if record.name.isEmpty {
                translateSelf(mask, folder: folder)
                return
            }
            guard !folder.isDisplaced else { return }
            let path = Self.join(folder.path, record.name)
            let isDirectory = mask & UInt32(IN_ISDIR) != 0
            let isTemporary = folder.insideTemporary || isDocumentKitTemporaryName(record.name)

            if isTemporary && !isDirectory && mask & UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE) != 0 {
                // A temporary is not reported, but its writer's close may come after it is
                // renamed over the real name, and that close must not look like a new write.
                if mask & UInt32(IN_CLOSE_WRITE) != 0 {
                    openWrites.remove(path)
                } else {
                    openWrites.insert(path)
                }
                return
            }
            if mask & UInt32(IN_CREATE) != 0 {
                guard !isTemporary, folders[record.watch]?.scanned.remove(record.name) == nil else { return }
                append(.created, path, isDirectory: isDirectory)
                if isDirectory && folder.recursive,
                    watchSubtree(path, root: folder.root, reporting: true) == .noSpace
                {
                    reportWatchLimit(root: folder.root)
                }
            } else if mask & UInt32(IN_MODIFY) != 0 {
                guard !isTemporary else { return }
                openWrites.insert(path)
                if modifiedInBatch.insert(path).inserted { append(.modified, path, isDirectory: isDirectory) }
            } else if mask & UInt32(IN_CLOSE_WRITE) != 0 {
                // The close ends a write already reported; a close with no write seen is
                // reported, since a write through `mmap` has no `IN_MODIFY`.
                guard !isTemporary, openWrites.remove(path) == nil else { return }
                if modifiedInBatch.insert(path).inserted { append(.modified, path, isDirectory: isDirectory) }
            } else if mask & UInt32(IN_ATTRIB) != 0 {
                guard !isTemporary, attributesChangedInBatch.insert(path).inserted else { return }
                append(.attributesChanged, path, isDirectory: isDirectory)
            } else if mask & UInt32(IN_DELETE) != 0 {
                folders[record.watch]?.scanned.remove(record.name)
                openWrites.remove(path)
                guard !isTemporary else { return }
                append(.deleted, path, isDirectory: isDirectory)
            } else if mask & UInt32(IN_MOVED_FROM) != 0 {
                folders[record.watch]?.scanned.remove(record.name)
                var watches: [CInt] = []
                if isDirectory { watches = displaced.removeValue(forKey: path) ?? self.watches(under: path) }
                moveSources[record.cookie] = MoveSource(
                    index: pending.count, path: path, isDirectory: isDirectory, isTemporary: isTemporary,
                    watches: watches)
                append(.movedFrom(cookie: record.cookie), path, isDirectory: isDirectory)
            } else if mask & UInt32(IN_MOVED_TO) != 0 {
                movedTo(
                    path, isDirectory: isDirectory, isTemporary: isTemporary, record: record, folder: folder)
            }
        }

        mutating func movedTo(
            _ path: [UInt8], isDirectory: Bool, isTemporary: Bool, record: Record, folder: Folder
        ) {
            guard let source = moveSources.removeValue(forKey: record.cookie) else {
                // Moved in from a folder that is not watched: new here, with all it holds.
                guard !isTemporary, folders[record.watch]?.scanned.remove(record.name) == nil else { return }
                append(.created, path, isDirectory: isDirectory)
                if isDirectory && folder.recursive,
                    watchSubtree(path, root: folder.root, reporting: true) == .noSpace
                {
                    reportWatchLimit(root: folder.root)
                }
                return
            }
            if openWrites.remove(source.path) != nil { openWrites.insert(path) }
            if isDirectory { relocate(source.watches, from: source.path, to: path, into: folder) }
            switch (source.isTemporary, isTemporary) {
            case (true, true):
                pending[source.index].kind = .dropped
            case (true, false):
                pending[source.index].kind = .dropped
                append(.replaced, path, isDirectory: isDirectory)
            case (false, true):
                pending[source.index].kind = .movedAside
            case (false, false):
                pending[source.index] = PendingEvent(
                    kind: .moved(from: source.path), path: path, isDirectory: isDirectory)
            }
            // A folder that was not watched where it came from (a package staged under a
            // temporary name, or a folder from a non-recursive watch) needs watches now;
            // its contents are not news: the rename itself was reported.
            if isDirectory && !isTemporary && folder.recursive && source.watches.isEmpty {
                if watchSubtree(path, root: folder.root, reporting: false) == .noSpace {
                    reportWatchLimit(root: folder.root)
                }
            }
        }

        /// Makes the watches of a folder renamed from `from` to `to` follow it.
        mutating func relocate(_ watches: [CInt], from: [UInt8], to: [UInt8], into destination: Folder) {
            // A folder already at the destination was renamed over (it was empty) or is being
            // exchanged: its watches wait aside for its own rename, or for the end of the batch.
            let moved = Set(watches)
            let occupant = self.watches(under: to).filter { !moved.contains($0) }
            if !occupant.isEmpty {
                displaced[to] = occupant
                for watch in occupant { folders[watch]?.isDisplaced = true }
            }
            guard destination.recursive else {
                removeWatches(watches)
                return
            }
            for watch in watches {
                guard var folder = folders[watch] else { continue }
                folder.path = to + folder.path.dropFirst(from.count)
                folder.root = destination.root
                folder.isDisplaced = false
                folder.insideTemporary = Self.isInsideTemporary(folder.path, root: folder.root)
                folders[watch] = folder
            }
        }

        mutating func translateSelf(_ mask: UInt32, folder: Folder) {
            // A subfolder's own changes reach its parent's watch with its name; only a
            // root has no watched parent to report them.
            guard folder.isRoot else { return }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                append(.deleted, folder.path, isDirectory: true)
                removeRoot(folder.path)
            } else if mask & UInt32(IN_ATTRIB) != 0 {
                if attributesChangedInBatch.insert(folder.path).inserted {
                    append(.attributesChanged, folder.path, isDirectory: true)
                }
            }
        }

        /// Events were lost: every root is rescanned by its consumer, and subfolders created
        /// meanwhile are watched now so that the rescan's results stay live.
        mutating func overflowed() {
            let roots = folders.values.filter(\.isRoot)
            for root in roots.sorted(by: { $0.path.lexicographicallyPrecedes($1.path) }) {
                append(.overflow, root.path, isDirectory: true)
            }
            for watch in folders.keys { folders[watch]?.scanned = [] }
            for root in roots where root.recursive {
                _ = watchSubfolders(of: root.path, root: root.path, reporting: false)
            }
        }

        // MARK: Paths

        static func join(_ directory: [UInt8], _ name: [UInt8]) -> [UInt8] {
            directory == [UInt8(ascii: "/")] ? directory + name : directory + [UInt8(ascii: "/")] + name
        }

        static func isSameOrInside(_ path: [UInt8], _ folder: [UInt8]) -> Bool {
            path.starts(with: folder)
                && (path.count == folder.count || path[folder.count] == UInt8(ascii: "/"))
        }

        static func isInsideTemporary(_ path: [UInt8], root: [UInt8]) -> Bool {
            guard isSameOrInside(path, root) else { return false }
            return path.dropFirst(root.count).split(separator: UInt8(ascii: "/")).contains {
                isDocumentKitTemporaryName($0)
            }
        }
    }
}
