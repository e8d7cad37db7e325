import CDocumentSystem
import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

#if canImport(Glibc)
    import Glibc
#endif

extension BlockingSyncTests {
    /// A rename made on one device arrives on another as a move of its file, on every kind of
    /// remote: the same inode, its history, and an open document told where it went.
    @Suite struct RemoteRenameTests {
        /// The remotes a rename is carried through.
        enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
            case localFolder
            case apacheDefault, apacheInode, apacheDigest
            case wsgidav, wsgidavNS, sabre, sabreLocks
            case s3
            /// Documents uploaded in parts, whose tag a copy (S3's move) does not keep.
            case s3Multipart

            var testDescription: String { rawValue }

            /// A document's text: over the multipart threshold where the kind needs it.
            func text(_ words: String) -> String {
                self == .s3Multipart ? words + String(repeating: ".", count: 7 << 20) + "\n" : words
            }

            func remote(in folder: TemporaryFolder, _ name: String = #function) throws -> any Remote {
                switch self {
                case .localFolder: return LocalFolderRemote(root: try folder.folder("remote"))
                case .apacheDefault: return try WebDAVServers.collection(on: .default, name).remote
                case .apacheInode: return try WebDAVServers.collection(on: .inode, name).remote
                case .apacheDigest: return try WebDAVServers.collection(on: .digest, name).remote
                case .wsgidav: return try WebDAVServers.collection(on: .wsgidav, name).remote
                case .wsgidavNS: return try WebDAVServers.collection(on: .wsgidavNS, name).remote
                case .sabre: return try WebDAVServers.collection(on: .sabre, name).remote
                case .sabreLocks: return try WebDAVServers.collection(on: .sabreLocks, name).remote
                case .s3: return try S3Servers.remote(name)
                case .s3Multipart:
                    return try S3Servers.remote(name) {
                        $0.multipartThreshold = 6 << 20
                        $0.partSize = 5 << 20
                        $0.streamsUnhashedUploads = false
                    }
                }
            }
        }

        /// A presenter that records where it was told its item moved.
        final class MoveRecorder: FilePresenter, @unchecked Sendable {
            let moves = Mutex<[URL]>([])
            let url: Mutex<URL>
            let presentedItemOperationQueue: OperationQueue = {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                return queue
            }()
            init(_ url: URL) { self.url = Mutex(url) }
            var presentedItemURL: URL? { url.withLock { $0 } }
            func presentedItemDidMove(to newURL: URL) {
                url.withLock { $0 = newURL }
                moves.withLock { $0.append(newURL) }
            }

            /// Where it was told its item moved, once told (or after `seconds`).
            func awaitMove(seconds: Double = 10) -> [URL] {
                let deadline = Date().addingTimeInterval(seconds)
                while moves.withLock({ $0.isEmpty }) && Date() < deadline {
                    presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
                    usleep(5_000)
                }
                return moves.withLock { $0 }
            }
        }

        /// Device A renames a document B has, with history, open in a presenter, and touched
        /// since it was synced (its status changed, not its bytes: an app that opened it stamped
        /// it); B's sync moves its file: the same inode, the history follows, the presenter
        /// hears of the move, and nothing is downloaded or deleted.
        @Test(arguments: Kind.allCases)
        func aRenameOnOneDeviceIsAMoveOnAnother(_ kind: Kind) throws {
            let folder = try TemporaryFolder()
            let remote = try kind.remote(in: folder)
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            try a.write("draft.txt", kind.text("first\n"))
            try a.sync()
            try b.sync()
            // These servers' tags change with the second: an edit within it would keep its tag.
            Thread.sleep(forTimeInterval: [.apacheDefault, .apacheInode, .wsgidav].contains(kind) ? 1.1 : 0)
            try a.write("draft.txt", kind.text("second\n"))
            try a.sync()
            #expect(try b.sync().downloaded == 1)
            #expect(b.read("draft.txt") == kind.text("second\n"))
            let old = b.url("draft.txt")
            let history = b.store.otherVersionsOfItem(at: old).compactMap { try? Data(contentsOf: $0.url) }
            #expect(history.contains(Data(kind.text("first\n").utf8)), "the replaced text is B's history")
            // Opened by an app: the status changes, the bytes do not.
            #expect(cds_lsetxattr(old.path, "user.test.opened", "1", 1, 0) == 0)
            let inode = try #require(FileStatus(path: old.path)).inode
            let presenter = MoveRecorder(old)
            FileCoordinator.addFilePresenter(presenter)
            defer { FileCoordinator.removeFilePresenter(presenter) }

            try FileManager.default.moveItem(at: a.url("draft.txt"), to: a.url("final.txt"))
            #expect(try a.sync().moved == 1)
            let summary = try b.sync()
            #expect(
                summary.moved == 1 && summary.downloaded == 0 && summary.deletedLocally == 0, "\(summary)")
            let new = b.url("final.txt")
            #expect(!b.exists("draft.txt") && b.read("final.txt") == kind.text("second\n"))
            #expect(FileStatus(path: new.path)?.inode == inode, "moved, not downloaded again")
            let followed = b.store.otherVersionsOfItem(at: new).compactMap { try? Data(contentsOf: $0.url) }
            #expect(followed.contains(Data(kind.text("first\n").utf8)), "the history follows the move")
            #expect(presenter.awaitMove().map(\.lastPathComponent) == ["final.txt"])
            // Nothing left to do on either side.
            #expect(try !b.sync().didWork)
            #expect(try !a.sync().didWork)
        }
    }
}
