import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// The encrypted remote over a local folder and over the simulated remote: what goes in comes
/// out, names and bytes, through every operation a remote has.
@Suite struct EncryptedRemoteTests {
    /// The remotes a vault is made in.
    enum Inner: String, CaseIterable, Sendable {
        case local
        case simulated
    }

    /// A cheap scrypt: these tests make many vaults.
    static let cheap = VaultScryptCost(cost: 1024, blockSize: 8)

    /// A new vault over a fresh inner remote, the folder (for a local one) kept alive with it.
    final class Made {
        let folder: TemporaryFolder
        let inner: any Remote
        let remote: EncryptedRemote

        init(_ kind: Inner, passphrase: String = "correct horse") throws {
            folder = try TemporaryFolder()
            switch kind {
            case .local: inner = LocalFolderRemote(root: try folder.folder("vault"))
            case .simulated: inner = SimulatedRemote(displayName: "simulated remote")
            }
            remote = try EncryptedRemote.create(
                over: inner, passphrase: VaultPassphrase(passphrase), cost: EncryptedRemoteTests.cheap)
        }

        /// The vault's folder on disk (a local inner remote).
        var vault: URL { folder.file("vault") }

        /// Another instance on the same vault, with nothing kept.
        func reopened() -> EncryptedRemote { EncryptedRemote(over: inner, vault: remote.vault) }
    }

    static let longName = String(repeating: "ł", count: 120) + ".txt"
    static let longFolder = String(repeating: "Ordner ", count: 33)

