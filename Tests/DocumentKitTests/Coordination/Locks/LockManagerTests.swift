import CDocumentSystem
import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct LockManagerTests {
    typealias Mode = CoordinationLock.Mode

    // MARK: In one process

    @Test func readersShare() throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        let held = try fixture.manager.acquire([CoordinationLock(file, .read)])
        defer { held.release() }
        // `.zero` tries once: the second reader, on another thread, must not have to wait.
        let manager = fixture.manager
        let other = Background { try manager.acquire([CoordinationLock(file, .read)], timeout: .zero) }
        #expect(try other.join().isHeld)
    }

    /// Two accesses that must not overlap, by paths relative to the Documents folder.
    struct Conflict: Sendable, CustomTestStringConvertible {
        var held: Mode
        var heldPath = "notes.txt"
        var wanted: Mode
        var wantedPath = "notes.txt"
        var testDescription: String { "\(held) \(heldPath) then \(wanted) \(wantedPath)" }
    }

    @Test(arguments: [
        Conflict(held: .write, wanted: .read),
        Conflict(held: .write, wanted: .write),
        Conflict(held: .read, wanted: .write),
        Conflict(held: .writeSubtree, heldPath: "Project", wanted: .read, wantedPath: "Project/a/notes.txt"),
        Conflict(held: .read, heldPath: "Project/a/notes.txt", wanted: .writeSubtree, wantedPath: "Project"),
        Conflict(held: .writeSubtree, heldPath: "Project/a", wanted: .writeSubtree, wantedPath: "Project"),
    ])
    func conflictingAcquireWaitsForRelease(_ conflict: Conflict) throws {
        let fixture = try LockFixture()
        let heldItem = fixture.document(conflict.heldPath)
        let wantedItem = fixture.document(conflict.wantedPath)
        let manager = fixture.manager
        let log = EventLog()
        let holder = try manager.acquire([CoordinationLock(heldItem, conflict.held)])
        let waiter = Background {
            let locks = try manager.acquire(
                [CoordinationLock(wantedItem, conflict.wanted)], timeout: .seconds(20))
            log.record("acquired")
            locks.release()
        }
        // Time for a broken lock to let the waiter through; a working one passes regardless.
        Thread.sleep(forTimeInterval: 0.15)
        log.record("releasing")
        holder.release()
        try waiter.join()
        #expect(log.events == ["releasing", "acquired"])
    }

    @Test func writersAreAloneAmongManyThreads() throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        let manager = fixture.manager
        // Readers and writers inside the lock, and the worst overlap each saw.
        let inside = Mutex((readers: 0, writers: 0, violations: 0))
        let threads = (0..<6).map { number in
            Background {
                let mode: Mode = number % 3 == 0 ? .write : .read
                for _ in 0..<150 {
                    let held = try manager.acquire([CoordinationLock(file, mode)], timeout: .seconds(30))
                    inside.withLock { state in
                        if mode == .write { state.writers += 1 } else { state.readers += 1 }
                        if state.writers > 1 || (state.writers == 1 && state.readers > 0) {
                            state.violations += 1
                        }
                    }
                    sched_yield()
                    inside.withLock { state in
                        if mode == .write { state.writers -= 1 } else { state.readers -= 1 }
                    }
                    held.release()
                }
            }
        }
        for thread in threads { try thread.join() }
        #expect(inside.withLock { $0.violations } == 0)
    }

    @Test func acquisitionsOnOneThreadConflictLikeProcesses() throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        let held = try fixture.manager.acquire([CoordinationLock(file, .write)])
        let error = try #require(throws: DocumentKitError.self) {
            try fixture.manager.acquire([CoordinationLock(file, .read)], timeout: .zero)
        }
        #expect(error.code == .timedOut)
        held.release()
        #expect(try fixture.manager.acquire([CoordinationLock(file, .read)], timeout: .zero).isHeld)
    }

    @Test func releasedLocksDoNotTravelWithAReusedLockFileDescription() throws {
        // A released acquisition's open file description goes back to a pool; the next
        // acquisition takes it, so whatever it still held would belong to that one.
        let fixture = try LockFixture()
        let first = fixture.document("first.txt")
        let second = fixture.document("second.txt")
        for _ in 0..<3 {
            try fixture.manager.acquire([CoordinationLock(first, .writeSubtree)]).release()
            let reusing = try fixture.manager.acquire([CoordinationLock(second, .read)])
            // Taken on another description, since the pooled one is checked out.
            let other = try fixture.manager.acquire([CoordinationLock(first, .writeSubtree)], timeout: .zero)
            #expect(other.isHeld)
            reusing.release()
        }
    }

    @Test func deletedLockFileIsMadeAgainAndLockedInPlaceOfTheKeptOne() throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        try fixture.manager.acquire([CoordinationLock(file, .write)]).release()
        let lockFile = fixture.manager.lockDirectory.appendingPathComponent("coordination.lock").path
        #expect(unlink(lockFile) == 0)

        let held = try fixture.manager.acquire([CoordinationLock(file, .write)])
        defer { held.release() }
        let fd = open(lockFile, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0, "the lock file was not made again")
        defer { close(fd) }
        let offset = LockFixtureKeys.offset(of: CoordinationLock.canonicalPath(file.path))
        #expect(
            cds_fcntl_lock(fd, CDS_F_OFD_SETLK, CShort(F_RDLCK), offset, 1) != 0,
            "the write lock went to the deleted file, where no one else looks")
    }

    @Test func subtreeWriteAndAccessInsideExcludeEachOther() throws {
        let fixture = try LockFixture()
        let folder = fixture.document("Project")
        let deep = fixture.document("Project/a/b/c/notes.txt")
        let manager = fixture.manager

        let moving = try manager.acquire([CoordinationLock(folder, .writeSubtree)])
        for mode in Mode.allCases {
            #expect(throws: DocumentKitError.self) {
                try manager.acquire([CoordinationLock(deep, mode)], timeout: .zero)
            }
        }
        moving.release()

        let reading = try manager.acquire([CoordinationLock(deep, .read)])
        #expect(throws: DocumentKitError.self) {
            try manager.acquire([CoordinationLock(folder, .writeSubtree)], timeout: .zero)
        }
        #expect(throws: DocumentKitError.self) {
            try manager.acquire([CoordinationLock(fixture.documents, .writeSubtree)], timeout: .zero)
        }
        reading.release()
        #expect(try manager.acquire([CoordinationLock(folder, .writeSubtree)], timeout: .zero).isHeld)
    }

    @Test func plainWriteOfFolderLeavesItsContentsAlone() throws {
        let fixture = try LockFixture()
        let folder = fixture.document("Project")
        let writing = try fixture.manager.acquire([CoordinationLock(folder, .write)])
        defer { writing.release() }
        let inside = try fixture.manager.acquire(
            [CoordinationLock(fixture.document("Project/notes.txt"), .write)], timeout: .zero)
        #expect(inside.isHeld)
        // The folder itself is taken; a sibling folder is not.
        #expect(throws: DocumentKitError.self) {
            try fixture.manager.acquire([CoordinationLock(folder, .read)], timeout: .zero)
        }
        #expect(
            try fixture.manager.acquire(
                [CoordinationLock(fixture.document("Other"), .writeSubtree)], timeout: .zero
            ).isHeld)
    }

    @Test func opposingMultiItemAcquisitionsNeverDeadlock() throws {
        let fixture = try LockFixture()
        let first = fixture.document("a.txt")
        let second = fixture.document("b.txt")
        let manager = fixture.manager
        let counts = EventLog()
        func hammer(_ order: [URL]) -> Background<Void> {
            Background {
                for _ in 0..<300 {
                    // A deadlock would surface as a timeout here rather than a hung test.
                    let held = try manager.acquire(
                        order.map { CoordinationLock($0, .write) }, timeout: .seconds(20))
                    held.release()
                }
                counts.record("done")
            }
        }
        let forward = hammer([first, second])
        let backward = hammer([second, first])
        try forward.join()
        try backward.join()
        #expect(counts.events == ["done", "done"])
    }

    @Test func timeoutNamesTheBusyItem() throws {
        let fixture = try LockFixture()
        let file = fixture.document("Busy Notes.txt")
        let held = try fixture.manager.acquire([CoordinationLock(file, .write)])
        defer { held.release() }
        let started = ContinuousClock.now
        let error = try #require(throws: DocumentKitError.self) {
            try fixture.manager.acquire([CoordinationLock(file, .write)], timeout: .milliseconds(100))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(error.code == .timedOut)
        #expect(error.url?.path == CoordinationLock.canonicalPath(file.path))
        #expect(error.description.contains("Busy Notes.txt"))
    }

    @Test func subtreeTimeoutNamesTheFolderInUse() throws {
        let fixture = try LockFixture()
        let folder = fixture.document("Project")
        let held = try fixture.manager.acquire([CoordinationLock(folder, .writeSubtree)])
        defer { held.release() }
        let error = try #require(throws: DocumentKitError.self) {
            try fixture.manager.acquire(
                [CoordinationLock(fixture.document("Project/x/y.txt"), .read)], timeout: .zero)
        }
        #expect(error.url?.path == CoordinationLock.canonicalPath(folder.path))
    }

    @Test func cancellationStopsWaitingAndReleasesWhatWasTaken() throws {
        let fixture = try LockFixture()
        let busy = fixture.document("busy.txt")
        let free = (0..<8).map { fixture.document("free-\($0).txt") }
        let held = try fixture.manager.acquire([CoordinationLock(busy, .write)])
        defer { held.release() }
        var asked = 0
        // Some of the free items sort before the busy one, so some are held when it waits.
        #expect(throws: CancellationError.self) {
            try fixture.manager.acquire((free + [busy]).map { CoordinationLock($0, .write) }) {
                asked += 1
                return asked == 5
            }
        }
        #expect(asked == 5)
        for url in free {
            #expect(try fixture.manager.acquire([CoordinationLock(url, .write)], timeout: .zero).isHeld)
        }
    }

    @Test func timeoutReleasesWhatWasTaken() throws {
        let fixture = try LockFixture()
        let busy = fixture.document("busy.txt")
        let free = (0..<8).map { fixture.document("free-\($0).txt") }
        let held = try fixture.manager.acquire([CoordinationLock(busy, .read)])
        defer { held.release() }
        #expect(throws: DocumentKitError.self) {
            try fixture.manager.acquire(
                (free + [busy]).map { CoordinationLock($0, .write) }, timeout: .milliseconds(20))
        }
        let all = try fixture.manager.acquire(free.map { CoordinationLock($0, .write) }, timeout: .zero)
        #expect(all.isHeld)
    }

    @Test func asyncAcquireEndsOnTaskCancellation() async throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        let manager = fixture.manager
        let held = try await manager.acquire([CoordinationLock(file, .write)])
        defer { held.release() }
        let waiter = Task { try await manager.acquire([CoordinationLock(file, .read)]) }
        try await Task.sleep(for: .milliseconds(30))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test func asyncAcquireWaitsForRelease() async throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        let manager = fixture.manager
        let log = EventLog()
        let held = try await manager.acquire([CoordinationLock(file, .write)])
        let waiter = Task {
            let locks = try await manager.acquire([CoordinationLock(file, .write)], timeout: .seconds(20))
            log.record("acquired")
            locks.release()
        }
        try await Task.sleep(for: .milliseconds(100))
        log.record("releasing")
        held.release()
        try await waiter.value
        #expect(log.events == ["releasing", "acquired"])
    }

    @Test func oneCallNeverWaitsForItself() throws {
        let fixture = try LockFixture()
        let folder = fixture.document("Project")
        let file = fixture.document("Project/notes.txt")
        let held = try fixture.manager.acquire(
            [
                CoordinationLock(file, .read), CoordinationLock(file, .write),
                CoordinationLock(folder, .writeSubtree), CoordinationLock(folder, .read),
                CoordinationLock(fixture.document("Project/./notes.txt"), .read),
            ], timeout: .zero)
        defer { held.release() }
        let canonicalFolder = CoordinationLock.canonicalPath(folder.path)
        #expect(
            held.locks == [
                CoordinationLock(path: canonicalFolder, mode: .writeSubtree),
                CoordinationLock(path: canonicalFolder + "/notes.txt", mode: .write),
            ])
        #expect(throws: DocumentKitError.self) {
            try fixture.manager.acquire([CoordinationLock(file, .read)], timeout: .zero)
        }
    }

    @Test func heldLocksCoverNestedAccess() throws {
        let fixture = try LockFixture()
        let folder = fixture.document("Project")
        let file = fixture.document("Notes.txt")
        let held = try fixture.manager.acquire([
            CoordinationLock(folder, .writeSubtree), CoordinationLock(file, .write),
        ])
        defer { held.release() }
        #expect(held.covers(CoordinationLock(fixture.document("Project/deep/x.txt"), .writeSubtree)))
        #expect(held.covers(CoordinationLock(file, .read)))
        #expect(held.covers(CoordinationLock(fixture.document("./Notes.txt"), .write)))
        #expect(!held.covers(CoordinationLock(file, .writeSubtree)))
        #expect(!held.covers(CoordinationLock(fixture.document("Project2/x.txt"), .read)))
        #expect(!held.covers(CoordinationLock(fixture.documents, .read)))
    }

    @Test func releaseIsIdempotentAndDroppingReleases() throws {
        let fixture = try LockFixture()
        let file = fixture.document("notes.txt")
        do {
            let held = try fixture.manager.acquire([CoordinationLock(file, .write)])
            held.release()
            #expect(!held.isHeld)
            held.release()
        }
        do {
            _ = try fixture.manager.acquire([CoordinationLock(file, .write)])
        }
        #expect(try fixture.manager.acquire([CoordinationLock(file, .write)], timeout: .zero).isHeld)
    }

    // MARK: Names

    @Test func twoSpellingsOfOneItemShareALock() throws {
        let fixture = try LockFixture()
        let real = try fixture.tree.write("x", to: "Documents/Real/notes.txt")
        let link = fixture.document("Link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "Real")
        let spellings = [
            link.appendingPathComponent("notes.txt").path,
            fixture.documents.path + "/Real/../Real/./notes.txt",
            fixture.documents.path + "//Real//notes.txt",
        ]
        let held = try fixture.manager.acquire([CoordinationLock(real, .write)])
        defer { held.release() }
        for spelling in spellings {
            #expect(CoordinationLock.canonicalPath(spelling) == CoordinationLock.canonicalPath(real.path))
            #expect(throws: DocumentKitError.self) {
                try fixture.manager.acquire([CoordinationLock(path: spelling, mode: .read)], timeout: .zero)
            }
        }
    }

    @Test func canonicalPathResolvesExistingFoldersOnly() throws {
        let fixture = try LockFixture()
        try FileManager.default.createDirectory(
            at: fixture.document("Real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: fixture.document("Link").path, withDestinationPath: "Real")
        try FileManager.default.createSymbolicLink(
            atPath: fixture.document("file-link").path, withDestinationPath: "x")
        let base = CoordinationLock.canonicalPath(fixture.documents.path)
        #expect(!base.contains("/./") && !base.hasSuffix("/"))
        let cases = [
            ("Link/new/deeper/file.txt", "Real/new/deeper/file.txt"),
            ("Link/missing/../file.txt", "Real/file.txt"),
            ("file-link", "file-link"),  // the link itself, not where it points
            ("Link/", "Link"),
            ("Real/..", ""),
            ("Link/file.txt", "Real/file.txt"),  // a link among existing folders
            ("Real/file.txt", "Real/file.txt"),
            ("file.txt", "file.txt"),
        ]
        for (spelling, expected) in cases {
            let want = expected.isEmpty ? base : base + "/" + expected
            #expect(
                CoordinationLock.canonicalPath(fixture.documents.path + "/" + spelling) == want, "\(spelling)"
            )
        }
        #expect(CoordinationLock.canonicalPath("/") == "/")
        #expect(CoordinationLock.canonicalPath("/..") == "/")
        #expect(CoordinationLock.canonicalPath("/item-in-root") == "/item-in-root")
        #expect(
            CoordinationLock.canonicalPath("relative.txt") == CoordinationLock.canonicalPath(
                FileManager.default.currentDirectoryPath) + "/relative.txt")
    }

    @Test func lockFilesStayInThePrivateRuntimeFolder() throws {
        let fixture = try LockFixture()
        let file = try fixture.tree.write("user data", to: "Documents/Folder/notes.txt")
        let before = try listing(fixture.documents)
        let held = try fixture.manager.acquire([
            CoordinationLock(file, .write), CoordinationLock(fixture.document("Folder"), .read),
            CoordinationLock(fixture.document("new.txt"), .write),
        ])
        defer { held.release() }
        #expect(try listing(fixture.documents) == before)
        let locks = fixture.runtime.appendingPathComponent("documentkit/locks")
        #expect(fixture.manager.lockDirectory.standardizedFileURL == locks.standardizedFileURL)
        #expect(try permissions(fixture.runtime.appendingPathComponent("documentkit")) == 0o700)
        #expect(try permissions(locks) == 0o700)
        let lockFiles = try FileManager.default.contentsOfDirectory(atPath: locks.path)
        #expect(lockFiles == ["coordination.lock"])
        #expect(try permissions(locks.appendingPathComponent("coordination.lock")) == 0o600)
    }

    @Test func lockFolderIsMadePrivateAgain() throws {
        let fixture = try LockFixture()
        let folder = fixture.runtime.appendingPathComponent("documentkit/locks")
        chmod(folder.path, 0o755)
        _ = try LockManager(directories: fixture.directories)
        #expect(try permissions(folder) == 0o700)
    }

    @Test func locksSitAtTheFNV1a128OffsetsOfTheItemAndEachFolderAbove() throws {
        // Every process and every version must place a path's locks at the same bytes.
        #expect(LockFixtureKeys.name(of: "") == "6c62272e07bb014262b821756295c58d")
        #expect(LockFixtureKeys.name(of: "a") == "d228cb696f1a8caf78912b704e4a8964")
        let fixture = try LockFixture()
        let item = CoordinationLock.canonicalPath(fixture.document("Folder/notes.txt").path)
        let held = try fixture.manager.acquire([CoordinationLock(path: item, mode: .read)])
        defer { held.release() }
        var ancestors = ["/"]
        var prefix = ""
        for component in item.split(separator: "/").dropLast() {
            prefix += "/" + component
            ancestors.append(prefix)
        }
        let lockFile = fixture.manager.lockDirectory.appendingPathComponent("coordination.lock").path
        // A fresh open file description conflicts with the held locks exactly where they are.
        func exclusiveIsRefused(at offset: off_t) -> Bool {
            let fd = open(lockFile, O_RDWR | O_CLOEXEC)
            defer { close(fd) }
            return cds_fcntl_lock(fd, CDS_F_OFD_SETLK, CShort(F_WRLCK), offset, 1) != 0
        }
        #expect(exclusiveIsRefused(at: LockFixtureKeys.offset(of: item)))
        #expect(!exclusiveIsRefused(at: LockFixtureKeys.offset(of: item) + 1))
        for ancestor in ancestors {
            #expect(!exclusiveIsRefused(at: LockFixtureKeys.offset(of: ancestor)), "\(ancestor) item byte")
            #expect(
                exclusiveIsRefused(at: LockFixtureKeys.offset(of: ancestor) + 1), "\(ancestor) contents byte")
        }
    }

    // MARK: Across processes

    @Test func childHoldingWriteLockBlocksParentUntilItExits() throws {
        let fixture = try LockFixture()
        let file = try fixture.tree.write("x", to: "Documents/notes.txt")
        let marker = fixture.tree.file("released")
        let child = try TestChild.start(
            ["lock-hold", file.path, "write", "0.3", marker.path], environment: fixture.childEnvironment)
        try #require(waitForLine("locked", from: child))
        let held = try fixture.manager.acquire([CoordinationLock(file, .read)], timeout: .seconds(30))
        defer { held.release() }
        // The child makes the marker before exiting, and its exit is what releases the lock.
        #expect(FileManager.default.fileExists(atPath: marker.path))
        let outcome = TestChild.finish(child)
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }

    @Test func parentHoldingSubtreeWriteBlocksChildInside() throws {
        let fixture = try LockFixture()
        let folder = fixture.document("Project")
        let held = try fixture.manager.acquire([CoordinationLock(folder, .writeSubtree)])
        let child = try TestChild.start(
            ["lock-hold", folder.path + "/inner/notes.txt", "read", "0"],
            environment: fixture.childEnvironment)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(child.isRunning, "the child got its lock while the folder was being moved")
        held.release()
        #expect(waitForLine("locked", from: child))
        let outcome = TestChild.finish(child)
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }

    @Test func killedChildLeavesNoLockBehind() throws {
        let fixture = try LockFixture()
        let file = try fixture.tree.write("x", to: "Documents/notes.txt")
        let child = try TestChild.start(
            ["lock-hold", file.path, "write", "-1"], environment: fixture.childEnvironment)
        try #require(waitForLine("locked", from: child))
        #expect(throws: DocumentKitError.self) {
            try fixture.manager.acquire([CoordinationLock(file, .write)], timeout: .zero)
        }
        kill(child.processIdentifier, SIGKILL)
        let outcome = TestChild.finish(child)
        #expect(outcome.reason == .uncaughtSignal)
        // Once the holder is reaped its lock is gone at once: no wait, no stale-lock timeout.
        let held = try fixture.manager.acquire([CoordinationLock(file, .write)], timeout: .zero)
        held.release()
    }

    @Test func twoProcessesAppendingUnderWriteLockLoseNothing() throws {
        let fixture = try LockFixture()
        let file = try fixture.tree.write("", to: "Documents/log.txt")
        let start = fixture.tree.file("start")
        let children = try ["A", "B"].map {
            try TestChild.start(
                ["lock-append", file.path, "1000", $0, start.path], environment: fixture.childEnvironment)
        }
        // Both waiting at the start line (a loaded machine starts processes late), then go.
        let deadline = ContinuousClock.now + .seconds(30)
        while ["A", "B"].contains(where: {
            !FileManager.default.fileExists(atPath: start.path + ".ready-" + $0)
        }),
            ContinuousClock.now < deadline
        {
            usleep(2000)
        }
        _ = FileManager.default.createFile(atPath: start.path, contents: nil)
        for child in children {
            let outcome = TestChild.finish(child)
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 2000)
        for tag in ["A", "B"] {
            let mine = lines.filter { $0.hasPrefix(tag + " ") }
            #expect(
                mine == (0..<1000).map { "\(tag) \($0)"[...] }, "lines of \(tag) lost, split or out of order")
        }
        // The test proves nothing unless the two really took turns.
        let turns = zip(lines, lines.dropFirst()).filter { $0.first != $1.first }.count
        #expect(turns > 1)
    }

    // MARK: Speed

    @Test func measuresUncontendedReadRate() throws {
        let fixture = try LockFixture()
        let file = try fixture.tree.write("x", to: "Documents/a/b/c/d/e/notes.txt")
        let lock = [CoordinationLock(file, .read)]
        for _ in 0..<200 { try fixture.manager.acquire(lock).release() }
        let count = 5_000
        let started = ContinuousClock.now
        for _ in 0..<count { try fixture.manager.acquire(lock).release() }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let depth = CoordinationLock.canonicalPath(file.path).split(separator: "/").count
        print(
            "FileLock: \(Int(Double(count) / seconds)) uncontended read acquire+release per second, path depth \(depth)"
        )
        #expect(seconds > 0)
    }
}

