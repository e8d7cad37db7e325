import Foundation
import Testing

@testable import DocumentSync

/// Where a vault is kept in these tests: a local folder (`file://`), and the servers
/// scripts/test starts, Apache over WebDAV (`DOCUMENTSYNC_WEBDAV_*`) and SeaweedFS over S3
/// (`DOCUMENTSYNC_S3_*`). Without the servers a test fails saying how to start them, as the
/// other server tests do.
enum VaultServer: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case folder
    case apache
    case seaweedfs

    var testDescription: String { rawValue }

    /// A new, empty place for one test: a folder in `scratch`, a collection of Apache (its
    /// default ETags), a prefix of SeaweedFS's bucket.
    func freshRemote(_ name: String, in scratch: TemporaryFolder) throws -> any Remote {
        switch self {
        case .folder: LocalFolderRemote(root: try scratch.folder("server"))
        case .apache: try WebDAVServers.collection(on: .default, name + rawValue).remote
        case .seaweedfs: try S3Servers.remote(name + rawValue)
        }
    }

    /// A client of the same place of its own, as another device has.
    static func anotherClient(of remote: any Remote) throws -> any Remote {
        switch remote {
        case let folder as LocalFolderRemote: LocalFolderRemote(root: folder.root)
        case let webDAV as WebDAVRemote: try WebDAVRemote(webDAV.configuration)
        case let s3 as S3Remote: try S3Remote(s3.configuration)
        default: throw VaultTestFailure(description: "\(remote.displayName) is not a server of these tests")
        }
    }

    /// Every file and folder the server holds at `inner`, copied through it into `folder` as
    /// they are (ciphertext, encrypted names): where pycryptomator reads them.
    @discardableResult
    static func copy(_ inner: any Remote, to folder: URL) throws -> PlainTree {
        let tree = try EncryptedRemoteTests.walk(inner)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try PlainFolder.write(tree, to: folder)
        return tree
    }

    /// Every file and folder of the local folder `folder` put on the server through `inner` as
    /// they are: a vault another program made, uploaded raw.
    static func upload(_ folder: URL, to inner: any Remote) throws {
        let tree = try PlainFolder.read(folder)
        // A folder's path sorts before the paths of what it holds.
        for path in tree.keys.sorted() {
            if let contents = tree[path]! {
                try inner.write(RemotePath(path), from: UploadSource(contents), condition: .absent)
            } else {
                try inner.makeFolder(RemotePath(path))
            }
        }
    }
}

extension BlockingSyncTests {
    /// A vault in a local folder and on real servers, synced through the encrypted remote:
    /// pycryptomator (an implementation of the format written independently) reads byte for
    /// byte what sync put there (on Apache and SeaweedFS too), names included; what pycryptomator made and wrote syncs down
    /// byte for byte; and renames, deletes, conflicts and conditional writes work through the
    /// vault as on a plain remote, the server seeing only ciphertext move.
    @Suite(.serialized) struct EncryptedServerTests {
        static let passphrase = "server vault, Grüße ☂"

        /// The documents of the `file://` tests, and the names a server might mishandle: five
        /// folders deep, a name of ASCII letters and one of other letters each long enough to be
        /// over 220 characters encrypted (stored as `.c9s` folders), names with accents written
        /// composed.
        static let documents: [String: Data] = {
            var documents = EncryptedSyncTests.documents
            documents["1/2/3/4/5/five folders down.txt"] = Data("five deep\n".utf8)
            documents[String(repeating: "n", count: 170) + ".txt"] = Data("long ASCII name\n".utf8)
            documents[String(repeating: "\u{FC}", count: 85) + ".md"] = Data("long name of ü\n".utf8)
            documents["Cr\u{E8}me br\u{FB}l\u{E9}e/\u{C5}ngstr\u{F6}m.txt"] = Data("composed\n".utf8)
            return documents
        }()

        /// Names written decomposed (NFD), each with its composed spelling (NFC): what a server
        /// and pycryptomator show.
        static let decomposed: [(nfd: String, nfc: String)] = [
            ("Cafe\u{301} decomposed.txt", "Caf\u{E9} decomposed.txt"),
            ("Ordner A\u{308}/inside.txt", "Ordner \u{C4}/inside.txt"),
        ]