    static func bytes(_ count: Int, _ seed: UInt8 = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    static func read(_ remote: any Remote, _ path: String) throws -> Data {
        var data = Data()
        _ = try remote.read(RemotePath(path)) { data.append($0) }
        return data
    }

    /// Every item below `folder`, by path: nil for a folder.
    /// The local folder remote's own lock files (in `.documentsync` at its root) are left out.
    static func walk(_ remote: any Remote, _ folder: RemotePath = .root) throws -> PlainTree {
        var tree: PlainTree = [:]
        for entry in try remote.list(folder).entries where !folder.appending(entry.name).isMetadata {
            let path = folder.appending(entry.name)
            if entry.kind == .folder {
                tree[path.string] = .some(nil)
                tree.merge(try walk(remote, path)) { $1 }
            } else {
                tree[path.string] = try read(remote, path.string)
            }
        }
        return tree
    }

    @Test(arguments: Inner.allCases)
    func filesAndFoldersOfEveryKindRoundTrip(_ kind: Inner) throws {
        let made = try Made(kind)
        let remote = made.remote
        var tree: PlainTree = [:]
        var folder = RemotePath.root
        for name in ["Ünïcödé", "中文目录", Self.longFolder, "x", "deeper ☂ e\u{301}"] {
            folder = folder.appending(name)
            try remote.makeFolder(folder)
            tree[folder.string] = .some(nil)
        }
        let sizes = [0, 1, 1000, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 200_000]
        for (index, size) in sizes.enumerated() {
            let path = (index % 2 == 0 ? folder : .root).appending("size \(size).bin")
            let data = Self.bytes(size, UInt8(index))
            let tag = try remote.write(path, from: UploadSource(data, chunkSize: 7_777), condition: .absent)
            tree[path.string] = data
            let entry = try #require(try remote.entry(at: path))
            #expect(entry.size == Int64(size) && entry.kind == .file)
            if let tag { #expect(entry.tag == tag) }
        }
        for name in [Self.longName, String(repeating: "s", count: 147), "e\u{301}té.md"] {
            let path = folder.appending(name)
            try remote.write(path, from: UploadSource(Data(name.utf8)), condition: .absent)
            tree[RemotePath(path.string).string] = Data(name.utf8)
        }
        try remote.makeFolder(RemotePath.root.appending(Self.longFolder + "2"))
        tree[Self.longFolder + "2"] = .some(nil)
        #expect(try Self.walk(remote) == tree)
        #expect(try Self.walk(made.reopened()) == tree)
        let opened = try EncryptedRemote.open(made.inner, passphrase: VaultPassphrase("correct horse"))
        #expect(try Self.walk(opened) == tree)
        // Names over the threshold are stored as `.c9s` folders.
        let innerTree = try Self.walk(made.inner)
        #expect(innerTree.keys.contains { $0.hasSuffix(".c9s/name.c9s") })
        #expect(!innerTree.keys.contains { $0.contains("Ünïcödé") || $0.contains("size") })
    }

    @Test(arguments: Inner.allCases)
    func aWrongPassphraseIsRefusedNamingTheVaultAndChangesNothing(_ kind: Inner) throws {
        let made = try Made(kind)
        try made.remote.write(RemotePath("a.txt"), from: UploadSource(Data("a".utf8)), condition: .absent)
        let before = try Self.walk(made.inner)
        do {
            _ = try EncryptedRemote.open(made.inner, passphrase: VaultPassphrase("wrong horse"))
            Issue.record("opened under a wrong passphrase")
        } catch let error as VaultError {
            #expect(error.code == .wrongPassphrase)
            #expect(error.item == made.inner.displayName)
        }
        #expect(try Self.walk(made.inner) == before)
        // A vault is made only where nothing is.
        #expect(throws: RemoteError.self) {
            _ = try EncryptedRemote.create(
                over: made.inner, passphrase: VaultPassphrase("x"), cost: Self.cheap)
        }
        #expect(try Self.walk(made.inner) == before)
    }

    @Test(arguments: Inner.allCases)
    func renamesAndMovesKeepEveryByte(_ kind: Inner) throws {
        let made = try Made(kind)
        let remote = made.remote
        let a = RemotePath("a")
        let b = RemotePath("b")
        try remote.makeFolder(a)
        try remote.makeFolder(b)
        try remote.makeFolder(a.appending("inner"))
        try remote.write(
            RemotePath("a/inner/deep.txt"), from: UploadSource(Data("deep".utf8)), condition: .absent)
        try remote.write(
            a.appending("f.txt"), from: UploadSource(Self.bytes(70_000)), condition: .absent)
        // Short to long to long to short, in one folder and across folders.
        let steps = [
            (a.appending("f.txt"), a.appending("g.txt")),
            (a.appending("g.txt"), a.appending(Self.longName)),
            (a.appending(Self.longName), b.appending("x" + Self.longName)),
            (b.appending("x" + Self.longName), b.appending("short.txt")),
            (b.appending("short.txt"), RemotePath("top.txt")),
        ]
        for (source, destination) in steps {
            let moved = try remote.move(source, to: destination, condition: nil)
            if let moved { #expect(try remote.entry(at: destination)?.tag == moved) }
            #expect(try remote.entry(at: source) == nil, "\(source)")
            #expect(try Self.read(remote, destination.string) == Self.bytes(70_000), "\(destination)")
            #expect(try Self.read(made.reopened(), destination.string) == Self.bytes(70_000))
        }
        // Folders: renamed, given a long name, moved into another folder with what they hold.
        try remote.move(a.appending("inner"), to: a.appending("renamed"), condition: nil)
        try remote.move(a.appending("renamed"), to: a.appending(Self.longFolder), condition: nil)
        try remote.move(a.appending(Self.longFolder), to: b.appending("moved"), condition: nil)
        try remote.move(b, to: RemotePath("c"), condition: nil)
        let folderMark: Data? = nil
        let expected: PlainTree = [
            "a": folderMark, "c": folderMark, "c/moved": folderMark, "c/moved/deep.txt": Data("deep".utf8),
            "top.txt": Self.bytes(70_000),
        ]
        #expect(try Self.walk(remote) == expected)
        #expect(try Self.walk(made.reopened()) == expected)
        // A move never overwrites, and a folder never moves into itself.
        #expect(throws: RemoteError.self) { try remote.move(RemotePath("top.txt"), to: a, condition: nil) }
        #expect(throws: RemoteError.self) {
            try remote.move(RemotePath("c"), to: RemotePath("c/moved/c"), condition: nil)
        }
        // The folders left behind are gone from the vault's directories too.
        try remote.delete(
            RemotePath("c/moved/deep.txt"),
            condition: .matches(#require(try remote.entry(at: RemotePath("c/moved/deep.txt"))?.tag)))
        let moved = try #require(try remote.entry(at: RemotePath("c/moved")))
        if let folderTag = moved.tag {
            try remote.delete(RemotePath("c/moved"), condition: .matches(folderTag))
        }
        #expect(try Self.walk(remote).keys.sorted() == ["a", "c", "top.txt"] || moved.tag == nil)
    }

    @Test(arguments: Inner.allCases)
    func conditionalWritesAreRefusedOnAStaleTag(_ kind: Inner) throws {
        let made = try Made(kind)
        let remote = made.remote
        for name in ["plain.txt", Self.longName] {
            let path = RemotePath(name)
            try remote.write(path, from: UploadSource(Data("one".utf8)), condition: .absent)
            let first = try #require(try remote.entry(at: path)?.tag)
            try remote.write(path, from: UploadSource(Data("two".utf8)), condition: .matches(first))
            let second = try #require(try remote.entry(at: path)?.tag)
            #expect(second != first)
            for condition in [WriteCondition.matches(first), .absent] {
                let error = #expect(throws: RemoteError.self) {
                    try remote.write(path, from: UploadSource(Data("three".utf8)), condition: condition)
                }
                #expect(error?.kind == .preconditionFailed)
                #expect(error?.path == path && error?.remote == remote.displayName)
            }
            let refused = #expect(throws: RemoteError.self) {
                try remote.delete(path, condition: .matches(first))
            }
            #expect(refused?.kind == .preconditionFailed)
            #expect(try Self.read(remote, name) == Data("two".utf8))
            try remote.delete(path, condition: .matches(second))
            #expect(try remote.entry(at: path) == nil)
        }
        let missing = #expect(throws: RemoteError.self) {
            try remote.write(RemotePath("nowhere/a.txt"), from: UploadSource(Data()), condition: .absent)
        }
        #expect(missing?.kind == .parentMissing)
        #expect(missing?.path == RemotePath("nowhere/a.txt"))
    }

