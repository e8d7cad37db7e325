import Foundation
import Testing

@testable import DocumentSync

/// A plain tree: each path (relative, "/"-separated) to a file's bytes, or nil for a folder.
typealias PlainTree = [String: Data?]

/// The tree of the committed pycryptomator vault (Tests/Fixtures/pycryptomator-vault), and the
/// passphrase it was made under.
enum VaultSample {
    static let passphrase = "Grüße, vault ☂"

    static let longFileName = String(repeating: "long name ", count: 15) + ".txt"
    static let longFolderName = String(repeating: "é", count: 90)

    static let tree: PlainTree = [
        "hello.txt": Data("Hello from pycryptomator\n".utf8),
        "Grüße": nil,
        "Grüße/Notizen ☂.md": Data("# Notizen\n\nÄpfel und Birnen.\n".utf8),
        "a": nil,
        "a/b": nil,
        "a/b/c": nil,
        "a/b/c/d": nil,
        "a/b/c/d/e": nil,
        "a/b/c/d/e/f": nil,
        "a/b/c/d/e/f/deep.txt": Data("six folders down\n".utf8),
        longFileName: Data("long\n".utf8),
        "empty.txt": Data(),
        "chunks.bin": Data((0..<70000).map { UInt8($0 % 251) }),
        longFolderName: nil,
        longFolderName + "/inside.txt": Data("inside a long folder name\n".utf8),
        "Empty folder": nil,
    ]

    /// The root of the repository, where scripts/ and Tests/Fixtures/ are.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let fixture = repository.appendingPathComponent("Tests/Fixtures/pycryptomator-vault")
}

/// A tree written into and read out of a plain folder.
enum PlainFolder {
    static func write(_ tree: PlainTree, to folder: URL) throws {
        for path in tree.keys.sorted() {
            let url = folder.appendingPathComponent(path)
            if let contents = tree[path]! {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try contents.write(to: url)
            } else {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            }
        }
    }

    static func read(_ folder: URL) throws -> PlainTree {
        var tree: PlainTree = [:]
        func walk(_ url: URL, _ prefix: String) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
                let child = url.appendingPathComponent(name)
                let path = prefix.isEmpty ? name : prefix + "/" + name
                var isFolder: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: child.path, isDirectory: &isFolder)
                if isFolder.boolValue {
                    tree[path] = .some(nil)
                    try walk(child, path)
                } else {
                    tree[path] = try Data(contentsOf: child)
                }
            }
        }
        try walk(folder, "")
        return tree
    }
}

