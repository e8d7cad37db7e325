import Foundation

@testable import DocumentKit
@testable import DocumentSync

/// One run of the deterministic sync simulation: a seed picks 2 to 4 devices on one
/// ``SimulatedRemote`` with a few faults, then a series of random steps (edits of every kind
/// on the devices, sync passes, crashes, another client writing on the remote); at the end
/// the faults stop, every device syncs until a whole round does nothing, and the run checks:
///
/// - (a) nothing lost: every version a device (or the other client) wrote is in a document,
///   in a Deleted folder or in a version store of some device, unless its own writer replaced
///   or deleted it;
/// - (b) every device holds the remote's tree, byte for byte, and the same unresolved
///   conflict versions of each document;
/// - (c) the devices got there within ``mostRounds`` rounds;
/// - (d) nothing deleted came back, unless another device moved it meanwhile;
/// - (e) no edit lost: every line a step wrote is in a document or an unresolved conflict
///   version, unless an edit, a deletion or a resolution removed it on purpose (or another
///   client wrote blindly over it);
/// - (f) "mine" is what this device typed: a conflict version a device shows as its own holds
///   text it wrote or moved there, and one holding only its own text is not shown as
///   another's. Every device's computer has this machine's host name, as cloned machines share
///   one: a device that told "mine" by the name would take every conflict for its own;
/// - (g) nothing outside the containers: no file or folder anywhere in the run's folders bears
///   a name the remote listed with a hostile name (``SimulatedRemote/Faults/hostileName``,
///   which every run with faults has).
///
/// Every choice comes from one ``SeededGenerator``, and the remote draws its faults from
/// another split from it, so the same seed makes the same steps and the same faults: a seed a
/// failure prints replays it (`SYNC_SIMULATION_SEED=1234 swift test --filter SyncSimulation`).
/// The file system's clock is the one thing the seed does not fix.
///
/// For example:
///
/// ```swift
/// let violations = try SyncSimulation(seed: 1234).run()
/// #expect(violations.isEmpty)
/// ```
final class SyncSimulation {
    /// A property a run broke.
    struct Violation: CustomStringConvertible {
        /// The property's letter, a to g; "run" when a step of the run itself failed.
        var property: String
        var detail: String

        var description: String { "(\(property)) \(detail)" }
    }

    /// The most rounds of passes of every device the quiet end may take.
    static let mostRounds = 10

    let seed: UInt64
    /// Whether the run has downloads on demand: device b leaves new documents on the server,
    /// and every device evicts documents and asks for them back.
    let onDemand: Bool
    /// The remote the devices share, and what the run does to it directly.
    let target: any SimulationTarget
    let devices: [SyncDevice]
    /// What the run did, a line a step.
    private(set) var trace: [String] = []

    private var random: SeededGenerator
    private let folder: TemporaryFolder
    /// The time every device's engine reads: a second a step. It starts at the run's start on
    /// the wall clock, which the files' modification times come from.
    let clock = ManualSyncClock(start: Date())
    private let stepCount: Int
    /// How many steps the run makes before its quiet end.
    var steps: Int { stepCount }
    private var step = 0
    /// Makes every line and every binary file unique.
    private var counter = 0

    /// A version as its writer wrote it.
    private struct Version: Hashable {
        var writer: String
        var bytes: Data
    }
    /// Every version written, with where and when, for messages.
    private var written: [Version: String] = [:]
    /// Versions their own writer replaced or deleted since.
    private var superseded: Set<Version> = []
    /// Every content written or seen, so that a new version never repeats an old one.
    private var produced: Set<Data> = []

    private struct Deletion {
        var device: String
        var path: String
        var bytes: Data
        var step: Int
        /// Whether its whole folder was deleted, or moved or deleted after it before the
        /// device's next pass: either way sync finds the folder gone.
        var withFolder = false
    }
    /// The step of each device's last pass that finished.
    private var lastPass: [String: Int] = [:]
    private var deletions: [Deletion] = []
    /// The devices that moved a document holding these bytes (a rename, a folder move): a
    /// concurrent change that brings back a document deleted elsewhere.
    private var movers: [Data: Set<String>] = [:]
    /// Bytes a crash left in an upload whose outcome the device's journal never learned. If
    /// the remote has nothing there when the device starts again, it cannot tell "never
    /// written" from "written, then deleted by another device", and it uploads them again
    /// rather than delete a document that may exist nowhere else: a deletion of them may come
    /// back, by design.
    private var uncertainUploads: Set<Data> = []
    /// Bytes a crash left put in place by a download the journal never recorded. Deleted with
    /// their whole folder before sync starts again (or deleted, and then their folder moved
    /// or deleted), they cannot be told from a download never put in place whose folder was
    /// moved (the temporary file went with it): sync does not take that for a deletion, which
    /// could delete another device's document, and the document comes back, by design.
    private var uncertainDownloads: Set<Data> = []
    /// Every line the steps made, by its first word (unique), with where it was first
    /// written: property (e) looks for each in the documents and unresolved conflicts.
    private var lines: [String: String] = [:]
    /// The first words of the lines `newLine` made, written or not.
    private var madeLines: Set<String> = []
    /// Lines removed on purpose: by an edit or a deletion of a text that had them, a
    /// conflict version marked resolved, another client's blind write over them.
    private var removedLines: Set<String> = []