        /// `documents` with every folder above them, nil for a folder, spelled as given.
        static func tree(_ documents: [String: Data]) -> PlainTree {
            var tree: PlainTree = [:]
            for (path, data) in documents {
                tree[path] = data
                var parent = path.split(separator: "/").dropLast()
                while !parent.isEmpty {
                    tree[parent.joined(separator: "/")] = .some(nil)
                    parent = parent.dropLast()
                }
            }
            return tree
        }

        /// The paths `tree` spells and `expected` does not, and those it lacks, their letters
        /// beyond ASCII escaped: names compared byte for byte, not as Swift's `String` compares
        /// them (canonically equivalent spellings equal).
        static func differentSpellings(_ tree: PlainTree, _ expected: PlainTree) -> [String] {
            let have = Set(tree.keys.map { Array($0.utf8) })
            let want = Set(expected.keys.map { Array($0.utf8) })
            func shown(_ bytes: [UInt8]) -> String {
                String(decoding: bytes, as: UTF8.self).unicodeScalars.map { $0.escaped(asASCII: true) }
                    .joined()
            }
            return
                (have.subtracting(want).map { "extra " + shown($0) }
                + want.subtracting(have).map { "missing " + shown($0) }).sorted()
        }

        /// A new vault on `server` (scrypt's cost low: pycryptomator reads it from the file).
        static func newVault(on server: VaultServer, in scratch: TemporaryFolder, _ name: String = #function)
            throws -> EncryptedRemote
        {
            try EncryptedRemote.create(
                over: server.freshRemote(name, in: scratch), passphrase: VaultPassphrase(passphrase),
                cost: EncryptedRemoteTests.cheap)
        }

        /// What pycryptomator reads of the vault at `inner`: its files copied out through `inner`
        /// into `folder` (as they are, ciphertext), and what pycryptomator decrypts of them
        /// (the engine's own folder left out).
        static func pycryptomatorReads(_ inner: any Remote, in folder: URL) throws -> (
            copied: PlainTree, dumped: PlainTree
        ) {
            let copied = try VaultServer.copy(inner, to: folder.appendingPathComponent("copy"))
            let out = folder.appendingPathComponent("out")
            try runPycryptomator(
                ["dump", folder.appendingPathComponent("copy").path, out.path], passphrase: passphrase)
            return (copied, try PlainFolder.read(out).filter { !RemotePath($0.key).isMetadata })
        }

        /// Two devices syncing a new vault on `server`, each through its own client of the server
        /// and its own opening of the vault; the remote is `a`'s.
        static func twoDevices(on server: VaultServer, in folder: TemporaryFolder, _ name: String = #function)
            throws -> (EncryptedRemote, SyncDevice, SyncDevice)
        {
            let remote = try newVault(on: server, in: folder, name)
            return (
                remote, try SyncDevice("a", remote: remote, in: folder),
                try SyncDevice("b", remote: secondClient(of: remote), in: folder)
            )
        }

        /// The vault `remote` holds opened again through a client of the server of its own.
        static func secondClient(of remote: EncryptedRemote) throws -> EncryptedRemote {
            try EncryptedRemote.open(
                VaultServer.anotherClient(of: remote.inner), passphrase: VaultPassphrase(passphrase))
        }

        @Test(arguments: VaultServer.allCases)
        func whatASyncPassPutsOnTheServerPycryptomatorReadsByteForByte(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let remote = try Self.newVault(on: server, in: folder)
            let device = try SyncDevice("a", remote: remote, in: folder)
            try device.write(Self.documents)
            // A decomposed name in the container is left alone and said so, as on any remote;
            // through the remote, a decomposed name is the composed one.
            try device.write(Self.decomposed[0].nfd, "left here\n")
            let summary = try device.sync()
            #expect(summary.failures.isEmpty, "\(summary.failures)")
            #expect(summary.uploaded == Self.documents.count, "\(summary)")
            #expect(
                summary.notes.contains { $0.contains("not in Unicode's composed form") }, "\(summary.notes)")
            let direct = Self.decomposed[1]
            try remote.makeFolder(RemotePath(direct.nfd).parent)
            try remote.write(
                RemotePath(direct.nfd), from: UploadSource(Data("decomposed\n".utf8)), condition: .absent)

            let (copied, dumped) = try Self.pycryptomatorReads(remote.inner, in: folder.file("read"))
            if let webDAV = remote.inner as? WebDAVRemote {
                // What the remote read is what Apache keeps on its disk.
                let collection = webDAV.configuration.url.lastPathComponent
                #expect(
                    try PlainFolder.read(
                        WebDAVServers.dataFolder(.default).appendingPathComponent(collection))
                        == copied)
            }
            var documents = Self.documents
            documents[direct.nfc] = Data("decomposed\n".utf8)
            let expected = Self.tree(documents)
            #expect(Self.differentSpellings(dumped, expected) == [])
            for (path, data) in expected {
                #expect(dumped[path] == .some(data), "\(path)")
            }
            // No plain name reaches the server.
            let stored = copied.keys.joined(separator: "\n")
            for plain in ["notes.txt", "deep.txt", "documentsync", "Ordner", "nnnnnnnnnn", "decomposed"] {
                #expect(!stored.contains(plain), "\(plain)")
            }
        }

