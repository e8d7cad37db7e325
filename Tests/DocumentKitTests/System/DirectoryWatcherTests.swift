import Foundation
import Synchronization
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// Collects a watcher's events for a test to wait on.
///
/// inotify is asynchronous, so tests wait for events with a bounded poll; to know that
/// nothing more is coming they use a barrier: a file created last, whose event arrives
/// after every earlier one because the kernel reports in order.
private final class EventCollector: Sendable {
    private let storage = Mutex<[DirectoryWatcher.Event]>([])
    private let batchCount = Mutex(0)
    let root: [UInt8]

    init(root: URL) { self.root = DirectoryWatcher.fileSystemPath(of: root) }

    var handler: @Sendable ([DirectoryWatcher.Event]) -> Void {
        { batch in
            self.storage.withLock { $0 += batch }
            self.batchCount.withLock { $0 += 1 }
        }
    }

    var events: [DirectoryWatcher.Event] { storage.withLock { $0 } }
    var batches: Int { batchCount.withLock { $0 } }

    /// Polls until `predicate` holds of the events so far, for at most five seconds.
    @discardableResult
    func wait(until predicate: ([DirectoryWatcher.Event]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if predicate(events) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return predicate(events)
    }

    /// Creates a barrier file in `folder` (the root by default), waits for its event, and
    /// returns every event so far, barriers left out.
    func settle(in folder: [UInt8]? = nil) async throws -> [DirectoryWatcher.Event] {
        let name = Array("zz-barrier-\(UInt32.random(in: 0...UInt32.max))".utf8)
        let path = DirectoryWatcher.State.join(folder ?? root, name)
        try createFile(path)
        let arrived = try await wait { $0.contains { $0.fileSystemPath == path } }
        #expect(arrived, "the barrier's event never arrived")
        // Not only the events before the barrier's: a scan of a new folder can find the
        // barrier before the items it is meant to follow, in the same batch.
        return events.filter { !isBarrier($0) }
    }

    /// The events, each as "kind relative-path", barriers left out.
    func summary(_ events: [DirectoryWatcher.Event]) -> [String] {
        events.filter { !isBarrier($0) }.map { event in
            let slash = event.isDirectory ? "/" : ""
            switch event.kind {
            case .moved:
                return
                    "moved \(relative(event.previousFileSystemPath ?? []))\(slash) -> \(relative(event.fileSystemPath))\(slash)"
            default:
                return "\(event.kind) \(relative(event.fileSystemPath))\(slash)"
            }
        }
    }

    func relative(_ path: [UInt8]) -> String {
        let tail = path.starts(with: root) ? Array(path.dropFirst(root.count + 1)) : path
        return String(decoding: tail, as: UTF8.self)
    }

    private func isBarrier(_ event: DirectoryWatcher.Event) -> Bool {
        String(decoding: event.fileSystemPath, as: UTF8.self).contains("zz-barrier-")
    }
}

/// Creates (or truncates) a file at a path given as raw bytes and writes `contents`.
private func createFile(_ path: [UInt8], contents: [UInt8] = []) throws {
    let fd = Syscall.withCString(path) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    guard fd >= 0 else { throw Errno(rawValue: errno) }
    defer { close(fd) }
    if !contents.isEmpty {
        _ = contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

/// Writes a file below the tree, creating its folders, from a child process.
///
/// Not in this process: a child that another test spawns at that moment inherits the
/// descriptor until its `exec` (or its exit, without `O_CLOEXEC`, as `Data.write(to:)`
/// opens), and the file's `IN_CLOSE_WRITE` then comes after this test started watching.
@discardableResult
private func put(_ tree: TemporaryTree, _ contents: String, to relativePath: String) throws -> URL {
    _ = try shell(
        #"mkdir -p "$(dirname "$1")" && printf %s "$2" > "$1""#, in: tree.url,
        arguments: [relativePath, contents])
    return tree.file(relativePath)
}

private func rename(_ from: [UInt8], _ to: [UInt8]) throws {
    let status = Syscall.withCString(from) { source in Syscall.withCString(to) { Glibc.rename(source, $0) } }
    guard status == 0 else { throw Errno(rawValue: errno) }
}

/// Runs `script` with `/bin/sh` in `folder`, as another process would change files.
private func shell(_ script: String, in folder: URL, arguments: [String] = []) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script, "sh"] + arguments
    process.currentDirectoryURL = folder
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "sh -c \(script) failed")
    return String(decoding: data, as: UTF8.self)
}

