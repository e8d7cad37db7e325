import Foundation
import Testing

@testable import DocumentKit
@testable import DocumentSync

/// The planner on its own: what it decides from three trees, and the batches it makes of it,
/// which must run in any order and at once with the outcome of a pass made one at a time.
@Suite struct SyncPlannerTests {
    // MARK: - Batches, table by table

    @Test func aNewFolderIsMadeBeforeWhatGoesInside() throws {
        let plan = try Trees(local: ["A/", "A/x", "A/y", "z"]).plan()
        #expect(
            plan.batches.map(Self.describe) == [
                ["makeRemoteFolder A", "upload z"],
                ["upload A/x", "upload A/y"],
            ])
    }

    @Test func nestedNewFoldersAreMadeShallowestFirst() throws {
        let plan = try Trees(local: ["A/", "A/B/", "A/B/f", "g"]).plan()
        #expect(
            plan.batches.map(Self.describe) == [
                ["makeRemoteFolder A", "upload g"],
                ["makeRemoteFolder A/B"],
                ["upload A/B/f"],
            ])
    }

    @Test func aDeletedFolderGoesAfterWhatWasInsideDeepestFirst() throws {
        var trees = Trees(base: ["A/", "A/B/", "A/B/f", "A/g", "h"])
        trees.local = trees.local.filter { $0.key == "h" }
        let plan = try trees.plan()
        #expect(
            plan.batches.map(Self.describe) == [
                ["deleteRemote A/B/f", "deleteRemote A/g"],
                ["deleteRemoteFolder A/B"],
                ["deleteRemoteFolder A"],
            ])
    }

    @Test func independentTransfersShareOneBatch() throws {
        var trees = Trees(base: ["A/", "A/a", "b", "c", "d"])
        trees.editLocal("A/a")
        trees.editRemote("b")
        trees.local.removeValue(forKey: "c")
        trees.remote.removeValue(forKey: "d")
        trees.local["e"] = .file("new e")
        let plan = try trees.plan()
        #expect(
            plan.batches.map(Self.describe) == [
                ["upload A/a", "download b", "upload e", "deleteRemote c", "deleteLocal d"]
            ])
    }

    @Test func aMoveIntoANewFolderWaitsForTheFolder() throws {
        var trees = Trees(base: ["x"])
        trees.local["N"] = .folder
        trees.move(\.local, "x", to: "N/x")
        let plan = try trees.plan()
        #expect(
            plan.batches.map(Self.describe) == [
                ["makeRemoteFolder N"],
                ["moveRemote x N/x"],
            ])
    }

    @Test func aMoveOutOfAFolderComesBeforeTheFolderIsDeleted() throws {
        var trees = Trees(base: ["A/", "A/x"])
        trees.move(\.remote, "A/x", to: "y")
        trees.remote.removeValue(forKey: "A")
        let plan = try trees.plan()
        #expect(
            plan.batches.map(Self.describe) == [
                ["moveLocal A/x y"],
                ["deleteLocalFolder A"],
            ])
    }

    /// A pass lets go of its scan once planned: the plan keeps the status the scan saw of each
    /// item it replaces, merges with, moves or deletes here, and nothing of the others (an
    /// upload looks at its file itself), with the bytes its transfers move.
    @Test func thePlanKeepsWhatItsActionsNeedOfTheScanAndNoMore() throws {
        var trees = Trees(base: ["A/", "A/a", "b", "c", "d", "m", "u"])
        trees.editRemote("A/a")
        trees.local.removeValue(forKey: "c")
        trees.remote.removeValue(forKey: "d")
        trees.move(\.remote, "m", to: "n")
        trees.local["e"] = .file("new e")
        trees.editLocal("b")
        trees.editRemote("b")
        let plan = try trees.plan()
        #expect(
            Set(Self.describe(plan.actions)) == [
                "download A/a", "reconcile b", "deleteRemote c", "deleteLocal d", "moveLocal m n", "upload e",
            ])
        #expect(Set(plan.scannedHere.keys.map(\.string)) == ["A/a", "b", "d", "m"])
        #expect(plan.scannedHere[RemotePath("d")]?.size == Int64("bytes of d".utf8.count))
        let remoteSizes = ["remote edit 1 of A/a", "remote edit 3 of b"].map { Int64($0.utf8.count) }
        #expect(plan.byteTotal == Int64("new e".utf8.count) + remoteSizes.reduce(0, +))
    }

    /// A first sync plans one action per document: the cases that carry a remote entry or a
    /// file's status box it, so an action stays at 64 bytes (it was 128).
    @Test func anActionTakesSixtyFourBytes() {
        #expect(MemoryLayout<SyncAction>.stride <= 64)
    }

    @Test func theSamePathIsNeverTwiceInABatch() {
        let path = RemotePath("p")
        let batches = SyncPlan.batches(of: [
            .removePlaceholder(path, forget: false), .download(path, Trees.entry("p", .file("x")), note: nil),
        ])
        #expect(batches.count == 2)
    }

    // MARK: - Batches, by seeds

    /// Random trees of a few folders and files, changed on both sides (edits, deletions, new
    /// items, renames, whole folders gone): each plan's batches keep their rules, and running
    /// each batch in a shuffled order, with its completions (the journal's records) in another,
    /// ends where running the plan one action at a time ends: the same trees, journal and
    /// failures.
    @Test(arguments: 0..<400 as Range<UInt64>)
    func batchesRunInAnyOrderToTheSameEnd(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let trees = Trees.random(&random)
        let plan = try trees.plan()
        let batches = plan.batches
        #expect(batches.flatMap { $0 }.count == plan.actions.count)
        #expect(Set(batches.flatMap { $0 }) == Set(plan.actions))
        try Self.checkRules(batches)
        let oneAtATime = Model(trees).running(plan.actions.map { [$0] }, shuffledBy: nil)
        for _ in 0..<8 {
            let shuffled = Model(trees).running(batches, shuffledBy: random.split())
            #expect(shuffled == oneAtATime, "seed \(seed): \(batches.map(Self.describe))")
        }
    }

    /// Within a batch no two actions touch a path and the same path or one inside it; a folder
    /// made comes before anything made inside it, and one deleted after anything inside it.
    private static func checkRules(_ batches: [[SyncAction]]) throws {
        func overlaps(_ a: RemotePath, _ b: RemotePath) -> Bool {
            a == b || a.string.hasPrefix(b.string + "/") || b.string.hasPrefix(a.string + "/")
        }
        var batchOf: [SyncAction: Int] = [:]
        for (index, batch) in batches.enumerated() {
            for action in batch { batchOf[action] = index }
            for (i, a) in batch.enumerated() {
                for b in batch[(i + 1)...] {
                    for p in a.touchedPaths {
                        for q in b.touchedPaths {
                            #expect(!overlaps(p, q), "\(a) and \(b) share batch \(index)")
                        }
                    }
                }
            }
        }
        for (action, index) in batchOf {
            switch action {
            case .makeRemoteFolder(let folder), .makeLocalFolder(let folder):
                for (other, otherIndex) in batchOf
                where other != action
                    && other.touchedPaths.contains(where: { $0.string.hasPrefix(folder.string + "/") })
                {
                    #expect(otherIndex > index, "\(other) before the folder \(folder) is made")
                }
            case .deleteRemoteFolder(let folder), .deleteLocalFolder(let folder):
                for (other, otherIndex) in batchOf
                where other != action
                    && other.touchedPaths.contains(where: { $0.string.hasPrefix(folder.string + "/") })
                {
                    #expect(otherIndex < index, "\(other) after the folder \(folder) is deleted")
                }
            default: break
            }
        }
    }

    private static func describe(_ batch: [SyncAction]) -> [String] {
        batch.map { action in
            switch action {
            case .moveRemote(let from, let to, _): return "moveRemote \(from) \(to)"
            case .moveLocal(let from, let to, _): return "moveLocal \(from) \(to)"
            default:
                let name = "\(action)".prefix { $0 != "(" }
                return "\(name) \(action.path)"
            }
        }
    }
}

