import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// A sync conflict records the bytes both sides started from (their SHA-256), on the device
    /// that made it and on every device that takes it, so that each can merge it three ways.
    @Suite struct ConflictBaseTests {
        @Test func aSyncConflictNamesItsBaseOnBothDevicesAndEachHoldsTheBase() throws {
            let folder = try TemporaryFolder()
            let remote = SimulatedRemote()
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            let base = "title\nmiddle\nend\n"
            let conflicts = try SyncDevice.conflict(
                a, b, at: "notes.txt", base: base, a: "title on a\nmiddle\nend\n",
                b: "title on b\nmiddle\nend\n")
            #expect(conflicts == 1)
            let hash = ContentHash(of: Data(base.utf8)).hex
            for device in [a, b] {
                let conflict = try #require(
                    device.store.unresolvedConflictVersionsOfItem(at: device.url("notes.txt")).first,
                    "\(device.name)")
                #expect(conflict.mergeBase == hash, "\(device.name)")
                // The base is among the item's versions, where a merge looks for it.
                #expect(
                    device.store.otherVersionsOfItem(at: device.url("notes.txt")).contains {
                        !$0.isConflict && (try? Data(contentsOf: $0.url)) == Data(base.utf8)
                    }, "\(device.name)")
            }
        }

        /// What a server says the base is, is checked: anything but a SHA-256 is no base.
        @Test func aSharedConflictsBaseThatIsNoHashIsDropped() throws {
            let folder = try TemporaryFolder()
            let remote = SimulatedRemote()
            let a = try SyncDevice("a", remote: remote, in: folder)
            try a.write("notes.txt", "mine\n")
            _ = try a.sync()
            var description = SharedConflictDescription(path: "notes.txt", computer: "laptop", modified: 0)
            description.base = "../../etc/passwd"
            try SyncDevice.share("theirs\n", as: description, on: remote)
            _ = try a.sync()
            let conflict = try #require(
                a.store.unresolvedConflictVersionsOfItem(at: a.url("notes.txt")).first)
            #expect(conflict.mergeBase == nil)
        }
    }
}
