import Foundation
import Testing

@testable import DocumentSync

/// Our vault format against pycryptomator's, an implementation written independently: a vault
/// it made (committed, and made afresh) read by our code, and a vault our code wrote read by it,
/// names and bytes compared whole.
@Suite struct VaultInteropTests {
    @Test func theCommittedPycryptomatorVaultDecryptsToItsKnownTree() throws {
        let tree = try LocalVault.read(VaultSample.fixture, passphrase: VaultSample.passphrase)
        #expect(tree.keys.sorted() == VaultSample.tree.keys.sorted())
        for (path, contents) in VaultSample.tree {
            #expect(tree[path] == contents, "\(path)")
        }
    }

    @Test func theCommittedVaultRefusesAWrongPassphraseNamingIt() throws {
        do {
            _ = try LocalVault.read(VaultSample.fixture, passphrase: "Grüße, vault ☔")
            Issue.record("opened under a wrong passphrase")
        } catch let error as VaultError {
            #expect(error.code == .wrongPassphrase)
            #expect(error.item == VaultSample.fixture.path)
        }
    }

    /// A tree beyond the sample: sizes around chunk boundaries, several chunks, names that
    /// only just are and are not shortened, deep folders with Unicode names.
    static func largerTree() throws -> PlainTree {
        var tree = VaultSample.tree
        for size in [1, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 5 * 32 * 1024 + 77] {
            tree["sizes/\(size).bin"] = try SecureRandom.bytes(size)
        }
        tree["sizes"] = .some(nil)
        var folder = ""
        for name in ["Ünïcödé", "中文目录", "deeper ☂", "x", String(repeating: "ß", count: 120)] {
            folder += (folder.isEmpty ? "" : "/") + name
            tree[folder] = .some(nil)
            tree[folder + "/note \(name.count).txt"] = Data("in \(folder)\n".utf8)
        }
        tree[String(repeating: "k", count: 146)] = Data("kept".utf8)
        tree[String(repeating: "s", count: 147)] = Data("shortened".utf8)
        tree[String(repeating: "ü", count: 110) + ".md"] = Data("long and Unicode".utf8)
        return tree
    }

    @Test func aVaultPycryptomatorMakesIsReadByteForByte() throws {
        let scratch = try TemporaryFolder()
        let tree = try Self.largerTree()
        try PlainFolder.write(tree, to: scratch.file("source"))
        try runPycryptomator(
            ["make", scratch.file("vault").path, scratch.file("source").path], passphrase: "open sesame")
        let read = try LocalVault.read(scratch.file("vault"), passphrase: "open sesame")
        #expect(read.keys.sorted() == tree.keys.sorted())
        for (path, contents) in tree {
            #expect(read[path] == contents, "\(path)")
        }
    }

    @Test func aVaultWeWriteIsReadByPycryptomatorByteForByte() throws {
        let scratch = try TemporaryFolder()
        let tree = try Self.largerTree()
        try LocalVault.write(tree, to: scratch.file("vault"), passphrase: "open sesame")
        try runPycryptomator(
            ["dump", scratch.file("vault").path, scratch.file("out").path], passphrase: "open sesame")
        let read = try PlainFolder.read(scratch.file("out"))
        #expect(read.keys.sorted() == tree.keys.sorted())
        for (path, contents) in tree {
            #expect(read[path] == contents, "\(path)")
        }
    }

    @Test func aVaultWhosePassphraseWeChangedOpensInPycryptomatorUnderTheNewOne() throws {
        let scratch = try TemporaryFolder()
        let vault = scratch.file("vault")
        let tree: PlainTree = ["a.txt": Data("before and after".utf8)]
        try LocalVault.write(tree, to: vault, passphrase: "old one")
        let masterkey = vault.appendingPathComponent(VaultMasterkeyFile.fileName)
        let changed = try VaultMasterkeyFile(contents: Data(contentsOf: masterkey), vault: vault.path)
            .changingPassphrase(
                from: VaultPassphrase("old one"), to: VaultPassphrase("new one"), vault: vault.path)
        try changed.encoded().write(to: masterkey)
        try runPycryptomator(["dump", vault.path, scratch.file("out").path], passphrase: "new one")
        #expect(try PlainFolder.read(scratch.file("out")) == tree)
        #expect(throws: VaultTestFailure.self) {
            try runPycryptomator(["dump", vault.path, scratch.file("out2").path], passphrase: "old one")
        }
    }

    @Test func pycryptomatorRefusesAChunkWeSeeAsForgedToo() throws {
        // The tamper checks are the format's, not ours alone: the same altered file fails in both.
        let scratch = try TemporaryFolder()
        let vault = scratch.file("vault")
        let opened = try LocalVault.write(
            ["t.bin": try SecureRandom.bytes(40_000)], to: vault, passphrase: "p")
        let contents = vault.appendingPathComponent(
            try opened.filePaths(named: "t.bin", parentDirectoryID: "").contents)
        var bytes = try Data(contentsOf: contents)
        bytes[68 + VaultContent.chunkCiphertextCount + 100] ^= 1
        try bytes.write(to: contents)
        #expect(throws: VaultTestFailure.self) {
            try runPycryptomator(["dump", vault.path, scratch.file("out").path], passphrase: "p")
        }
        do {
            _ = try LocalVault.read(vault, passphrase: "p")
            Issue.record("read a forged chunk")
        } catch let error as VaultError {
            #expect(error.code == .forgedChunk(1))
            #expect(error.item == "t.bin")
        }
    }
}