/// An item of a test tree: a folder, or a file with its contents (which stand for its hash).
private enum Item: Hashable, CustomStringConvertible {
    case folder
    case file(String)

    var description: String {
        switch self {
        case .folder: return "folder"
        case .file(let contents): return contents
        }
    }
}

/// The three trees a planner reads, as paths to items: the journal's (what both sides last
/// agreed on), the container's and the remote's. A file keeps an inode here and a file
/// identity there, so that renames are found as the engine finds them.
private struct Trees {
    var base: [String: Item] = [:]
    var local: [String: Item] = [:]
    var remote: [String: Item] = [:]
    /// The inode of each local file, by path; a file new here gets a new one.
    var inodes: [String: UInt64] = [:]
    /// The modification time of each local file: a change of bytes changes it.
    var modified: [String: Int64] = [:]
    /// The remote's file identity of each remote file.
    var fileIDs: [String: String] = [:]
    /// The remote's tag of each remote file: a change of bytes changes it.
    var tags: [String: String] = [:]
    private var counter = 0

    /// Trees where only the container has `local` (a path ending in "/" is a folder).
    init(local: [String]) {
        self.init()
        for path in local { add(path, to: \.local) }
    }

    /// Trees where both sides and the journal have `base` (a path ending in "/" is a folder).
    init(base: [String]) {
        self.init()
        for path in base {
            add(path, to: \.base)
            let name = path.hasSuffix("/") ? String(path.dropLast()) : path
            local[name] = self.base[name]
            remote[name] = self.base[name]
        }
    }

