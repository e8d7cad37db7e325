import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// Whatever names a remote gives, and whatever links the container holds, sync writes nothing
/// outside the container: the engine's last line of defence, which holds even when a remote
/// lets a hostile name through its parsing.
@Suite struct SyncContainmentTests {
    let folder: TemporaryFolder
    let remote = SimulatedRemote(displayName: "sim")
    /// A folder beside the devices' that no sync may touch, with one file in it.
    let outside: URL
    let device: SyncDevice

    init() throws {
        folder = try TemporaryFolder()
        outside = try folder.folder("outside")
        try Data("victim".utf8).write(to: outside.appendingPathComponent("victim.txt"))
        device = try SyncDevice("b", remote: remote, in: folder)
    }

    /// The outside folder holds only its file, unchanged, and nothing new is beside it.
    func expectOutsideUntouched(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["victim.txt"],
            sourceLocation: sourceLocation)
        #expect(
            try Data(contentsOf: outside.appendingPathComponent("victim.txt")) == Data("victim".utf8),
            sourceLocation: sourceLocation)
        #expect(try folder.names() == ["b", "outside"], sourceLocation: sourceLocation)
        #expect(
            device.store.unresolvedConflictVersionsOfItem(at: outside.appendingPathComponent("victim.txt"))
                .isEmpty, sourceLocation: sourceLocation)
    }

    @Test func hostileNamesFromTheRemoteWriteNothingOutsideTheContainer() throws {
        // From the container (FOLDER/b/Documents), two levels up is FOLDER.
        let climbs = ["x/../../../outside/evil.txt", "../../outside/evil.txt", "x/../../../evil.txt"]
        for name in climbs {
            try remote.directWrite(RemotePath(components: [name]), Data("evil".utf8))
        }
        try remote.directMakeFolder(RemotePath(components: ["y/../../../outside/made"]))
        try remote.directWrite(
            RemotePath(components: ["Notes", "z/../../../../outside/deep.txt"]), Data("evil".utf8))
        try remote.directWrite(RemotePath("good.txt"), Data("good".utf8))

        let summary = try device.sync()
        try expectOutsideUntouched()
        // The documents with valid names arrive all the same, and each refusal is named.
        #expect(device.read("good.txt") == "good")
        for name in climbs {
            #expect(
                summary.failures.contains { $0.contains(name) && $0.contains("not a path inside") },
                "\(summary)")
        }
        #expect(!FileManager.default.fileExists(atPath: device.url("x").path), "no folder made on the way")
        #expect(try device.tree() == ["good.txt": "good"])
    }

    @Test func aLinkInTheContainerThatPointsOutIsNeverWrittenThrough() throws {
        // The user's own links: a folder that points out, and a document that does.
        try FileManager.default.createSymbolicLink(
            at: device.url("link"), withDestinationURL: outside)
        try FileManager.default.createSymbolicLink(
            at: device.url("victim.txt"), withDestinationURL: outside.appendingPathComponent("victim.txt"))
        try remote.directWrite(RemotePath("link/evil.txt"), Data("evil".utf8))
        try remote.directWrite(RemotePath("link/sub/evil.txt"), Data("evil".utf8))
        try remote.directWrite(RemotePath("victim.txt"), Data("overwritten".utf8))

        let summary = try device.sync()
        try expectOutsideUntouched()
        #expect(summary.downloaded == 0, "\(summary)")
        #expect(
            summary.failures.contains { $0.contains("link/evil.txt") && $0.contains("symbolic link") },
            "\(summary)")
        // The links are still the user's links.
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: device.url("link").path) == outside.path
        )
    }

    @Test func aConflictDescribedAtAPathOutsideIsNotTaken() throws {
        let conflicts = SyncEngine.conflictsFolder
        try remote.directWrite(conflicts.appending("c1.data"), Data("evil".utf8))
        try remote.directWrite(
            conflicts.appending("c1.json"),
            try JSONEncoder().encode(SharedConflictDescription(path: "../../outside/victim.txt")))
        try remote.directWrite(RemotePath("good.txt"), Data("good".utf8))

        _ = try device.sync()
        try expectOutsideUntouched()
        #expect(device.read("good.txt") == "good")
    }
}
