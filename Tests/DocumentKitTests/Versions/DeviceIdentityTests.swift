import Foundation
import Testing

@testable import DocumentKit

/// This device's identity, and "mine" told by it rather than by the computer's name.
@Suite struct DeviceIdentityTests {
    private func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func anIdentityIsMadeOnceAndKeptPrivateInTheStateFolder() throws {
        let tree = try TemporaryTree()
        let state = tree.file("state")
        let identity = DeviceIdentity.kept(inStateFolder: state)
        #expect(DeviceIdentity.isValidIdentifier(identity.identifier))
        #expect(identity.name == ProcessInfo.processInfo.hostName)
        #expect(DeviceIdentity.kept(inStateFolder: state) == identity)
        let file = state.appendingPathComponent("DocumentKit/device")
        #expect(try String(contentsOf: file, encoding: .utf8) == identity.identifier + "\n")
        #expect(try mode(file) == 0o600)
        #expect(try mode(file.deletingLastPathComponent()) == 0o700)
        #expect(identity.description == "\(identity.name) (device \(identity.identifier.prefix(8)))")
    }

    @Test func anIdentityKeptBeforeIsReadAndItsFolderMadePrivate() throws {
        let tree = try TemporaryTree()
        let folder = tree.file("state/DocumentKit")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let file = try tree.write("0A1B2C3D-made-earlier\n", to: "state/DocumentKit/device")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(DeviceIdentity.kept(inStateFolder: tree.file("state")).identifier == "0A1B2C3D-made-earlier")
        #expect(try mode(folder) == 0o700)
        #expect(try mode(file) == 0o600)
    }

    @Test(arguments: ["", "../../etc/passwd\n", String(repeating: "A", count: 65), "two words"])
    func aDamagedIdentityIsMadeAgain(damaged: String) throws {
        let tree = try TemporaryTree()
        let file = try tree.write(damaged, to: "state/DocumentKit/device")
        let identity = DeviceIdentity.kept(inStateFolder: tree.file("state"))
        #expect(identity.identifier != damaged)
        #expect(UUID(uuidString: identity.identifier) != nil)
        #expect(try String(contentsOf: file, encoding: .utf8) == identity.identifier + "\n")
        #expect(try mode(file) == 0o600)
    }

    @Test func aLinkInPlaceOfTheIdentityIsNotFollowed() throws {
        let tree = try TemporaryTree()
        let elsewhere = try tree.write("0A1B2C3D-someone-elses\n", to: "elsewhere/device")
        try FileManager.default.createDirectory(
            at: tree.file("state/DocumentKit"), withIntermediateDirectories: true)
        let file = tree.file("state/DocumentKit/device")
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: elsewhere)
        let identity = DeviceIdentity.kept(inStateFolder: tree.file("state"))
        #expect(identity.identifier != "0A1B2C3D-someone-elses")
        #expect(try String(contentsOf: elsewhere, encoding: .utf8) == "0A1B2C3D-someone-elses\n")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file.path)) == nil)
        #expect(try String(contentsOf: file, encoding: .utf8) == identity.identifier + "\n")
    }

    /// Contents of another device of the same computer name are "theirs"; only this device's
    /// identity makes a conflict version "mine".
    @Test func aConflictVersionIsMineByTheDevicesIdentityNotByItsComputersName() throws {
        let tree = try TemporaryTree()
        let host = ProcessInfo.processInfo.hostName
        let here = DeviceIdentity(identifier: "device-here", name: host)
        let store = VersionStore(root: tree.file("Versions"), device: here)
        let file = try tree.write("file", to: "docs/notes.txt")
        let own = try store.addConflictOfItem(
            at: file, withContentsOf: try tree.write("mine", to: "incoming/mine.txt"))
        #expect(own.savingDeviceIdentifier == "device-here")
        #expect(own.localizedNameOfSavingComputer == host)
        #expect(own.isFromThisComputer)
        #expect(own.mineSide == .conflictVersion)
        let named = try store.addConflictOfItem(
            at: file, withContentsOf: try tree.write("theirs", to: "incoming/theirs.txt"),
            savingComputer: host)
        #expect(named.savingDeviceIdentifier == nil)
        #expect(!named.isFromThisComputer)
        #expect(named.mineSide == .currentItem)
        let twin = VersionStore(
            root: tree.file("Versions"), device: DeviceIdentity(identifier: "device-twin", name: host))
        let seenByTwin = try #require(
            twin.version(itemAt: file, forPersistentIdentifier: own.persistentIdentifier))
        #expect(!seenByTwin.isFromThisComputer)
    }

    /// A record kept before device identities has only the computer's name, which another
    /// device may share: it is "mine" only when a program here kept it (sync never records a
    /// program for another device's text).
    @Test func aVersionStoredBeforeIdentitiesIsMineOnlyWhenProvenSo() throws {
        let tree = try TemporaryTree()
        let host = ProcessInfo.processInfo.hostName
        let here = DeviceIdentity(identifier: "device-here", name: host)
        let root = tree.file("Versions")
        let store = VersionStore(root: root, device: here)
        let file = try tree.write("file", to: "docs/notes.txt")
        let synced = try store.addConflictOfItem(
            at: file, withContentsOf: try tree.write("synced", to: "incoming/synced.txt"))
        let typed = try store.addConflictOfItem(
            at: file, withContentsOf: try tree.write("typed", to: "incoming/typed.txt"))
        store.waitUntilIdle()
        // As an older DocumentKit wrote them: no device; the second kept by ste.
        for (version, program) in [(synced, nil), (typed, "ste")] as [(FileVersion, String?)] {
            let record = try #require(
                FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.compactMap {
                    $0 as? URL
                }
                .first { $0.lastPathComponent == version.persistentIdentifier + ".json" })
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
            #expect(object["savingDevice"] as? String == "device-here")
            object["savingDevice"] = nil
            object["savingProgram"] = program
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: record)
        }
        let reopened = VersionStore(root: root, device: here)
        let old = try #require(
            reopened.version(itemAt: file, forPersistentIdentifier: synced.persistentIdentifier))
        #expect(old.localizedNameOfSavingComputer == host)
        #expect(old.savingDeviceIdentifier == nil)
        #expect(!old.isFromThisComputer)
        let kept = try #require(
            reopened.version(itemAt: file, forPersistentIdentifier: typed.persistentIdentifier))
        #expect(kept.isFromThisComputer)
    }
}