        @Test(arguments: VaultServer.allCases)
        func aVaultPycryptomatorMadeAndWroteSyncsDownByteForByte(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            var documents = Self.documents
            for (nfd, _) in Self.decomposed { documents[nfd] = Data("written as \(nfd)\n".utf8) }
            try PlainFolder.write(Self.tree(documents), to: folder.file("source"))
            try runPycryptomator(
                ["make", folder.file("vault").path, folder.file("source").path], passphrase: Self.passphrase)
            let inner = try server.freshRemote(#function, in: folder)
            try VaultServer.upload(folder.file("vault"), to: inner)
            let remote = try EncryptedRemote.open(inner, passphrase: VaultPassphrase(Self.passphrase))
            let device = try SyncDevice("b", remote: remote, in: folder)
            let summary = try device.sync()
            #expect(summary.failures.isEmpty, "\(summary.failures)")
            // Composed names come down as written; decomposed ones (pycryptomator encrypts a name
            // as given) under their composed spelling, the one name a path has here.
            var composed = Self.documents
            for (nfd, nfc) in Self.decomposed { composed[nfc] = Data("written as \(nfd)\n".utf8) }
            let expected = Self.tree(composed)
            let synced = try PlainFolder.read(device.container)
            #expect(Self.differentSpellings(synced, expected) == [])
            for (path, data) in expected {
                #expect(synced[path] == .some(data), "\(path)")
            }
            // Edits go back to the entries pycryptomator made, spelled as it spelled them.
            for (_, nfc) in Self.decomposed { try device.write(nfc, "edited here\n") }
            let edits = try device.sync()
            #expect(edits.failures.isEmpty && edits.uploaded == 2, "\(edits)")
            var edited = documents
            for (nfd, _) in Self.decomposed { edited[nfd] = Data("edited here\n".utf8) }
            let dumped = try Self.pycryptomatorReads(inner, in: folder.file("edited")).dumped
            #expect(Self.differentSpellings(dumped, Self.tree(edited)) == [])
            for (path, data) in edited {
                #expect(dumped[path] == .some(data), "\(path)")
            }
            // A decomposed name renamed, a decomposed folder deleted: the entries pycryptomator
            // made move and go, nothing of them left behind.
            let renamed = "Caf\u{E9} renamed.txt"
            try FileManager.default.moveItem(at: device.url(Self.decomposed[0].nfc), to: device.url(renamed))
            try FileManager.default.removeItem(
                at: device.url(RemotePath(Self.decomposed[1].nfc).parent.string))
            let changes = try device.sync()
            #expect(
                changes.failures.isEmpty && changes.moved == 1 && changes.deletedRemotely == 1, "\(changes)")
            var changed = Self.documents
            changed[renamed] = Data("edited here\n".utf8)
            let after = try Self.pycryptomatorReads(inner, in: folder.file("changed")).dumped
            #expect(Self.differentSpellings(after, Self.tree(changed)) == [])
            for (path, data) in changed {
                #expect(after[path] == .some(data), "\(path)")
            }
        }

