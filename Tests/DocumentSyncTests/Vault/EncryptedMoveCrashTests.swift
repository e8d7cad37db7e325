import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// A move through a vault stopped at every step of the inner remote (a crash, a cut
/// connection): the vault then lists the item once, where it was or where it went, never a
/// folder that fails to list, and the move made again finishes.
@Suite struct EncryptedMoveCrashTests {
    /// A remote whose changes (writes, deletes, moves, new folders) fail from the `limit`-th on,
    /// as a process that died there would leave it.
    final class Crashing: ForwardingRemote, @unchecked Sendable {
        let changes = Mutex(0)
        let limit: Int

        init(_ base: any Remote, failingFrom limit: Int) {
            self.limit = limit
            super.init(base)
        }

        /// Counts one change, failing it when the limit is reached.
        func change() throws {
            let count = changes.withLock { count in
                count += 1
                return count
            }
            if count >= limit {
                throw RemoteError(
                    .timedOut, operation: .write, path: .root, remote: displayName, detail: "crashed")
            }
        }

        override func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
            -> RemoteTag?
        {
            try change()
            return try super.write(path, from: source, condition: condition)
        }
        override func write(
            _ path: RemotePath, from source: UploadSource, condition: WriteCondition, placeListed: Bool
        ) throws -> RemoteTag? {
            try change()
            return try super.write(path, from: source, condition: condition, placeListed: placeListed)
        }
        override func delete(_ path: RemotePath, condition: WriteCondition) throws {
            try change()
            try super.delete(path, condition: condition)
        }
        override func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?)
            throws
            -> RemoteTag?
        {
            try change()
            return try super.move(source, to: destination, condition: condition)
        }
        override func makeFolder(_ path: RemotePath) throws {
            try change()
            try super.makeFolder(path)
        }
    }

    static let short = "plan.txt"
    static let long = String(repeating: "a rather long document name ", count: 6) + ".txt"
    static let shortFolder = "Trips"
    static let longFolder = String(repeating: "Reisen ", count: 25)

    /// The moves whose names are or become long, each of a file and of a folder (with a
    /// document inside), within a folder and into another.
    static let moves: [(from: String, to: String, folder: Bool)] = [
        (short, long, false), (long, "other/" + long + "2", false), (long, short, false),
        (shortFolder, longFolder, true), (longFolder, "other/" + longFolder + "2", true),
        (longFolder, shortFolder, true),
    ]

    @Test(arguments: moves.indices)
    func aMoveStoppedAtAnyStepListsOnceAndFinishesWhenMadeAgain(_ index: Int) throws {
        let (from, to, isFolder) = Self.moves[index]
        let contents = Data("every word kept\n".utf8)
        var steps = 1
        while true {
            let folder = try TemporaryFolder()
            let local = LocalFolderRemote(root: try folder.folder("vault"))
            let made = try EncryptedRemote.create(
                over: local, passphrase: VaultPassphrase("correct horse"), cost: EncryptedRemoteTests.cheap)
            try made.makeFolder(RemotePath("other"))
            let document = isFolder ? from + "/inside.txt" : from
            if isFolder { try made.makeFolder(RemotePath(from)) }
            _ = try made.write(RemotePath(document), from: UploadSource(contents), condition: .absent)

            let crashing = Crashing(local, failingFrom: steps)
            let finished: Bool
            do {
                _ = try EncryptedRemote(over: crashing, vault: made.vault).move(
                    RemotePath(from), to: RemotePath(to), condition: nil)
                finished = true
            } catch let error as RemoteError where error.detail?.contains("crashed") == true {
                finished = false
            }
            // A fresh instance (the process started again) sees the item at one place exactly.
            let after = EncryptedRemote(over: local, vault: made.vault)
            let tree = try EncryptedRemoteTests.walk(after)
            let moved = isFolder ? to + "/inside.txt" : to
            let atSource = (tree[document] ?? nil) != nil
            let atDestination = (tree[moved] ?? nil) != nil
            #expect(
                atSource != atDestination, "move \(index), stopped at step \(steps): \(tree.keys.sorted())")
            #expect(
                (tree[document] ?? nil) ?? (tree[moved] ?? nil) == contents,
                "move \(index), stopped at step \(steps): the bytes changed")
            if !atDestination {
                // Made again, from the start: it finishes, and the item is where it went.
                _ = try after.move(RemotePath(from), to: RemotePath(to), condition: nil)
                let again = try EncryptedRemoteTests.walk(EncryptedRemote(over: local, vault: made.vault))
                #expect(
                    (again[moved] ?? nil) == contents && again[document] == nil,
                    "move \(index), step \(steps)")
            }
            if finished { break }
            steps += 1
            try #require(steps < 20, "the move never finished")
        }
        // Each move had a step to stop at (folders and names written, the item moved).
        #expect(steps > 1)
    }
}
