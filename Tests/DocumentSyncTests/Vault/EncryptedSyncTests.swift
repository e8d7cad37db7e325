import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// Sync passes over an encrypted `file://` vault: what the engine puts in reads back in
    /// pycryptomator byte for byte, what pycryptomator puts in syncs down byte for byte, and a
    /// vault altered behind the engine's back fails clearly, item by item.
    @Suite struct EncryptedSyncTests {
        static let passphrase = "sync, encrypted ☂"

        /// Documents of every shape a sync writes: Unicode and long names, deep folders, sizes
        /// around the chunk boundaries.
        static let documents: [String: Data] = {
            var documents: [String: Data] = [
                "notes.txt": Data("hello\n".utf8),
                "Ünïcödé/中文.md": Data("ünïcödé\n".utf8),
                "a/b/c/d/deep.txt": Data("deep\n".utf8),
                String(repeating: "ł", count: 120) + ".txt": Data("long name\n".utf8),
                String(repeating: "Ordner ", count: 33) + "/inside.txt": Data("long folder\n".utf8),
                "empty.txt": Data(),
            ]
            for size in [32 * 1024, 32 * 1024 + 1, 100_000] {
                documents["sizes/\(size).bin"] = EncryptedRemoteTests.bytes(size, UInt8(size % 251))
            }
            return documents
        }()

        static func encryptedRemote(at url: URL, create: Bool) throws -> EncryptedRemote {
            let inner = LocalFolderRemote(root: url)
            return create
                ? try EncryptedRemote.create(
                    over: inner, passphrase: VaultPassphrase(passphrase), cost: EncryptedRemoteTests.cheap)
                : try EncryptedRemote.open(inner, passphrase: VaultPassphrase(passphrase))
        }

        @Test func whatASyncPassPutsInAVaultPycryptomatorReadsByteForByte() throws {
            let folder = try TemporaryFolder()
            let vault = try folder.folder("vault")
            let remote = try Self.encryptedRemote(at: vault, create: true)
            let device = try SyncDevice("a", remote: remote, in: folder)
            try device.write(Self.documents)
            let summary = try device.sync()
            #expect(summary.failures.isEmpty, "\(summary.failures)")
            try runPycryptomator(["dump", vault.path, folder.file("out").path], passphrase: Self.passphrase)
            let dumped = try PlainFolder.read(folder.file("out"))
            for (path, data) in Self.documents {
                #expect(dumped[path] == .some(data), "\(path)")
            }
            // Everything else pycryptomator sees is the engine's own folder.
            let others = dumped.keys.filter { key in
                Self.documents[key] == nil && !Self.documents.keys.contains { $0.hasPrefix(key + "/") }
            }
            #expect(
                others.allSatisfy { $0.hasPrefix(RemotePath.metadataFolder.string) }, "\(others.sorted())")
            // No plain name reaches the folder (the local folder remote's own lock file in
            // `.documentsync/` at its root aside).
            let stored = try PlainFolder.read(vault).keys.filter { !RemotePath($0).isMetadata }
                .joined(separator: "\n")
            #expect(!stored.contains("notes") && !stored.contains("documentsync") && !stored.contains("deep"))
        }

        @Test func aVaultPycryptomatorWroteSyncsDownByteForByte() throws {
            let folder = try TemporaryFolder()
            var tree: PlainTree = [:]
            for (path, data) in Self.documents {
                tree[path] = data
                var parent = RemotePath(path).parent
                while !parent.isRoot {
                    tree[parent.string] = .some(nil)
                    parent = parent.parent
                }
            }
            try PlainFolder.write(tree, to: folder.file("source"))
            try runPycryptomator(
                ["make", folder.file("vault").path, folder.file("source").path], passphrase: Self.passphrase)
            let remote = try Self.encryptedRemote(at: folder.file("vault"), create: false)
            let device = try SyncDevice("b", remote: remote, in: folder)
            let summary = try device.sync()
            #expect(summary.failures.isEmpty, "\(summary.failures)")
            for (path, data) in Self.documents {
                #expect((try? Data(contentsOf: device.url(path))) == data, "\(path)")
            }
        }

        /// A chunk altered on the server: the download fails naming the document, the local copy
        /// stays as it was, and the pass brings down the other document.
        @Test func aTamperedDownloadOverwritesNothingAndThePassGoesOn() throws {
            let folder = try TemporaryFolder()
            let vault = try folder.folder("vault")
            let remote = try Self.encryptedRemote(at: vault, create: true)
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: Self.encryptedRemote(at: vault, create: false), in: folder)
            try a.write("kept.txt", "first\n")
            try a.write("other.txt", "first\n")
            _ = try a.sync()
            _ = try b.sync()
            try a.write("kept.txt", "second, altered on the server\n")
            try a.write("other.txt", "second\n")
            _ = try a.sync()
            let stored = try remote.vault.filePaths(named: "kept.txt", parentDirectoryID: "").contents
            let url = vault.appendingPathComponent(stored)
            var bytes = try Data(contentsOf: url)
            bytes[VaultContent.headerCount + 14] ^= 0x01
            try bytes.write(to: url)
            let summary = try b.sync()
            #expect(b.read("kept.txt") == "first\n")
            #expect(b.read("other.txt") == "second\n")
            #expect(summary.failures.contains { $0.contains("kept.txt") }, "\(summary.failures)")
        }
    }
}

