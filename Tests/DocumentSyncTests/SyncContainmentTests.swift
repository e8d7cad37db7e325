import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// Whatever names a remote gives, and whatever links the container holds, sync writes nothing
/// outside the container: the engine's last line of defence, which holds even when a remote
/// lets a hostile name through its parsing.
@Suite struct SyncContainmentTests {
    /// A remote whose listings let through names no remote may give (as a bug in a parser
    /// would): files and folders added to a simulated remote's listings, read back whole.
    final class LeakyRemote: Remote, Sendable {
        let base: SimulatedRemote
        /// The leaked files' bytes and the leaked folders (nil), by path.
        let leaked = Mutex<[RemotePath: Data?]>([:])

        init(_ base: SimulatedRemote) { self.base = base }

        var displayName: String { base.displayName }

        func leak(_ path: RemotePath, _ bytes: Data?) { leaked.withLock { $0[path] = bytes } }

        private func leakedEntry(_ path: RemotePath) -> RemoteEntry? {
            guard let bytes = leaked.withLock({ $0[path] }) else { return nil }
            return RemoteEntry(
                name: path.name, kind: bytes == nil ? .folder : .file, size: Int64(bytes?.count ?? 0),
                tag: RemoteTag("leaked"))
        }

        func list(_ folder: RemotePath) throws -> RemoteListing {
            let leaks = leaked.withLock { $0 }
            let base = leaks.index(forKey: folder) == nil ? try self.base.list(folder) : nil
            let entries = leaks.keys.filter { $0.parent == folder }.compactMap(leakedEntry)
            return RemoteListing(
                folder: folder, entries: (base?.entries ?? []) + entries, folderTag: base?.folderTag)
        }

        func entry(at path: RemotePath) throws -> RemoteEntry? {
            try leakedEntry(path) ?? base.entry(at: path)
        }

        func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
            if case let bytes?? = leaked.withLock({ $0[path] }) {
                try sink(bytes)
                return RemoteTag("leaked")
            }
            return try base.read(path, into: sink)
        }

        func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws
            -> RemoteTag?
        {
            try base.write(path, from: source, condition: condition)
        }

        func delete(_ path: RemotePath, condition: WriteCondition) throws {
            try base.delete(path, condition: condition)
        }

        func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
            -> RemoteTag?
        {
            try base.move(source, to: destination, condition: condition)
        }

        func makeFolder(_ path: RemotePath) throws { try base.makeFolder(path) }
    }

    let folder: TemporaryFolder
    let simulated = SimulatedRemote(displayName: "sim")
    let remote: LeakyRemote
    /// A folder beside the devices' that no sync may touch, with one file in it.
    let outside: URL
    let device: SyncDevice

    init() throws {
        folder = try TemporaryFolder()
        outside = try folder.folder("outside")
        try Data("victim".utf8).write(to: outside.appendingPathComponent("victim.txt"))
        remote = LeakyRemote(simulated)
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
            remote.leak(RemotePath(components: [name]), Data("evil".utf8))
        }
        remote.leak(RemotePath(components: ["y/../../../outside/made"]), nil)
        try simulated.directMakeFolder(RemotePath("Notes"))
        remote.leak(RemotePath(components: ["Notes", "z/../../../../outside/deep.txt"]), Data("evil".utf8))
        try simulated.directWrite(RemotePath("good.txt"), Data("good".utf8))

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
        try simulated.directWrite(RemotePath("link/evil.txt"), Data("evil".utf8))
        try simulated.directWrite(RemotePath("link/sub/evil.txt"), Data("evil".utf8))
        try simulated.directWrite(RemotePath("victim.txt"), Data("overwritten".utf8))

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

    /// A conflict described at a path of valid names that goes through a link in the container.
    @Test func aConflictDescribedThroughALinkIsNotTaken() throws {
        try FileManager.default.createSymbolicLink(at: device.url("link"), withDestinationURL: outside)
        let conflicts = SyncEngine.conflictsFolder
        try simulated.directWrite(conflicts.appending("c1.data"), Data("evil".utf8))
        try simulated.directWrite(
            conflicts.appending("c1.json"),
            try JSONEncoder().encode(SharedConflictDescription(path: "link/victim.txt")))
        try simulated.directWrite(RemotePath("good.txt"), Data("good".utf8))

        let summary = try device.sync()
        #expect(
            summary.notes.contains { $0.contains("conflict c1") && $0.contains("symbolic link") },
            "\(summary)")
        try expectOutsideUntouched()
        #expect(device.read("good.txt") == "good")
    }
}