    init() {}

    private mutating func add(_ path: String, to tree: WritableKeyPath<Trees, [String: Item]>) {
        if path.hasSuffix("/") {
            self[keyPath: tree][String(path.dropLast())] = .folder
        } else {
            self[keyPath: tree][path] = .file("bytes of \(path)")
        }
    }

    mutating func fresh() -> Int {
        counter += 1
        return counter
    }

    /// Renames `from` on one side: the same inode here, the same identity and tag there.
    mutating func move(_ side: WritableKeyPath<Trees, [String: Item]>, _ from: String, to: String) {
        self[keyPath: side][to] = self[keyPath: side].removeValue(forKey: from)
        if side == \Trees.local {
            inodes[to] = inodes[from] ?? Self.inode(of: from)
            modified[to] = modified[from] ?? Self.seconds(of: base[from] ?? .folder)
        } else {
            fileIDs[to] = fileIDs[from] ?? "id \(from)"
            tags[to] = tags[from]
        }
    }

    mutating func editLocal(_ path: String) { local[path] = .file("local edit \(fresh()) of \(path)") }
    mutating func editRemote(_ path: String) { remote[path] = .file("remote edit \(fresh()) of \(path)") }

    static func entry(_ path: String, _ item: Item, tag: String? = nil, fileID: String? = nil) -> RemoteEntry
    {
        switch item {
        case .folder: return RemoteEntry(name: RemotePath(path).name, kind: .folder, size: 0, tag: nil)
        case .file(let contents):
            return RemoteEntry(
                name: RemotePath(path).name, kind: .file, size: Int64(contents.utf8.count),
                tag: RemoteTag(tag ?? "tag of \(contents)"), fileID: fileID)
        }
    }

    /// The status of a local item: its inode, and a modification time that moves with its bytes.
    /// As the journal saw it (`asSynced`), the status the item had when both sides agreed.
    private func status(_ path: String, _ item: Item, asSynced: Bool = false) -> FileStatus {
        let isFolder = item == .folder
        let seconds = (asSynced ? nil : modified[path]) ?? Self.seconds(of: item)
        let time = FileStatus.Timestamp(seconds: seconds, nanoseconds: 0)
        return FileStatus(
            device: 1, inode: (asSynced ? nil : inodes[path]) ?? Self.inode(of: path),
            mode: isFolder ? 0o40755 : 0o100644,
            linkCount: 1, size: isFolder ? 0 : Int64(item.description.utf8.count), modification: time,
            statusChange: time, birth: nil)
    }

    private static func inode(of path: String) -> UInt64 {
        UInt64(truncatingIfNeeded: path.hashValue) | 1 << 40
    }
    private static func seconds(of item: Item) -> Int64 { Int64(item.description.utf8.count) }

    /// The planner's plan of these trees.
    func plan() throws -> SyncPlan {
        var journal: [RemotePath: JournalItem] = [:]
        for (path, item) in base {
            let remotePath = RemotePath(path)
            switch item {
            case .folder: journal[remotePath] = JournalItem(path: remotePath, kind: .folder)
            case .file(let contents):
                journal[remotePath] = JournalItem(
                    path: remotePath, kind: .file, remoteTag: RemoteTag("tag of \(contents)"),
                    remoteSize: Int64(contents.utf8.count), remoteFileID: "id \(path)",
                    syncedHash: contents, local: JournalItem.LocalStatus(status(path, item, asSynced: true)))
            }
        }
        var localEntries: [RemotePath: LocalEntry] = [:]
        for (path, item) in local {
            localEntries[RemotePath(path)] = LocalEntry(
                kind: item == .folder ? .folder : .file, status: status(path, item))
        }
        var remoteEntries: [RemotePath: RemoteEntry] = [:]
        for (path, item) in remote {
            remoteEntries[RemotePath(path)] = Self.entry(
                path, item, tag: tags[path], fileID: fileIDs[path] ?? "id \(path)")
        }
        let local = local
        return try SyncPlanner(
            journal: journal, local: localEntries, remote: remoteEntries,
            hash: { path in local[path.string]?.description ?? "" }
        ).plan()
    }