/// A vault in a local folder, read and written through the format API the way the encrypted
/// remote will: configuration and keys, directory paths, entries, `dir.c9r`, `name.c9s` and
/// contents a chunk at a time.
enum LocalVault {
    /// Every folder and file of the vault at `folder`, decrypted.
    static func read(_ folder: URL, passphrase: String) throws -> PlainTree {
        let vault = try UnlockedVault(
            configuration: Data(contentsOf: folder.appendingPathComponent(VaultConfiguration.fileName)),
            masterkeyFile: Data(contentsOf: folder.appendingPathComponent(VaultMasterkeyFile.fileName)),
            passphrase: VaultPassphrase(passphrase), vault: folder.path)
        var tree: PlainTree = [:]
        func walk(directoryID: String, prefix: String) throws {
            let directory = folder.appendingPathComponent(try vault.names.directoryPath(of: directoryID))
            for stored in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                if stored == VaultNameCipher.directoryIDBackupFileName { continue }
                let entry = directory.appendingPathComponent(stored)
                let longName =
                    stored.hasSuffix(".c9s")
                    ? try Data(contentsOf: entry.appendingPathComponent(VaultNameCipher.longNameFileName))
                    : nil
                let name = try vault.names.decryptedName(
                    storedName: stored, longName: longName, parentDirectoryID: directoryID, item: entry.path)
                let path = prefix.isEmpty ? name : prefix + "/" + name
                let idFile = entry.appendingPathComponent(VaultNameCipher.directoryIDFileName)
                if FileManager.default.fileExists(atPath: idFile.path) {
                    tree[path] = .some(nil)
                    let id = try VaultNameCipher.directoryID(
                        contents: Data(contentsOf: idFile), item: idFile.path)
                    try walk(directoryID: id, prefix: path)
                } else {
                    let contents =
                        stored.hasSuffix(".c9s")
                        ? entry.appendingPathComponent(VaultNameCipher.contentsFileName) : entry
                    tree[path] = try decryptFile(contents, vault: vault, item: path)
                }
            }
        }
        try walk(directoryID: VaultNameCipher.rootDirectoryID, prefix: "")
        return tree
    }

    /// The file decrypted in pieces of an odd size, as a download arrives.
    static func decryptFile(_ url: URL, vault: UnlockedVault, item: String) throws -> Data {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let decryptor = VaultContentDecryptor(keys: vault.keys, file: item)
        var plaintext = Data()
        while let piece = try handle.read(upToCount: 10_007), !piece.isEmpty {
            plaintext += try decryptor.update(piece)
        }
        return plaintext + (try decryptor.finish())
    }

    /// A new vault at `folder` holding `tree`.
    @discardableResult
    static func write(
        _ tree: PlainTree, to folder: URL, passphrase: String, cost: VaultScryptCost = .standard
    )
        throws -> UnlockedVault
    {
        let creation = try UnlockedVault.create(
            passphrase: VaultPassphrase(passphrase), vault: folder.path, cost: cost)
        for file in creation.files { try put(file.contents, at: file.path, in: folder) }
        let vault = creation.vault
        var directoryIDs = ["": VaultNameCipher.rootDirectoryID]
        // Parents before children: a folder's path sorts before its items'.
        for path in tree.keys.sorted() {
            let slash = path.lastIndex(of: "/")
            let parentPath = slash.map { String(path[..<$0]) } ?? ""
            let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
            guard let parentID = directoryIDs[parentPath] else {
                throw VaultTestFailure(description: "\(path): its folder is not in the tree")
            }
            if let contents = tree[path]! {
                let paths = try vault.filePaths(named: name, parentDirectoryID: parentID)
                if let longName = paths.longName { try put(longName.contents, at: longName.path, in: folder) }
                try encryptFile(contents, to: folder.appendingPathComponent(paths.contents), vault: vault)
            } else {
                let made = try vault.newFolder(named: name, parentDirectoryID: parentID)
                for file in made.files { try put(file.contents, at: file.path, in: folder) }
                directoryIDs[path] = made.directoryID
            }
        }
        return vault
    }

    /// The plaintext encrypted in pieces of an odd size, as an upload reads its source, each
    /// chunk written as the encryptor hands it over.
    static func encryptFile(_ plaintext: Data, to url: URL, vault: UnlockedVault) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw VaultTestFailure(description: "cannot make \(url.path)")
        }
        let output = try FileHandle(forWritingTo: url)
        defer { try? output.close() }
        let encryptor = try VaultContentEncryptor(keys: vault.keys)
        try output.write(contentsOf: encryptor.header)
        var offset = 0
        while offset < plaintext.count {
            let end = min(offset + 9_001, plaintext.count)
            try plaintext.subdata(in: offset..<end).withUnsafeBytes { piece in
                try encryptor.update(piece) { try output.write(contentsOf: Data($0)) }
            }
            offset = end
        }
        try encryptor.finish { try output.write(contentsOf: Data($0)) }
    }

    static func put(_ contents: Data, at path: String, in folder: URL) throws {
        let url = folder.appendingPathComponent(path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try contents.write(to: url)
    }
}

/// `scripts/pycryptomator` with `arguments`, the passphrase in its environment; its standard
/// error when it fails.
func runPycryptomator(_ arguments: [String], passphrase: String) throws {
    let process = Process()
    process.executableURL = VaultSample.repository.appendingPathComponent("scripts/pycryptomator")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["PYCRYPTOMATOR_PASSPHRASE"] = passphrase
    process.environment = environment
    // Its standard error goes to a file, read once it has exited: a pipe read by Foundation's
    // readDataToEndOfFile traps when a signal (another test's child ending) interrupts it.
    let scratch = try TemporaryFolder()
    let errorsFile = scratch.file("stderr")
    guard FileManager.default.createFile(atPath: errorsFile.path, contents: nil) else {
        throw VaultTestFailure(description: "cannot make \(errorsFile.path)")
    }
    let errors = try FileHandle(forWritingTo: errorsFile)
    defer { try? errors.close() }
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let said = (try? Data(contentsOf: errorsFile)) ?? Data()
    guard process.terminationStatus == 0 else {
        throw VaultTestFailure(
            description:
                "scripts/pycryptomator \(arguments.first ?? "") failed (\(process.terminationStatus)): "
                + String(decoding: said, as: UTF8.self))
    }
}

struct VaultTestFailure: Error, CustomStringConvertible {
    let description: String
}
