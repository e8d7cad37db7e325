import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// Sync passes over a vault the server altered, each way issue 30 lists: the pass names
    /// the document (or the folder a listing could not be taken of), leaves the copy here byte
    /// for byte as it was, and syncs the rest in the same pass, downloads and uploads.
    @Suite struct EncryptedSyncTamperTests {
        /// Two devices on an encrypted `file://` vault holding `A/one.txt` (three chunks and a
        /// bit), `B/two.txt` and `C/three.txt`, synced to both.
        final class Setup {
            let folder: TemporaryFolder
            let vault: URL
            let remote: EncryptedRemote
            let a: SyncDevice
            let b: SyncDevice

            static let one = EncryptedRemoteTests.bytes(3 * 32 * 1024 + 100, 1)
            static let oneEdited = EncryptedRemoteTests.bytes(3 * 32 * 1024 + 100, 2)

            init() throws {
                folder = try TemporaryFolder()
                vault = try folder.folder("vault")
                remote = try EncryptedSyncTests.encryptedRemote(at: vault, create: true)
                a = try SyncDevice("a", remote: remote, in: folder)
                b = try SyncDevice(
                    "b", remote: EncryptedSyncTests.encryptedRemote(at: vault, create: false), in: folder)
                try write(Self.one, at: "A/one.txt", on: a)
                try a.write("B/two.txt", "two\n")
                try a.write("C/three.txt", "three\n")
                try expectNoFailures(a.sync())
                try expectNoFailures(b.sync())
            }

            func write(_ data: Data, at path: String, on device: SyncDevice) throws {
                try device.write(path, "")
                try data.write(to: device.url(path))
            }

            func expectNoFailures(_ summary: SyncSummary, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(summary.failures.isEmpty, "\(summary.failures)", sourceLocation: sourceLocation)
            }

            /// The directory ID of the folder `name` at the root.
            func directoryID(_ name: String) throws -> String {
                try String(decoding: Data(contentsOf: marker(of: name)), as: UTF8.self)
            }

            /// The `dir.c9r` of the folder `name` at the root.
            func marker(of name: String) throws -> URL {
                let root = try remote.vault.names.directoryPath(of: VaultNameCipher.rootDirectoryID)
                let stored = try remote.vault.names.entryName(
                    for: name, parentDirectoryID: VaultNameCipher.rootDirectoryID
                ).storedName
                return vault.appendingPathComponent(
                    "\(root)/\(stored)/\(VaultNameCipher.directoryIDFileName)")
            }

            /// The encrypted directory of the folder `name` at the root.
            func directory(of name: String) throws -> URL {
                vault.appendingPathComponent(try remote.vault.names.directoryPath(of: directoryID(name)))
            }

            /// The file on disk holding the document `name` of the folder `folder`.
            func stored(_ name: String, in folder: String) throws -> URL {
                vault.appendingPathComponent(
                    try remote.vault.filePaths(named: name, parentDirectoryID: directoryID(folder)).contents)
            }

            func bytes(_ path: String, on device: SyncDevice) -> Data? {
                try? Data(contentsOf: device.url(path))
            }

            /// What `device` set aside as deleted by the remote, each file's bytes.
            func setAside(on device: SyncDevice) -> [Data] {
                (try? PlainFolder.read(device.deleted))?.values.compactMap { $0 } ?? []
            }

            /// a edits `A/one.txt` (the document the server alters next) and `C/three.txt`;
            /// `alter` changes the stored `A/one.txt`; b, which wrote `C/new.txt`, syncs.
            func syncAfterAlteringOne(_ alter: (inout Data) -> Void) throws -> SyncSummary {
                try write(Self.oneEdited, at: "A/one.txt", on: a)
                try a.write("C/three.txt", "three, edited on a\n")
                try expectNoFailures(a.sync())
                let url = try stored("one.txt", in: "A")
                var data = try Data(contentsOf: url)
                alter(&data)
                try data.write(to: url)
                try b.write("C/new.txt", "new on b\n")
                return try b.sync()
            }

            /// What every pass over `A/one.txt` altered shows: the failure names it, b's copy is
            /// as it was, the edit of `C/three.txt` came down and `C/new.txt` went up; a second
            /// pass changes none of it.
            func expectOneRefusedAndTheRestSynced(
                _ summary: SyncSummary, sourceLocation: SourceLocation = #_sourceLocation
            ) throws {
                #expect(
                    summary.failures.contains { $0.hasPrefix("A/one.txt: ") }, "\(summary.failures)",
                    sourceLocation: sourceLocation)
                #expect(summary.failures.count == 1, "\(summary.failures)", sourceLocation: sourceLocation)
                #expect(bytes("A/one.txt", on: b) == Self.one, sourceLocation: sourceLocation)
                #expect(b.read("C/three.txt") == "three, edited on a\n", sourceLocation: sourceLocation)
                #expect(
                    summary.downloaded == 1 && summary.uploaded == 1, "\(summary)",
                    sourceLocation: sourceLocation)
                let again = try b.sync()
                #expect(
                    again.failures.contains { $0.hasPrefix("A/one.txt: ") }, "\(again.failures)",
                    sourceLocation: sourceLocation)
                #expect(bytes("A/one.txt", on: b) == Self.one, sourceLocation: sourceLocation)
                #expect(setAside(on: b).isEmpty, sourceLocation: sourceLocation)
                // a, which wrote the document, finds it changed there and refuses it too.
                let fromA = try a.sync()
                #expect(
                    fromA.failures.count == 1 && fromA.failures[0].hasPrefix("A/one.txt: "),
                    "\(fromA.failures)",
                    sourceLocation: sourceLocation)
                #expect(bytes("A/one.txt", on: a) == Self.oneEdited, sourceLocation: sourceLocation)
                #expect(a.read("C/new.txt") == "new on b\n", sourceLocation: sourceLocation)
            }
        }

        static let chunk = VaultContent.chunkCiphertextCount

        /// A bit flipped anywhere in the stored file: its header, a chunk's nonce, ciphertext
        /// or tag. The seed picks where, and replays it.
        @Test(arguments: [1, 2, 3, 4] as [UInt64])
        func aFlippedBitFailsTheDocumentAloneAndOverwritesNothing(seed: UInt64) throws {
            let setup = try Setup()
            var random = SeededGenerator(seed: seed)
            let summary = try setup.syncAfterAlteringOne { data in
                let offset = Int.random(in: 0..<data.count, using: &random)
                data[offset] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            }
            try setup.expectOneRefusedAndTheRestSynced(summary)
        }

        @Test func swappedChunksFailTheDocumentAloneAndOverwriteNothing() throws {
            let setup = try Setup()
            let summary = try setup.syncAfterAlteringOne { data in
                let header = VaultContent.headerCount
                let first = data[header..<header + Self.chunk]
                let second = data[header + Self.chunk..<header + 2 * Self.chunk]
                data.replaceSubrange(header..<header + 2 * Self.chunk, with: second + first)
            }
            try setup.expectOneRefusedAndTheRestSynced(summary)
        }

        /// Cut inside its last chunk. (Cut at a chunk's end, a file reads as a shorter one: the
        /// format does not authenticate a file's length; see docs/Encryption.md.)
        @Test func aTruncatedFileFailsTheDocumentAloneAndOverwritesNothing() throws {
            let setup = try Setup()
            let summary = try setup.syncAfterAlteringOne { data in data.removeLast(50) }
            try setup.expectOneRefusedAndTheRestSynced(summary)
        }

        /// A `.c9r` moved into another folder's directory does not decrypt there (a name is
        /// bound to its folder's ID): that folder cannot be listed and is left as it is, named;
        /// the folder it left reads it as deleted, which the format cannot tell from a deletion
        /// (the document is set aside, as any the remote deleted).
        @Test func aFileMovedIntoAnotherFolderLeavesThatFolderAsItIs() throws {
            let setup = try Setup()
            let (a, b) = (setup.a, setup.b)
            try a.write("C/three.txt", "three, edited on a\n")
            try setup.expectNoFailures(a.sync())
            let moved = try setup.stored("one.txt", in: "A")
            try FileManager.default.moveItem(
                at: moved, to: setup.directory(of: "B").appendingPathComponent(moved.lastPathComponent))
            let twoStored = try Data(contentsOf: setup.stored("two.txt", in: "B"))
            try b.write("B/two.txt", "two, edited on b\n")
            try b.write("C/new.txt", "new on b\n")
            let summary = try b.sync()
            #expect(
                summary.failures.contains {
                    $0.hasPrefix("B: cannot be listed") && $0.contains(moved.lastPathComponent)
                },
                "\(summary.failures)")
            #expect(summary.failures.count == 1, "\(summary.failures)")
            // B as it was, on both sides.
            #expect(b.read("B/two.txt") == "two, edited on b\n")
            #expect(try Data(contentsOf: setup.stored("two.txt", in: "B")) == twoStored)
            // The rest synced.
            #expect(b.read("C/three.txt") == "three, edited on a\n")
            #expect(summary.uploaded == 1, "\(summary)")
            #expect(!b.exists("A/one.txt"))
            #expect(setup.setAside(on: b).contains(Setup.one))
        }

        /// A `dir.c9r` made to point at another folder's directory: one directory reached from
        /// two folders, of which the vault cannot tell the real one. Neither is listed, both are
        /// left as they are, named; put back, the next pass syncs them.
        @Test func aDirectoryReachedFromTwoFoldersLeavesBothAsTheyAre() throws {
            let setup = try Setup()
            let (a, b) = (setup.a, setup.b)
            try setup.write(Setup.oneEdited, at: "A/one.txt", on: a)
            try a.write("C/three.txt", "three, edited on a\n")
            try setup.expectNoFailures(a.sync())
            let marker = try setup.marker(of: "B")
            let original = try Data(contentsOf: marker)
            try Data(setup.directoryID("A").utf8).write(to: marker)
            try b.write("B/two.txt", "two, edited on b\n")
            try b.write("C/new.txt", "new on b\n")
            let summary = try b.sync()
            for folder in ["A", "B"] {
                #expect(
                    summary.failures.contains {
                        $0.hasPrefix("\(folder): cannot be listed") && $0.contains("reached from here too")
                    },
                    "\(summary.failures)")
            }
            #expect(summary.failures.count == 2, "\(summary.failures)")
            #expect(setup.bytes("A/one.txt", on: b) == Setup.one)
            #expect(b.read("B/two.txt") == "two, edited on b\n")
            #expect(b.read("C/three.txt") == "three, edited on a\n")
            #expect(summary.downloaded == 1 && summary.uploaded == 1, "\(summary)")
            #expect(setup.setAside(on: b).isEmpty)
            try original.write(to: marker)
            try setup.expectNoFailures(b.sync())
            #expect(setup.bytes("A/one.txt", on: b) == Setup.oneEdited)
            try setup.expectNoFailures(a.sync())
            #expect(a.read("B/two.txt") == "two, edited on b\n")
        }

        /// A forged `vault.cryptomator`: opening fails naming the vault, and nothing is written
        /// there or here.
        @Test func aForgedConfigurationFailsOpeningAndChangesNothing() throws {
            let setup = try Setup()
            let url = setup.vault.appendingPathComponent(VaultConfiguration.fileName)
            var token = try Data(contentsOf: url)
            let index = token.count - 3
            token[index] = token[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            try token.write(to: url)
            let (vaultBefore, here) = (try PlainFolder.read(setup.vault), try setup.b.tree())
            let inner = LocalFolderRemote(root: setup.vault)
            do {
                _ = try EncryptedRemote.open(
                    inner, passphrase: VaultPassphrase(EncryptedSyncTests.passphrase))
                Issue.record("a forged configuration opened")
            } catch let error as VaultError {
                #expect(error.code == .forgedConfiguration || error.code == .malformedConfiguration)
                #expect(error.item == inner.displayName)
                #expect(error.description.contains(inner.displayName), "\(error)")
            }
            #expect(try PlainFolder.read(setup.vault) == vaultBefore)
            #expect(try setup.b.tree() == here)
        }
    }
}