/// A vault altered behind the remote's back, each way the format or the remote can catch: a
/// clear error naming the document.
@Suite struct EncryptedRemoteTamperTests {
    /// A vault in a folder holding `a/one.txt` (three chunks and a bit), `a/two.txt` and `b/`.
    final class Vault {
        let made: EncryptedRemoteTests.Made
        var remote: EncryptedRemote { made.remote }
        let one = EncryptedRemoteTests.bytes(3 * 32 * 1024 + 100)

        init() throws {
            made = try EncryptedRemoteTests.Made(.local)
            try remote.makeFolder(RemotePath("a"))
            try remote.makeFolder(RemotePath("b"))
            try remote.write(RemotePath("a/one.txt"), from: UploadSource(one), condition: .absent)
            try remote.write(
                RemotePath("a/two.txt"), from: UploadSource(Data("two".utf8)), condition: .absent)
        }

        func directoryID(_ folder: String) throws -> String {
            let stored = try remote.vault.names.entryName(for: folder, parentDirectoryID: "").storedName
            let root = try remote.vault.names.directoryPath(of: "")
            return try String(
                decoding: Data(contentsOf: made.vault.appendingPathComponent("\(root)/\(stored)/dir.c9r")),
                as: UTF8.self)
        }

        /// The file on disk holding `name` of folder `folder`.
        func stored(_ name: String, in folder: String) throws -> URL {
            made.vault.appendingPathComponent(
                try remote.vault.filePaths(named: name, parentDirectoryID: directoryID(folder)).contents)
        }

        /// What a fresh remote reads of `path`, and the error it throws.
        func read(_ path: String) -> (Data, RemoteError?) {
            var data = Data()
            do {
                _ = try made.reopened().read(RemotePath(path)) { data.append($0) }
                return (data, nil)
            } catch let error as RemoteError {
                return (data, error)
            } catch {
                return (data, RemoteError(.other, operation: .read, path: .root, remote: "\(error)"))
            }
        }
    }

    static let chunk = VaultContent.chunkCiphertextCount

    @Test func aFlippedBitFailsTheReadNamingTheDocumentAndGivesNothingOfTheChunk() throws {
        let vault = try Vault()
        let url = try vault.stored("one.txt", in: "a")
        var bytes = try Data(contentsOf: url)
        bytes[VaultContent.headerCount + Self.chunk + 500] ^= 0x10
        try bytes.write(to: url)
        let (data, error) = vault.read("a/one.txt")
        #expect(error?.kind == .badAnswer)
        #expect(error?.path == RemotePath("a/one.txt"))
        #expect(error?.description.contains("a/one.txt") == true, "\(String(describing: error))")
        // The first chunk came; nothing of the second.
        #expect(data == vault.one.prefix(32 * 1024))
    }