    // MARK: Random trees

    private static let folders = ["A", "A/B", "C"]
    private static let names = ["x", "y"]

    /// Trees of a seed: a journal of some folders and files both sides agreed on, then each
    /// side changed on its own.
    static func random(_ random: inout SeededGenerator) -> Trees {
        var trees = Trees()
        for folder in folders where Bool.random(using: &random) {
            if folder.contains("/"), trees.base[RemotePath(folder).parent.string] == nil { continue }
            trees.base[folder] = .folder
        }
        for parent in [""] + folders where parent.isEmpty || trees.base[parent] != nil {
            for name in names where Int.random(in: 0..<3, using: &random) > 0 {
                let path = parent.isEmpty ? name : "\(parent)/\(name)"
                trees.base[path] = .file("bytes of \(path)")
            }
        }
        trees.local = trees.base
        trees.remote = trees.base
        trees.change(\.local, &random)
        trees.change(\.remote, &random)
        return trees
    }

    /// Edits, deletes, adds and renames on one side.
    private mutating func change(
        _ side: WritableKeyPath<Trees, [String: Item]>, _ random: inout SeededGenerator
    ) {
        let isLocal = side == \Trees.local
        for path in self[keyPath: side].keys.sorted() where self[keyPath: side][path] != nil {
            guard case .file = self[keyPath: side][path] else {
                // A whole folder deleted, now and then.
                if Int.random(in: 0..<6, using: &random) == 0 {
                    for inside in self[keyPath: side].keys
                    where inside == path || inside.hasPrefix(path + "/") {
                        self[keyPath: side].removeValue(forKey: inside)
                    }
                }
                continue
            }
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                self[keyPath: side][path] = .file(
                    "\(isLocal ? "local" : "remote") edit \(fresh()) of \(path)")
                if isLocal { modified[path] = Int64(1000 + counter) } else { tags[path] = "tag \(counter)" }
            case 1: self[keyPath: side].removeValue(forKey: path)
            case 2:
                // A rename, to a new name in a folder this side has (or makes).
                let folder = Self.folders.randomElement(using: &random)!
                let parent = RemotePath(folder).parent.string
                guard parent.isEmpty || self[keyPath: side][parent] == .folder else { continue }
                let destination = "\(folder)/moved\(fresh())"
                guard self[keyPath: side][destination] == nil else { continue }
                self[keyPath: side][folder] = self[keyPath: side][folder] ?? .folder
                move(side, path, to: destination)
            default: break
            }
        }
        // New files, in a folder this side has or a new one.
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let folder = ([""] + Self.folders).randomElement(using: &random)!
            if !folder.isEmpty {
                let parent = RemotePath(folder).parent.string
                guard parent.isEmpty || self[keyPath: side][parent] == .folder else { continue }
                guard self[keyPath: side][folder] == nil || self[keyPath: side][folder] == .folder else {
                    continue
                }
                self[keyPath: side][folder] = .folder
            }
            let path = "\(folder.isEmpty ? "" : folder + "/")new\(fresh())"
            self[keyPath: side][path] = .file("\(isLocal ? "local" : "remote") new \(counter)")
            if isLocal { modified[path] = Int64(1000 + counter) } else { tags[path] = "tag \(counter)" }
        }
    }
}

/// The two sides and the journal as plain trees, changed by actions as the engine changes
/// them, each with the checks the engine meets (a file needs its folder, a folder deleted
/// must be empty, a move needs its source): what comes out of running a plan.
private struct Model: Equatable {
    var local: [String: Item]
    var remote: [String: Item]
    var journal: [String: Item]
    /// The actions that failed, with why.
    var failures: Set<String> = []

    init(_ trees: Trees) {
        (local, remote, journal) = (trees.local, trees.remote, trees.base)
    }

