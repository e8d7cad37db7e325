import Foundation
import Testing

@testable import DocumentSync

/// The behaviour every ``Remote`` promises, run against each implementation.
@Suite struct RemoteConformanceTests {
    enum Implementation: String, CaseIterable, CustomTestStringConvertible {
        case localFolder
        case simulated
        /// Apache's mod_dav_fs over HTTP, with each way of making ETags.
        case apacheDefault
        case apacheInode
        case apacheDigest
        /// Apache over HTTPS.
        case apacheTLS
        /// wsgidav, read back after every write as `--unsafe-server` makes it.
        case wsgidav
        /// wsgidav with ETags of the nanosecond time, the same way.
        case wsgidavNS
        /// SabreDAV with Nextcloud's fake locks.
        case sabre
        /// SabreDAV with its own Locks plugin.
        case sabreLocks
        /// S3 on a SeaweedFS cluster.
        case seaweedFS

        var testDescription: String { rawValue }

        /// Whether the remote's tags are a digest of the bytes (Apache's `FileETag Digest`):
        /// then equal bytes have equal tags, whenever written.
        var tagsAreDigests: Bool {
            [.apacheDigest, .seaweedFS, .sabre, .sabreLocks].contains(self)
        }

        /// Whether the remote's tags are made of whole-second times and the size (wsgidav's):
        /// two writes of one size within a second keep one tag, which is why the probe refuses
        /// such a server unless told `--unsafe-server`.
        var tagsChangeOnlyEachSecond: Bool { self == .wsgidav }
    }

    /// A remote of the kind, with the folder that backs it (kept alive by the value).
    struct Fixture {
        let remote: any Remote
        let folder: TemporaryFolder?
        let implementation: Implementation

        /// On a remote whose tags change only each second, waits for the next second, so that
        /// a write after has a new tag: what a test of conditions needs there.
        func waitForANewTag() {
            guard implementation.tagsChangeOnlyEachSecond else { return }
            let now = Date().timeIntervalSince1970
            Thread.sleep(forTimeInterval: now.rounded(.up) - now + 0.05)
        }

        init(_ implementation: Implementation, _ name: String = #function) throws {
            self.implementation = implementation
            switch implementation {
            case .localFolder:
                let folder = try TemporaryFolder(name)
                self.folder = folder
                remote = LocalFolderRemote(root: try folder.folder("remote"))
            case .simulated:
                folder = nil
                remote = SimulatedRemote(generator: SeededGenerator(seed: 1))
            case .apacheDefault, .apacheInode, .apacheDigest, .apacheTLS, .wsgidav, .wsgidavNS, .sabre,
                .sabreLocks:
                folder = nil
                let server: WebDAVServers.Server =
                    switch implementation {
                    case .apacheInode: .inode
                    case .apacheDigest: .digest
                    case .apacheTLS: .tls
                    case .wsgidav: .wsgidav
                    case .wsgidavNS: .wsgidavNS
                    case .sabre: .sabre
                    case .sabreLocks: .sabreLocks
                    default: .default
                    }
                remote = try WebDAVServers.collection(on: server, name).remote
            case .seaweedFS:
                folder = nil
                remote = try S3Servers.remote(name)
            }
        }

        @discardableResult
        func write(_ path: String, _ text: String, _ condition: WriteCondition = .absent) throws -> RemoteTag
        {
            let tag = try remote.write(
                RemotePath(path), from: UploadSource(Data(text.utf8)), condition: condition)
            return try tag ?? #require(try remote.entry(at: RemotePath(path))?.tag)
        }

        func contents(_ path: String) throws -> String {
            var data = Data()
            _ = try remote.read(RemotePath(path)) { data.append($0) }
            return String(decoding: data, as: UTF8.self)
        }
    }

    private func kind(of body: () throws -> Void) -> RemoteError.Kind? {
        do {
            try body()
            return nil
        } catch let error as RemoteError {
            return error.kind
        } catch {
            Issue.record("not a RemoteError: \(error)")
            return nil
        }
    }

    @Test(arguments: Implementation.allCases)
    func aSecondWriteIfAbsentFailsItsPrecondition(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.write("a.txt", "first")
        #expect(kind { try fixture.write("a.txt", "second") } == .preconditionFailed)
        #expect(try fixture.contents("a.txt") == "first")
    }

