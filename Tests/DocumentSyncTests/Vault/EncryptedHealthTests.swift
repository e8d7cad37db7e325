import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// The health check of a vault: a folder's making or deleting stopped at any step of the inner
/// remote leaves directories no folder reaches, which the check finds and the repair removes
/// without changing the plain tree; directories holding items, and directories a folder comes
/// to reach meanwhile, are kept; hostile contents of `d/` give a report, not a crash.
@Suite struct EncryptedHealthTests {
    typealias Inner = EncryptedRemoteTests.Inner
    typealias Made = EncryptedRemoteTests.Made

    static let longFolder = EncryptedMoveCrashTests.longFolder

    /// A folder operation to stop midway: the name of the folder, and whether it is in a
    /// folder two down.
    struct Case: CustomTestStringConvertible, Sendable {
        let kind: Inner
        let deleting: Bool
        let long: Bool
        let nested: Bool

        var testDescription: String {
            "\(deleting ? "delete" : "make") of a \(nested ? "nested " : "")folder with a \(long ? "long" : "short") "
                + "name over the \(kind.rawValue) remote"
        }

        var folder: RemotePath {
            let name = long ? EncryptedHealthTests.longFolder : "Trips"
            return nested ? RemotePath("outer/inner").appending(name) : RemotePath(name)
        }
    }

    static let cases: [Case] = Inner.allCases.flatMap { kind in
        [false, true].flatMap { deleting in
            [false, true].flatMap { long in
                [false, true].map { Case(kind: kind, deleting: deleting, long: long, nested: $0) }
            }
        }
    }

    /// The directories `d/XX/YYYY...` of `inner`.
    static func directories(_ inner: any Remote) throws -> Set<RemotePath> {
        var found: Set<RemotePath> = []
        for first in try inner.list(RemotePath("d")).entries where first.kind == .folder {
            let folder = RemotePath("d").appending(first.name)
            for second in try inner.list(folder).entries where second.kind == .folder {
                found.insert(folder.appending(second.name))
            }
        }
        return found
    }

    /// A vault holding a document and two folders, `outer/inner`.
    static func populated(_ kind: Inner) throws -> Made {
        let made = try Made(kind)
        try made.remote.makeFolder(RemotePath("outer"))
        try made.remote.makeFolder(RemotePath("outer/inner"))
        try made.remote.write(
            RemotePath("outer/note.txt"), from: UploadSource(Data("kept\n".utf8)), condition: .absent)
        return made
    }

    @Test(arguments: Inner.allCases)
    func aHealthyVaultReportsNothingAndRepairRemovesNothing(_ kind: Inner) throws {
        let made = try Self.populated(kind)
        try made.remote.makeFolder(RemotePath(Self.longFolder))
        try made.remote.makeFolder(RemotePath(Self.longFolder).appending("under a long name"))
        let report = try made.reopened().checkHealth()
        #expect(report.isHealthy && report.lines.isEmpty, "\(report.lines)")
        // The root, outer, outer/inner, the long folder and the one in it.
        #expect(report.reachedCount == 5)
        #expect(try Self.directories(made.inner).count == 5)
        #expect(try made.reopened().repairHealth(report, settle: .zero).isEmpty)
    }