        /// pycryptomator writes into a vault sync made and filled (an edit, new documents, new
        /// folders five deep, a long name), what it changed put on the server raw: both devices
        /// sync it down byte for byte.
        @Test(arguments: VaultServer.allCases)
        func whatPycryptomatorWritesIntoASyncedVaultSyncsDown(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let (remote, a, b) = try Self.twoDevices(on: server, in: folder)
            var texts = ["notes.txt": "from sync\n", "Ünïcödé/中文.md": "sync's\n", "a/b/old.txt": "old\n"]
            for (path, text) in texts { try a.write(path, text) }
            _ = try a.sync()
            _ = try b.sync()
            let vault = folder.file("vault")
            let before = try VaultServer.copy(remote.inner, to: vault)
            let written = [
                "notes.txt": "edited by pycryptomator\n", "Ünïcödé/from python.txt": "python's\n",
                "a/b/c/d/e/new.txt": "five deep\n", String(repeating: "p", count: 170) + ".txt": "long\n",
            ]
            try PlainFolder.write(Self.tree(written.mapValues { Data($0.utf8) }), to: folder.file("source"))
            try runPycryptomator(
                ["put", vault.path, folder.file("source").path], passphrase: Self.passphrase)
            let after = try PlainFolder.read(vault)
            // Parents first; a file pycryptomator replaced on the tag it had.
            for path in after.keys.sorted() where after[path] != before[path] {
                let at = RemotePath(path)
                guard let data = after[path]! else {
                    try remote.inner.makeFolder(at)
                    continue
                }
                let tag = try remote.inner.entry(at: at)?.tag
                try remote.inner.write(
                    at, from: UploadSource(data), condition: tag.map { .matches($0) } ?? .absent)
            }
            texts.merge(written) { $1 }
            for device in [a, b] {
                let summary = try device.sync()
                #expect(summary.failures.isEmpty, "\(device.name): \(summary.failures)")
                #expect(try device.tree() == texts, "\(device.name)")
            }
        }

        /// A file of many chunks (on S3 past the streaming threshold, 6 MiB here: its ciphertext
        /// has no hash before it is sent, so it goes up in signed chunks): streamed up through
        /// the vault, read back whole by another client, and read by pycryptomator.
        @Test(arguments: VaultServer.allCases)
        func aLargeFileGoesUpStreamedAndComesBackWhole(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let inner =
                server == .seaweedfs
                ? try S3Servers.remote(#function) {
                    $0.multipartThreshold = 6 << 20
                } : try server.freshRemote(#function, in: folder)
            let remote = try EncryptedRemote.create(
                over: inner, passphrase: VaultPassphrase(Self.passphrase), cost: EncryptedRemoteTests.cheap)
            let bytes = try SecureRandom.bytes(11 << 20 + 12_345)
            let path = RemotePath("large.bin")
            let tag = try remote.write(path, from: UploadSource(bytes), condition: .absent)
            #expect(try remote.entry(at: path)?.size == Int64(bytes.count))
            var read = Data()
            let readTag = try Self.secondClient(of: remote).read(path, expectedSize: Int64(bytes.count)) {
                read.append($0)
            }
            #expect(read == bytes)
            if let tag { #expect(readTag == tag) }
            #expect(
                try Self.pycryptomatorReads(inner, in: folder.file("read")).dumped["large.bin"]
                    == .some(bytes))
        }

        /// A file renamed on one device: on the server its encrypted name alone changes (the
        /// same ciphertext under the new name), whether the new name is short or long, in the
        /// same folder or another; the other device gets the new name.
        @Test(arguments: VaultServer.allCases)
        func aRenameChangesOnlyTheEncryptedName(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let (remote, a, b) = try Self.twoDevices(on: server, in: folder)
            let contents = EncryptedRemoteTests.bytes(70_000)
            try FileManager.default.createDirectory(at: a.url("folder"), withIntermediateDirectories: true)
            try contents.write(to: a.url("plan.txt"))
            try a.write("folder/other.txt", "other\n")
            _ = try a.sync()
            _ = try b.sync()
            let folderID = try Self.directoryID(RemotePath("folder"), remote)
            let longName = String(repeating: "r", count: 170) + ".txt"
            let steps: [(from: String, to: String)] = [
                ("plan.txt", "renamed.txt"), ("renamed.txt", longName), (longName, "folder/moved.txt"),
            ]
            for step in steps {
                let source = RemotePath(step.from)
                let destination = RemotePath(step.to)
                let sourceID = source.parent.isRoot ? "" : folderID
                let targetID = destination.parent.isRoot ? "" : folderID
                let before = try remote.vault.filePaths(named: source.name, parentDirectoryID: sourceID)
                    .contents
                let ciphertext = try EncryptedRemoteTests.read(remote.inner, before)
                try FileManager.default.moveItem(at: a.url(step.from), to: a.url(step.to))
                let summary = try a.sync()
                #expect(summary.moved == 1 && summary.uploaded == 0, "\(step): \(summary)")
                let after = try remote.vault.filePaths(named: destination.name, parentDirectoryID: targetID)
                #expect(try EncryptedRemoteTests.read(remote.inner, after.contents) == ciphertext, "\(step)")
                #expect(try remote.inner.entry(at: RemotePath(before)) == nil, "\(step)")
                #expect(after.longName != nil || step.to != longName)
                _ = try b.sync()
                #expect((try? Data(contentsOf: b.url(step.to))) == contents, "\(step)")
                #expect(!b.exists(step.from), "\(step)")
            }
        }

        /// A folder moved through the vault: its `dir.c9r` entry alone moves, to a short name, a
        /// long one and into another folder; its directory and all it holds stay byte for byte.
        @Test(arguments: VaultServer.allCases)
        func aFolderRenameMovesOnlyItsDirectoryEntry(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let remote = try Self.newVault(on: server, in: folder)
            for path in ["folder", "folder/inner", "other"] { try remote.makeFolder(RemotePath(path)) }
            for (path, size) in [("folder/a.txt", 10), ("folder/inner/b.bin", 40_000)] {
                try remote.write(
                    RemotePath(path), from: UploadSource(EncryptedRemoteTests.bytes(size)), condition: .absent
                )
            }
            let longName = String(repeating: "Verzeichnis-", count: 20)
            let steps = [("folder", "renamed"), ("renamed", longName), (longName, "other/moved")]
            for (from, to) in steps {
                let source = RemotePath(from)
                let destination = RemotePath(to)
                let before = try EncryptedRemoteTests.walk(remote.inner)
                let oldEntry = try Self.storedEntry(source, remote)
                try remote.move(source, to: destination, condition: nil)
                let after = try EncryptedRemoteTests.walk(remote.inner)
                let newEntry = try Self.storedEntry(destination, remote)
                let removed = Set(before.keys).subtracting(after.keys)
                let added = Set(after.keys).subtracting(before.keys)
                let marker = VaultNameCipher.directoryIDFileName
                /// A folder's entry on the server: itself, its `dir.c9r`, a long name's `name.c9s`.
                func held(_ entry: String, long: Bool) -> Set<String> {
                    Set(
                        [entry, entry + "/" + marker]
                            + (long ? [entry + "/" + VaultNameCipher.longNameFileName] : []))
                }
                #expect(removed == held(oldEntry, long: from == longName), "\(from) → \(to)")
                #expect(added == held(newEntry, long: to == longName), "\(from) → \(to)")
                #expect(after[newEntry + "/" + marker] == before[oldEntry + "/" + marker])
                for key in Set(before.keys).intersection(after.keys) {
                    #expect(after[key] == before[key], "\(key) changed in \(from) → \(to)")
                }
            }
            let reopened = try Self.secondClient(of: remote)
            #expect(
                try EncryptedRemoteTests.read(reopened, "other/moved/inner/b.bin")
                    == EncryptedRemoteTests.bytes(40_000))
            #expect(
                try EncryptedRemoteTests.walk(reopened).keys.sorted() == [
                    "other", "other/moved", "other/moved/a.txt", "other/moved/inner",
                    "other/moved/inner/b.bin",
                ])
        }

