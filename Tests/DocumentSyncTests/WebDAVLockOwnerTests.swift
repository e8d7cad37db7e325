import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// Locks on real Apache that a pass leaves behind: a device finds its own at once, and names
    /// another's.
    @Suite struct WebDAVLockOwnerTests {
        /// A pass of this device killed between its `LOCK` and its `UNLOCK` (the remote dropped
        /// without giving the lock back): the lock would keep every device out for ten minutes.
        private func lockAsAKilledPassLeavesIt(_ path: RemotePath, on url: URL, device: DeviceIdentity?)
            throws
        {
            var configuration = WebDAVRemote.Configuration(
                url: url, credentials: try WebDAVServers.credentials())
            configuration.device = device
            let killed = try WebDAVRemote(configuration)
            let tag = try #require(try killed.entry(at: path)?.tag)
            _ = try killed.lock(path, matching: tag, .write, seconds: 600)
        }

        @Test func theNextPassOfTheSameDeviceGivesBackTheLockAKilledPassLeftAndSyncsAtOnce() throws {
            let folder = try TemporaryFolder()
            let (remote, url, _) = try WebDAVServers.collection(on: .default)
            let a = try SyncDevice("a", remote: remote, in: folder)
            try a.write("notes.txt", "one\n")
            #expect(try a.sync().uploaded == 1)
            try lockAsAKilledPassLeavesIt(RemotePath("notes.txt"), on: url, device: nil)

            // The next pass, in a new process of the same device: a new remote of its own.
            try a.write("notes.txt", "two\n")
            let started = ContinuousClock.now
            let summary = try a.sync()
            #expect(summary.failures.isEmpty, "\(summary.failures)")
            #expect(summary.uploaded == 1)
            #expect(ContinuousClock.now - started < .seconds(20))
            var read = Data()
            _ = try remote.read(RemotePath("notes.txt")) { read.append($0) }
            #expect(read == Data("two\n".utf8))
        }

        @Test func aRenameAfterAKilledPassMovesTheDocumentTheKilledPassLockedAtOnce() throws {
            let folder = try TemporaryFolder()
            let (remote, url, _) = try WebDAVServers.collection(on: .default)
            let a = try SyncDevice("a", remote: remote, in: folder)
            try a.write("notes.txt", "one\n")
            #expect(try a.sync().uploaded == 1)
            try lockAsAKilledPassLeavesIt(RemotePath("notes.txt"), on: url, device: nil)

            try FileManager.default.moveItem(at: a.url("notes.txt"), to: a.url("plan.txt"))
            let summary = try a.sync()
            #expect(summary.failures.isEmpty, "\(summary.failures)")
            #expect(summary.moved == 1)
            #expect(try remote.entry(at: RemotePath("plan.txt")) != nil)
            #expect(try remote.entry(at: RemotePath("notes.txt")) == nil)
        }

        @Test func aLockOfAnotherDeviceWithTheSameHostNameIsNamedWithWhenItExpires() throws {
            let (remote, url, _) = try WebDAVServers.collection(on: .default)
            let path = RemotePath("notes.txt")
            let tag = try #require(
                try remote.write(path, from: UploadSource(Data("one\n".utf8)), condition: .absent))
            let other = DeviceIdentity(
                identifier: "1F0C29A3-5B7E-4D0A-9C1B-2E3F4A5B6C7D", name: ProcessInfo.processInfo.hostName)
            try lockAsAKilledPassLeavesIt(path, on: url, device: other)

            let refused = #expect(throws: RemoteError.self) {
                try remote.write(path, from: UploadSource(Data("two\n".utf8)), condition: .matches(tag))
            }
            let message = refused?.description ?? ""
            #expect(message.contains("another device, \(other.name) (device 1F0C29A3),"), "\(message)")
            #expect(message.contains(" s from now"), "\(message)")
            #expect(!message.contains("another client"), "\(message)")
            var read = Data()
            _ = try remote.read(path) { read.append($0) }
            #expect(read == Data("one\n".utf8))

            // The device that holds it finds it its own, as its next pass would.
            var configuration = WebDAVRemote.Configuration(
                url: url, credentials: try WebDAVServers.credentials())
            configuration.device = other
            try WebDAVRemote(configuration).write(
                path, from: UploadSource(Data("three\n".utf8)), condition: .matches(tag))
        }

        /// The owner says which device, in words a person reads, and holds nothing of the
        /// password or the user; the same device on another collection has another owner.
        @Test func aLockOwnerNamesTheDeviceAndIsItsOwnPerCollection() throws {
            let device = DeviceIdentity(identifier: "ABCDEF12-0000", name: "pi")
            let one = WebDAVRemote.lockOwner(device: device, collection: URL(string: "https://h/dav/A/")!)
            #expect(one.hasPrefix("DocumentSync lock of pi (device ABCDEF12), key "))
            #expect(
                one == WebDAVRemote.lockOwner(device: device, collection: URL(string: "https://h/dav/A/")!))
            #expect(
                one != WebDAVRemote.lockOwner(device: device, collection: URL(string: "https://h/dav/B/")!))
            let twin = DeviceIdentity(identifier: "ABCDEF12-0001", name: "pi")
            #expect(one != WebDAVRemote.lockOwner(device: twin, collection: URL(string: "https://h/dav/A/")!))
            #expect(WebDAVRemote.holder(ofLockOwnedBy: one) == "another device, pi (device ABCDEF12),")
            #expect(
                WebDAVRemote.holder(ofLockOwnedBy: "litmus <script>\u{1B}[2J")
                    == "another client (owner “litmus script[2J”)")
        }
    }
}