    @Test(arguments: cases)
    func aFolderOperationStoppedAtAnyStepLeavesWhatTheCheckFindsAndTheRepairRemoves(_ test: Case) throws {
        var steps = 1
        var leftoversSeen = 0
        while true {
            let made = try Self.populated(test.kind)
            let withoutTarget = try Self.directories(made.inner)
            if test.deleting { try made.remote.makeFolder(test.folder) }
            let folderTag =
                test.deleting ? try #require(try made.reopened().entry(at: test.folder)?.tag) : nil
            let before = try Self.directories(made.inner)
            let crashing = EncryptedMoveCrashTests.Crashing(made.inner, failingFrom: steps)
            let stopped = EncryptedRemote(over: crashing, vault: made.remote.vault)
            let finished: Bool
            do {
                if let folderTag {
                    try stopped.delete(test.folder, condition: .matches(folderTag))
                } else {
                    try stopped.makeFolder(test.folder)
                }
                finished = true
            } catch let error as RemoteError where error.detail?.contains("crashed") == true {
                finished = false
            }
            let at = "\(test.testDescription), stopped at step \(steps)"
            let tree = try EncryptedRemoteTests.walk(made.reopened())
            let listed = tree.keys.contains(test.folder.string)
            let after = try Self.directories(made.inner)
            // What a folder no longer (or not yet) listed left: its own directory.
            let own = test.deleting ? before.subtracting(withoutTarget) : after.subtracting(before)
            let expected = listed ? [] : own.intersection(after)

            let report = try made.reopened().checkHealth()
            #expect(Set(report.unreachable.map(\.path)) == expected, "\(at): \(report.lines)")
            #expect(report.leftovers.count == report.unreachable.count, "\(at): \(report.lines)")
            #expect(report.damaged.isEmpty && report.notes.isEmpty, "\(at): \(report.lines)")
            leftoversSeen += report.leftovers.count

            let removed = try made.reopened().repairHealth(report, settle: .zero)
            #expect(Set(removed) == expected, "\(at)")
            #expect(try Self.directories(made.inner) == after.subtracting(expected), "\(at)")
            #expect(try EncryptedRemoteTests.walk(made.reopened()) == tree, "\(at)")
            #expect(try made.reopened().checkHealth().isHealthy, "\(at)")

            // The operation made again from the start finishes, and leaves a healthy vault.
            let again = made.reopened()
            if test.deleting, listed {
                let tag = try #require(try again.entry(at: test.folder)?.tag)
                try again.delete(test.folder, condition: .matches(tag))
            } else if !test.deleting, !listed {
                try again.makeFolder(test.folder)
            }
            #expect(
                try EncryptedRemoteTests.walk(made.reopened()).keys.contains(test.folder.string)
                    != test.deleting, "\(at)")
            #expect(try made.reopened().checkHealth().isHealthy, "\(at)")

            if finished { break }
            steps += 1
            try #require(steps < 20, "the operation never finished")
        }
        // Some step left a leftover to find.
        #expect(leftoversSeen > 0)
    }

    /// Where the folder `name` of the root is stored: its entry and its own directory.
    static func stored(_ made: Made, _ name: String) throws -> (entry: RemotePath, directory: RemotePath) {
        let names = made.remote.vault.names
        let entry = try RemotePath(names.directoryPath(of: VaultNameCipher.rootDirectoryID)).appending(
            names.entryName(for: name, parentDirectoryID: VaultNameCipher.rootDirectoryID).storedName)
        let id = try EncryptedRemoteTests.read(
            made.inner, entry.appending(VaultNameCipher.directoryIDFileName).string)
        return (entry, RemotePath(try names.directoryPath(of: String(decoding: id, as: UTF8.self))))
    }

    /// Removes the entry of the root's folder `name` from the inner remote, leaving its
    /// directory as it is: what a delete stopped after the entry leaves.
    static func removeEntry(_ made: Made, _ name: String) throws {
        let entry = try stored(made, name).entry
        for inside in try made.inner.list(entry).entries {
            try made.inner.delete(entry.appending(inside.name), condition: .matches(#require(inside.tag)))
        }
        try made.inner.delete(entry, condition: .matches(#require(try made.inner.entry(at: entry)?.tag)))
    }

    @Test(arguments: Inner.allCases)
    func anUnreachableDirectoryHoldingItemsIsReportedAndKept(_ kind: Inner) throws {
        let made = try Self.populated(kind)
        try made.remote.makeFolder(RemotePath("box"))
        try made.remote.write(
            RemotePath("box/a.txt"), from: UploadSource(Data("a".utf8)), condition: .absent)
        try made.remote.makeFolder(RemotePath("empty"))
        let box = try Self.stored(made, "box").directory
        let empty = try Self.stored(made, "empty").directory
        try Self.removeEntry(made, "box")
        try Self.removeEntry(made, "empty")
        let tree = try EncryptedRemoteTests.walk(made.reopened())

        let report = try made.reopened().checkHealth()
        #expect(!report.isHealthy)
        #expect(
            Set(report.unreachable)
                == [.init(path: box, contents: .items(1)), .init(path: empty, contents: .leftover)])
        #expect(report.lines.contains { $0.hasPrefix("orphaned items: \(box) holds 1 encrypted item ") })
        #expect(try made.reopened().repairHealth(report, settle: .zero) == [empty])
        // The items are where they were, and still reported.
        #expect(try Self.directories(made.inner).contains(box))
        #expect(try made.inner.list(box).entries.count == 2)
        #expect(try made.reopened().checkHealth().unreachable == [.init(path: box, contents: .items(1))])
        #expect(try EncryptedRemoteTests.walk(made.reopened()) == tree)
    }

    /// A remote that holds back the first write of a `dir.c9r`, as if its device were still
    /// making the folder: `finish()` writes it.
    final class HeldBack: ForwardingRemote, @unchecked Sendable {
        let held = Mutex<(path: RemotePath, contents: Data)?>(nil)

        override func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
            -> RemoteTag?
        {
            guard path.name == VaultNameCipher.directoryIDFileName, held.withLock({ $0 == nil }) else {
                return try super.write(path, from: source, condition: condition)
            }
            var contents = Data()
            while let chunk = try source.nextChunk() { contents.append(chunk) }
            held.withLock { $0 = (path, contents) }
            throw RemoteError(
                .timedOut, operation: .write, path: path, remote: displayName, detail: "held back")
        }

        func finish() throws {
            let (path, contents) = try #require(held.withLock { $0 })
            _ = try super.write(path, from: UploadSource(contents), condition: .absent)
        }
    }

    @Test(arguments: Inner.allCases)
    func aLeftoverAFolderComesToReachBeforeTheRepairIsKept(_ kind: Inner) throws {
        let made = try Self.populated(kind)
        let before = try Self.directories(made.inner)
        let other = HeldBack(made.inner)
        #expect(throws: RemoteError.self) {
            try EncryptedRemote(over: other, vault: made.remote.vault).makeFolder(RemotePath("being made"))
        }
        let making = try Self.directories(made.inner).subtracting(before)
        let report = try made.reopened().checkHealth()
        #expect(Set(report.leftovers.map(\.path)) == making && making.count == 1)
        // The other device finishes its folder between the report and the repair.
        try other.finish()
        #expect(try made.reopened().repairHealth(report, settle: .zero).isEmpty)
        #expect(try Self.directories(made.inner).isSuperset(of: making))
        #expect(try made.reopened().checkHealth().isHealthy)
        try made.reopened().write(
            RemotePath("being made/inside.txt"), from: UploadSource(Data("in".utf8)), condition: .absent)
        #expect(try EncryptedRemoteTests.read(made.reopened(), "being made/inside.txt") == Data("in".utf8))
    }

    @Test func theRepairWaitsTheSettlingTimeAfterTheReport() throws {
        let made = try Self.populated(.simulated)
        try made.remote.makeFolder(RemotePath("gone"))
        try Self.removeEntry(made, "gone")
        let report = try made.reopened().checkHealth()
        let start = ContinuousClock.now
        #expect(try made.reopened().repairHealth(report, settle: .milliseconds(300)).count == 1)
        #expect(ContinuousClock.now - start >= .milliseconds(250))
    }

    /// A remote whose listing of one path fails.
    final class FailingList: ForwardingRemote, @unchecked Sendable {
        let failing: RemotePath

        init(_ base: any Remote, failing: RemotePath) {
            self.failing = failing
            super.init(base)
        }

        override func list(_ folder: RemotePath) throws -> RemoteListing {
            guard folder == failing else { return try super.list(folder) }
            throw RemoteError(
                .timedOut, operation: .list, path: folder, remote: displayName, detail: "no answer")
        }
    }

    @Test(arguments: Inner.allCases)
    func hostileDirectoriesGiveAReportNotACrash(_ kind: Inner) throws {
        let made = try Self.populated(kind)
        let inner = made.inner
        let d = RemotePath("d")
        let thirty = String(repeating: "Q", count: 30)
        // Odd names and files where folders should be.
        try inner.write(d.appending("readme.txt"), from: UploadSource(Data("x".utf8)), condition: .absent)
        try inner.makeFolder(d.appending("zz"))
        try inner.write(d.appending("AB"), from: UploadSource(Data("x".utf8)), condition: .absent)
        try EncryptedRemote.makeFolders(inner, d.appending("CD").appending("short"))
        try inner.write(d.appending("CD").appending(thirty), from: UploadSource(Data()), condition: .absent)
        // A directory whose ID backup is a folder: not a leftover, kept.
        let odd = d.appending("EF").appending(thirty)
        try EncryptedRemote.makeFolders(inner, odd.appending(VaultNameCipher.directoryIDBackupFileName))
        // A `dir.c9r` that is no directory ID, one too large, one naming a directory not there,
        // and two folders naming one directory.
        for name in ["garbage", "large", "missing", "twin", "twin too"] {
            try made.remote.makeFolder(RemotePath(name))
        }
        func rewrite(_ name: String, _ contents: Data) throws {
            let path = try Self.stored(made, name).entry.appending(VaultNameCipher.directoryIDFileName)
            try inner.delete(path, condition: .matches(#require(try inner.entry(at: path)?.tag)))
            try inner.write(path, from: UploadSource(contents), condition: .absent)
        }
        let twin = try Self.stored(made, "twin")
        let missing = try Self.stored(made, "missing").directory
        for file in try inner.list(missing).entries {
            try inner.delete(missing.appending(file.name), condition: .matches(#require(file.tag)))
        }
        try inner.delete(missing, condition: .matches(#require(try inner.entry(at: missing)?.tag)))
        let twinID = try EncryptedRemoteTests.read(
            inner, twin.entry.appending(VaultNameCipher.directoryIDFileName).string)
        // Their own directories are no longer reached: leftovers, which a repair must not remove
        // while some folder's directory cannot be told (it may be one of them).
        let rewritten = try ["garbage", "large", "twin too"].map { try Self.stored(made, $0).directory }
        try rewrite("garbage", Data([0, 1, 2]))
        try rewrite("large", Data(repeating: 0x41, count: 100_000))
        try rewrite("twin too", twinID)
        // A leftover, which a repair must not remove while folders cannot be followed.
        try made.remote.makeFolder(RemotePath("gone"))
        let gone = try Self.stored(made, "gone").directory
        try Self.removeEntry(made, "gone")

        let report = try made.reopened().checkHealth()
        #expect(
            Set(report.unreachable)
                == Set(
                    [.init(path: odd, contents: .other(1)), .init(path: gone, contents: .leftover)]
                        + rewritten.map { .init(path: $0, contents: .leftover) }))
        let damaged = Dictionary(report.damaged.map { ($0.folder, $0.damage) }) { first, _ in first }
        #expect(damaged.count == 4)
        if case .unreadableDirectoryID = damaged["garbage"] {} else { Issue.record("\(report.lines)") }
        if case .unreadableDirectoryID = damaged["large"] {} else { Issue.record("\(report.lines)") }
        #expect(damaged["missing"] == .missingDirectory(missing))
        let shared = [damaged["twin"], damaged["twin too"]].compactMap { $0 }
        #expect(shared == [.sharedDirectory(twin.directory)])
        #expect(report.notes.count == 5, "\(report.notes)")
        for name in ["d/readme.txt", "d/zz", "d/AB", "d/CD/short", "d/CD/" + thirty] {
            #expect(report.notes.contains { $0.hasPrefix(name + " ") }, "\(name): \(report.notes)")
        }
        #expect(report.lines.count == 5 + 4 + 5)
        #expect(try made.reopened().repairHealth(report, settle: .zero).isEmpty)
        #expect(try Self.directories(inner).isSuperset(of: [odd, gone] + rewritten))

        // A huge `d/`: the notes stop at a page.
        for index in 0..<300 { try inner.makeFolder(d.appending("odd \(index)")) }
        let huge = try made.reopened().checkHealth()
        #expect(huge.notes.count == VaultHealthReport.mostNotes + 1)
        #expect(huge.notes.last == "and \(300 + 5 - VaultHealthReport.mostNotes) more")

        // A listing that fails names its path.
        for path in [d, try Self.stored(made, "twin").directory, gone] {
            do {
                _ = try EncryptedRemote(over: FailingList(inner, failing: path), vault: made.remote.vault)
                    .checkHealth()
                Issue.record("\(path): no error")
            } catch let error as RemoteError {
                #expect(error.path == path && error.kind == .timedOut)
            }
        }
    }

    @Test(arguments: Inner.allCases)
    func aVaultWithoutItsRootDirectoryReportsItMissing(_ kind: Inner) throws {
        let made = try Made(kind)
        let root = RemotePath(try made.remote.vault.names.directoryPath(of: VaultNameCipher.rootDirectoryID))
        for file in try made.inner.list(root).entries {
            try made.inner.delete(root.appending(file.name), condition: .matches(#require(file.tag)))
        }
        try made.inner.delete(root, condition: .matches(#require(try made.inner.entry(at: root)?.tag)))
        let report = try made.reopened().checkHealth()
        #expect(report.damaged == [.init(folder: "/", damage: .missingDirectory(root))])
        #expect(report.unreachable.isEmpty && !report.isHealthy)
        #expect(report.lines == ["missing directory: folder \"/\" points at \(root), which is not there"])
    }
}
