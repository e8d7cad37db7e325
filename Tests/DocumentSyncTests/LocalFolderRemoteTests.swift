import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

@Suite struct LocalFolderRemoteTests {
    private func kind(of body: () throws -> Void) -> RemoteError.Kind? {
        do {
            try body()
            return nil
        } catch {
            return (error as? RemoteError)?.kind
        }
    }

    private func write(
        _ remote: LocalFolderRemote, _ path: String, _ text: String, _ condition: WriteCondition = .absent
    )
        throws -> RemoteTag
    {
        try #require(
            try remote.write(RemotePath(path), from: UploadSource(Data(text.utf8)), condition: condition))
    }

    /// Journals hold the tags of every synced file: the spelling must never change, or every
    /// item would read as edited on the remote after an update.
    /// A file is read through a buffer of its size and a page, up to a chunk: many small
    /// documents in flight hold kilobytes each. Files larger than their buffer (or grown
    /// since their size was taken) are still read whole, a buffer at a time.
    @Test func filesAreReadThroughBuffersOfTheirSizeAndStillWhole() throws {
        #expect(RemoteChunk.bufferSize(forFileOf: 0) == 4096)
        #expect(RemoteChunk.bufferSize(forFileOf: -5) == 4096)
        #expect(RemoteChunk.bufferSize(forFileOf: 1024) == 5120)
        #expect(RemoteChunk.bufferSize(forFileOf: 10 << 20) == RemoteChunk.size)
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let bytes = Data((0..<(RemoteChunk.size + 12345)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try remote.write(RemotePath("big.bin"), from: UploadSource(bytes), condition: .absent)
        var read = Data()
        _ = try remote.read(RemotePath("big.bin")) { read.append($0) }
        #expect(read == bytes)
    }

    @Test func tagsAndFileIDsAreSpelledAsJournalsHoldThem() {
        let cases: [(UInt64, Int64, Int64, UInt32, Int64, UInt32, String)] = [
            (
                0x2a, 4096, 1_700_000_000, 5, 1_700_000_001, 123_456_789,
                "2a-4096-1700000000.000000005-1700000001.123456789"
            ),
            (.max, 0, 0, 0, -1, 999_999_999, "ffffffffffffffff-0-0.000000000--1.999999999"),
            (1, .max, -12, 100, 7, 1, "1-9223372036854775807--12.000000100-7.000000001"),
        ]
        for (inode, size, seconds, nanoseconds, changeSeconds, changeNanoseconds, expected) in cases {
            let status = FileStatus(
                device: 0xfd01, inode: inode, mode: 0o100644, linkCount: 1, size: size,
                modification: FileStatus.Timestamp(seconds: seconds, nanoseconds: nanoseconds),
                statusChange: FileStatus.Timestamp(seconds: changeSeconds, nanoseconds: changeNanoseconds),
                birth: nil)
            #expect(LocalFolderRemote.tag(status).rawValue == expected)
            #expect(
                LocalFolderRemote.entry(named: "a", status)?.fileID
                    == "fd01:\(String(inode, radix: 16))")
        }
    }

    @Test func anEditInPlaceByAnotherProgramChangesTheTag() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let tag = try write(remote, "a.txt", "aaaa")
        // File systems stamp times from a clock that ticks every few milliseconds: let it tick.
        usleep(20_000)
        let handle = try FileHandle(forUpdating: folder.file("remote/a.txt"))
        try handle.write(contentsOf: Data("bbbb".utf8))  // same size, same inode
        try handle.close()
        let edited = try #require(try remote.entry(at: RemotePath("a.txt")))
        #expect(edited.tag != tag)
        #expect(edited.size == 4)
        #expect(kind { _ = try write(remote, "a.txt", "cccc", .matches(tag)) } == .preconditionFailed)
        #expect(try String(contentsOf: folder.file("remote/a.txt"), encoding: .utf8) == "bbbb")
    }

    @Test func writesThroughTheRemoteGetStrictlyLaterModificationTimes() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        var tag = try write(remote, "a.txt", "0000")
        var times = [try #require(FileStatus(path: folder.file("remote/a.txt").path)).modification]
        for index in 1..<6 {
            tag = try write(remote, "a.txt", "000\(index)", .matches(tag))
            _ = try write(remote, "other-\(index)", "x")
            times.append(try #require(FileStatus(path: folder.file("remote/a.txt").path)).modification)
        }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func aReplacedFileKeepsItsPermissionsAndItsNeighboursSeeNoDebris() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let tag = try write(remote, "a.txt", "one")
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o640], ofItemAtPath: folder.file("remote/a.txt").path)
        let current = try #require(try remote.entry(at: RemotePath("a.txt"))?.tag)
        #expect(current != tag)  // chmod changes the status-change time
        _ = try write(remote, "a.txt", "two", .matches(current))
        #expect(FileStatus(path: folder.file("remote/a.txt").path)?.permissions == 0o640)
        #expect(try folder.names(in: "remote") == [".documentsync", "a.txt"])
        #expect(try folder.names(in: "remote/.documentsync") == ["write.lock"])
    }

    @Test func namesTheFileSystemCannotHoldAreInvalid() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let longest = String(repeating: "\u{e9}", count: 127) + "x"  // 255 bytes
        _ = try write(remote, longest, "fits")
        #expect(kind { _ = try write(remote, longest + "y", "too long") } == .invalidName)
        #expect(kind { try remote.makeFolder(RemotePath(components: [longest + "y"])) } == .invalidName)
        #expect(kind { _ = try remote.list(RemotePath(components: ["a\u{0}"])) } == .invalidName)
        // The remote's own files are not items.
        for lock in [".documentsync/write.lock", ".documentsync/lock"] {
            #expect(kind { _ = try write(remote, lock, "x", .matches(RemoteTag("t"))) } == .invalidName)
        }
        #expect(kind { _ = try remote.entry(at: RemotePath(".documentsync-tmp-1234")) } == .invalidName)
    }

    /// Another program, or another user, can name a file anything but "/" and NUL: a name
    /// with a control character fails the listing, named with its escapes.
    @Test func aNameWithAControlCharacterFailsTheListingNamingIt() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        try folder.write(Data("a".utf8), to: "remote/a.txt")
        try folder.write(Data("escape".utf8), to: "remote/evil\u{1B}]0;pwned\u{7}.txt")
        let error = #expect(throws: RemoteError.self) { try remote.list(.root) }
        #expect(
            error?.description.contains("evil\\u{1B}]0;pwned\\u{7}.txt") == true,
            "\(String(describing: error))")
        #expect(error?.description.contains("\u{1B}") == false)
        #expect(kind { _ = try write(remote, "tab\there.txt", "x") } == .invalidName)
    }

    /// A link another user of a shared folder put in the tree leads no write outside it.
    @Test func aLinkInTheTreeLeadsNoWriteOutsideIt() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        let outside = try folder.folder("outside/sub")
        try FileManager.default.createSymbolicLink(
            atPath: folder.file("remote/link").path, withDestinationPath: folder.file("outside").path)
        #expect(kind { _ = try write(remote, "link/sub/evil.txt", "evil") } == .parentMissing)
        #expect(kind { try remote.makeFolder(RemotePath("link/sub/made")) } == .parentMissing)
        #expect(kind { try remote.delete(RemotePath("link/sub"), condition: .absent) } != nil)
        #expect(kind { _ = try remote.list(RemotePath("link/sub")) } == .notFound)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: outside.path))
    }

    @Test func aFailedWriteLeavesNoTemporaryFileAndOthersInProgressAreNotListed() throws {
        struct Vanished: Error {}
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        var first = true
        let source = UploadSource(size: 4 << 20) {
            guard first else { throw Vanished() }
            first = false
            return Data(count: 1 << 20)
        }
        #expect(throws: Vanished.self) {
            try remote.write(RemotePath("big"), from: source, condition: .absent)
        }
        #expect(try folder.names(in: "remote").isEmpty)
        try folder.write(Data("half".utf8), to: "remote/.documentsync-tmp-abc")
        try FileManager.default.createSymbolicLink(
            atPath: folder.file("remote/link").path, withDestinationPath: "/etc")
        try folder.write(Data("nfd".utf8), to: "remote/e\u{301}.txt")
        try folder.write(Data("nfc".utf8), to: "remote/\u{e9}.txt")
        let names = try remote.list(.root).entries.map(\.name)
        #expect(names.map { Array($0.utf8) } == [Array("\u{e9}.txt".utf8)])
    }

    @Test func aFileChangedWhileItIsReadIsReported() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        _ = try remote.write(
            RemotePath("a.bin"), from: UploadSource(Data(count: 3 << 20)), condition: .absent)
        var appended = false
        #expect(
            kind {
                _ = try remote.read(RemotePath("a.bin")) { _ in
                    guard !appended else { return }
                    appended = true
                    let handle = try FileHandle(forWritingTo: folder.file("remote/a.bin"))
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data("more".utf8))
                    try handle.close()
                }
            } == .changedDuringRead)
    }

    @Test func aMoveKeepsTheFileIDAndReportsTheNewTag() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        _ = try write(remote, "a.txt", "a")
        let before = try #require(try remote.entry(at: RemotePath("a.txt")))
        let tag = try remote.move(
            RemotePath("a.txt"), to: RemotePath("b.txt"), condition: .matches(before.tag!))
        let after = try #require(try remote.entry(at: RemotePath("b.txt")))
        #expect(after.fileID == before.fileID)
        #expect(tag == after.tag)
    }

    @Test func aMissingRootIsUnavailable() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: folder.file("unmounted"), displayName: "backup disk")
        let error = try #require(throws: RemoteError.self) { try remote.list(.root) }
        #expect(error.kind == .unavailable)
        #expect(error.description.contains("backup disk"))
        #expect(kind { _ = try write(remote, "a.txt", "x") } == .unavailable)
        #expect(kind { _ = try remote.entry(at: RemotePath("a.txt")) } == .unavailable)
    }

    /// Two remotes on one folder (as two processes would have), each doing compare-and-swap
    /// increments of one counter: the lock makes every increment count.
    @Test func twoWritersNeverLoseAnIncrement() throws {
        let folder = try TemporaryFolder()
        let root = try folder.folder("remote")
        _ = try write(LocalFolderRemote(root: root), "counter", "0")
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let remote = LocalFolderRemote(root: root)
            var done = 0
            while done < 100 {
                do {
                    var data = Data()
                    let tag = try remote.read(RemotePath("counter")) { data.append($0) }
                    let value = Int(String(decoding: data, as: UTF8.self)) ?? -1_000_000
                    try remote.write(
                        RemotePath("counter"), from: UploadSource(Data("\(value + 1)".utf8)),
                        condition: .matches(tag))
                    done += 1
                } catch let error as RemoteError where error.kind == .preconditionFailed {
                    continue
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try String(contentsOf: root.appendingPathComponent("counter"), encoding: .utf8) == "200")
    }
}