private func bytes(_ url: URL) -> [UInt8] { DirectoryWatcher.fileSystemPath(of: url) }

@Suite struct DirectoryWatcherTests {
    // MARK: Files changed by other processes

    @Test func reportsFileCreatedByAnotherProcessAsCreatedThenModified() async throws {
        let tree = try TemporaryTree()
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        _ = try shell("echo x > new", in: tree.url)

        let summary1 = events.summary(try await events.settle())

        #expect(summary1 == ["created new", "modified new"])
    }

    @Test func echoOverExistingFileIsOneModification() async throws {
        let tree = try TemporaryTree()
        try put(tree, "old", to: "f")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        _ = try shell("echo hi > f", in: tree.url)

        let summary2 = events.summary(try await events.settle())

        #expect(summary2 == ["modified f"])
    }

    @Test func copyIsCreatedThenModified() async throws {
        let tree = try TemporaryTree()
        try put(tree, String(repeating: "a", count: 100_000), to: "a")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        _ = try shell("cp a b", in: tree.url)

        let summary3 = events.summary(try await events.settle())

        #expect(summary3 == ["created b", "modified b"])
    }

    @Test func reportsDeletion() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "f")
        try FileManager.default.createDirectory(at: tree.file("d"), withIntermediateDirectories: false)
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: true)

        _ = try shell("rm f && rmdir d", in: tree.url)

        let summary4 = events.summary(try await events.settle())

        #expect(summary4 == ["deleted f", "deleted d/"])
    }

    @Test func attributeChangeIsReported() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "f")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        _ = try shell("chmod 600 f", in: tree.url)

        let summary5 = events.summary(try await events.settle())

        #expect(summary5 == ["attributesChanged f"])
    }

    // MARK: Renames

    @Test func renameWithinFolderIsOneMove() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "a")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        _ = try shell("mv a b", in: tree.url)

        let settled = try await events.settle()
        #expect(events.summary(settled) == ["moved a -> b"])
        #expect(settled.first?.kind == .moved(from: tree.file("a"), to: tree.file("b")))
        #expect(settled.first?.url == tree.file("b"))
    }

    @Test func renameAcrossTwoWatchedFoldersIsOneMove() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "one/a")
        try FileManager.default.createDirectory(at: tree.file("two"), withIntermediateDirectories: false)
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.file("one"), recursive: false)
        try watcher.watch(tree.file("two"), recursive: false)

        _ = try shell("mv one/a two/b", in: tree.url)

        #expect(
            events.summary(try await events.settle(in: bytes(tree.file("two")))) == ["moved one/a -> two/b"])
    }

    @Test func moveOutIsDeletionAndMoveInIsCreation() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "watched/leaving")
        try put(tree, "y", to: "outside/arriving")
        let events = EventCollector(root: tree.file("watched"))
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.file("watched"), recursive: true)

        _ = try shell("mv watched/leaving outside/ && mv outside/arriving watched/", in: tree.url)

        let summary6 = events.summary(try await events.settle())

        #expect(summary6 == ["deleted leaving", "created arriving"])
    }

    @Test func folderMovedWithinTreeKeepsReportingUnderItsNewPath() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "a/sub/f")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: true)

        _ = try shell("mv a b && echo changed > b/sub/f", in: tree.url)

        let summary7 = events.summary(try await events.settle())

        #expect(summary7 == ["moved a/ -> b/", "modified b/sub/f"])
    }

    @Test func folderMovedOutStopsBeingWatched() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "watched/d/f")
        try FileManager.default.createDirectory(at: tree.file("outside"), withIntermediateDirectories: false)
        let events = EventCollector(root: tree.file("watched"))
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.file("watched"), recursive: true)

        _ = try shell("mv watched/d outside/d", in: tree.url)
        let summary8 = events.summary(try await events.settle())
        #expect(summary8 == ["deleted d/"])
        _ = try shell("echo changed > outside/d/f", in: tree.url)

        let summary9 = events.summary(try await events.settle())

        #expect(summary9 == ["deleted d/"])
    }

    @Test func folderMovedInIsWatchedAndItsItemsReportedOnce() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "outside/d/e/f")
        try FileManager.default.createDirectory(at: tree.file("watched"), withIntermediateDirectories: false)
        let events = EventCollector(root: tree.file("watched"))
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.file("watched"), recursive: true)

        _ = try shell("mv outside/d watched/d && echo y > watched/d/e/g", in: tree.url)

        // Whether `g` is written before or after `e` is watched, it is created once; its
        // write is seen only if it came after the watch.
        let summary = events.summary(try await events.settle(in: bytes(tree.file("watched/d/e"))))
        #expect(summary.first == "created d/")
        for item in ["created d/", "created d/e/", "created d/e/f", "created d/e/g"] {
            #expect(summary.filter { $0 == item }.count == 1, "\(item) in \(summary)")
        }
        #expect(summary.filter { $0 == "modified d/e/g" }.count <= 1)
        #expect(summary.count <= 5, "\(summary)")
    }

    // MARK: Safe saves

    @Test func safeSaveIsOneReplacementOfTheTarget() async throws {
        let tree = try TemporaryTree()
        let target = try put(tree, "old", to: "Notes.txt")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: true)

        try SafeSave.write(Data("new".utf8), to: target)
        try SafeSave.write(Data("fresh".utf8), to: tree.file("New.txt"))

        let settled = try await events.settle()
        #expect(events.summary(settled) == ["replaced Notes.txt", "replaced New.txt"])
        #expect(!settled.contains { String(decoding: $0.fileSystemPath, as: UTF8.self).contains(".dk-") })
    }

    @Test func packageSafeSaveIsOneReplacementAndTheNewPackageIsWatched() async throws {
        let tree = try TemporaryTree()
        try put(tree, "old", to: "Doc.pkg/contents")
        let package = tree.file("Doc.pkg")
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: true)

        try SafeSave.writeDirectory(at: package) { staging in
            _ = try shell("printf new > contents && printf more > extra", in: staging)
        }
        let summary10 = events.summary(try await events.settle())
        #expect(summary10 == ["replaced Doc.pkg/"])
        _ = try shell("echo edited > Doc.pkg/extra", in: tree.url)

        let summary11 = events.summary(try await events.settle())

        #expect(summary11 == ["replaced Doc.pkg/", "modified Doc.pkg/extra"])
    }

    @Test(arguments: [
        (".Notes.txt.dk-tmp-1a2b3c", true),
        (".Doc.pkg.dk-old-zz9", true),
        ("..dk-tmp-0", true),
        (".x.dk-tmp-", false),
        (".x.dk-tmp-ABC", false),
        ("Notes.txt.dk-tmp-1a2b", false),
        (".x.dk-new-1a", false),
        (".x.dk-tmp-1a.txt", false),
        ("dk-tmp-1", false),
        (".dk-tmp-1", false),
    ])
    func temporaryNamePredicateMatchesOnlyDocumentKitTemporaries(name: String, expected: Bool) {
        #expect(DirectoryWatcher.isDocumentKitTemporaryName(name) == expected)
    }

    @Test func temporaryNamesOfSafeSaveMatchThePredicate() {
        for name in ["Notes.txt", ".hidden", "-dash", String(repeating: "n", count: 250)] {
            #expect(
                DirectoryWatcher.isDocumentKitTemporaryName(SafeSave.temporaryName(for: name, kind: "tmp")))
            #expect(
                DirectoryWatcher.isDocumentKitTemporaryName(SafeSave.temporaryName(for: name, kind: "old")))
        }
    }

    // MARK: Recursion

    @Test func fileCreatedInNewNestedFoldersBeforeTheirWatchIsReportedOnce() async throws {
        let tree = try TemporaryTree()
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: true)

        _ = try shell("mkdir -p a/b/c && echo x > a/b/c/f", in: tree.url)

        let summary = events.summary(try await events.settle(in: bytes(tree.file("a/b/c"))))
        for item in ["created a/", "created a/b/", "created a/b/c/", "created a/b/c/f"] {
            #expect(summary.filter { $0 == item }.count == 1, "\(item) in \(summary)")
        }
        #expect(summary.filter { $0 == "modified a/b/c/f" }.count <= 1)
        #expect(summary.count <= 5, "\(summary)")
    }

    @Test func nonRecursiveWatchIgnoresSubfolders() async throws {
        let tree = try TemporaryTree()
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        _ = try shell("mkdir d && echo x > d/f", in: tree.url)

        let summary12 = events.summary(try await events.settle())

        #expect(summary12 == ["created d/"])
    }

    // MARK: Names

    @Test func oddNamesArriveByteForByte() async throws {
        let tree = try TemporaryTree()
        let root = bytes(tree.url)
        let names: [[UInt8]] = [
            Array("line\nbreak".utf8), Array("-rf".utf8), [0x66, 0xFF, 0xFE, 0x0A],
            Array("spaced name %20".utf8),
        ]
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)

        for name in names { try createFile(DirectoryWatcher.State.join(root, name)) }
        try rename(DirectoryWatcher.State.join(root, names[2]), DirectoryWatcher.State.join(root, [0x80]))

        let settled = try await events.settle()
        let paths = names.map { DirectoryWatcher.State.join(root, $0) }
        for path in paths {
            let created = settled.filter { $0.kind == .created && $0.fileSystemPath == path }
            #expect(created.count == 1)
            #expect(created.first?.url == DirectoryWatcher.url(for: path, isDirectory: false))
        }
        let move = settled.first { if case .moved = $0.kind { true } else { false } }
        #expect(move?.previousFileSystemPath == paths[2])
        #expect(move?.fileSystemPath == DirectoryWatcher.State.join(root, [0x80]))
        #expect(tree.file("-rf") == settled.first { $0.fileSystemPath == paths[1] }?.url)
        #expect(tree.file("line\nbreak") == settled.first { $0.fileSystemPath == paths[0] }?.url)
    }

    // MARK: Volume

    @Test func tenThousandFilesFromAChildAreEachReportedOnceOrOverflowIsReported() async throws {
        let tree = try TemporaryTree()
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: true)

        _ = try shell("i=0; while [ $i -lt 10000 ]; do : > f$i; i=$((i+1)); done", in: tree.url)

        let settled = try await events.settle()
        let created = settled.filter { $0.kind == .created }.map(\.fileSystemPath)
        let counts = Dictionary(created.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.values.allSatisfy { $0 == 1 }, "some files were reported created twice")
        if settled.contains(where: { $0.kind == .overflow }) {
            #expect(
                settled.filter { $0.kind == .overflow }.map(\.url) == [
                    DirectoryWatcher.url(for: bytes(tree.url), isDirectory: true)
                ])
        } else {
            #expect(counts.count == 10_000)
        }
        let modified = settled.filter { $0.kind == .modified }
        #expect(modified.count <= 10_000)
        print(
            "DirectoryWatcher 10,000 files: \(counts.count) created, \(settled.contains { $0.kind == .overflow } ? "with" : "no") overflow, in \(events.batches) batches"
        )
    }

    // MARK: Roots and lifetime

    @Test func deletedRootIsReportedAndNoLongerWatched() async throws {
        let tree = try TemporaryTree()
        let folder = tree.file("root")
        try put(tree, "x", to: "root/f")
        let events = EventCollector(root: folder)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(folder, recursive: true)
        #expect(watcher.watchedDirectories.map(\.path) == [folder.path])

        _ = try shell("rm -r root", in: tree.url)

        #expect(
            try await events.wait {
                $0.contains { $0.kind == .deleted && $0.fileSystemPath == bytes(folder) }
            })
        #expect(events.summary(events.events) == ["deleted f", "deleted /"])
        #expect(watcher.watchedDirectories.isEmpty)
    }

    @Test func unwatchStopsEvents() async throws {
        let tree = try TemporaryTree()
        try put(tree, "x", to: "quiet/sub/f")
        try FileManager.default.createDirectory(at: tree.file("loud"), withIntermediateDirectories: false)
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.file("quiet"), recursive: true)
        try watcher.watch(tree.file("loud"), recursive: false)

        watcher.unwatch(tree.file("quiet"))
        _ = try shell("echo y > quiet/sub/f && echo y > quiet/g", in: tree.url)

        let summary13 = events.summary(try await events.settle(in: bytes(tree.file("loud"))))

        #expect(summary13 == [])
        #expect(watcher.watchedDirectories.map(\.path) == [tree.file("loud").path])
    }

    @Test func cancelledWatcherDeliversNothingAndRefusesWatches() async throws {
        let tree = try TemporaryTree()
        let events = EventCollector(root: tree.url)
        let watcher = try DirectoryWatcher(handler: events.handler)
        try watcher.watch(tree.url, recursive: false)
        watcher.cancel()
        watcher.cancel()

        try createFile(bytes(tree.file("after")))
        // A second watcher on the same folder is the barrier: once it has seen the file,
        // the cancelled one had every chance to report it.
        let witness = EventCollector(root: tree.url)
        let second = try DirectoryWatcher(handler: witness.handler)
        try second.watch(tree.url, recursive: false)
        try createFile(bytes(tree.file("later")))
        #expect(try await witness.wait { !$0.isEmpty })
        #expect(events.events.isEmpty)
        #expect(throws: DocumentKitError.self) { try watcher.watch(tree.url, recursive: false) }
    }

    @Test func releasedWatcherIsFreedWithItsReader() async throws {
        let tree = try TemporaryTree()
        weak var core: DirectoryWatcher.Core?
        do {
            let watcher = try DirectoryWatcher { _ in }
            try watcher.watch(tree.url, recursive: true)
            core = watcher.core
        }
        // The read source holds the core until its cancel handler, which closes the
        // descriptor, has run on the reader's queue: the core's release shows both.
        let deadline = ContinuousClock.now + .seconds(5)
        while core != nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(core == nil)
    }

    // MARK: Errors

    @Test func watchingAMissingFolderNamesIt() throws {
        let tree = try TemporaryTree()
        let watcher = try DirectoryWatcher { _ in }
        let missing = tree.file("missing")
        let error = #expect(throws: DocumentKitError.self) { try watcher.watch(missing, recursive: true) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.url == missing)
    }

    @Test func watchingAFileIsWrongFileType() throws {
        let tree = try TemporaryTree()
        let file = try put(tree, "x", to: "f")
        let watcher = try DirectoryWatcher { _ in }
        let error = #expect(throws: DocumentKitError.self) { try watcher.watch(file, recursive: false) }
        #expect(error?.code == .wrongFileType)
    }

    @Test func exhaustedWatchesAreAClearErrorNamingTheFolder() {
        let folder = URL(fileURLWithPath: "/home/me/Documents", isDirectory: true)
        let error = DirectoryWatcher.watchError(.noSpace, url: folder)
        #expect(error.code == .watchLimitReached)
        #expect(error.errno == .noSpace)
        #expect(error.description.contains("/home/me/Documents"))
        #expect(error.description.contains("max_user_watches"))
    }

    // MARK: Parsing

    @Test func parsesRecordsOfEveryNameLengthAtAnyAlignment() {
        var stream: [UInt8] = [0xAA]  // one byte first, so no record is aligned
        let names: [[UInt8]] = [[], Array("a".utf8), Array("sixteen-bytes-xx".utf8), [0xFF, 0x0A]]
        for (index, name) in names.enumerated() {
            let padded = name.isEmpty ? 0 : (name.count / 16 + 1) * 16
            for field in [UInt32(index + 1), UInt32(IN_CREATE), UInt32(7 * index), UInt32(padded)] {
                withUnsafeBytes(of: field.littleEndian) { stream += $0 }
            }
            stream += name + [UInt8](repeating: 0, count: padded - name.count)
        }
        stream += [1, 2, 3]  // a truncated header is ignored

        var records: [DirectoryWatcher.Record] = []
        stream.withUnsafeBytes {
            DirectoryWatcher.State.parse(UnsafeRawBufferPointer(rebasing: $0[1...]), into: &records)
        }

        #expect(records.map(\.name) == names)
        #expect(records.map(\.watch) == [1, 2, 3, 4])
        #expect(records.map(\.cookie) == [0, 7, 14, 21])
    }

    // MARK: Translating records

    /// A state with no inotify descriptor behind it, watching `/w` (its calls to the
    /// kernel fail harmlessly), fed records as the kernel would queue them.
    private func translator() -> DirectoryWatcher.State {
        var state = DirectoryWatcher.State(fd: -1)
        state.folders[1] = DirectoryWatcher.Folder(
            path: Array("/w".utf8), root: Array("/w".utf8), recursive: false, isRoot: true)
        return state
    }

    private func record(_ mask: Int32, _ name: String, cookie: UInt32 = 0, watch: CInt = 1)
        -> DirectoryWatcher.Record
    {
        DirectoryWatcher.Record(
            watch: watch, mask: UInt32(bitPattern: mask), cookie: cookie, name: Array(name.utf8))
    }

    private func paths(_ outcome: DirectoryWatcher.State.Outcome) -> [String] {
        guard case .deliver(let events) = outcome else { return [] }
        return events.map { event in
            if case .moved(let from, let to) = event.kind { return "moved \(from.path) -> \(to.path)" }
            return "\(event.kind) \(event.url.path)"
        }
    }

    @Test func writeAndCloseSplitAcrossTwoReadsIsOneModification() {
        var state = translator()
        state.translate(record(IN_MODIFY, "f"))
        guard case .hold(_, let generation) = state.decide(now: .now()) else {
            Issue.record("a write without its close is held")
            return
        }
        state.translate(record(IN_MODIFY, "f"))
        state.translate(record(IN_CLOSE_WRITE, "f"))
        #expect(paths(state.decide(now: .now())) == ["modified /w/f"])
        #expect(paths(state.endHold(generation: generation)) == [])
    }

    @Test func writerThatKeepsTheFileOpenIsReportedWhenTheWindowEnds() {
        var state = translator()
        state.translate(record(IN_MODIFY, "log"))
        guard case .hold(_, let generation) = state.decide(now: .now()) else {
            Issue.record("a write without its close is held")
            return
        }
        #expect(paths(state.endHold(generation: generation)) == ["modified /w/log"])
        state.translate(record(IN_CLOSE_WRITE, "log"))
        #expect(paths(state.decide(now: .now())) == [])
    }

    @Test func renameHalvesSplitAcrossReadsAreOneMove() {
        var state = translator()
        state.translate(record(IN_MOVED_FROM, "a", cookie: 9))
        guard case .hold = state.decide(now: .now()) else {
            Issue.record("half a rename is held")
            return
        }
        state.translate(record(IN_MOVED_TO, "b", cookie: 9))
        #expect(paths(state.decide(now: .now())) == ["moved /w/a -> /w/b"])
    }

    @Test func unpairedRenameIsDeletionWhenTheWindowEnds() {
        var state = translator()
        state.translate(record(IN_MOVED_FROM, "a", cookie: 9))
        state.translate(record(IN_CREATE, "c"))
        guard case .hold(_, let generation) = state.decide(now: .now()) else {
            Issue.record("half a rename is held")
            return
        }
        #expect(paths(state.endHold(generation: generation)) == ["deleted /w/a", "created /w/c"])
    }

    @Test func packageExchangeIsOneReplacement() {
        var state = translator()
        let staging = ".Doc.pkg.dk-tmp-k3j"
        let isDirectory = IN_ISDIR
        state.translate(record(IN_CREATE | isDirectory, staging))
        state.translate(record(IN_MOVED_FROM | isDirectory, staging, cookie: 1))
        state.translate(record(IN_MOVED_TO | isDirectory, "Doc.pkg", cookie: 1))
        state.translate(record(IN_MOVED_FROM | isDirectory, "Doc.pkg", cookie: 2))
        state.translate(record(IN_MOVED_TO | isDirectory, staging, cookie: 2))
        state.translate(record(IN_DELETE | isDirectory, staging))
        #expect(paths(state.decide(now: .now())) == ["replaced /w/Doc.pkg"])
    }

    @Test func packageMovedAsideThenReplacedIsOneReplacement() {
        var state = translator()
        let isDirectory = IN_ISDIR
        state.translate(record(IN_MOVED_FROM | isDirectory, "Doc.pkg", cookie: 1))
        state.translate(record(IN_MOVED_TO | isDirectory, ".Doc.pkg.dk-old-1", cookie: 1))
        guard case .hold = state.decide(now: .now()) else {
            Issue.record("a name moved aside waits for its replacement")
            return
        }
        state.translate(record(IN_MOVED_FROM | isDirectory, ".Doc.pkg.dk-tmp-2", cookie: 2))
        state.translate(record(IN_MOVED_TO | isDirectory, "Doc.pkg", cookie: 2))
        #expect(paths(state.decide(now: .now())) == ["replaced /w/Doc.pkg"])
    }

    @Test func overflowIsReportedForEveryRoot() {
        var state = translator()
        state.folders[2] = DirectoryWatcher.Folder(
            path: Array("/v".utf8), root: Array("/v".utf8), recursive: true, isRoot: true)
        state.translate(record(IN_CREATE, "before"))
        state.translate(DirectoryWatcher.Record(watch: -1, mask: UInt32(IN_Q_OVERFLOW), cookie: 0, name: []))
        #expect(paths(state.decide(now: .now())) == ["created /w/before", "overflow /v", "overflow /w"])
    }

    @Test func recordsOfRemovedWatchesAreIgnored() {
        var state = translator()
        state.translate(record(IN_CREATE, "x", watch: 7))
        state.translate(record(IN_IGNORED, "", watch: 1))
        state.translate(record(IN_CREATE, "y"))
        #expect(paths(state.decide(now: .now())) == [])
        #expect(state.folders.isEmpty)
    }

    // MARK: Latency

    @Test func latencyFromAChildsWriteToTheHandler() async throws {
        let tree = try TemporaryTree()
        let arrivals = Mutex<[Double]>([])
        let watcher = try DirectoryWatcher { batch in
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let seconds = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
            arrivals.withLock { $0 += batch.filter { $0.kind == .modified }.map { _ in seconds } }
        }
        try put(tree, "x", to: "f")
        try watcher.watch(tree.url, recursive: false)

        // `date` stamps the time just before the shell's own `echo` writes the file.
        let output = try shell(
            "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do date +%s.%N; echo $i > f; sleep 0.05; done",
            in: tree.url)
        let writes = output.split(separator: "\n").compactMap { Double($0) }
        let deadline = ContinuousClock.now + .seconds(5)
        while arrivals.withLock({ $0.max() ?? 0 }) < (writes.last ?? 0) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        // Writes 50 ms apart are rarely in one batch, but may be on a loaded machine:
        // each write is matched with the first arrival after it.
        let received = arrivals.withLock { $0 }.sorted()
        #expect(!received.isEmpty)
        var latencies: [Double] = []
        for write in writes {
            if let arrival = received.first(where: { $0 >= write }) {
                latencies.append((arrival - write) * 1000)
            }
        }
        latencies.sort()
        if let median = latencies.dropFirst(latencies.count / 2).first, let maximum = latencies.last {
            print("DirectoryWatcher latency, child write to handler: median \(median) ms, max \(maximum) ms")
        }
    }
}