    private static let fileNames = ["a.txt", "b.txt", "c.txt", "d.bin", "e.bin"]
    private static let folderNames = ["A", "B", "C"]
    private static let words = ["apple", "birch", "cloud", "delta", "ember", "fjord", "grain", "harbor"]

    /// A run of `seed`, stopped after `stepLimit` steps when given (the same first steps as
    /// the whole run: a prefix, for finding the step that breaks it).
    convenience init(seed: UInt64, stepLimit: Int? = nil, onDemand: Bool = false) throws {
        try self.init(seed: seed, stepLimit: stepLimit, deviceCounts: 2...4, onDemand: onDemand) { random in
            SimulatedRemote(
                displayName: "simulated remote", faults: Self.withHostileNames(Self.drawFaults(&random)),
                generator: random.split())
        }
    }

    /// A run of `seed` whose devices share the remote `makeTarget` makes (from the run's
    /// generator, so that its faults replay with the seed too).
    init(
        seed: UInt64, stepLimit: Int? = nil, deviceCounts: ClosedRange<Int>, onDemand: Bool = false,
        target makeTarget: (inout SeededGenerator) throws -> any SimulationTarget
    ) throws {
        self.seed = seed
        self.onDemand = onDemand
        var random = SeededGenerator(seed: seed)
        let folder = try TemporaryFolder("simulation\(seed)", inMemory: true)
        let target = try makeTarget(&random)
        let deviceCount = Int.random(in: deviceCounts, using: &random)
        devices = try ["a", "b", "c", "d"].prefix(deviceCount).map {
            try SyncDevice(
                $0, remote: target.remote, in: folder, computerName: ProcessInfo.processInfo.hostName)
        }
        if onDemand { devices[1].downloadsOnDemand = true }
        for (index, device) in devices.enumerated() {
            device.clock = clock
            // Each batch of every pass in an order of the seed's: the engine must not depend on
            // the order of the actions inside a batch.
            device.batchShuffleSeed = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index)
        }
        (self.folder, self.target) = (folder, target)
        let steps = Int.random(in: 10...30, using: &random)
        stepCount = min(steps, stepLimit ?? steps)
        self.random = random
        trace.append(
            "seed \(seed): \(deviceCount) devices, \(steps) steps, \(target.remote.displayName), faults \(target.faultDescription)"
        )
    }

    /// The simulated remote of a run made by ``init(seed:stepLimit:)``.
    var remote: SimulatedRemote {
        guard let remote = target as? SimulatedRemote else { preconditionFailure("not a simulated remote") }
        return remote
    }

    /// Runs the steps, then the quiet end, then checks the properties.
    ///
    /// - Returns: What the run broke; empty when it kept every property.
    func run() -> [Violation] {
        do {
            while step < stepCount {
                step += 1
                clock.advance(by: .seconds(1))
                if let event = try target.willPerform(step: step) { note(event) }
                try perform()
            }
            if let stuck = try quiesce() { return [stuck] + (try check()) }
            return try check()
        } catch {
            return [Violation(property: "run", detail: "step \(step) failed: \(error)")]
        }
    }

    /// Each device's journal rows and every name in its container, hidden ones too: for
    /// looking into a failed seed.
    func dump() -> String {
        var lines: [String] = []
        for device in devices {
            lines.append("\(device.name):")
            let items = (try? device.opened().journal.allItems()) ?? []
            for item in items {
                lines.append(
                    "  journal \(item.path) \(item.kind) tag \(item.remoteTag?.rawValue ?? "-") "
                        + "local \(item.local.map { "\($0.inode)" } ?? "-") hash \(item.syncedHash?.prefix(8) ?? "-")"
                )
            }
            let conflicts = (try? device.opened().journal.conflicts()) ?? []
            for conflict in conflicts {
                lines.append(
                    "  conflict \(conflict.id) \(conflict.path) uploaded \(conflict.isUploaded) "
                        + "described \(conflict.describedPath?.string ?? "-")")
            }
            let enumerator = FileManager.default.enumerator(atPath: device.container.path)
            while let name = enumerator?.nextObject() as? String { lines.append("  file \(name)") }
        }
        return lines.joined(separator: "\n")
    }

    /// The report of a failed run: the seed, how to replay it, what broke, and the steps.
    func report(_ violations: [Violation], replayedBy replayCommand: String? = nil) -> String {
        let replay =
            "replay: "
            + (replayCommand
                ?? "\(onDemand ? "SYNC_SIMULATION_ON_DEMAND=1 " : "")SYNC_SIMULATION_SEED=\(seed) swift test --filter SyncSimulation")
        return
            ([
                "sync simulation seed \(seed) broke \(violations.count) properties; \(replay)"
            ] + violations.map { "  \($0)" } + ["steps:"] + trace.map { "  \($0)" })
            .joined(separator: "\n")
    }

    // MARK: - The steps

    private enum Operation: CaseIterable {
        case create, edit, uncoordinatedEdit, delete, deleteFolder, rename, moveFolder, pass, crash
        case directWrite, resolve
        /// Downloads on demand: drawn only in runs that have them (last, and weighing nothing
        /// otherwise, so that the draws of every other run stay as they were).
        case evict, requestDownload

        /// How often each is drawn, out of the sum.
        func weight(onDemand: Bool) -> Int {
            switch self {
            case .evict: onDemand ? 6 : 0
            case .requestDownload: onDemand ? 5 : 0
            case .create: 16
            case .edit: 16
            case .uncoordinatedEdit: 8
            case .delete: 7
            case .deleteFolder: 2
            case .rename: 7
            case .moveFolder: 4
            case .pass: 28
            case .crash: 6
            case .directWrite: 3
            case .resolve: 3
            }
        }
    }

    private func perform() throws {
        let total = Operation.allCases.reduce(0) { $0 + $1.weight(onDemand: onDemand) }
        var roll = Int.random(in: 0..<total, using: &random)
        let operation = Operation.allCases.first { operation in
            if roll < operation.weight(onDemand: onDemand) { return true }
            roll -= operation.weight(onDemand: onDemand)
            return false
        }!
        let device = devices[Int.random(in: 0..<devices.count, using: &random)]
        switch operation {
        case .create: try create(on: device)
        case .edit: try edit(on: device, coordinated: true)
        case .uncoordinatedEdit: try edit(on: device, coordinated: false)
        case .delete: try deleteFile(on: device)
        case .deleteFolder: try deleteFolder(on: device)
        case .rename: try rename(on: device)
        case .moveFolder: try moveFolder(on: device)
        case .pass: pass(on: device)
        case .crash: try crash(device)
        case .directWrite: try directWrite()
        case .resolve: try resolve(on: device)
        case .evict: try evict(on: device)
        case .requestDownload: try requestDownload(on: device)
        }
    }

    /// Leaves a document the device's journal records as synced, as it is now, on the server
    /// only (what `evictUbiquitousItem` checks in the agent's status).
    private func evict(on device: SyncDevice) throws {
        let journal = try device.opened().journal.itemsByPath()
        let synced = try files(of: device).map(\.0).filter { path in
            guard let item = journal[RemotePath(path)], item.remoteTag != nil,
                let status = FileStatus(path: device.url(path).path)
            else { return false }
            return item.local == JournalItem.LocalStatus(status)
        }
        guard !synced.isEmpty else { return note("\(device.name): evict: nothing synced") }
        let path = pick(synced.sorted())
        try device.evict(path)
        note("\(device.name): evict \(path)")
    }

    /// Asks for a document the device keeps on the server only.
    private func requestDownload(on device: SyncDevice) throws {
        let waiting = try placeholders(of: device)
        guard !waiting.isEmpty else { return note("\(device.name): download: nothing on the server only") }
        let path = pick(waiting)
        try device.requestDownload(path)
        note("\(device.name): download \(path)")
    }

    /// The documents a device keeps on the server only, sorted.
    private func placeholders(of device: SyncDevice) throws -> [String] {
        var found: [String] = []
        _ = try SyncTrees.local(device.container, placeholders: { found.append($0.string) })
        return found.sorted()
    }

    private func create(on device: SyncDevice) throws {
        var parent = pick([""] + (try folders(of: device)))
        if chance(4), depth(parent) < 2 { parent = join(parent, pick(Self.folderNames)) }
        let path = join(parent, pick(Self.fileNames))
        guard FileStatus(path: device.url(path).path) == nil else {
            return note("\(device.name): create \(path): taken")
        }
        let bytes = path.hasSuffix(".txt") ? newText() : newBinary()
        let coordinated = chance(2)
        try write(bytes, at: path, on: device, coordinated: coordinated)
        record(bytes, by: device.name, at: path, replacing: nil)
        note("\(device.name): create \(path)\(coordinated ? "" : " in place") \(Self.show(bytes))")
    }

    /// A coordinated edit saves as an app does (a safe save: a new inode); an uncoordinated
    /// one writes in place as a program that does not coordinate does.
    private func edit(on device: SyncDevice, coordinated: Bool) throws {
        let files = try self.files(of: device)
        guard !files.isEmpty else { return note("\(device.name): edit: no document") }
        let (path, old) = files[Int.random(in: 0..<files.count, using: &random)]
        let bytes = path.hasSuffix(".txt") ? editedText(old) : newBinary()
        try write(bytes, at: path, on: device, coordinated: coordinated)
        record(bytes, by: device.name, at: path, replacing: old)
        note("\(device.name): edit \(path)\(coordinated ? "" : " in place") to \(Self.show(bytes))")
    }

    private func deleteFile(on device: SyncDevice) throws {
        let files = try self.files(of: device)
        guard !files.isEmpty else { return note("\(device.name): delete: no document") }
        let (path, bytes) = files[Int.random(in: 0..<files.count, using: &random)]
        try FileManager.default.removeItem(at: device.url(path))
        noteDeletion(of: bytes, at: path, by: device.name)
        note("\(device.name): delete \(path) \(Self.show(bytes))")
    }

    private func deleteFolder(on device: SyncDevice) throws {
        let folders = try self.folders(of: device)
        guard !folders.isEmpty else { return note("\(device.name): delete folder: no folder") }
        let folder = pick(folders)
        for (path, bytes) in try files(of: device) where path.hasPrefix(folder + "/") {
            noteDeletion(of: bytes, at: path, by: device.name, withFolder: true)
        }
        noteFolderGone(folder, on: device)
        try FileManager.default.removeItem(at: device.url(folder))
        note("\(device.name): delete folder \(folder)")
    }

    private func rename(on device: SyncDevice) throws {
        let files = try self.files(of: device)
        guard !files.isEmpty else { return note("\(device.name): rename: no document") }
        let (path, bytes) = files[Int.random(in: 0..<files.count, using: &random)]
        let destination = join(pick([""] + (try folders(of: device))), pick(Self.fileNames))
        guard FileStatus(path: device.url(destination).path) == nil else {
            return note("\(device.name): rename \(path) to \(destination): taken")
        }
        let coordinated = chance(2)
        try move(path, to: destination, on: device, coordinated: coordinated)
        movers[bytes, default: []].insert(device.name)
        note("\(device.name): rename \(path) to \(destination)\(coordinated ? "" : " (mv)")")
    }

    private func moveFolder(on device: SyncDevice) throws {
        let folders = try self.folders(of: device)
        guard !folders.isEmpty else { return note("\(device.name): move folder: no folder") }
        let source = pick(folders)
        let parents = [""] + folders.filter { $0 != source && !$0.hasPrefix(source + "/") }
        let destination = join(pick(parents), pick(Self.folderNames))
        let deepest =
            folders.filter { $0 == source || $0.hasPrefix(source + "/") }.map {
                depth($0) - depth(source)
            }.max() ?? 0
        guard FileStatus(path: device.url(destination).path) == nil, depth(destination) + deepest <= 3 else {
            return note("\(device.name): move folder \(source) to \(destination): not there")
        }
        for (path, bytes) in try files(of: device) where path.hasPrefix(source + "/") {
            movers[bytes, default: []].insert(device.name)
        }
        // The documents kept on the server only move too: their placeholders go with the
        // folder, and sync moves them on the remote.
        let kept = try placeholders(of: device).filter { $0.hasPrefix(source + "/") }
        if !kept.isEmpty {
            let remoteFiles = try target.snapshot().files
            for path in kept {
                if let bytes = remoteFiles[RemotePath(path)] {
                    movers[bytes, default: []].insert(device.name)
                }
            }
        }
        noteFolderGone(source, on: device)
        let coordinated = chance(2)
        try move(source, to: destination, on: device, coordinated: coordinated)
        note("\(device.name): move folder \(source) to \(destination)\(coordinated ? "" : " (mv)")")
    }

    private func pass(on device: SyncDevice) {
        do {
            let summary = try device.opened().pass()
            device.store.waitUntilIdle()
            lastPass[device.name] = step
            note("\(device.name): pass: \(Self.describe(summary))")
        } catch {
            device.store.waitUntilIdle()
            note("\(device.name): pass threw: \(error)")
        }
    }

    /// A pass stopped at its Nth checkpoint, as a killed process stops, then a new engine.
    private func crash(_ device: SyncDevice) throws {
        let stop = Int.random(in: 1...8, using: &random)
        var calls = 0
        var stoppedAt: SyncStep?
        try device.opened().checkpoint = { step in
            calls += 1
            if calls == stop {
                stoppedAt = step
                throw SyncInterruption()
            }
        }
        let outcome: String
        do {
            outcome = Self.describe(try device.opened().pass())
        } catch {
            outcome = error is SyncInterruption ? "" : "threw \(error)"
        }
        device.store.waitUntilIdle()
        device.crash()
        let place =
            stoppedAt.map { "crashed at checkpoint \(stop) (\($0))" } ?? "finished (\(calls) checkpoints)"
        note("\(device.name): crash pass: \(place) \(outcome)")
        let pending = try device.opened().journal.pendingIntents()
        let uploads = Set(pending.filter { $0.operation == .upload }.compactMap(\.hash))
        let downloads = Set(pending.filter { $0.operation == .download }.compactMap(\.hash))
        for (path, bytes) in try files(of: device) {
            let hash = ContentHash(of: bytes).hex
            if uploads.contains(hash) {
                uncertainUploads.insert(bytes)
                note("\(device.name): the upload of \(path) may or may not have happened")
            }
            if downloads.contains(hash) {
                uncertainDownloads.insert(bytes)
                note(
                    "\(device.name): the download of \(path) was put in place, the journal does not know yet")
            }
        }
    }

    /// Another client writes on the remote, over whatever is there.
    private func directWrite() throws {
        let path = join(pick(["", "A", "B", "A/B"]), pick(Self.fileNames))
        let remotePath = RemotePath(path)
        let bytes = path.hasSuffix(".txt") ? newText(writer: "r") : newBinary()
        let old = try target.snapshot().files[remotePath]
        do {
            try target.writeAsAnotherClient(remotePath, bytes)
        } catch {
            return note("remote client: write \(path): \(error)")
        }
        record(bytes, by: "remote client", at: path, replacing: old)
        note("remote client: write \(path) \(Self.show(bytes))")
    }

    /// Marks one unresolved conflict version resolved, keeping the document as it is.
    private func resolve(on device: SyncDevice) throws {
        let conflicted = try files(of: device).map(\.0).filter {
            !device.store.unresolvedConflictVersionsOfItem(at: device.url($0)).isEmpty
        }
        guard !conflicted.isEmpty else { return note("\(device.name): resolve: no conflict") }
        let path = pick(conflicted)
        let versions = device.store.unresolvedConflictVersionsOfItem(at: device.url(path))
        let version = versions[Int.random(in: 0..<versions.count, using: &random)]
        version.isResolved = true
        if let bytes = try? Data(contentsOf: version.url) { removedLines.formUnion(lineWords(bytes)) }
        note("\(device.name): resolve a conflict of \(path)")
    }

    // MARK: - The quiet end and the checks

    /// Faults off, then rounds of one pass on every device until a round does nothing.
    ///
    /// - Returns: Property (c) broken, or nil.
    private func quiesce() throws -> Violation? {
        target.stopFaults()
        var busy: [String] = []
        for round in 1...Self.mostRounds {
            busy = []
            for device in devices {
                do {
                    // Every document is asked for: the trees compared at the end are whole.
                    let waiting = try placeholders(of: device)
                    if !waiting.isEmpty { try device.downloadRequests.add(Set(waiting)) }
                    let summary = try device.opened().pass()
                    device.store.waitUntilIdle()
                    if summary.didWork || !summary.failures.isEmpty {
                        busy.append("\(device.name): \(Self.describe(summary))")
                    }
                } catch {
                    busy.append("\(device.name) threw: \(error)")
                }
            }
            note("quiet round \(round): \(busy.isEmpty ? "nothing to do" : busy.joined(separator: "; "))")
            if busy.isEmpty { return nil }
        }
        return Violation(
            property: "c",
            detail: "still busy after \(Self.mostRounds) rounds: \(busy.joined(separator: "; "))")
    }

    private func check() throws -> [Violation] {
        var violations: [Violation] = []
        let snapshot = try target.snapshot()
        let metadata = RemotePath.metadataFolder
        var remoteFiles: [String: Data] = [:]
        for (path, bytes) in snapshot.files where path != metadata && !path.isDescendant(of: metadata) {
            remoteFiles[path.string] = bytes
        }
        let remoteFolders = Set(
            snapshot.folders.filter { $0 != metadata && !$0.isDescendant(of: metadata) }.map(\.string))

        // (b) The same tree everywhere, and the same unresolved conflicts.
        var live = Set(remoteFiles.values)
        var trees: [String: [String: Data]] = [:]
        for device in devices {
            let files = Dictionary(uniqueKeysWithValues: try files(of: device))
            trees[device.name] = files
            live.formUnion(files.values)
            if files != remoteFiles {
                violations.append(
                    Violation(
                        property: "b",
                        detail: "\(device.name)'s documents differ from the remote's: "
                            + Self.difference(files, remoteFiles)))
            }
            let folders = Set(try self.folders(of: device))
            if folders != remoteFolders {
                violations.append(
                    Violation(
                        property: "b",
                        detail: "\(device.name)'s folders \(folders.sorted()) are not the remote's "
                            + "\(remoteFolders.sorted())"))
            }
        }
        for path in remoteFiles.keys.sorted() {
            var seen: [String: [Data]] = [:]
            for device in devices where trees[device.name]?[path] != nil {
                seen[device.name] = device.store.unresolvedConflictVersionsOfItem(at: device.url(path))
                    .compactMap { try? Data(contentsOf: $0.url) }.sorted { $0.lexicographicallyPrecedes($1) }
            }
            if Set(seen.values).count > 1 {
                let sides = seen.sorted { $0.key < $1.key }.map {
                    "\($0.key): [\($0.value.map(Self.show).joined(separator: ", "))]"
                }
                let identities = sharedIdentities(of: path)
                violations.append(
                    Violation(
                        property: "b",
                        detail: "the unresolved conflicts of \(path) differ: \(sides.joined(separator: "; "))"
                            + identities))
            }
        }

        // (g) Nothing a hostile name made, anywhere in the run's folders.
        let enumerator = FileManager.default.enumerator(atPath: folder.url.path)
        while let path = enumerator?.nextObject() as? String {
            if path.contains("hostile") {
                violations.append(Violation(property: "g", detail: "\(path) was made from a hostile name"))
            }
        }

        // (a) Nothing lost.
        var kept = live
        for device in devices { kept.formUnion(Self.contents(under: device.deleted)) }
        // Another client's blind write over a version on the remote (the racing writer fault)
        // replaces it, as a write of that client's own would.
        kept.formUnion(target.bytesReplacedByRacingWriters)
        var missing = written.filter { !superseded.contains($0.key) && !kept.contains($0.key.bytes) }
        if !missing.isEmpty {
            for device in devices { kept.formUnion(Self.storedContents(of: device.store)) }
            missing = missing.filter { !kept.contains($0.key.bytes) }
        }
        for (version, whereWritten) in missing.sorted(by: { $0.value < $1.value }) {
            violations.append(
                Violation(
                    property: "a",
                    detail: "lost: \(Self.show(version.bytes)) written by \(version.writer) (\(whereWritten))"
                ))
        }

        // (e) No edit lost: every line made is in a document or an unresolved conflict
        // version, unless removed on purpose (this finds an edit reverted in a document that
        // survives whole only as an old version, which (a) accepts).
        for replaced in target.bytesReplacedByRacingWriters { removedLines.formUnion(lineWords(replaced)) }
        var present = Set(live.flatMap(lineWords))
        var lost = Set(lines.keys).subtracting(removedLines).subtracting(present)
        if !lost.isEmpty {
            for device in devices {
                for bytes in Self.storedContents(of: device.store, unresolvedConflictsOnly: true) {
                    present.formUnion(lineWords(bytes))
                }
            }
            lost.subtract(present)
        }
        for word in lost.sorted(by: { lines[$0]! < lines[$1]! }) {
            violations.append(
                Violation(
                    property: "e",
                    detail: "the line \"\(word) …\" (\(lines[word]!)) is in no document or conflict"))
        }

        // (d) Nothing deleted came back, unless another device moved it meanwhile.
        for deletion in deletions
        where live.contains(deletion.bytes) && !uncertainUploads.contains(deletion.bytes)
            && !(deletion.withFolder && uncertainDownloads.contains(deletion.bytes))
        {
            let excused = (movers[deletion.bytes] ?? []).subtracting([deletion.device])
            guard excused.isEmpty else { continue }
            let now = remoteFiles.filter { $0.value == deletion.bytes }.keys.sorted()
            violations.append(
                Violation(
                    property: "d",
                    detail:
                        "\(Self.show(deletion.bytes)) deleted from \(deletion.path) by \(deletion.device) "
                        + "at step \(deletion.step) came back (at \(now))"))
        }
        return violations + (try mineViolations())
    }

    /// (f): each device's unresolved conflict versions against who wrote their bytes. Bytes no
    /// step wrote (a merge) and bytes a crash may have left downloaded without the journal
    /// knowing (sync takes them for this device's change) say nothing.
    private func mineViolations() throws -> [Violation] {
        var violations: [Violation] = []
        for device in devices {
            for (path, _) in try files(of: device) {
                for version in device.store.unresolvedConflictVersionsOfItem(at: device.url(path)) {
                    guard let bytes = try? Data(contentsOf: version.url), !uncertainDownloads.contains(bytes)
                    else { continue }
                    let writers = Set(written.keys.filter { $0.bytes == bytes }.map(\.writer))
                    let movers = self.movers[bytes] ?? []
                    guard !writers.isEmpty else { continue }
                    let shown = version.isFromThisComputer ? "mine" : "another's"
                    if version.isFromThisComputer, !writers.union(movers).contains(device.name) {
                        violations.append(
                            Violation(
                                property: "f",
                                detail: "\(device.name) shows \(Self.show(bytes)) of \(path) as \(shown), "
                                    + "written by \(writers.sorted().joined(separator: ", "))"))
                    }
                    if !version.isFromThisComputer, writers == [device.name],
                        movers.isSubset(of: [device.name])
                    {
                        violations.append(
                            Violation(
                                property: "f",
                                detail:
                                    "\(device.name) shows \(Self.show(bytes)) of \(path), which it wrote, as \(shown)"
                            ))
                    }
                }
            }
        }
        return violations
    }

    /// The devices on which another document is the same item as `path` for the version
    /// store (which then shows the same versions and conflicts for both), or on which the
    /// store shows at `path` a conflict version that sync's journal has for another path;
    /// empty when there is none.
    private func sharedIdentities(of path: String) -> String {
        var shared: [String] = []
        for device in devices {
            let rows = (try? device.opened().journal.conflicts()) ?? []
            for version in device.store.unresolvedConflictVersionsOfItem(at: device.url(path)) {
                if let row = rows.first(where: { $0.localVersion == version.persistentIdentifier }),
                    row.path.string != path
                {
                    shared.append("\(device.name): a conflict of \(row.path) in sync's journal")
                }
            }
            guard let item = try? device.store.identity(ofItemAt: device.url(path), creating: false)?.id,
                let others = try? files(of: device).map(\.0)
            else { continue }
            for other in others where other != path {
                if (try? device.store.identity(ofItemAt: device.url(other), creating: false)?.id) == item {
                    shared.append("\(device.name): \(other)")
                }
            }
        }
        return shared.isEmpty ? "" : " (the version store's same item as \(shared.joined(separator: ", ")))"
    }

    // MARK: - The model

    private func record(_ bytes: Data, by writer: String, at path: String, replacing old: Data?) {
        let before = old.map(lineWords) ?? []
        let after = lineWords(bytes)
        removedLines.formUnion(before.subtracting(after))
        for word in after.subtracting(before) where lines[word] == nil {
            lines[word] = "\(writer), step \(step), \(path)"
        }
        if let old {
            let replaced = Version(writer: writer, bytes: old)
            if written[replaced] != nil { superseded.insert(replaced) }
        }
        let version = Version(writer: writer, bytes: bytes)
        superseded.remove(version)
        written[version] = written[version] ?? "step \(step), \(path)"
        produced.insert(bytes)
    }

    /// A folder moved or deleted: the deletions made in it since the device's last pass are
    /// of a folder sync finds gone (see `uncertainDownloads`).
    private func noteFolderGone(_ folder: String, on device: SyncDevice) {
        for index in deletions.indices
        where deletions[index].device == device.name && deletions[index].path.hasPrefix(folder + "/")
            && deletions[index].step > lastPass[device.name, default: -1]
        {
            deletions[index].withFolder = true
        }
    }

    private func noteDeletion(of bytes: Data, at path: String, by device: String, withFolder: Bool = false) {
        removedLines.formUnion(lineWords(bytes))
        deletions.append(
            Deletion(device: device, path: path, bytes: bytes, step: step, withFolder: withFolder))
        let version = Version(writer: device, bytes: bytes)
        if written[version] != nil { superseded.insert(version) }
    }

    private func note(_ line: String) {
        trace.append("\(step): \(line)")
        // SYNC_SIMULATION_LIVE=1: each step as it happens, for a run that hangs.
        if Self.live { FileHandle.standardError.write(Data("\(step): \(line)\n".utf8)) }
    }

    private static let live = ProcessInfo.processInfo.environment["SYNC_SIMULATION_LIVE"] == "1"

    // MARK: - Contents

    private func newLine(writer: String) -> String {
        counter += 1
        madeLines.insert("\(writer)\(counter)")
        return "\(writer)\(counter) \(pick(Self.words))"
    }

    /// The first words of the lines of `bytes` that the steps made.
    private func lineWords(_ bytes: Data) -> Set<String> {
        guard let text = String(data: bytes, encoding: .utf8) else { return [] }
        return Set(
            text.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first.map(String.init).flatMap {
                    madeLines.contains($0) ? $0 : nil
                }
            })
    }

    private func newText(writer: String = "") -> Data {
        let lines = (0..<Int.random(in: 2...5, using: &random)).map { _ in newLine(writer: writer) }
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Lines changed, inserted or deleted: edits of two devices overlap or not by chance.
    private func editedText(_ old: Data) -> Data {
        guard let text = String(data: old, encoding: .utf8) else { return newText() }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        for _ in 0..<Int.random(in: 1...2, using: &random) {
            let index = Int.random(in: 0..<max(lines.count, 1), using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !lines.isEmpty: lines[index] = newLine(writer: "")
            case 2 where lines.count > 1: lines.remove(at: index)
            default: lines.insert(newLine(writer: ""), at: Int.random(in: 0...lines.count, using: &random))
            }
        }
        var result = Data((lines.joined(separator: "\n") + "\n").utf8)
        while produced.contains(result) || result == old {
            lines.insert(newLine(writer: ""), at: Int.random(in: 0...lines.count, using: &random))
            result = Data((lines.joined(separator: "\n") + "\n").utf8)
        }
        return result
    }

    /// Bytes that are not UTF-8: no merge is tried.
    private func newBinary() -> Data {
        counter += 1
        var bytes: [UInt8] = [0xFF, 0x00] + Array("\(counter)".utf8)
        for _ in 0..<Int.random(in: 0...24, using: &random) {
            bytes.append(UInt8.random(in: 0...255, using: &random))
        }
        return Data(bytes)
    }

    private func write(_ bytes: Data, at path: String, on device: SyncDevice, coordinated: Bool) throws {
        let url = device.url(path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if coordinated {
            try FileCoordinator().coordinate(writingItemAt: url) { try SafeSave.write(bytes, to: $0) }
        } else {
            try bytes.write(to: url)
        }
    }

    private func move(_ source: String, to destination: String, on device: SyncDevice, coordinated: Bool)
        throws
    {
        let (from, to) = (device.url(source), device.url(destination))
        try FileManager.default.createDirectory(
            at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard coordinated else { return try FileManager.default.moveItem(at: from, to: to) }
        let coordinator = FileCoordinator()
        try coordinator.coordinate(writingItemAt: from, options: .forMoving, writingItemAt: to) { from, to in
            try FileManager.default.moveItem(at: from, to: to)
            coordinator.item(at: from, didMoveTo: to)
        }
    }

    /// The device's documents by path, sorted: what the steps choose from.
    private func files(of device: SyncDevice) throws -> [(String, Data)] {
        let found = try SyncTrees.local(device.container).filter { $0.value.kind == .file }
        let files = try found.keys.map(\.string).sorted().map { ($0, try Data(contentsOf: device.url($0))) }
        produced.formUnion(files.map(\.1))
        return files
    }

    private func folders(of device: SyncDevice) throws -> [String] {
        try SyncTrees.local(device.container).filter { $0.value.kind == .folder }.keys.map(\.string).sorted()
    }

    /// The contents of every file below `url`.
    private static func contents(under url: URL) -> Set<Data> {
        guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else {
            return []
        }
        var found: Set<Data> = []
        for case let file as URL in enumerator {
            if let bytes = try? Data(contentsOf: file) { found.insert(bytes) }
        }
        return found
    }

    /// The contents of every version of every item the store holds, deleted items' too; or of
    /// its unresolved conflict versions only.
    private static func storedContents(of store: VersionStore, unresolvedConflictsOnly: Bool = false) -> Set<
        Data
    > {
        store.waitUntilIdle()
        var found: Set<Data> = []
        for item in store.itemIDs() {
            for record in store.records(ofItem: item)
            where !unresolvedConflictsOnly || (record.isConflict && !record.isResolved) {
                let version = FileVersion(record: record, store: store)
                if let bytes = try? Data(contentsOf: version.url) { found.insert(bytes) }
            }
        }
        return found
    }

    // MARK: - Choices

    private func pick<Element>(_ choices: [Element]) -> Element {
        choices[Int.random(in: 0..<choices.count, using: &random)]
    }

    /// True one time in `odds`.
    private func chance(_ odds: Int) -> Bool { Int.random(in: 0..<odds, using: &random) == 0 }

    private func join(_ parent: String, _ name: String) -> String {
        parent.isEmpty ? name : parent + "/" + name
    }

    private func depth(_ path: String) -> Int { path.isEmpty ? 0 : path.split(separator: "/").count }

    /// A small share of seeds has no fault; the others a few kinds, each striking 1 to 5 calls
    /// in 100.
    /// `faults` with hostile names in 2% of listings when it has any fault: set, not drawn, so
    /// that every other draw of a seed stays as it was.
    /// The seeds a simulation test over another target runs, from its environment variables
    /// `PREFIX_SIMULATION_SEED` (one seed, whose steps are printed: `single`),
    /// `PREFIX_SIMULATION_SEEDS` (how many, `count` by default) and
    /// `PREFIX_SIMULATION_FIRST_SEED` (0 by default).
    static func seeds(prefix: String, count: UInt64) -> (seeds: [UInt64], single: Bool) {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["\(prefix)_SIMULATION_SEED"].flatMap(UInt64.init) { return ([seed], true) }
        let count = environment["\(prefix)_SIMULATION_SEEDS"].flatMap(UInt64.init) ?? count
        let first = environment["\(prefix)_SIMULATION_FIRST_SEED"].flatMap(UInt64.init) ?? 0
        return (Array(first..<first + count), false)
    }

    static func withHostileNames(_ faults: SimulatedRemote.Faults) -> SimulatedRemote.Faults {
        var faults = faults
        if faults != .none { faults.hostileName = 0.02 }
        return faults
    }

    static func drawFaults(_ random: inout SeededGenerator) -> SimulatedRemote.Faults {
        guard Int.random(in: 0..<5, using: &random) != 0 else { return .none }
        func probability() -> Double {
            Bool.random(using: &random) ? Double(Int.random(in: 1...5, using: &random)) / 100 : 0
        }
        return SimulatedRemote.Faults(
            serverError: probability(), connectionCut: probability(), racingWriter: probability(),
            staleListing: probability(), timeoutAfterApplying: probability(),
            maximumStaleness: Int.random(in: 1...8, using: &random))
    }

    // MARK: - Words

    static func describe(_ faults: SimulatedRemote.Faults) -> String {
        let parts = [
            ("5xx", faults.serverError), ("cut", faults.connectionCut), ("race", faults.racingWriter),
            ("stale", faults.staleListing), ("timeout", faults.timeoutAfterApplying),
            ("hostile names", faults.hostileName),
        ].filter { $0.1 > 0 }.map { "\($0.0) \(Int($0.1 * 100))%" }
        return parts.isEmpty
            ? "none" : parts.joined(separator: ", ") + " (stale up to \(faults.maximumStaleness))"
    }

    private static func describe(_ summary: SyncSummary) -> String {
        var line = summary.description
        if summary.recorded > 0 { line += ", \(summary.recorded) recorded" }
        if !summary.failures.isEmpty { line += " [\(summary.failures.joined(separator: "; "))]" }
        if showsNotes, !summary.notes.isEmpty { line += " {\(summary.notes.joined(separator: "; "))}" }
        return line
    }

    /// Whether the trace gives each pass's notes too: `SYNC_SIMULATION_NOTES=1`.
    private static let showsNotes = ProcessInfo.processInfo.environment["SYNC_SIMULATION_NOTES"] != nil

    /// Text as one line, binary as hex.
    static func show(_ bytes: Data) -> String {
        if let text = String(data: bytes, encoding: .utf8) {
            return "\"" + text.replacingOccurrences(of: "\n", with: "⏎") + "\""
        }
        return "0x" + bytes.prefix(12).map { String(format: "%02x", $0) }.joined()
            + (bytes.count > 12 ? "…" : "")
    }

    private static func difference(_ mine: [String: Data], _ theirs: [String: Data]) -> String {
        Set(mine.keys).union(theirs.keys).sorted().compactMap { path in
            switch (mine[path], theirs[path]) {
            case (let here?, let there?) where here != there: "\(path) is \(show(here)), there \(show(there))"
            case (let here?, nil): "\(path) \(show(here)) only here"
            case (nil, let there?): "\(path) \(show(there)) missing here"
            default: nil
            }
        }.joined(separator: "; ")
    }
}