    /// Runs `batches` in order; within each, the actions' effects in a shuffled order and
    /// their records in the journal in another, each record after its effect (or in order,
    /// with no generator).
    func running(_ batches: [[SyncAction]], shuffledBy random: SeededGenerator?) -> Model {
        var model = self
        var random = random
        for batch in batches {
            // Each action is two events: its effect on the sides, then its record.
            var events = batch.indices.flatMap { [($0, false), ($0, true)] }
            if var generator = random {
                events.shuffle(using: &generator)
                random = generator
                // A record waits for its effect: a completion is known only after the write.
                var started: Set<Int> = []
                var ordered: [(Int, Bool)] = []
                var waiting: [Int] = []
                for (index, isRecord) in events {
                    if isRecord && !started.contains(index) {
                        waiting.append(index)
                        continue
                    }
                    ordered.append((index, isRecord))
                    if !isRecord {
                        started.insert(index)
                        if let at = waiting.firstIndex(of: index) {
                            waiting.remove(at: at)
                            ordered.append((index, true))
                        }
                    }
                }
                events = ordered
            }
            var outcomes: [Int: Bool] = [:]
            for (index, isRecord) in events {
                if isRecord {
                    if outcomes[index] == true { model.record(batch[index]) }
                } else {
                    outcomes[index] = model.apply(batch[index])
                }
            }
        }
        return model
    }

    private func hasFolder(_ tree: [String: Item], for path: RemotePath) -> Bool {
        path.parent.isRoot || tree[path.parent.string] == .folder
    }

    private func isEmpty(_ tree: [String: Item], _ folder: RemotePath) -> Bool {
        !tree.keys.contains { $0.hasPrefix(folder.string + "/") }
    }

    /// The action's effect on the two sides; false (and a failure noted) when a check fails.
    private mutating func apply(_ action: SyncAction) -> Bool {
        let path = action.path.string
        func fail(_ why: String) -> Bool {
            failures.insert("\(action.path): \(why)")
            return false
        }
        switch action {
        case .upload:
            guard let item = local[path] else { return fail("no local file") }
            guard hasFolder(remote, for: action.path) else { return fail("no remote folder") }
            remote[path] = item
        case .download:
            guard let item = remote[path] else { return fail("no remote file") }
            guard hasFolder(local, for: action.path) else { return fail("no local folder") }
            local[path] = item
        case .reconcile:
            guard let here = local[path], let there = remote[path] else { return fail("a side is gone") }
            let merged = Item.file("\(here) merged with \(there)")
            (local[path], remote[path]) = (merged, merged)
        case .deleteRemote, .forgetIfGone: remote.removeValue(forKey: path)
        case .deleteLocal: local.removeValue(forKey: path)
        case .moveRemote(let from, let to, _):
            guard let item = remote[from.string] else { return fail("no remote source") }
            guard hasFolder(remote, for: to), remote[to.string] == nil else { return fail("no remote room") }
            remote[to.string] = item
            remote.removeValue(forKey: from.string)
        case .moveLocal(let from, let to, _):
            guard let item = local[from.string] else { return fail("no local source") }
            guard hasFolder(local, for: to), local[to.string] == nil else { return fail("no local room") }
            local[to.string] = item
            local.removeValue(forKey: from.string)
        case .makeRemoteFolder:
            guard hasFolder(remote, for: action.path) else { return fail("no remote parent") }
            remote[path] = .folder
        case .makeLocalFolder:
            guard hasFolder(local, for: action.path) else { return fail("no local parent") }
            local[path] = .folder
        case .deleteRemoteFolder:
            guard isEmpty(remote, action.path) else { return fail("remote folder not empty") }
            remote.removeValue(forKey: path)
        case .deleteLocalFolder:
            guard isEmpty(local, action.path) else { return fail("local folder not empty") }
            local.removeValue(forKey: path)
        case .recordLocalStatus, .forget, .recordFolder, .placeholder, .removePlaceholder: break
        }
        return true
    }

    /// The action's record in the journal, once its effect is known.
    private mutating func record(_ action: SyncAction) {
        let path = action.path.string
        switch action {
        case .upload, .download, .reconcile, .recordLocalStatus: journal[path] = local[path]
        case .makeRemoteFolder, .makeLocalFolder, .recordFolder: journal[path] = .folder
        case .moveRemote(let from, let to, _), .moveLocal(let from, let to, _):
            journal[to.string] = journal.removeValue(forKey: from.string)
        case .deleteRemote, .deleteLocal, .forget, .forgetIfGone, .deleteRemoteFolder, .deleteLocalFolder,
            .removePlaceholder:
            journal.removeValue(forKey: path)
        case .placeholder: break
        }
    }
}