    /// A listing shows files, folders and long names of both; leaves out the ID backup, links
    /// and what is no vault item; refuses a size no encrypted file has, naming the item.
    @Test func listingsShowEveryKindOfEntry() throws {
        let made = try Made(.local)
        let remote = made.remote
        try remote.makeFolder(RemotePath("folder"))
        try remote.makeFolder(RemotePath(Self.longFolder))
        try remote.write(RemotePath("file.txt"), from: UploadSource(Data("f".utf8)), condition: .absent)
        try remote.write(RemotePath(Self.longName), from: UploadSource(Data("l".utf8)), condition: .absent)
        let root = made.vault.appendingPathComponent(try remote.vault.names.directoryPath(of: ""))
        // A link as Cryptomator stores one, and a stranger's file: neither is an item.
        let link = try remote.vault.names.entryName(for: "link", parentDirectoryID: "").storedName
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent(link), withIntermediateDirectories: true)
        try remote.vault.encrypt(Data("file.txt".utf8)).write(
            to: root.appendingPathComponent(link + "/" + VaultNameCipher.symlinkFileName))
        try Data("x".utf8).write(to: root.appendingPathComponent("desktop.ini"))
        let listing = try remote.list(.root)
        #expect(
            listing.entries.map(\.name) == ["file.txt", "folder", Self.longFolder, Self.longName].sorted())
        #expect(
            listing.entries.map(\.kind) == listing.entries.map { $0.name.hasSuffix(".txt") ? .file : .folder }
        )
        #expect(try remote.entry(at: RemotePath("link")) == nil)
        // A size no file has.
        let odd = try remote.vault.filePaths(named: "odd.bin", parentDirectoryID: "").contents
        try Data(count: VaultContent.headerCount + 10).write(to: made.vault.appendingPathComponent(odd))
        let error = #expect(throws: RemoteError.self) { try remote.list(.root) }
        #expect(error?.kind == .badAnswer)
        #expect(error?.description.contains("odd.bin") == true, "\(String(describing: error))")
    }

    /// Stores `contents` (a folder for nil) as `name` spelled exactly as given in the directory
    /// `parentID` of the vault in `folder`, as pycryptomator stores a name: a folder's new
    /// directory ID is returned.
    static func storeAsGiven(
        _ name: String, _ contents: Data?, parentID: String, vault: UnlockedVault, in folder: URL
    ) throws -> String? {
        let sealed = try AESSIV.seal(
            Data(name.utf8), associatedData: [Data(parentID.utf8)], key: vault.keys.sivKey)
        let encrypted = Base64URL.encode(sealed) + ".c9r"
        let directory = try vault.names.directoryPath(of: parentID)
        var entry = directory + "/" + encrypted
        var file = entry
        if encrypted.utf8.count > vault.names.shorteningThreshold {
            entry = directory + "/" + VaultNameCipher.shortenedName(of: encrypted)
            try LocalVault.put(
                Data(encrypted.utf8), at: entry + "/" + VaultNameCipher.longNameFileName, in: folder)
            file = entry + "/" + VaultNameCipher.contentsFileName
        }
        guard let contents else {
            let id = VaultNameCipher.newDirectoryID()
            try LocalVault.put(
                Data(id.utf8), at: entry + "/" + VaultNameCipher.directoryIDFileName, in: folder)
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(try vault.names.directoryPath(of: id)),
                withIntermediateDirectories: true)
            return id
        }
        try LocalVault.encryptFile(contents, to: folder.appendingPathComponent(file), vault: vault)
        return nil
    }

    /// Names another program stored decomposed (NFD, as pycryptomator stores a Mac's names) are
    /// found by their composed spelling before any listing, as a pass's recovery or an
    /// on-demand download looks one item up first; and never stored twice.
    @Test func namesStoredDecomposedAreFoundBeforeAnyListing() throws {
        let folder = try TemporaryFolder()
        let vaultFolder = try folder.folder("vault")
        // Stored spelling, spelling here, contents (nil for a folder); folders before their items.
        let items: [(nfd: String, nfc: String, contents: Data?)] = [
            ("Cafe\u{301}.txt", "Caf\u{E9}.txt", Data("caf\u{E9}\n".utf8)),
            ("Ordner A\u{308}", "Ordner \u{C4}", nil),
            ("Ordner A\u{308}/inside.txt", "Ordner \u{C4}/inside.txt", Data("inside\n".utf8)),
            ("Ordner A\u{308}/U\u{308}ber.txt", "Ordner \u{C4}/\u{DC}ber.txt", Data("\u{FC}ber\n".utf8)),
            (
                String(repeating: "e\u{301}", count: 130) + ".txt",
                String(repeating: "\u{E9}", count: 130) + ".txt",
                Data("long\n".utf8)
            ),
        ]
        let vault = try LocalVault.write([:], to: vaultFolder, passphrase: "correct horse", cost: Self.cheap)
        var directoryIDs = ["": VaultNameCipher.rootDirectoryID]
        for item in items {
            let parent = item.nfd.split(separator: "/").dropLast().joined(separator: "/")
            let name = String(item.nfd.split(separator: "/").last!)
            directoryIDs[item.nfd] = try Self.storeAsGiven(
                name, item.contents, parentID: try #require(directoryIDs[parent]), vault: vault,
                in: vaultFolder)
        }
        let inner = LocalFolderRemote(root: vaultFolder)
        let fresh = { EncryptedRemote(over: inner, vault: vault) }

        for item in items {
            let entry = try fresh().entry(at: RemotePath(item.nfc))
            #expect(entry?.kind == (item.contents == nil ? .folder : .file), "\(item.nfc)")
            if let contents = item.contents { #expect(try Self.read(fresh(), item.nfc) == contents) }
        }
        // Looked up on many threads at once, each waits for the one listing of its folder.
        let shared = fresh()
        let found = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4 * items.count) { index in
            if (try? shared.entry(at: RemotePath(items[index % items.count].nfc))) != nil {
                found.withLock { $0 += 1 }
            }
        }
        #expect(found.withLock { $0 } == 4 * items.count)

        // A new file of that name is the one there, not a second entry.
        let taken = #expect(throws: RemoteError.self) {
            try fresh().write(
                RemotePath(items[0].nfc), from: UploadSource(Data("again".utf8)), condition: .absent)
        }
        #expect(taken?.kind == .exists || taken?.kind == .preconditionFailed, "\(String(describing: taken))")
        let tag = try #require(try fresh().entry(at: RemotePath(items[0].nfc))?.tag)
        try fresh().delete(RemotePath(items[0].nfc), condition: .matches(tag))
        try fresh().move(RemotePath(items[3].nfc), to: RemotePath("moved.txt"), condition: nil)
        #expect(
            try Self.walk(fresh()) == [
                "Ordner \u{C4}": Data?.none, "Ordner \u{C4}/inside.txt": Data("inside\n".utf8),
                "moved.txt": Data("\u{FC}ber\n".utf8), items[4].nfc: Data("long\n".utf8),
            ])
    }
}