    @Test(arguments: Implementation.allCases)
    func aWriteOverAStaleTagFailsAndLeavesTheBytes(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        let old = try fixture.write("a.txt", "one")
        fixture.waitForANewTag()
        let current = try fixture.write("a.txt", "two", .matches(old))
        #expect(current != old)
        #expect(kind { try fixture.write("a.txt", "three", .matches(old)) } == .preconditionFailed)
        #expect(try fixture.contents("a.txt") == "two")
        #expect(kind { try fixture.write("missing.txt", "x", .matches(old)) } == .preconditionFailed)
        #expect(try fixture.remote.entry(at: RemotePath("missing.txt")) == nil)
    }

    @Test(arguments: Implementation.allCases)
    func theTagOfAWriteIsTheTagListedAndRead(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.remote.makeFolder(RemotePath("f"))
        let tag = try fixture.write("f/a.txt", "hello")
        let listed = try fixture.remote.list(RemotePath("f"))
        #expect(listed.entries == [try #require(try fixture.remote.entry(at: RemotePath("f/a.txt")))])
        #expect(listed.entries.first?.tag == tag)
        #expect(listed.entries.first?.size == 5)
        #expect(listed.entries.first?.kind == .file)
        #expect(try fixture.remote.read(RemotePath("f/a.txt")) { _ in } == tag)
    }

    @Test(arguments: Implementation.allCases)
    func theTagChangesOnEveryWriteEvenAtEqualSizeWithinOneSecond(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        var tags = [try fixture.write("a.txt", "aaaa")]
        if implementation.tagsChangeOnlyEachSecond {
            // Not within the second: the probe refuses the server for it.
            fixture.waitForANewTag()
            #expect(try fixture.write("a.txt", "bbbb", .matches(tags[0])) != tags[0])
            return
        }
        for text in ["bbbb", "cccc", "aaaa", "bbbb"] {
            tags.append(try fixture.write("a.txt", text, .matches(tags.last!)))
        }
        if implementation.tagsAreDigests {
            // A tag made of the bytes is as good: equal only for equal bytes.
            #expect(Set(tags).count == 3)
            #expect(tags[0] == tags[3] && tags[1] == tags[4])
            #expect(zip(tags, tags.dropFirst()).allSatisfy { $0 != $1 })
            return
        }
        #expect(Set(tags).count == tags.count)
        // Deleted and written again: still a tag never seen.
        try fixture.remote.delete(RemotePath("a.txt"), condition: .matches(tags.last!))
        tags.append(try fixture.write("a.txt", "aaaa"))
        #expect(Set(tags).count == tags.count)
    }

