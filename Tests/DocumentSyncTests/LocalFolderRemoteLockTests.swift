import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// The lock of a folder remote against the other users of the computer: a user who can only
/// read the folder cannot hold it, one who can write it is waited for only so long, and is
/// named when the wait ends.
@Suite(.serialized) struct LocalFolderRemoteLockTests {
    /// A program run as nobody:nogroup, its standard output read line by line.
    final class Stranger {
        let process = Process()
        private let output = Pipe()

        init(_ arguments: [String]) throws {
            try #require(getuid() == 0, "needs root to run a program as another user")
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups"] + arguments
            process.standardOutput = output
            process.standardError = output
            try process.run()
            // Only the child writes: its end of the pipe is closed here, so that reading to
            // the end ends when the child does.
            try output.fileHandleForWriting.close()
        }

        deinit { stop() }

        /// Kills it (SIGKILL: it inherits the test process's blocked signals) and waits.
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        /// The first line it writes.
        func firstLine() -> String {
            var line = Data()
            while let byte = try? output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty,
                byte != Data("\n".utf8)
            {
                line.append(byte)
            }
            return String(decoding: line, as: UTF8.self)
        }

        /// Waits for it to end; its exit status and everything it wrote.
        func finish() -> (status: Int32, output: String) {
            let text = String(
                decoding: (try? output.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
    }

    /// Holds an `fcntl` write lock on `path` (opened for reading and writing) until killed,
    /// as another writer of the folder would; says "held PID" once it has it.
    static func lockHolder(_ path: String) -> [String] {
        [
            "/usr/bin/python3", "-c",
            "import fcntl, os, sys, time\n"
                + "fd = os.open(sys.argv[1], os.O_RDWR)\n"
                + "fcntl.lockf(fd, fcntl.LOCK_EX)\n"
                + "print('held', os.getpid(), flush=True)\n"
                + "time.sleep(600)\n",
            path,
        ]
    }

    /// A folder every user can enter, as /tmp and the folders people share are.
    func sharedFolder(_ folder: TemporaryFolder) throws -> URL {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.url.path)
        let remote = try folder.folder("remote")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: remote.path)
        return remote
    }

    func write(_ remote: LocalFolderRemote, _ name: String, _ text: String) throws {
        try remote.write(RemotePath(name), from: UploadSource(Data(text.utf8)), condition: .absent)
    }

    @Test func aUserWhoCanOnlyReadTheFolderCanNeitherOpenNorHoldItsLock() throws {
        let folder = try TemporaryFolder()
        let root = try sharedFolder(folder)
        let remote = LocalFolderRemote(root: root)
        try write(remote, "first.txt", "one\n")
        let lock = root.appendingPathComponent(".documentsync/write.lock").path
        let status = try #require(FileStatus(path: lock))
        #expect(status.permissions == 0o600)

        // Neither the lock of flock(1) nor a read lock on a read-only descriptor: the file
        // cannot be opened at all.
        let flock = try Stranger(["/usr/bin/flock", "--shared", "--nonblock", lock, "true"]).finish()
        #expect(flock.status != 0)
        #expect(flock.output.contains("Permission denied"), "\(flock.output)")
        let reader = try Stranger([
            "/usr/bin/python3", "-c",
            "import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.lockf(fd, fcntl.LOCK_SH)\n",
            lock,
        ]).finish()
        #expect(reader.status != 0 && reader.output.contains("PermissionError"), "\(reader.output)")

        // The lock file of older versions, anyone's to open: its flock holds nothing up.
        let legacy = root.appendingPathComponent(".documentsync/lock")
        #expect(
            FileManager.default.createFile(
                atPath: legacy.path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let holder = try Stranger([
            "/usr/bin/python3", "-c",
            "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_SH)\n"
                + "print('held', flush=True)\ntime.sleep(600)\n",
            legacy.path,
        ])
        #expect(holder.firstLine() == "held")
        let started = ContinuousClock.now
        try write(remote, "second.txt", "two\n")
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(
            FileManager.default.contents(atPath: root.appendingPathComponent("second.txt").path)
                == Data("two\n".utf8))
    }

    @Test func aWriterHoldingTheLockIsWaitedForUntilTheDeadlineAndNamed() throws {
        let folder = try TemporaryFolder()
        let root = try sharedFolder(folder)
        // Shared with nogroup: its members may write, so they may lock.
        #expect(chown(root.path, 0, 65534) == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o775], ofItemAtPath: root.path)
        let remote = LocalFolderRemote(root: root, lockTimeout: .milliseconds(300))
        try write(remote, "first.txt", "one\n")
        let lock = root.appendingPathComponent(".documentsync/write.lock").path
        let status = try #require(FileStatus(path: lock))
        #expect(status.permissions == 0o660 && status.group == 65534)

        let holder = try Stranger(Self.lockHolder(lock))
        let held = holder.firstLine()
        let pid = try #require(held.split(separator: " ").last.flatMap { Int32($0) }, "\(held)")
        let started = ContinuousClock.now
        let refused = #expect(throws: RemoteError.self) { try write(remote, "second.txt", "two\n") }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(10), "\(waited)")
        #expect(refused?.kind == .other)
        let message = refused?.description ?? ""
        #expect(message.contains("process \(pid) (user nobody)"), "\(message)")
        #expect(message.contains(lock) && message.contains("next sync tries again"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("second.txt").path))

        // Still held: the next change does not wait the whole time again.
        let again = ContinuousClock.now
        let still = #expect(throws: RemoteError.self) { try write(remote, "second.txt", "two\n") }
        #expect(ContinuousClock.now - again < .milliseconds(300))
        #expect(
            still?.description.contains("still locked by process \(pid)") == true,
            "\(still?.description ?? "")")

        // Let go: the change goes through.
        holder.stop()
        try write(remote, "second.txt", "two\n")
        #expect(
            FileManager.default.contents(atPath: root.appendingPathComponent("second.txt").path)
                == Data("two\n".utf8))
    }

    @Test func threadsOfOneProcessTakeTurnsWithTheLock() throws {
        // The lock is the process's: without the turns, two threads would both hold it.
        let folder = try TemporaryFolder()
        let root = try folder.folder("remote")
        let remotes = (0..<2).map { _ in LocalFolderRemote(root: root) }
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            let remote = remotes[index % 2]
            let marker = root.appendingPathComponent("inside").path
            #expect(throws: Never.self) {
                try remote.withExclusiveLock(.write, RemotePath("x")) { _ in
                    // Nobody else inside: the marker is made here, and gone before the turn ends.
                    let made = open(marker, O_CREAT | O_EXCL | O_WRONLY, 0o600)
                    #expect(made >= 0, "thread \(index) found another inside")
                    close(made)
                    usleep(200)
                    unlink(marker)
                }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("inside").path))
    }
}