        /// Documents and a folder deleted on one device: gone from the server, ciphertext,
        /// entries and the folder's directory, and from the other device.
        @Test(arguments: VaultServer.allCases)
        func aDeleteRemovesTheCiphertextAndTheOtherDevicesCopy(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let (remote, a, b) = try Self.twoDevices(on: server, in: folder)
            let longName = String(repeating: "d", count: 170) + ".txt"
            for path in ["kept.txt", "gone.txt", longName, "old/inside.txt"] { try a.write(path, path) }
            _ = try a.sync()
            _ = try b.sync()
            #expect(b.read(longName) == longName)
            let gone = try remote.vault.filePaths(named: "gone.txt", parentDirectoryID: "").contents
            let long = try remote.vault.filePaths(named: longName, parentDirectoryID: "").contents
            let oldID = try Self.directoryID(RemotePath("old"), remote)
            let oldEntry = try Self.storedEntry(RemotePath("old"), remote)
            let oldDirectory = try remote.vault.names.directoryPath(of: oldID)
            for path in ["gone.txt", longName, "old"] { try FileManager.default.removeItem(at: a.url(path)) }
            let summary = try a.sync()
            #expect(summary.failures.isEmpty && summary.deletedRemotely == 3, "\(summary)")
            let stored = try EncryptedRemoteTests.walk(remote.inner).keys
            for path in [gone, RemotePath(long).parent.string, oldEntry, oldDirectory] {
                #expect(!stored.contains { $0 == path || $0.hasPrefix(path + "/") }, "\(path)")
            }
            _ = try b.sync()
            #expect(try b.tree() == ["kept.txt": "kept.txt"])
        }