    @Test(arguments: Implementation.allCases)
    func aDeleteWithAStaleTagFailsAndTheFileStays(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        let old = try fixture.write("a.txt", "one")
        fixture.waitForANewTag()
        let current = try fixture.write("a.txt", "two", .matches(old))
        #expect(
            kind { try fixture.remote.delete(RemotePath("a.txt"), condition: .matches(old)) }
                == .preconditionFailed)
        #expect(
            kind { try fixture.remote.delete(RemotePath("a.txt"), condition: .absent) } == .preconditionFailed
        )
        #expect(try fixture.contents("a.txt") == "two")
        try fixture.remote.delete(RemotePath("a.txt"), condition: .matches(current))
        #expect(try fixture.remote.entry(at: RemotePath("a.txt")) == nil)
        #expect(
            kind { try fixture.remote.delete(RemotePath("a.txt"), condition: .matches(current)) } == .notFound
        )
    }

    /// What an edit that beat a delete does: the file deleted, then written anew at once at
    /// the same path (and a folder made again): nothing of the delete (a lock it took) is in
    /// the way.
    @Test(arguments: Implementation.allCases)
    func anItemDeletedIsWrittenAgainAtOnceAtItsPath(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        let tag = try fixture.write("a.txt", "first")
        try fixture.remote.delete(RemotePath("a.txt"), condition: .matches(tag))
        try fixture.write("a.txt", "again")
        #expect(try fixture.contents("a.txt") == "again")
        try fixture.remote.makeFolder(RemotePath("f"))
        let folder = try #require(try fixture.remote.entry(at: RemotePath("f"))?.tag)
        try fixture.remote.delete(RemotePath("f"), condition: .matches(folder))
        try fixture.remote.makeFolder(RemotePath("f"))
        try fixture.write("f/b.txt", "inside")
        #expect(try fixture.contents("f/b.txt") == "inside")
    }

    @Test(arguments: Implementation.allCases)
    func aFolderIsDeletedOnlyWhenEmpty(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.remote.makeFolder(RemotePath("f"))
        try fixture.write("f/a.txt", "x")
        let full = try #require(try fixture.remote.list(RemotePath("f")).folderTag)
        #expect(kind { try fixture.remote.delete(RemotePath("f"), condition: .matches(full)) } == .notEmpty)
        try fixture.remote.delete(
            RemotePath("f/a.txt"),
            condition: .matches(try #require(try fixture.remote.entry(at: RemotePath("f/a.txt"))?.tag)))
        let empty = try #require(try fixture.remote.entry(at: RemotePath("f"))?.tag)
        try fixture.remote.delete(RemotePath("f"), condition: .matches(empty))
        #expect(try fixture.remote.entry(at: RemotePath("f")) == nil)
    }

    @Test(arguments: Implementation.allCases)
    func aMoveOntoAnExistingItemFailsAndBothStay(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.write("a.txt", "a")
        try fixture.write("b.txt", "b")
        #expect(
            kind { try fixture.remote.move(RemotePath("a.txt"), to: RemotePath("b.txt"), condition: nil) }
                == .exists)
        #expect(try fixture.contents("a.txt") == "a")
        #expect(try fixture.contents("b.txt") == "b")
    }

    @Test(arguments: Implementation.allCases)
    func aMoveTakesAFolderWithItsContentsAndHonoursItsCondition(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.remote.makeFolder(RemotePath("f"))
        try fixture.remote.makeFolder(RemotePath("g"))
        let tag = try fixture.write("f/a.txt", "a")
        #expect(
            kind {
                try fixture.remote.move(
                    RemotePath("f/a.txt"), to: RemotePath("g/a.txt"), condition: .matches(RemoteTag("stale")))
            } == .preconditionFailed)
        let moved = try fixture.remote.move(
            RemotePath("f/a.txt"), to: RemotePath("g/b.txt"), condition: .matches(tag))
        let movedEntry = try fixture.remote.entry(at: RemotePath("g/b.txt"))
        #expect(moved == nil || moved == movedEntry?.tag)
        try fixture.remote.move(RemotePath("g"), to: RemotePath("f/g"), condition: nil)
        #expect(try fixture.contents("f/g/b.txt") == "a")
        #expect(try fixture.remote.list(.root).entries.map(\.name).filter { $0 != ".documentsync" } == ["f"])
        #expect(
            kind { try fixture.remote.move(RemotePath("f"), to: RemotePath("f/g/f"), condition: nil) }
                == .invalidMove)
        #expect(
            kind { try fixture.remote.move(RemotePath("nothing"), to: RemotePath("x"), condition: nil) }
                == .notFound)
        #expect(
            kind { try fixture.remote.move(RemotePath("f"), to: RemotePath("no/f"), condition: nil) }
                == .parentMissing)
    }

    @Test(arguments: Implementation.allCases)
    func makingAFolderTwiceFailsWithExists(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.remote.makeFolder(RemotePath("f"))
        #expect(kind { try fixture.remote.makeFolder(RemotePath("f")) } == .exists)
        try fixture.write("file", "x")
        #expect(kind { try fixture.remote.makeFolder(RemotePath("file")) } == .exists)
        #expect(kind { try fixture.remote.makeFolder(RemotePath("no/f")) } == .parentMissing)
    }

    @Test(arguments: Implementation.allCases)
    func writingIntoAMissingFolderFailsWithParentMissing(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        #expect(kind { try fixture.write("no/a.txt", "x") } == .parentMissing)
        try fixture.write("file", "x")
        #expect(kind { try fixture.write("file/a.txt", "x") } == .parentMissing)
        #expect(try fixture.remote.entry(at: RemotePath("no")) == nil)
    }

    @Test(arguments: Implementation.allCases)
    func listingAMissingFolderOrAFileFails(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.write("file", "x")
        #expect(kind { _ = try fixture.remote.list(RemotePath("missing")) } == .notFound)
        #expect(kind { _ = try fixture.remote.list(RemotePath("file")) } == .notAFolder)
        #expect(kind { _ = try fixture.remote.read(RemotePath("missing")) { _ in } } == .notFound)
        try fixture.remote.makeFolder(RemotePath("f"))
        #expect(kind { _ = try fixture.remote.read(RemotePath("f")) { _ in } } == .notAFile)
        #expect(
            kind {
                try fixture.write(
                    "f", "x", .matches(try #require(try fixture.remote.entry(at: RemotePath("f"))?.tag)))
            } == .notAFile)
    }

    @Test(arguments: Implementation.allCases)
    func aListingIsSortedAndShowsTheMetadataFolder(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        for name in ["b", "a", "C", "\u{e9}"] { try fixture.write(name, name) }
        try fixture.remote.makeFolder(RemotePath("d"))
        try? fixture.remote.makeFolder(.metadataFolder)
        let listing = try fixture.remote.list(.root)
        #expect(listing.folder == .root)
        #expect(listing.entries.map(\.name) == [".documentsync", "C", "a", "b", "d", "\u{e9}"])
        #expect(listing.entries.first { $0.name == "d" }?.kind == .folder)
    }

    @Test(arguments: Implementation.allCases)
    func aReadStreamsAFileOfManyChunks(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        var generator = SeededGenerator(seed: 9)
        let bytes = Data(
            (0..<(RemoteChunk.size * 2 + 12345)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let tag = try fixture.remote.write(
            RemotePath("big.bin"), from: UploadSource(bytes, chunkSize: 100_000), condition: .absent)
        var chunks: [Data] = []
        let readTag = try fixture.remote.read(RemotePath("big.bin")) { chunks.append($0) }
        #expect(chunks.count >= 3)
        #expect(chunks.allSatisfy { $0.count <= RemoteChunk.size })
        #expect(chunks.reduce(Data(), +) == bytes)
        #expect(tag == nil || tag == readTag)
    }

    @Test(arguments: Implementation.allCases)
    func aSourceThatFailsOrLiesAboutItsSizeAppliesNothing(_ implementation: Implementation) throws {
        struct Vanished: Error {}
        let fixture = try Fixture(implementation)
        var calls = 0
        let failing = UploadSource(size: 10) {
            calls += 1
            if calls > 1 { throw Vanished() }
            return Data("12345".utf8)
        }
        #expect(throws: Vanished.self) {
            try fixture.remote.write(RemotePath("a.txt"), from: failing, condition: .absent)
        }
        #expect(try fixture.remote.entry(at: RemotePath("a.txt")) == nil)
        let short = UploadSource(size: 10) { nil }
        #expect(
            kind { try fixture.remote.write(RemotePath("a.txt"), from: short, condition: .absent) }
                == .sourceChanged)
        let long = UploadSource(Data("0123456789ABC".utf8))
        let lying = UploadSource(size: 10, nextChunk: long.nextChunk)
        #expect(
            kind { try fixture.remote.write(RemotePath("a.txt"), from: lying, condition: .absent) }
                == .sourceChanged)
        #expect(try fixture.remote.entry(at: RemotePath("a.txt")) == nil)
        #expect(try fixture.remote.list(.root).entries.filter { !RemotePath($0.name).isMetadata }.isEmpty)
    }

    @Test(arguments: Implementation.allCases)
    func namesNoRemoteCanHoldAreRefused(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        for path in [
            RemotePath(components: [".."]), RemotePath(components: ["a\u{0}b"]),
            RemotePath(components: ["a/b"]), RemotePath(components: [""]),
        ] {
            #expect(
                kind { try fixture.remote.write(path, from: UploadSource(Data()), condition: .absent) }
                    == .invalidName)
            #expect(kind { try fixture.remote.makeFolder(path) } == .invalidName)
        }
        #expect(kind { try fixture.remote.delete(.root, condition: .absent) } == .invalidName)
        #expect(
            kind { try fixture.remote.write(.root, from: UploadSource(Data()), condition: .absent) }
                == .invalidName)
    }

    @Test(arguments: Implementation.allCases)
    func anEmptyFileIsAFile(_ implementation: Implementation) throws {
        let fixture = try Fixture(implementation)
        try fixture.write("empty", "")
        #expect(try fixture.remote.entry(at: RemotePath("empty"))?.size == 0)
        #expect(try fixture.contents("empty") == "")
    }
}
