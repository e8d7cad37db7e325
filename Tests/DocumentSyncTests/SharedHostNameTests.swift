import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// Devices whose computers share a host name (cloned machines, Raspberry Pis, a default
    /// "localhost"): "mine" is told by each device's identity, never by the name.
    @Suite struct SharedHostNameTests {
        /// The text a conflict version's resolution keeps as "mine", resolved on `device`.
        private func keepMine(on device: SyncDevice, _ path: String) throws -> String? {
            let versions = device.store.unresolvedConflictVersionsOfItem(at: device.url(path))
            #expect(versions.count == 1, "\(device.name): \(versions)")
            let version = try #require(versions.first)
            try version.resolveConflict(ofItemAt: device.url(path), keeping: version.mineSide)
            device.store.waitUntilIdle()
            return device.read(path)
        }

        @Test func eachOfTwoDevicesWithOneHostNameKeepsItsOwnTextAsMine() throws {
            let folder = try TemporaryFolder()
            let remote = SimulatedRemote()
            let host = ProcessInfo.processInfo.hostName
            let a = try SyncDevice("a", remote: remote, in: folder, computerName: host)
            let b = try SyncDevice("b", remote: remote, in: folder, computerName: host)
            // b's goes up first; a keeps b's at the path and its own as a conflict version,
            // which b takes from the remote.
            #expect(
                try SyncDevice.conflict(
                    a, b, at: "notes.txt", base: "first\n", a: "typed on a\n", b: "typed on b\n") == 1)
            for device in [a, b] {
                let version = try #require(device.conflicts("notes.txt").first)
                #expect(version == "typed on a\n")
                let conflict = try #require(
                    device.store.unresolvedConflictVersionsOfItem(at: device.url("notes.txt")).first)
                // The same name on both sides: only the identity tells them apart.
                #expect(conflict.localizedNameOfSavingComputer == host)
                #expect(conflict.savingDeviceIdentifier == a.store.device.identifier)
                #expect(conflict.isFromThisComputer == (device === a), "\(device.name)")
            }
            #expect(try keepMine(on: a, "notes.txt") == "typed on a\n")
            #expect(try keepMine(on: b, "notes.txt") == "typed on b\n")
            // The side not kept is still in each store.
            #expect(
                b.store.otherVersionsOfItem(at: b.url("notes.txt")).contains {
                    (try? Data(contentsOf: $0.url)) == Data("typed on a\n".utf8)
                })
        }

        /// A conflict description from a device that did not say which it is (written before
        /// devices had identities), or one naming a device no one can be, is another device's,
        /// even under this computer's own name.
        @Test(arguments: [nil, "../not an identifier", "device-a"] as [String?])
        func aConflictDescribedWithoutThisDevicesIdentityIsTheirs(device described: String?) throws {
            let folder = try TemporaryFolder()
            let remote = SimulatedRemote()
            let host = ProcessInfo.processInfo.hostName
            let a = try SyncDevice("a", remote: remote, in: folder, computerName: host)
            try a.write("notes.txt", "mine\n")
            _ = try a.sync()
            // As another device would share it: its bytes, then its description.
            var description = SharedConflictDescription(path: "notes.txt", computer: host, modified: 0)
            description.device = described
            try SyncDevice.share("theirs\n", as: description, on: remote)
            _ = try a.sync()
            let conflict = try #require(
                a.store.unresolvedConflictVersionsOfItem(at: a.url("notes.txt")).first)
            #expect(conflict.localizedNameOfSavingComputer == host)
            // Its own identity, shared back to it, is the one case where it is "mine".
            #expect(conflict.isFromThisComputer == (described == a.store.device.identifier))
            if described != a.store.device.identifier {
                #expect(conflict.savingDeviceIdentifier == nil)
                #expect(try keepMine(on: a, "notes.txt") == "mine\n")
            }
        }
    }
}