/// A lock manager whose runtime folder is inside the test's own tree, beside a Documents
/// folder that stands for the user's files.
private struct LockFixture {
    let tree: TemporaryTree
    let documents: URL
    let runtime: URL
    let directories: StandardDirectories
    let manager: LockManager

    init(_ name: String = #function) throws {
        tree = try TemporaryTree(name)
        documents = tree.file("Documents")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        runtime = tree.file("runtime")
        directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": runtime.path,
        ])
        manager = try LockManager(directories: directories)
    }

    func document(_ relativePath: String) -> URL { documents.appendingPathComponent(relativePath) }

    /// The environment for a child that must use this fixture's lock folder.
    var childEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        return environment
    }
}

/// The lock file name a path gets, computed here from the published FNV-1a constants.
private enum LockFixtureKeys {
    static func name(of path: String) -> String {
        var state: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
        for byte in path.utf8 {
            state ^= UInt128(byte)
            state = state &* 0x0000_0000_0100_0000_0000_0000_0000_013b
        }
        let digits = String(state, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }

    /// The item's first byte in the shared lock file: the digest's low 62 bits, doubled.
    static func offset(of path: String) -> off_t {
        let digits = name(of: path)
        let low = UInt64(digits.suffix(16), radix: 16)!
        return off_t(low & 0x3FFF_FFFF_FFFF_FFFF) * 2
    }
}

/// Runs a closure on a thread of its own, for tests where blocking is the point.
private final class Background<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> Value) {
        Thread.detachNewThread { [self] in
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
            finished.signal()
        }
    }

    func join() throws -> Value {
        finished.wait()
        return try result.withLock { $0! }.get()
    }
}

/// Events recorded from several threads, in the order they happened.
private final class EventLog: Sendable {
    private let storage = Mutex<[String]>([])
    func record(_ event: String) { storage.withLock { $0.append(event) } }
    var events: [String] { storage.withLock { $0 } }
}

/// Reads the child's standard output until `line` arrives; false if the child ended first.
private func waitForLine(_ line: String, from child: Process) -> Bool {
    guard let pipe = child.standardOutput as? Pipe else { return false }
    var text = ""
    while !text.split(separator: "\n").contains(Substring(line)) {
        let data = pipe.fileHandleForReading.availableData
        if data.isEmpty { return false }
        text += String(decoding: data, as: UTF8.self)
    }
    return true
}

private func permissions(_ url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
}

private func listing(_ url: URL) throws -> [String] {
    try FileManager.default.subpathsOfDirectory(atPath: url.path).sorted()
}
