import Foundation

extension SimulatedRemote {
    /// One file or folder of the tree.
    struct Node: Hashable, Sendable {
        var kind: RemoteEntry.Kind
        var bytes: Data
        var tag: RemoteTag
        var fileID: String

        func entry(named name: String) -> RemoteEntry {
            RemoteEntry(
                name: name, kind: kind, size: kind == .file ? Int64(bytes.count) : 0, tag: tag,
                fileID: fileID)
        }
    }

    /// Everything the remote holds, mutated only under its lock.
    struct State {
        /// Every item by path, the root included.
        var tree: [RemotePath: Node]
        /// Past trees, oldest first, for stale listings.
        var history: [[RemotePath: Node]] = []
        let historyLimit: Int
        var lastTag: UInt64 = 0
        var lastFileID: UInt64 = 0
        var faults: Faults
        var generator: SeededGenerator
        var scheduled: [ScheduledFault] = []
        var counts = OperationCounts()
        var raceCount = 0
        /// The bytes each racing write replaced, in order.
        var replacedByRaces: [Data] = []
        /// The hostile names (``SimulatedRemote/Faults/hostileName``) ever put in the tree, as
        /// bytes (Swift's string equality would take a name for its other spellings).
        var hostileNamesMade: Set<[UInt8]> = []

        init(faults: Faults, generator: SeededGenerator, historyLimit: Int) {
            self.faults = faults
            self.generator = generator
            self.historyLimit = historyLimit
            tree = [:]
            tree[.root] = Node(kind: .folder, bytes: Data(), tag: newTag(), fileID: newFileID())
        }

        mutating func newTag() -> RemoteTag {
            lastTag += 1
            return RemoteTag("s-\(lastTag)")
        }

        mutating func newFileID() -> String {
            lastFileID += 1
            return "f-\(lastFileID)"
        }

        /// Keeps the tree as it is before a mutation, for stale listings.
        private mutating func remember() {
            guard historyLimit > 0 else { return }
            history.append(tree)
            if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        }

        /// Gives a folder a new tag: its entries changed.
        private mutating func touch(_ folder: RemotePath) {
            guard tree[folder] != nil else { return }
            let tag = newTag()
            tree[folder]?.tag = tag
        }

        /// Writes a file whose folder exists; keeps the file ID of the file it replaces.
        mutating func put(_ path: RemotePath, _ bytes: Data, remote: String) throws -> RemoteTag {
            if tree[path]?.kind == .folder {
                throw RemoteError(.notAFile, operation: .write, path: path, remote: remote)
            }
            remember()
            let existing = tree[path]
            let tag = newTag()
            tree[path] = Node(kind: .file, bytes: bytes, tag: tag, fileID: existing?.fileID ?? newFileID())
            if existing == nil { touch(path.parent) }
            return tag
        }

        mutating func insertFolder(_ path: RemotePath) {
            remember()
            tree[path] = Node(kind: .folder, bytes: Data(), tag: newTag(), fileID: newFileID())
            touch(path.parent)
        }

        /// Removes the item and everything inside it.
        mutating func remove(_ path: RemotePath) {
            remember()
            tree = tree.filter { $0.key != path && !$0.key.isDescendant(of: path) }
            touch(path.parent)
        }

        /// Makes `folder` and every missing folder above it.
        mutating func makeFolders(_ folder: RemotePath, remote: String) throws {
            for depth in 0...folder.components.count {
                let prefix = RemotePath(components: Array(folder.components.prefix(depth)))
                switch tree[prefix]?.kind {
                case .folder: continue
                case .file:
                    throw RemoteError(.notAFolder, operation: .makeFolder, path: prefix, remote: remote)
                case nil: insertFolder(prefix)
                }
            }
        }

        /// Throws `.preconditionFailed` unless `condition` holds at `path`.
        func check(
            _ condition: WriteCondition, at path: RemotePath, _ operation: RemoteError.Operation,
            remote: String
        ) throws {
            let holds: Bool
            switch condition {
            case .absent: holds = tree[path] == nil
            case .matches(let tag): holds = tree[path]?.tag == tag
            }
            guard holds else {
                throw RemoteError(.preconditionFailed, operation: operation, path: path, remote: remote)
            }
        }

        /// Applies another client's write first, when the fault is a race and a file can be there.
        mutating func race(_ fault: Fault?, at path: RemotePath, remote: String) throws {
            guard case .racingWrite(let bytes) = fault, !path.isRoot,
                tree[path.parent]?.kind == .folder, tree[path]?.kind != .folder
            else { return }
            if let replaced = tree[path]?.bytes { replacedByRaces.append(replaced) }
            _ = try put(path, bytes, remote: remote)
        }

        /// Moves an item and everything inside it, replacing nothing; keeps their tags.
        mutating func move(
            _ source: RemotePath, to destination: RemotePath, condition: WriteCondition?, remote: String
        ) throws -> RemoteTag {
            func failure(_ kind: RemoteError.Kind) -> RemoteError {
                RemoteError(kind, operation: .move, path: source, destination: destination, remote: remote)
            }
            guard tree[source] != nil, !source.isRoot else { throw failure(.notFound) }
            if let condition {
                do { try check(condition, at: source, .move, remote: remote) } catch {
                    throw failure(.preconditionFailed)
                }
            }
            guard tree[destination] == nil else { throw failure(.exists) }
            if destination.isDescendant(of: source) { throw failure(.invalidMove) }
            guard tree[destination.parent]?.kind == .folder else { throw failure(.parentMissing) }
            remember()
            var moved: [RemotePath: Node] = [:]
            for (path, node) in tree {
                moved[path.replacingPrefix(source, with: destination) ?? path] = node
            }
            tree = moved
            touch(source.parent)
            touch(destination.parent)
            return tree[destination]!.tag
        }
    }
}