    @Test func swappedChunksAndATruncatedFileFailTheRead() throws {
        let vault = try Vault()
        let url = try vault.stored("one.txt", in: "a")
        let original = try Data(contentsOf: url)
        let header = VaultContent.headerCount
        var swapped = original
        swapped.replaceSubrange(
            header..<header + Self.chunk, with: original[header + Self.chunk..<header + 2 * Self.chunk])
        swapped.replaceSubrange(
            header + Self.chunk..<header + 2 * Self.chunk, with: original[header..<header + Self.chunk])
        try swapped.write(to: url)
        #expect(vault.read("a/one.txt").1?.kind == .badAnswer)
        try original.prefix(original.count - 50).write(to: url)
        let (data, error) = vault.read("a/one.txt")
        #expect(error?.kind == .badAnswer)
        #expect(data.count == 3 * 32 * 1024)
        #expect(error?.description.contains("one.txt") == true)
    }

    @Test func aFileMovedToAnotherFolderIsRefusedNamingIt() throws {
        let vault = try Vault()
        let source = try vault.stored("two.txt", in: "a")
        let target = vault.made.vault.appendingPathComponent(
            try vault.remote.vault.names.directoryPath(of: vault.directoryID("b"))
        ).appendingPathComponent(source.lastPathComponent)
        try FileManager.default.moveItem(at: source, to: target)
        let error = #expect(throws: RemoteError.self) { try vault.made.reopened().list(RemotePath("b")) }
        #expect(error?.kind == .badAnswer)
        #expect(error?.path == RemotePath("b"))
        #expect(error?.description.contains("forged") == true || error?.description.contains("name") == true)
    }

    /// A `dir.c9r` made to point at another folder's directory: one directory reached from two
    /// places is refused at both (which is the real one cannot be told), naming each folder;
    /// their parent lists them both, and the directory's items are read from neither.
    @Test func aDirectoryReachedFromTwoPlacesIsRefusedAtBoth() throws {
        let vault = try Vault()
        let root = try vault.remote.vault.names.directoryPath(of: "")
        let b = try vault.remote.vault.names.entryName(for: "b", parentDirectoryID: "").storedName
        let marker = vault.made.vault.appendingPathComponent("\(root)/\(b)/dir.c9r")
        let original = try Data(contentsOf: marker)
        try Data(vault.directoryID("a").utf8).write(to: marker)
        let fresh = vault.made.reopened()
        #expect(try fresh.list(.root).entries.map(\.name) == ["a", "b"])
        for folder in ["a", "b"] {
            let error = #expect(throws: RemoteError.self) { try fresh.list(RemotePath(folder)) }
            #expect(error?.kind == .badAnswer)
            #expect(error?.path == RemotePath(folder))
            #expect(
                error?.description.contains("reached from here too") == true, "\(String(describing: error))")
        }
        #expect(throws: RemoteError.self) { try fresh.read(RemotePath("a/two.txt")) { _ in } }
        // Reached by path too, one after the other, in either order.
        for order in [["a", "b"], ["b", "a"]] {
            let other = vault.made.reopened()
            _ = try? other.list(RemotePath(order[0]))
            #expect(throws: RemoteError.self) { try other.list(RemotePath(order[1])) }
            #expect(throws: RemoteError.self) { try other.list(RemotePath(order[0])) }
        }
        // Put back, both list again.
        try original.write(to: marker)
        #expect(try fresh.list(RemotePath("a")).entries.map(\.name) == ["one.txt", "two.txt"])
        #expect(try fresh.list(RemotePath("b")).entries.isEmpty)
    }

    @Test func aForgedConfigurationIsRefusedNamingTheVault() throws {
        let vault = try Vault()
        let url = vault.made.vault.appendingPathComponent(VaultConfiguration.fileName)
        var token = try Data(contentsOf: url)
        token[token.count - 3] =
            token[token.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try token.write(to: url)
        do {
            _ = try EncryptedRemote.open(vault.made.inner, passphrase: VaultPassphrase("correct horse"))
            Issue.record("a forged configuration opened")
        } catch let error as VaultError {
            #expect(error.code == .forgedConfiguration || error.code == .malformedConfiguration)
            #expect(error.item == vault.made.inner.displayName)
        }
    }
}