        /// Two devices, each with its own client of the server, change a document from the same
        /// text: the second's pass keeps the first's text at the path and its own as a conflict
        /// version, on both devices.
        @Test(arguments: VaultServer.allCases)
        func aConflictBetweenTwoDevicesKeepsBothTexts(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let (remote, a, b) = try Self.twoDevices(on: server, in: folder)
            let path = "Ünïcödé/story.txt"
            let conflicts = try SyncDevice.conflict(
                a, b, at: path, base: "It was a dark night.\n", a: "It was a stormy night.\n",
                b: "It was a quiet night.\n")
            #expect(conflicts == 1)
            _ = try a.sync()
            for device in [a, b] {
                #expect(device.read(path) == "It was a quiet night.\n", "\(device.name)")
                #expect(device.conflicts(path) == ["It was a stormy night.\n"], "\(device.name)")
            }
            // The shared conflict is in the vault, encrypted like a document.
            let stored = try EncryptedRemoteTests.walk(remote.inner).values.compactMap { $0 }
            #expect(!stored.contains { $0.range(of: Data("stormy".utf8)) != nil })
        }

        /// A write, a delete or a move on a tag another client's write made stale is refused,
        /// for a short name and a long one; what the other client wrote stays.
        @Test(arguments: VaultServer.allCases)
        func aStaleTagIsRefusedAcrossClients(_ server: VaultServer) throws {
            let folder = try TemporaryFolder()
            let first = try Self.newVault(on: server, in: folder)
            let second = try Self.secondClient(of: first)
            for name in ["plain.txt", String(repeating: "t", count: 170) + ".txt"] {
                let path = RemotePath(name)
                try first.write(path, from: UploadSource(Data("one".utf8)), condition: .absent)
                let seen = try #require(try second.entry(at: path)?.tag)
                try first.write(path, from: UploadSource(Data("two".utf8)), condition: .matches(seen))
                let current = try #require(try first.entry(at: path)?.tag)
                #expect(current != seen)
                for condition in [WriteCondition.matches(seen), .absent] {
                    let error = #expect(throws: RemoteError.self) {
                        try second.write(path, from: UploadSource(Data("three".utf8)), condition: condition)
                    }
                    #expect(error?.kind == .preconditionFailed, "\(name)")
                    #expect(error?.path == path)
                }
                let deleted = #expect(throws: RemoteError.self) {
                    try second.delete(path, condition: .matches(seen))
                }
                #expect(deleted?.kind == .preconditionFailed, "\(name)")
                let moved = #expect(throws: RemoteError.self) {
                    try second.move(path, to: RemotePath("moved.txt"), condition: .matches(seen))
                }
                #expect(moved?.kind == .preconditionFailed, "\(name)")
                #expect(try EncryptedRemoteTests.read(second, name) == Data("two".utf8))
                #expect(try second.entry(at: path)?.tag == current)
                #expect(try second.entry(at: RemotePath("moved.txt")) == nil)
                try second.delete(path, condition: .matches(current))
                #expect(try first.entry(at: path) == nil)
            }
        }

        /// The directory ID of the folder `folder`, read from its `dir.c9r` on the server.
        static func directoryID(_ folder: RemotePath, _ remote: EncryptedRemote) throws -> String {
            String(
                decoding: try EncryptedRemoteTests.read(
                    remote.inner, storedEntry(folder, remote) + "/" + VaultNameCipher.directoryIDFileName),
                as: UTF8.self)
        }

        /// The server's path of the entry (`.c9r` or `.c9s`) of `path`.
        static func storedEntry(_ path: RemotePath, _ remote: EncryptedRemote) throws -> String {
            let parentID =
                path.parent.isRoot ? VaultNameCipher.rootDirectoryID : try directoryID(path.parent, remote)
            return try remote.vault.names.directoryPath(of: parentID) + "/"
                + remote.vault.names.entryName(for: path.name, parentDirectoryID: parentID).storedName
        }
    }
}

extension SyncDevice {
    /// Writes each of `documents` (path to bytes) in the container, with the folders above it.
    func write(_ documents: [String: Data]) throws {
        for (path, data) in documents {
            try FileManager.default.createDirectory(
                at: url(path).deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url(path))
        }
    }
}
